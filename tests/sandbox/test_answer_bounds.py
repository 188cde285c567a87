"""The fourth hostile set (issue 56): what one job's answer costs the server, bounded as a ratio
of a normal compile of the same kernel in the same run.

- A parse bomb: the worker's answer carries 6 million empty dicts (24 MB of JSON, ~450 MB once
  parsed): refused by its count of values before json.loads makes them (base.result.loads_bounded),
  the server's peak memory a small multiple of the answer's bytes.
- A scan bomb: 45,000 empty files in the job's folder while it compiles: the server's CPU for the
  job stays within a few times a normal compile's (the watch never walks the folder each tick:
  tests/unit/test_scan_cost.py has the mechanism).
Both on a class server's engine (sandboxed, the student's own sandbox)."""
import dataclasses
import threading
import time
from pathlib import Path

import pytest

from conftest import SNIPPETS
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine
from inspectors.process import sandbox

pytestmark = pytest.mark.skipif(sandbox.check() is not None, reason=f"no sandbox here: {sandbox.check()}")

VADD = (SNIPPETS / "vadd.py").read_text()


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """A class server's engine: every worker sandboxed, each student's files in their own sandbox."""
    root = tmp_path_factory.mktemp("answers")
    env = {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root / "workspace"),
           "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"), "TLENS_REPRO_DIR": str(root / "cache" / "repro"),
           "TLENS_COMPILE_TIMEOUT": "60", "TLENS_OWN_SANDBOXES": "2"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        s = dataclasses.replace(settings_mod.load(), workers=2)
        assert s.sandbox and s.class_mode
        eng = Engine(s)
        assert eng.wait_ready()
        yield eng
        eng.close()


def compile_as(engine, source: str, **kw):
    return engine.compile(CompileRequest(source=source, filename="mine.py", sass=False), timeout=300,
                          session="user:mallory", **kw)


def with_example(prefix: str) -> str:
    body = "\n".join("    " + ln for ln in prefix.strip("\n").splitlines()) + "\n"
    return VADD.replace("def example():\n", "def example():\n    import os, sys, time\n" + body, 1)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakRSS:
    """This process's largest resident set while a compile runs, sampled every 5 ms."""

    def __init__(self):
        self.start = self.peak = rss_mib()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss_mib())

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    @property
    def growth(self) -> float:
        return self.peak - self.start


BOMB = """
from inspectors.base.result import CompileResult      # the worker's own class: its answer padded
real = CompileResult.to_json
CompileResult.to_json = lambda self: {**real(self), "metadata": [{}] * 6_000_000}
"""


def test_a_parse_bomb_is_refused_before_it_is_parsed(engine):
    with PeakRSS() as base:
        assert compile_as(engine, VADD + "\n# baseline\n").ok
    with PeakRSS() as bomb:
        r = compile_as(engine, with_example(BOMB))
    assert r.error is not None and "JSON values" in r.error.message, r.error
    # the answer's 24 MB line is read; its 6 million dicts are never made (~450 MB)
    assert bomb.growth < 150, (bomb.growth, base.growth)
    assert compile_as(engine, VADD + "\n# after\n").ok        # the next compile is served


SCAN = """
for i in range(45_000):                 # under the 50,000 files a scratch may hold
    open(f"junk-{i}", "w").close()
time.sleep(6)
"""


def test_a_job_folder_of_many_files_costs_the_server_little(engine):
    def server_cpu(source: str) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.monotonic()
        r = compile_as(engine, source, on_progress=lambda progress: None)     # streamed, as the page asks
        assert r.ok, r.error
        return time.process_time() - cpu, time.monotonic() - wall
    base_cpu, _ = server_cpu(with_example("time.sleep(6)"))
    scan_cpu, scan_wall = server_cpu(with_example(SCAN))
    # both jobs run ~6 s with the page's stream watching them; the files add no walk per tick
    assert scan_cpu < 3 * base_cpu + 0.3, (scan_cpu, base_cpu, scan_wall)
