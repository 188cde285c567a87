"""A job's launches compiled in forked children (inspectors/compile/parallel.py): the results come
in launch order whatever order the children end in, the first launch's error (in order) is the
one raised, a child's fd 2 is its own, and a library op's launches really compile side by side."""
import faulthandler
import os
import signal
import sys
import time

import pytest

from inspectors.base.errors import CompileError
from inspectors.base.result import KernelResult
from inspectors.compile import loading, parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _kernel(i: int) -> KernelResult:
    return KernelResult(f"k{i}", "cuda:90", {"num_warps": 4}, (), {"source": f"# {i}\n", "ptx": f"// {i}\n"}, launch=i)


def test_results_come_in_launch_order(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "cores", lambda: 3)

    def compile_one(i):
        time.sleep(0.05 * (5 - i))          # the last launch ends first
        return _kernel(i)
    got = parallel.compile_forked(5, tmp_path, "k.py", compile_one)
    assert [k.name for k in got] == [f"k{i}" for i in range(5)] and got[2] == _kernel(2)


def test_the_first_error_in_launch_order_is_raised(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "cores", lambda: 4)

    def compile_one(i):
        if i == 1:
            time.sleep(0.3)                  # ends after launch 3's error
            raise loading.JobError(CompileError("compile", "launch 1 failed", "k.py", 7))
        if i == 3:
            raise loading.JobError(CompileError("compile", "launch 3 failed", "k.py", 9))
        return _kernel(i)
    with pytest.raises(loading.JobError) as e:
        parallel.compile_forked(4, tmp_path, "k.py", compile_one)
    assert e.value.error.message == "launch 1 failed" and e.value.error.line == 7


def test_another_exception_is_reported_not_lost(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "cores", lambda: 2)

    def compile_one(i):
        if i == 0:
            raise ValueError("no such config")
        return _kernel(i)
    with pytest.raises(loading.JobError) as e:
        parallel.compile_forked(2, tmp_path, "k.py", compile_one)
    assert e.value.error.kind == "runtime" and "ValueError: no such config" in e.value.error.message


def test_each_child_writes_its_own_fd_2(tmp_path, monkeypatch):
    """What the compiler prints to fd 2 while launch i compiles lands in launch i's file."""
    monkeypatch.setattr(parallel, "cores", lambda: 3)

    def compile_one(i):
        fd = os.open(tmp_path / f"diag-{i}.txt", os.O_WRONLY | os.O_CREAT)
        os.dup2(fd, 2)
        for _ in range(50):
            os.write(2, f"launch {i}\n".encode())
            time.sleep(0.001)
        return _kernel(i)
    parallel.compile_forked(3, tmp_path, "k.py", compile_one)
    for i in range(3):
        assert set((tmp_path / f"diag-{i}.txt").read_text().split("\n")) == {f"launch {i}", ""}
    sys.stderr.write("")                     # this process's fd 2 is untouched


def test_a_library_op_compiles_its_launches_side_by_side(engine):
    """A file of several launches compiles in the worker's children: every launch there, in
    order, each with its own PTX (the launches' compile times overlap on a machine of 2+ cores)."""
    from conftest import SNIPPETS
    from inspectors.base.result import CompileRequest
    src = (SNIPPETS / "autotune_prune.py").read_text()
    r = engine.compile(CompileRequest(source=src, filename="autotune_prune.py", target="cuda:90"), timeout=300)
    assert r.ok, r.error
    assert len(r.kernels) >= 2 and [k.launch for k in r.kernels] == list(range(len(r.kernels)))
    assert all(".entry" in k.stages["ptx"] for k in r.kernels)


def test_one_child_per_core_takes_launch_after_launch(tmp_path, monkeypatch):
    """Six launches on two cores: two children, each compiling the next launch as it ends one
    (a fork per core, not per launch)."""
    monkeypatch.setattr(parallel, "cores", lambda: 2)

    def compile_one(i):
        time.sleep(0.02)
        return KernelResult(f"k{i}", "cuda:90", {}, (), {"source": str(os.getpid())}, launch=i)
    got = parallel.compile_forked(6, tmp_path, "k.py", compile_one)
    pids = {k.stages["source"] for k in got}
    assert [k.name for k in got] == [f"k{i}" for i in range(6)]
    assert len(pids) == 2 and str(os.getpid()) not in pids


def test_a_child_that_dies_is_replaced_and_the_worker_ends_as_it_did(tmp_path, monkeypatch):
    """Launch 1's child aborts (an LLVM abort): the launches after it are still compiled by a new
    child and answered, then the worker ends with the child's signal, so the engine reads the
    stages launch 1 left (journal.recover)."""
    monkeypatch.setattr(parallel, "cores", lambda: 2)

    def compile_one(i):
        if i == 1:
            os.kill(os.getpid(), signal.SIGABRT)
        time.sleep(0.05)
        return _kernel(i)
    pid = os.fork()
    if pid == 0:                                  # the worker
        try:
            faulthandler.disable()                 # pytest's: it would print the abort's stack
            parallel.compile_forked(5, tmp_path, "k.py", compile_one)
        finally:
            os._exit(0)
    status = os.waitpid(pid, 0)[1]
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGABRT
    answered = sorted(p.name for p in tmp_path.glob("launch-*.answer.json"))
    assert answered == [f"launch-{i}.answer.json" for i in (0, 2, 3, 4)]
