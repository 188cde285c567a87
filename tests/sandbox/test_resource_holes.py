"""The third hostile set against a class server (TLENS_CLASS=1, every worker sandboxed, students'
own sandboxes): files and page opens that would make the server or a sandbox keep a student's
resources. Each attack runs beside a well-behaved student (alice), whose compile must stay within
3x its time alone (measured in the same run); the host's free memory and disk are watched while
it runs and after, and nothing of the attacker's may remain 30 s after their tabs close
(`Engine.forget`, what app/backend/presence.py calls when none of a student's tabs is connected).

Stated bounds (docs/05-sandbox-and-threat-model.md): a sandbox's writable places are its /tmp
(256 MiB), /dev/shm (64 MiB) and its scratch folder (TLENS_SCRATCH_MB, here 256 MB: a tmpfs of that
size where the server may mount one); what it keeps between jobs is a quarter of that."""
import dataclasses
import os
import statistics
import threading
import time
from pathlib import Path

import pytest

from conftest import SNIPPETS, until
from inspectors.process import sandbox, scratch
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine

pytestmark = pytest.mark.skipif(sandbox.check() is not None, reason=f"no sandbox here: {sandbox.check()}")

VADD = (SNIPPETS / "vadd.py").read_text()
SCRATCH_MB = 256
MiB = 1 << 20


def with_example(prefix: str) -> str:
    body = "\n".join("    " + ln for ln in prefix.strip("\n").splitlines()) + "\n"
    return VADD.replace("def example():\n", "def example():\n    import os, sys, time, ctypes\n" + body, 1)


def available_mib() -> float:
    info = {ln.split(":")[0]: int(ln.split()[1]) for ln in open("/proc/meminfo")}
    return info["MemAvailable"] / 1024


def disk_free_mib(path: Path) -> float:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize / MiB


class Watch:
    """The host's least free memory and disk while an attack runs (sampled ten times a second)."""

    def __init__(self, folder: Path):
        self.folder, self.low_mem, self.low_disk = folder, available_mib(), disk_free_mib(folder)
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.wait(0.1):
            self.low_mem = min(self.low_mem, available_mib())
            self.low_disk = min(self.low_disk, disk_free_mib(self.folder))

    def stop(self):
        self._stop.set()
        self._t.join()
        return self


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("resources")
    env = {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root / "workspace"),
           "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"), "TLENS_REPRO_DIR": str(root / "cache" / "repro"),
           "TLENS_COMPILE_TIMEOUT": "60", "TLENS_SCRATCH_MB": str(SCRATCH_MB), "TLENS_OWN_SANDBOXES": "3"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        s = dataclasses.replace(settings_mod.load(), workers=2, straggler_s=2.0)
        assert s.sandbox and s.class_mode and s.scratch_mb == SCRATCH_MB
        eng = Engine(s)
        assert eng.wait_ready()
        yield eng
        eng.close()


def compile_as(eng, session, source, filename="mine.py"):
    t0 = time.perf_counter()
    r = eng.compile(CompileRequest(source=source, filename=filename), session=session)
    return r, time.perf_counter() - t0


def alone_seconds(eng, session="user:alice", runs=2) -> float:
    """Her compile with the class otherwise idle (median), after one not counted (her sandbox warm)."""
    assert compile_as(eng, session, VADD + "\n# warm\n")[0].ok
    times = []
    for i in range(runs):
        r, s = compile_as(eng, session, VADD + f"\n# alone {i}\n")
        assert r.ok, r.error
        times.append(s)
    return statistics.median(times)


def own_folder(eng, session) -> Path | None:
    found = eng.own.sessions().get(session)
    return found["worker"].folder if found else None


def processes_under(folder: Path) -> list[int]:
    """Processes whose command line names `folder` (a sandbox's bwrap names its scratch)."""
    out = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and str(folder).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.append(int(pid))
        except OSError:
            pass
    return out


def beside_alice(eng, attack: str, folder: Path):
    """mallory's `attack` compiled while alice compiles: (its result, alice's, her seconds, the
    Watch of the host while both ran)."""
    watch, box = Watch(folder), {}
    t = threading.Thread(target=lambda: box.setdefault("r", compile_as(eng, "user:mallory", attack)[0]))
    t.start()
    other, seconds = compile_as(eng, "user:alice", VADD + f"\n# beside {time.monotonic()}\n")
    t.join(120)
    return box["r"], other, seconds, watch.stop()


def gone_within(eng, session, folder: Path, seconds: float = 30.0) -> bool:
    """The student's tabs closed: after `forget`, none of their processes and no folder left."""
    eng.forget(session)
    return until(lambda: not processes_under(folder) and not folder.exists(), seconds)


