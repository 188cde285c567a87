"""A student's own warm sandbox (inspectors/compile/student_sandboxes.py, zygote.py) on a class server: a
student's files run warm in a sandbox of theirs alone, each job in a fresh child; what a job
leaves behind (a process, a file, a broken folder, a forged answer) does not break that
student's next job and never reaches another student."""
import ast
import dataclasses
import subprocess
import time

import pytest

from conftest import ROOT, SNIPPETS, until
from inspectors.process import proctree, sandbox
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine

pytestmark = pytest.mark.skipif(sandbox.check() is not None, reason=f"no sandbox here: {sandbox.check()}")

VADD = (SNIPPETS / "vadd.py").read_text()
LEFTOVER = "4343.5"        # the sleep a job leaves behind (written str(4343 + 0.5) in the files)
MARK = "OWN-" + "MARK-" + "77"


def edited(prefix: str = "", n: int = 0) -> str:
    """The vector add snippet, edited (a comment), its example() running `prefix` first."""
    body = "\n".join("    " + line for line in prefix.strip("\n").splitlines())
    text = VADD.replace("def example():\n", "def example():\n    import os, sys, subprocess, signal\n" + body + "\n", 1)
    return f"# edit {n}\n" + text


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("own")
    env = {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root / "workspace"),
           "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"), "TLENS_REPRO_DIR": str(root / "cache" / "repro"),
           "TLENS_COMPILE_TIMEOUT": "60"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        s = dataclasses.replace(settings_mod.load(), workers=1)
        assert s.sandbox and s.class_mode and s.own_sandboxes >= 2
        eng = Engine(s)
        assert eng.wait_ready()
        yield eng
        eng.close()


def compile_as(eng, session, source, filename="mine.py", **kw):
    return eng.compile(CompileRequest(source=source, filename=filename), session=session, **kw)


def own_of(eng, session):
    with eng.own._lock:
        own = eng.own._live.get(session)
    return own.worker if own else None


