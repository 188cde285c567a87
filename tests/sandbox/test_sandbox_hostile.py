"""Hostile kernel files against a class server (TLENS_CLASS=1, so every worker is sandboxed):
one file per kind of attack. For each: nothing of the server or of another student reaches the
attacker's result (what its page shows), nothing outside its scratch changes, no process it
started survives the job, and another student's compile right after succeeds.

Markers that must not appear anywhere are computed at run time inside the hostile file
(`"PLANT" + "ED-" + str(6 * 7)`), so that the file's own text, which the page shows and the
result cache keeps, does not contain them.
"""
import dataclasses
import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.process import sandbox
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine

pytestmark = pytest.mark.skipif(sandbox.check() is not None, reason=f"no sandbox here: {sandbox.check()}")

VADD = (SNIPPETS / "vadd.py").read_text()
SECRET_ENV = "TLENS_TEST_SERVER_SECRET"
SECRET = "server-secret-" + "7f3a9c"
VICTIM_TEXT = "# VICTIM-" + "WORK-" + "c0ffee\n" + VADD
PLANTED = "PLANT" + "ED-42"            # what the hostile files compute: "PLANT" + "ED-" + str(6 * 7)
LEFTOVER = "4242.5"                    # the sleep the hostile file leaves behind: str(4242 + 0.5)


def hostile(evil: str) -> str:
    """A valid kernel file whose example() first runs `evil` (indented into the function)."""
    body = "\n".join("    " + line for line in evil.strip("\n").splitlines())
    return VADD.replace("def example():\n", "def example():\n    import os, sys, socket, subprocess, glob\n" + body + "\n", 1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A class server's engine and folders: a workspace with a victim student's file, the shared
    Triton cache (with a trusted kernel in it), the result and repro folders, a secret in the
    server's environment, a TCP and a UDP listener on 127.0.0.1 and an abstract UNIX socket."""
    root = tmp_path_factory.mktemp("classroom")
    env = {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root / "workspace"),
           "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"), "TLENS_REPRO_DIR": str(root / "cache" / "repro"),
           "TLENS_SCRATCH_MB": "200", SECRET_ENV: SECRET}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    s = dataclasses.replace(settings_mod.load(), workers=2)
    assert s.sandbox and s.class_mode
    victim = root / "workspace" / "users" / "victim-0123456789ab" / "homework.py"
    victim.parent.mkdir(parents=True)
    victim.write_text(VICTIM_TEXT)
    (root / "cache" / "results").mkdir(parents=True)
    (root / "cache" / "repro").mkdir(parents=True)
    listeners = _Listeners()
    eng = Engine(s)
    assert eng.wait_ready()
    # a trusted kernel in the shared cache: the library's vector add, compiled by the server
    r = eng.compile(CompileRequest(source=(ROOT / "kernels" / "vector_add.py").read_text(), filename="vector_add.py"),
                    session="teacher")
    assert r.ok, r.error
    trusted = s.triton_cache_dir / "sandbox-trusted" / "by-file" / "vector_add.py"
    assert list(trusted.iterdir()), "the trusted cache was not filled"
    yield {"engine": eng, "settings": s, "root": root, "victim": victim, "listeners": listeners}
    eng.close()
    listeners.close()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


class _Listeners:
    def __init__(self):
        self.received: list[bytes] = []
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen()
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.2)
        self.unix = socket.socket(socket.AF_UNIX)
        self.abstract = f"\0tlens-hostile-{os.getpid()}"
        self.unix.bind(self.abstract)
        self.unix.listen()
        self.unix.settimeout(0.2)
        self.port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            for s in (self.tcp, self.unix):
                try:
                    conn, _ = s.accept()
                    self.received.append(b"connected:" + conn.recv(100))
                    conn.close()
                except OSError:
                    pass
            try:
                self.received.append(b"udp:" + self.udp.recv(100))
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.thread.join(2)
        for s in (self.tcp, self.udp, self.unix):
            s.close()


