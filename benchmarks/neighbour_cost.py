"""What one student's hostile job costs another student (issue 56: "another student's compile
within 3x of alone"), and the server (its CPU and peak memory, as ratios to a normal compile of
the same kernel in the same run). Not a test: it prints figures.

A class server's engine (TLENS_CLASS=1, every worker sandboxed, each student in their own warm
sandbox), 2 workers. Bob compiles an edited vector add alone (5 times, median), then while
Mallory's job runs each attack (3 times, median):
  parse bomb   an answer of 6 million empty dicts (24 MB of JSON, ~450 MB once parsed)
  scan bomb    45,000 empty files in her job's folder while it compiles, the page's stream watching
  big answer   a 90 MB answer (four 22 MB stages): what the history and the cache would keep
  normal       her plain compile of the same kernel (the baseline of the server's figures)

    .venv/bin/python benchmarks/neighbour_cost.py        # needs bwrap (the sandbox); ~3 min
"""
from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

VADD = (ROOT / "tests" / "snippets" / "vadd.py").read_text()
ATTACKS = {
    "normal": "",
    "parse bomb": """
from inspectors.base.result import CompileResult      # the worker's own class: its answer padded
real = CompileResult.to_json
CompileResult.to_json = lambda self: {**real(self), "metadata": [{}] * 6_000_000}
""",
    "scan bomb": """
for i in range(45_000):
    open(f"junk-{i}", "w").close()
time.sleep(4)
""",
    "big answer": """
from inspectors.base.result import CompileResult
real = CompileResult.to_json
CompileResult.to_json = lambda self: {**real(self), "output": ("x" * 1000 + "\\n") * 90_000}
""",
}


def with_example(prefix: str) -> str:
    body = "\n".join("    " + ln for ln in prefix.strip("\n").splitlines()) + "\n"
    return VADD.replace("def example():\n", "def example():\n    import os, sys, time\n" + body, 1) if prefix else VADD


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    from inspectors.base import settings as settings_mod
    from inspectors.base.result import CompileRequest
    from inspectors.compile.engine import Engine
    from inspectors.process import sandbox
    if sandbox.check() is not None:
        print(f"no sandbox here: {sandbox.check()}")
        return 2
    root = Path(tempfile.mkdtemp(prefix="tlens-neighbour-"))
    os.environ.update({"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root / "workspace"),
                       "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"),
                       "TLENS_REPRO_DIR": str(root / "cache" / "repro"), "TLENS_COMPILE_TIMEOUT": "120",
                       "TLENS_OWN_SANDBOXES": "2"})
    engine = Engine(dataclasses.replace(settings_mod.load(), workers=2))
    assert engine.wait_ready()
    n = [0]

    def bob() -> float:
        n[0] += 1
        t0 = time.monotonic()
        r = engine.compile(CompileRequest(source=VADD + f"\n# bob {n[0]}\n", filename="bob.py", sass=False),
                           timeout=300, session="user:bob")
        assert r.ok, r.error
        return time.monotonic() - t0

    for _ in range(2):
        bob()                                   # his sandbox warm
    alone = statistics.median(bob() for _ in range(5))
    print(f"bob alone: {alone:.2f} s (median of 5)")
    print(f"{'attack':12} {'bob s':>7} {'x alone':>8} {'server CPU s':>13} {'x normal':>9} {'peak +MiB':>10} {'x normal':>9}  her result")
    base = None
    for name, code in ATTACKS.items():
        got: dict = {}

        def mallory():
            cpu0, peak, stop = time.process_time(), [rss_mib()], threading.Event()
            start = peak[0]

            def sample():
                while not stop.wait(0.005):
                    peak[0] = max(peak[0], rss_mib())
            t = threading.Thread(target=sample, daemon=True)
            t.start()
            r = engine.compile(CompileRequest(source=with_example(code) + f"\n# {name}\n", filename="mine.py", sass=False),
                               timeout=300, session="user:mallory", on_progress=lambda p: None)
            stop.set()
            t.join()
            got.update(cpu=time.process_time() - cpu0, rss=peak[0] - start,
                       said="ok" if r.ok else (r.error.message.splitlines()[0][:60] if r.error else "?"))
        her = threading.Thread(target=mallory)
        her.start()
        time.sleep(1.0)
        times = [bob() for _ in range(3)]
        her.join()
        with_her = statistics.median(times)
        if name == "normal":
            base = got
        print(f"{name:12} {with_her:7.2f} {with_her / alone:8.2f} {got['cpu']:13.2f} {got['cpu'] / max(base['cpu'], 1e-3):9.2f} "
              f"{got['rss']:10.1f} {(got['rss'] + 1) / (base['rss'] + 1):9.2f}  {got['said']}")
    engine.close()
    print("(server CPU: this process's, all its threads, while her job ran, bob's compiles included; "
          "peak +MiB: this process's resident set above its level when her job started)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