def leftovers() -> list[str]:
    out = subprocess.run(["pgrep", "-af", LEFTOVER], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_a_students_edits_compile_warm_in_their_own_sandbox(engine):
    engine.prewarm("user:ada")
    worker = own_of(engine, "user:ada")
    assert worker is not None and worker.ready.wait(120)
    pool = [w.proc.pid for w in engine._slots if w is not None]
    for n in range(3):
        r = compile_as(engine, "user:ada", edited(n=n))
        assert r.ok, r.error
        assert any("ld.global.v4.b32" in k.stages["ptx"] for k in r.kernels)
        assert {"queue_s", "start_s", "compile_s", "analysis_s", "cpu_s", "job_cpu_s"} <= set(r.timings)
        assert r.timings["cpu_s"] > 0 and r.timings["compile_s"] > 0        # measured, not a budget
        # the sandbox's whole CPU for the job holds the job's own (its fork, answer and sweep besides)
        assert r.timings["job_cpu_s"] >= r.timings["cpu_s"] - 0.01
    assert own_of(engine, "user:ada") is worker and worker.alive()          # the same sandbox, kept
    assert [w.proc.pid for w in engine._slots if w is not None] == pool      # the pool ran none of it
    # the library's own file runs on the pool's worker, which stays
    lib = (ROOT / "kernels" / "vector_add.py").read_text()
    assert not engine.uses_own(CompileRequest(source=lib), "user:ada")
    assert compile_as(engine, "user:ada", lib, "vector_add.py").ok
    assert [w.proc.pid for w in engine._slots if w is not None] == pool


def test_two_students_never_share_a_sandbox_or_its_leftovers(engine):
    plant = """
mark = "OWN-" + "MARK-" + str(7 * 11)
for folder in ("/tmp", os.environ["HOME"], os.environ["TLENS_TRITON_CACHE_BASE"], os.path.dirname(os.getcwd())):
    open(os.path.join(folder, "planted.txt"), "w").write(mark)
print("SCRATCH", os.path.dirname(os.getcwd()))
"""
    r = compile_as(engine, "user:alice", edited(plant))
    assert r.ok, r.error
    alice_scratch = r.output.split("SCRATCH ")[1].split()[0]
    look = f"""
import glob
found = [p for p in glob.glob("/tmp/**", recursive=True) + glob.glob(os.environ["HOME"] + "/**", recursive=True)
         + glob.glob(os.path.dirname(os.getcwd()) + "/**", recursive=True) if p.endswith("planted.txt")]
print("FOUND", found, os.path.exists({alice_scratch!r}))
"""
    r = compile_as(engine, "user:bob", edited(look))
    assert r.ok, r.error
    assert "FOUND [] False" in r.output and MARK not in r.output
    assert own_of(engine, "user:alice").folder != own_of(engine, "user:bob").folder
    # alice's own next job: her Triton cache is hers (the planted file in it stays), the rest is gone
    r = compile_as(engine, "user:alice", edited(look, 1))
    assert r.ok, r.error
    found = ast.literal_eval(r.output.split("FOUND ")[1].splitlines()[0].rsplit(" ", 1)[0])
    assert found and all("/triton/" in p for p in found), found


def test_leftovers_of_a_job_do_not_reach_the_next(engine):
    """A process that escaped into a session of its own, files in /tmp and $HOME (one behind a
    `chmod 000`), a stray folder beside the jobs, a second answer written to the pipe: the
    student's next job compiles as if none of it had happened."""
    evil = """
subprocess.Popen(["sleep", str(4343 + 0.5)], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time_ = __import__("time"); time_.sleep(4343.5)
    os._exit(0)
open("/tmp/left.txt", "w").write("x")
os.makedirs(os.environ["HOME"] + "/locked/inner")
os.chmod(os.environ["HOME"] + "/locked", 0)
os.makedirs(os.path.dirname(os.getcwd()) + "/job-fake/x")
open(os.path.dirname(os.getcwd()) + "/stray.bin", "wb").write(b"0" * 4096)
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink("/proc/self/fd/" + fd).startswith("pipe:"):
            os.write(int(fd), b'{"kernels": [], "error": null, "output": "FORGED"}\\n')
    except OSError:
        pass
"""
    r = compile_as(engine, "user:carol", edited(evil))
    assert not (r.ok and "FORGED" in r.output and not r.kernels)     # a forged answer is not taken as the job's
    time.sleep(0.3)
    assert leftovers() == [], "a process of the job outlived it"
    check = """
print("STATE", os.listdir("/tmp"), os.listdir(os.environ["HOME"]),
      sorted(n for n in os.listdir(os.path.dirname(os.getcwd())) if not n.startswith(("triton", "etc", "home", "repro"))))
"""
    r = compile_as(engine, "user:carol", edited(check, 2))
    assert r.ok, r.error
    assert any("ld.global.v4.b32" in k.stages["ptx"] for k in r.kernels)
    state = r.output.split("STATE ")[1]
    assert "left.txt" not in state and "locked" not in state and "stray.bin" not in state and "job-fake" not in state


def test_a_job_that_breaks_its_sandbox_gets_a_fresh_one(engine):
    """What the sweep cannot put right (the Triton cache made unwritable), a job that kills its
    sandbox, a job that dies by a signal: the next job of that student works."""
    assert compile_as(engine, "user:dan", edited(n=3)).ok
    first = own_of(engine, "user:dan")
    r = compile_as(engine, "user:dan", edited('os.chmod(os.environ["TLENS_TRITON_CACHE_BASE"], 0o500)'))
    assert r.ok, r.error
    assert until(lambda: own_of(engine, "user:dan") is not first)        # renewed
    r = compile_as(engine, "user:dan", edited(n=4))
    assert r.ok, r.error
    second = own_of(engine, "user:dan")
    r = compile_as(engine, "user:dan", edited("os.kill(os.getpid(), signal.SIGSEGV)"))
    assert r.error is not None and r.error.kind == "crash" and "SIGSEGV" in r.error.message
    assert own_of(engine, "user:dan") is second and second.alive()       # the child died, not the sandbox
    r = compile_as(engine, "user:dan", edited("os.kill(os.getppid(), signal.SIGKILL)"))
    assert r.error is not None and r.error.kind == "crash"
    r = compile_as(engine, "user:dan", edited(n=5))
    assert r.ok, r.error
    assert own_of(engine, "user:dan") is not second


def test_a_hang_is_stopped_and_the_student_compiles_again(engine):
    r = compile_as(engine, "user:erin", edited("import time\ntime.sleep(3600)"), timeout=8)
    assert r.error is not None and r.error.kind == "timeout"
    r = compile_as(engine, "user:erin", edited(n=6))
    assert r.ok, r.error



def test_memory_of_a_live_student_is_bounded(engine):
    """What one idle own sandbox holds (the cap's unit, settings.OWN_SANDBOX_MIB): its PSS."""
    engine.prewarm("user:fay")
    worker = own_of(engine, "user:fay")
    assert worker.ready.wait(120)
    pss = proctree.pss_mib(proctree.tree(worker.proc.pid))
    assert 0 < pss <= 2 * settings_mod.OWN_SANDBOX_MIB, pss