SHM_ATTACK = """
written = {}
for where in ("/dev/shm", "/", "/etc", "/dev", "/usr"):
    total = 0
    try:
        with open(os.path.join(where, "fill"), "wb") as f:
            chunk = b"x" * (16 << 20)
            while total < (4608 << 20):
                f.write(chunk)
                f.flush()
                total += len(chunk)
    except OSError as e:
        written[where] = (total, e.strerror)
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
seg = libc.shmget(0, 128 << 20, 0o1600)           # IPC_PRIVATE, IPC_CREAT | 0600
addr = libc.shmat(seg, None, 0)
ctypes.memset(addr, 1, 128 << 20)                 # touched: memory held after every process is gone
print("WRITTEN", written, "SEGMENT", seg)
"""

PROBE = """
left = sorted(os.listdir("/dev/shm")) + open("/proc/sysvipc/shm").read().splitlines()[1:]
print("LEFT", left)
"""


def test_memory_written_anywhere_in_the_sandbox_is_bounded_and_does_not_outlive_the_job(engine):
    """Attack 1: a job writes 4.5 GiB into /dev/shm (and tries /, /etc, /dev, /usr), and keeps a
    128 MiB System V segment. Every place is sized or read-only; after the job nothing of it
    is held (the student's sandbox lives on for their next job); their tabs closed, nothing."""
    alone = alone_seconds(engine)
    r, _ = compile_as(engine, "user:mallory", VADD)          # her sandbox, warm
    assert r.ok, r.error
    folder = own_folder(engine, "user:mallory")
    cgroup = engine.own.sessions()["user:mallory"]["worker"].cgroup
    held_before = cgroup.memory_bytes() if cgroup is not None else None
    before = available_mib()
    attack, other, seconds, watch = beside_alice(engine, with_example(SHM_ATTACK), folder.parent)
    assert attack.ok, attack.error
    written = attack.output.split("WRITTEN ")[1]
    print(f"\nFIGURE attack wrote {written.strip()[:300]}; least free memory {before - watch.low_mem:.0f} MiB "
          f"below the start; alice {seconds:.2f} s vs alone {alone:.2f} s: {seconds / alone:.2f}x")
    shm = eval(written.split(" SEGMENT")[0])        # noqa: S307 - our own job's dict of ints and strings
    assert shm["/dev/shm"][0] <= 64 * MiB and shm["/dev/shm"][1] == "No space left on device"
    for where in ("/", "/etc", "/dev", "/usr"):
        assert shm[where] == (0, "Read-only file system"), shm
    assert before - watch.low_mem < 1024, "the attack held more than its bounds while it ran"
    assert other.ok and seconds <= 3 * alone, f"alice's compile took {seconds:.1f} s, {seconds / alone:.1f}x alone"
    probe, _ = compile_as(engine, "user:mallory", with_example(PROBE))    # the same sandbox, its next job
    assert probe.ok, probe.error
    assert "LEFT []" in probe.output, probe.output
    assert own_folder(engine, "user:mallory") == folder
    if held_before is not None:       # her sandbox's memory (tmpfs and shared memory pages are charged to it)
        held_after = cgroup.memory_bytes()
        print(f"FIGURE her sandbox held {held_before / MiB:.0f} MiB before the attack, {held_after / MiB:.0f} MiB after")
        assert held_after < held_before + 64 * MiB, "memory of the job still held after it"
    assert available_mib() > before - 1024          # the host (shared, noisy): the old hole was 4.5 GiB
    assert gone_within(engine, "user:mallory", folder)
    assert cgroup is None or until(lambda: not any(d.exists() for d in cgroup.dirs), 30)


FILL_CACHE = """
cache = os.environ["TRITON_CACHE_DIR"]
made, err = 0, ""
for i in range(16):                       # 16 x 512 MiB, 16 MiB at a time: as much as will fit
    fd = os.open(os.path.join(cache, f"fill{i}"), os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        for off in range(0, 512 << 20, 16 << 20):
            os.posix_fallocate(fd, off, 16 << 20)
            made += 16
    except OSError as e:
        err = e.strerror
    os.close(fd)
print("FILLED", made, "MiB", err)
"""