def _snapshot(*folders: Path) -> dict:
    """Every file and link under the folders, with a digest of its bytes (or the link's target)."""
    out = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                p = Path(dirpath) / name
                try:
                    out[str(p)] = os.readlink(p) if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
                except OSError as e:
                    out[str(p)] = f"unreadable: {e}"
    return out


def _processes_with(text: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if text.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def _shown(result) -> str:
    """Everything the attacker's page can show of its result."""
    return json.dumps(result.to_json())


def attack(server, evil: str, timeout: float = 60, session: str = "mallory"):
    """Compile the hostile file as one student; check the invariants every attack must keep; return
    the result and what its page shows."""
    eng, s, root = server["engine"], server["settings"], server["root"]
    shared = (root / "workspace", s.triton_cache_dir, root / "cache" / "repro", ROOT / "inspectors", ROOT / "kernels")
    before = _snapshot(*shared)
    result = eng.compile(CompileRequest(source=hostile(evil), filename="attack.py"), timeout=timeout, session=session)
    shown = _shown(result)
    for secret in (SECRET, "VICTIM-WORK-c0ffee", PLANTED):
        assert secret not in shown, f"{secret!r} reached the attacker's page"
    after = _snapshot(*shared)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)
                     and "__pycache__" not in k)
    assert not changed, f"the attack changed files outside its scratch: {changed[:10]}"
    assert server["victim"].read_text() == VICTIM_TEXT
    for f in (root / "cache").rglob("*"):
        if f.is_file():
            assert PLANTED.encode() not in f.read_bytes(), f"planted in {f}"
    time.sleep(0.2)
    assert not _processes_with(LEFTOVER), "a process of the job outlived it"
    # another student's compile right after works, on workers the attack did not touch
    other = eng.compile(CompileRequest(source=VADD, filename="mine.py"), session="alice")
    assert other.ok, other.error
    assert any("ld.global.v4.b32" in k.stages.get("ptx", "") for k in other.kernels)
    assert PLANTED not in _shown(other)
    return result, shown


def test_reads_and_writes_another_students_file(server):
    victim = server["victim"]
    result, shown = attack(server, f"""
found = []
needle = "VIC" + "TIM-WORK"      # not in this file's own text
for path in [{str(victim)!r}] + glob.glob("/work/**/*.py", recursive=True)[:2000] + glob.glob("/tmp/**/*.py", recursive=True) \\
        + glob.glob("/root/**/*.py", recursive=True)[:2000] + glob.glob("/home/**/*.py", recursive=True):
    try:
        text = open(path).read()
        if needle in text:
            found.append(path + ": " + text[:200])
    except OSError as e:
        pass
try:
    open({str(victim)!r}, "a").write("# owned")
    found.append("appended")
except OSError as e:
    print("append refused:", e)
print("FOUND", found)
""")
    assert result.ok, result.error
    assert "FOUND []" in result.output


def test_reads_the_servers_environment(server):
    result, shown = attack(server, """
print(dict(os.environ))
for path in glob.glob("/proc/*/environ") + ["/proc/1/environ", f"/proc/{os.getppid()}/environ"]:
    try:
        print(path, open(path, "rb").read()[:4000])
    except OSError as e:
        print(path, e)
print("VISIBLE", len([p for p in os.listdir("/proc") if p.isdigit()]), "PARENT", os.getppid())
""")
    assert result.ok, result.error
    assert SECRET_ENV not in result.output and "/proc/1/environ" in result.output
    visible = int(result.output.split("VISIBLE ")[1].split()[0])
    assert visible < 10, f"the job sees {visible} processes: not a PID space of its own"


def test_kills_the_server_and_the_other_workers(server):
    eng = server["engine"]
    others = eng.worker_pids()
    result, shown = attack(server, f"""
import signal
for pid in [{os.getpid()}, os.getppid(), *{others!r}] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
            print("killed", pid)
        except OSError as e:
            print("kill", pid, e)
""")
    assert all(Path(f"/proc/{p}").exists() for p in [os.getpid()])      # the server (this test) lives
    # the workers that were idle beside the attack still run (or were replaced by the pool itself)
    assert eng.wait_ready(60)