def test_files_kept_between_jobs_are_measured_at_every_answer(engine):
    """Attack 2: a job that answers normally after 16 x 512 MiB `posix_fallocate` into its kept
    Triton cache. The scratch folder's tmpfs stops it at its size (host disk untouched); the
    answer is measured, refused with a clear message, the sandbox reset; the next job is served."""
    alone = alone_seconds(engine)
    r, _ = compile_as(engine, "user:mallory", VADD)
    assert r.ok, r.error
    folder = own_folder(engine, "user:mallory")
    mounted = scratch.is_mounted(folder)
    before_mem, before_disk = available_mib(), disk_free_mib(folder.parent)
    attack, other, seconds, watch = beside_alice(engine, with_example(FILL_CACHE), folder.parent)
    print(f"\nFIGURE tmpfs scratch: {mounted}; {attack.error and attack.error.message}; "
          f"least free disk "
          f"{before_disk - watch.low_disk:.0f} MiB below the start, memory {before_mem - watch.low_mem:.0f} MiB; "
          f"alice {seconds / alone:.2f}x alone")
    assert attack.error is not None and attack.error.kind == "limit", attack.error
    assert "allowance" in attack.error.message and "sandbox reset" in attack.error.message
    assert before_disk - watch.low_disk < (64 if mounted else SCRATCH_MB + 600)
    assert before_mem - watch.low_mem < SCRATCH_MB + 768
    assert other.ok and seconds <= 3 * alone
    assert until(lambda: not folder.exists(), 30)            # the sandbox that held it is gone
    again, _ = compile_as(engine, "user:mallory", VADD + "\n# again\n")
    assert again.ok, again.error
    assert own_folder(engine, "user:mallory") != folder
    assert disk_free_mib(folder.parent) > before_disk - 64


def test_without_a_tmpfs_the_answer_is_still_measured(engine, monkeypatch):
    """Where the server may not mount (not root): the kept folder is measured at the answer all
    the same; a job that leaves more than a sandbox keeps is refused."""
    monkeypatch.setattr(scratch, "make", lambda folder, mb, files: folder.mkdir(parents=True, exist_ok=True) or False)
    engine.forget("user:nomount")
    leave = f"""
os.makedirs(os.environ["TRITON_CACHE_DIR"], exist_ok=True)
with open(os.path.join(os.environ["TRITON_CACHE_DIR"], "kept"), "wb") as f:
    f.write(b"x" * ({SCRATCH_MB // 4 + 16} << 20))
"""
    r, _ = compile_as(engine, "user:nomount", with_example(leave))
    folder_gone = r.error is not None and r.error.kind == "limit"
    assert folder_gone and "when it answered" in r.error.message, r.error
    again, _ = compile_as(engine, "user:nomount", VADD + "\n# nomount\n")
    assert again.ok, again.error
    engine.forget("user:nomount")


def test_identities_cost_something(engine):
    """Attack 6: 48 page opens without a cookie (each a new identity, from one address) start no
    sandbox; the same identities compiling start at most the gate's per-address allowance, the
    rest run on the pool; a student who is working keeps her sandbox and her speed."""
    alone = alone_seconds(engine)
    alice = own_folder(engine, "user:alice")
    started = engine.own.status()["started"]
    t0 = time.process_time()
    for i in range(48):
        engine.prewarm(f"user:browser:flood{i}", address="203.0.113.7", named=False)
    assert engine.own.status()["started"] == started, "a page open without a name started a sandbox"
    print(f"\nFIGURE 48 page opens: {time.process_time() - t0:.3f} CPU-s in the server, no sandbox started")
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(compile_as(
        engine, f"user:browser:flood{i}", VADD + f"\n# flood {i}\n")[0])) for i in range(8)]
    for th in threads:
        th.start()
    time.sleep(1.0)
    other, seconds = compile_as(engine, "user:alice", VADD + "\n# working\n")
    for th in threads:
        th.join(300)
    print(f"FIGURE flood of 8 compiles: {engine.own.status()}; alice {seconds:.2f} s vs alone {alone:.2f} s: "
          f"{seconds / alone:.2f}x")
    assert len(results) == 8 and all(r.ok or r.error.kind == "busy" for r in results)
    assert engine.own.status()["started"] - started <= engine.own.gate.per_address
    assert own_folder(engine, "user:alice") == alice, "the flood evicted a working student"
    assert other.ok and seconds <= 3 * alone
    for i in range(48):
        engine.forget(f"user:browser:flood{i}")
    assert until(lambda: not any(k.startswith("user:browser:flood") for k in engine.own.sessions()), 30)


def _repeated_ptx(lines: int, step: int) -> str:
    """`lines` lines made of 100 distinct PTX lines repeated, in an order set by `step`."""
    distinct = [f"\tld.global.v4.b32 \t{{%r{i}, %r{i + 1}, %r{i + 2}, %r{i + 3}}}, [%rd{i}+{16 * i}];"
                for i in range(100)]
    return "\n".join(distinct[(k * step + 11) % 100] for k in range(lines)) + "\n"


def test_a_compare_of_hostile_texts_is_bounded_work_in_the_server():
    """Attack 4: Compare on two PTX texts of 100 distinct lines repeated (difflib: quadratic, one
    diff 208 CPU-s in the Streamlit process). The server's whole Compare of it (alignment and the
    side-by-side HTML) stays within a bounded CPU and memory; past the size cap it says so."""
    import resource
    from app.render.diff_html import render_diff_html
    from inspectors.explain import diff
    a, b = _repeated_ptx(20_000, 1), _repeated_ptx(20_000, 37)
    rss0, cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time()
    d = diff.diff_stage("ptx", a, b)
    html = render_diff_html(d, a, b)
    cpu, grown = time.process_time() - cpu0, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    print(f"\nFIGURE Compare of 2 x 20,000 hostile lines: {cpu:.2f} CPU-s, peak RSS +{grown:.0f} MiB, "
          f"{len(html) / MiB:.1f} MB of HTML ({d.summary()})")
    assert not d.too_large and len(d.rows) >= 20_000
    assert cpu < 30 and grown < 1024
    big = _repeated_ptx(diff.MAX_DIFF_LINES + 1, 1)
    t0 = time.process_time()
    d = diff.diff_stage("ptx", big, big + "x\n")
    assert d.too_large.startswith("too large to diff here") and not d.rows
    assert "too large to diff here" in render_diff_html(d, big, big) and time.process_time() - t0 < 5


def test_a_project_too_large_is_refused_before_the_server_reads_it(tmp_path, monkeypatch):
    """Attack 5: 200 workspace files of ~1 MB and two Compile clicks (the server went from 102 MB to
    2.3 GB). The count and bytes are checked from stat where the data enters: refused with the
    figures, no file read, the server's memory flat, the editor's text kept."""
    import resource
    from streamlit.testing.v1 import AppTest
    from conftest import ROOT
    from editor_helpers import editor
    from inspectors.store import workspace as workspace_mod
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("TLENS_WORKSPACE_DIR", str(ws))
    monkeypatch.delenv("TLENS_CLASS", raising=False)         # one workspace (the module's engine set a class's)
    (ws / "driver.py").write_text(VADD)
    for i in range(200):
        (ws / f"big_{i:03d}.py").write_text(("# " + "x" * 97 + "\n") * 10_000)
    read = []
    real = workspace_mod.Workspace.read
    monkeypatch.setattr(workspace_mod.Workspace, "read", lambda self, name: read.append(name) or real(self, name))
    app = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=240)
    app.run()
    app.selectbox(key="picker").set_value("ws:driver.py").run()
    edited = VADD + "\n# my edit\n"
    editor(app).input(edited).run()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu0 = time.process_time()
    for _ in range(2):
        app.button(key="compile").click().run()
        assert not app.exception, app.exception
        assert app.error and "200 files" in app.error[0].value and "at most" in app.error[0].value
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    print(f"\nFIGURE 200 x 1 MB project, two Compiles: refused; peak RSS +{grown:.0f} MiB, "
          f"{time.process_time() - cpu0:.2f} CPU-s")
    assert [n for n in read if n.startswith("big_")] == []
    assert grown < 100 and editor(app).value == edited


PAD_CUBIN = """
import inspectors.compile.triton_shim as shim
real = shim.compile_launch


def padded(*a, **k):
    compiled = real(*a, **k)
    compiled.asm["cubin"] = compiled.asm["cubin"] + b"\\0" * (12 << 20)    # a valid ELF, 12 MB of padding
    return compiled


shim.compile_launch = padded
"""


def test_a_padded_cubin_is_refused_where_it_enters(engine):
    """Attack 3: the job pads its kernel's cubin to ~12 MB (nvdisasm then prints 44 MB; the server
    spent 55 CPU-s and kept +476 MB). The answer's cubin is dropped at the size check (nothing
    in the server disassembles it); what SASS the panel shows is the worker's, bounded."""
    import resource
    from inspectors.compile import sass_job
    source = with_example(PAD_CUBIN).replace("    add(x[1:], y[1:])", "    pass  # add(x[1:], y[1:])")
    rss0, cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time()
    r, _ = compile_as(engine, "user:mallory", source, filename="padded.py")
    assert r.ok, r.error
    k = r.kernels[0]
    # the cubin is dropped; the SASS is the worker's own (made in the student's sandbox, cut at
    # 16 MB) or, where it made none, the reason
    assert k.cubin == "" and len(k.stages.get("sass", "")) <= 16 << 20
    assert "add_kernel" in k.stages["sass"] or "too large to disassemble here" in k.stages["sass"]
    reply = sass_job.disassemble(k.cubin) if k.cubin else None
    cpu, grown = time.process_time() - cpu0, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    print(f"\nFIGURE padded cubin: dropped, SASS {len(k.stages['sass']) / MiB:.2f} MB from the worker; the server's part {cpu:.2f} CPU-s, peak RSS +{grown:.0f} MiB")
    assert reply is None and cpu < 5 and grown < 200
    engine.forget("user:mallory")