def test_connects_to_a_listener_on_the_loopback(server):
    ls = server["listeners"]
    result, shown = attack(server, f"""
for target in [("127.0.0.1", {ls.port}), ("localhost", {ls.port}), ("1.1.1.1", 80)]:
    try:
        c = socket.create_connection(target, timeout=2)
        c.sendall(b"HOSTILE")
        print("connected", target)
    except OSError as e:
        print("no connection", target, e)
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"HOSTILE", ("127.0.0.1", {ls.udp_port}))
except OSError as e:
    print("udp", e)
try:
    x = socket.socket(socket.AF_UNIX)
    x.connect({ls.abstract!r})
    x.sendall(b"HOSTILE")
    print("connected abstract")
except OSError as e:
    print("abstract", e)
""")
    time.sleep(0.5)
    assert ls.received == [], ls.received
    assert "connected" not in result.output


def test_leaves_a_process_behind(server):
    result, shown = attack(server, """
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", str(4242 + 0.5)])
    os._exit(0)
subprocess.Popen(["/bin/sleep", str(4242 + 0.5)], start_new_session=True)
import time
time.sleep(0.5)
""")
    assert result.ok, result.error


def test_plants_files_in_every_shared_cache(server):
    s, root = server["settings"], server["root"]
    trusted = s.triton_cache_dir / "sandbox-trusted"
    targets = [s.triton_cache_dir, trusted, trusted / "by-file", trusted / "by-file" / "vector_add.py",
               root / "cache" / "results", root / "cache" / "repro", root / "cache", root / "workspace",
               Path.home() / ".triton" / "cache", Path.home() / ".cache" / "triton-lens", Path("/tmp"), ROOT / "kernels",
               ROOT / "inspectors"]
    result, shown = attack(server, f"""
mark = "PLANT" + "ED-" + str(6 * 7)
for folder in {[str(t) for t in targets]!r} + [os.environ.get("TRITON_CACHE_DIR", "")]:
    try:
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, "planted.txt"), "w").write(mark)
        print("wrote into", folder)
    except OSError as e:
        print("refused", folder, e)
# the trusted kernels this sandbox sees: overwrite them, or swap their links for forged ones
cache = os.environ.get("TRITON_CACHE_DIR", "")
for entry in glob.glob(cache + "/by-file/*/*"):
    for f in glob.glob(entry + "/*"):
        try:
            open(f, "a").write(mark)
            print("forged", f)
        except OSError as e:
            print("refused", f, e)
""")
    assert result.ok, result.error
    # the trusted cache still holds the real kernel: a student opening the library vector add gets
    # the stages Triton made, not a forgery
    lib = server["engine"].compile(CompileRequest(source=(ROOT / "kernels" / "vector_add.py").read_text(),
                                                  filename="vector_add.py"), session="bob")
    assert lib.ok and PLANTED not in _shown(lib)


def test_fork_bomb(server):
    result, shown = attack(server, """
import time
n = refused = 0
for _ in range(2000):
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError:
        refused += 1
        if refused == 20:     # a refused fork costs as much as a real one (the pids check follows the copy)
            break
print("forked", n, "refused", refused, flush=True)
""", timeout=60)
    # its own compile may fail after it (ptxas cannot start: the limit is still full of sleepers),
    # or run out its time on a slow machine: the count is flushed first, and a stopped job's
    # output is its error's detail
    printed = result.output + (result.error.detail if result.error else "")
    assert "forked " in printed, (result.error, result.output[-2000:])
    n = int(printed.split("forked ")[1].split()[0])
    assert n < 2000 and "refused 0" not in printed, printed   # the process limit held
    assert not _processes_with("attack.py")


def test_fills_the_scratch_disk(server):
    result, shown = attack(server, """
chunk = b"x" * (16 << 20)
for folder in ("/tmp", os.getcwd(), os.environ["HOME"]):
    try:
        with open(os.path.join(folder, "fill.bin"), "wb") as f:
            for _ in range(4096):          # 64 GiB, were nothing to stop it
                f.write(chunk)
    except OSError as e:
        print("stopped in", folder, e)
    for i in range(100):
        try:
            with open(os.path.join(folder, f"more-{i}.bin"), "wb") as f:
                for _ in range(8):
                    f.write(chunk)
        except OSError as e:
            print("stopped", folder, i, e)
            break
import time
time.sleep(30)
""", timeout=60)
    assert not result.ok and result.error.kind == "limit", result.error
    assert "scratch allowance" in result.error.message


def test_exhausts_memory(server):
    result, shown = attack(server, """
hog = []
while True:
    hog.append(bytearray(1 << 30))
""")
    assert not result.ok and "MemoryError" in result.error.message, result.error


def test_a_link_to_a_server_file_is_not_followed(server, tmp_path):
    """The job replaces its output file, and its journal, by links to a file of the server's, then
    dies: the server reads back what a dead job left without following a link."""
    secret = tmp_path / "server-only.txt"
    secret.write_text(SECRET)
    result, shown = attack(server, f"""
import signal
cwd = os.getcwd()
for name in ("output.txt", "launch-0/kernel.json", "launch-0/stage.ptx", "launch-0/running"):
    path = os.path.join(cwd, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.unlink(path)
    except OSError:
        pass
    os.symlink({str(secret)!r}, path)
os.mkfifo(os.path.join(cwd, "launch-1"))
os.kill(os.getpid(), signal.SIGKILL)
""")
    assert not result.ok and result.error.kind == "crash", result.error
    assert SECRET not in shown


def test_class_server_without_a_sandbox_refuses(monkeypatch):
    monkeypatch.setenv("TLENS_CLASS", "1")
    monkeypatch.setenv("TLENS_SANDBOX", "0")
    monkeypatch.delenv("TLENS_UNSANDBOXED_CLASS", raising=False)
    problem = sandbox.server_problem(settings_mod.load())
    assert problem and "TLENS_UNSANDBOXED_CLASS=1" in problem
    monkeypatch.setenv("TLENS_UNSANDBOXED_CLASS", "1")
    assert sandbox.server_problem(settings_mod.load()) is None
    monkeypatch.setenv("TLENS_SANDBOX", "1")
    monkeypatch.setenv("TLENS_BWRAP", "/nonexistent/bwrap")
    sandbox.check.cache_clear()
    try:
        problem = sandbox.server_problem(settings_mod.load())
        assert problem and "does not work" in problem
    finally:
        sandbox.check.cache_clear()


def test_the_class_page_runs_a_hostile_file_sandboxed(monkeypatch, tmp_path):
    """Through the page of a class server (AppTest, TLENS_CLASS=1): the file that printed the
    server's environment and another student's homework above shows neither, and the page still
    compiles right after."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest
    from apptest_panels import panels
    from editor_helpers import editor
    victim = tmp_path / "workspace" / "users" / "victim-0123456789ab" / "homework.py"
    victim.parent.mkdir(parents=True)
    victim.write_text(VICTIM_TEXT)
    for k, v in {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(tmp_path / "workspace"), "TLENS_WORKERS": "1",
                 "TLENS_TRITON_CACHE_DIR": str(tmp_path / "cache" / "triton"), SECRET_ENV: SECRET}.items():
        monkeypatch.setenv(k, v)
    st.cache_resource.clear()          # the engine of an earlier test in this process was not sandboxed
    try:
        at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=240)
        at.run()
        assert not at.exception, at.exception
        at.selectbox(key="picker").set_value("my_kernel").run()
        evil = hostile(f"""
print(dict(os.environ))
for p in glob.glob("/proc/*/environ"):
    print(p, open(p, "rb").read())
try:
    print(open({str(victim)!r}).read())
except OSError as e:
    print("no homework:", e)
""")
        editor(at).input(evil).run()
        at.button(key="compile").click().run()
        assert not at.exception, at.exception
        page = json.dumps([[getattr(e, "value", "") for e in getattr(at, kind)]
                           for kind in ("code", "markdown", "error", "warning", "info", "text", "caption")],
                          default=str)
        assert "no homework" in page                  # its output is on the page...
        assert SECRET not in page and "VICTIM-WORK-c0ffee" not in page   # ...and nothing of others'
        assert editor(at).value == evil
        editor(at).input(VADD).run()
        at.button(key="compile").click().run()
        assert not at.error and "ptx" in panels(at)
    finally:
        st.cache_resource.clear()


def test_a_worker_that_ran_a_users_file_serves_nobody_after(server):
    """A library file leaves its sandboxed worker in place (only our code ran there); any other
    file runs in a process that serves no job after it (since issue 32: a fresh child of the
    student's own sandbox, which ends with the job; the pool's workers never run it), so what it
    did in its process (a patched module) cannot reach the next job, the same student's included."""
    eng = server["engine"]
    lib = (ROOT / "kernels" / "vector_add.py").read_text()
    assert eng.compile(CompileRequest(source=lib, filename="vector_add.py"), session="bob").ok
    assert eng.wait_ready(120)
    pool = lambda: {w.proc.pid for w in eng._slots if w is not None}     # noqa: E731
    before = pool()
    assert eng.compile(CompileRequest(source=lib, filename="vector_add.py"), session="carol").ok
    assert pool() == before                                       # the library's worker stayed
    r = eng.compile(CompileRequest(source=hostile("import triton.language as tl\ntl.PATCHED = 1\n"
                                                  "print('RAN IN', os.getpid())"),
                                   filename="patch.py"), session="mallory")
    assert r.ok, r.error
    ran_in = r.output.split("RAN IN ")[1].split()[0]
    assert pool() == before                                       # not on the pool's workers
    probe = hostile("import triton.language as tl\nprint('patched' if hasattr(tl, 'PATCHED') else 'clean')\n"
                    "print('RAN IN', os.getpid())")
    for session in ("mallory", "dave", "dave"):
        r = eng.compile(CompileRequest(source=probe, filename="probe.py"), session=session)
        assert r.ok and "clean" in r.output and "patched" not in r.output, r.output
        assert r.output.split("RAN IN ")[1].split()[0] != ran_in or session != "mallory"   # another process


def test_a_kept_worker_retires_before_its_cpu_limit(server, monkeypatch):
    """RLIMIT_CPU counts a worker's whole life, and a kept library worker lives job after job:
    each reply says the CPU seconds the worker has used, and past half its limit the engine
    starts a fresh one rather than let the kernel's SIGKILL end a student's compile."""
    eng = server["engine"]
    lib = (ROOT / "kernels" / "vector_add.py").read_text()
    assert eng.compile(CompileRequest(source=lib, filename="vector_add.py"), session="erin").ok
    assert eng.wait_ready(120)
    used = [w.cpu_s for w in eng._slots if w is not None and w.jobs]
    assert used and all(0 < s < eng._cpu_limit_s() / 2 for s in used), used     # measured, and far from it
    before = set(eng.worker_pids())
    from inspectors.compile import engine as engine_mod
    monkeypatch.setattr(engine_mod, "RETIRE_AT_CPU", min(used) / eng._cpu_limit_s() / 2)   # as if past it
    assert eng.compile(CompileRequest(source=lib, filename="vector_add.py"), session="frank").ok
    assert eng.wait_ready(120)
    assert set(eng.worker_pids()) != before


def test_a_worker_stopped_twice_signals_its_group_once(server, monkeypatch):
    """Once its leader is reaped a worker's number is free for any new process: a second stop
    (a timeout's stop, then the replacement's kill) must not signal it."""
    from inspectors.compile import engine as engine_mod
    eng = server["engine"]
    assert eng.wait_ready(120)
    worker = next(w for w in eng._slots if w is not None)
    signalled = []
    real = os.killpg
    monkeypatch.setattr(engine_mod.os, "killpg", lambda pid, sig: (signalled.append(pid), real(pid, sig)))
    worker.stop()
    worker.stop()
    assert signalled == [worker.proc.pid] and worker.proc.returncode is not None
    eng._replace(eng._slots.index(worker))
    assert eng.wait_ready(120)
