"""A job's launches compiled at the same time, in children forked from the worker after example()
recorded them: one child per core, each taking the next launch from the worker as it ends the
last (one fork per core, not per launch: forking a worker with torch and Triton imported costs
CPU, and its copy-on-write more, per fork: docs/09-benchmark-results.md#figures-behind-design-choices).
The children share the worker's sandbox, its limits and its CPU share (a class server's cgroup
weight: one student's fifty launches do not take more of the machine than one compile of theirs
would), and each launch's fd 2 is its own (compile_one redirects it), so a launch's compiler
diagnostics (its remarks, its errors) stay that launch's.

    kernels = compile_forked(len(launches), job_dir, "k.py", lambda i: compile_one(i))

What one process would do, the children do: the results come in launch order; the first launch
(in order) whose compile raised a JobError raises it; a child that died (an LLVM abort) is
replaced for the launches left, and ends the worker the same way once they are done, and the
engine reads every launch's stages back from the job folder (inspectors/compile/journal.py).
"""
from __future__ import annotations

import json
import os
import select
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from inspectors.base import settings as settings_mod
from inspectors.base.errors import CompileError
from inspectors.base.result import KernelResult
from inspectors.compile import journal, loading


def cores() -> int:
    """Children at once: TLENS_COMPILE_CHILDREN, else one per core this process may run on."""
    return settings_mod.load().compile_children or (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def worth_forking(launches: int, pass_dump: bool) -> bool:
    """Several launches and several cores; never for a pass dump (MLIR's dump goes to one fd 2
    the job reads back whole, in order)."""
    return launches > 1 and cores() > 1 and not pass_dump and hasattr(os, "fork")


@dataclass
class _Child:
    pid: int
    tasks: int                 # the worker writes a launch's number here ("7\n"); closed: leave
    done: int                  # the child writes it back when its answer is on disk; EOF: it died
    launch: int | None = None  # the launch it compiles now


def compile_forked(n: int, job_dir: Path, filename: str, compile_one: Callable[[int], KernelResult],
                   keep: Callable[[KernelResult], KernelResult] = lambda k: k) -> list[KernelResult]:
    children: list[_Child] = []
    died: dict[int, int] = {}            # launch -> the wait status of the child that died on it
    todo = list(range(n))
    try:
        while True:
            while todo and len(children) < min(cores(), n):
                children.append(_spawn(children, job_dir, filename, compile_one))
            for child in children:
                if child.launch is None and todo:
                    child.launch = journal.next_launch(job_dir, todo)  # one the page opened first, else in order
                    try:
                        os.write(child.tasks, b"%d\n" % child.launch)
                    except OSError:               # it died between two launches: the launch waits
                        todo.insert(0, child.launch)
                        child.launch = None
            busy = {c.done: c for c in children if c.launch is not None}
            if not busy:
                break
            for fd in select.select(list(busy), [], [])[0]:
                child = busy[fd]
                if os.read(fd, 64):
                    child.launch = None
                else:                             # it died mid-launch: another takes the next
                    died[child.launch] = os.waitpid(child.pid, 0)[1]
                    _close(child)
                    children.remove(child)
    finally:
        for child in children:                   # the rest leave
            _close(child)
            os.waitpid(child.pid, 0)
    kernels = []
    for i in range(n):
        try:
            data = json.loads(_path(job_dir, i).read_text())
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):       # the child died mid-compile: end as it did
            code = os.waitstatus_to_exitcode(died[i]) if i in died else 70
            if code < 0:
                os.kill(os.getpid(), -code)
            os._exit(code or 70)
        if "error" in data:
            raise loading.JobError(CompileError.from_json(data["error"]))
        kernels.append(keep(KernelResult.from_json(data["kernel"])))    # keep: what of it the caller holds
    return kernels


def _path(job_dir: Path, i: int) -> Path:
    return job_dir / f"launch-{i}.answer.json"


def _close(child: _Child) -> None:
    for fd in (child.tasks, child.done):
        try:
            os.close(fd)
        except OSError:
            pass


def _spawn(others: list[_Child], job_dir: Path, filename: str, compile_one: Callable[[int], KernelResult]
           ) -> _Child:
    tasks_r, tasks_w = os.pipe()
    done_r, done_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:                  # the child: its own two pipe ends only (a sibling's EOF stays theirs)
        try:
            for fd in [tasks_w, done_r] + [fd for c in others for fd in (c.tasks, c.done)]:
                os.close(fd)
            _serve(job_dir, filename, compile_one, os.fdopen(tasks_r, "rb"), done_w)
        finally:
            os._exit(0)
    os.close(tasks_r)
    os.close(done_w)
    return _Child(pid, tasks_w, done_r)


def _serve(job_dir: Path, filename: str, compile_one: Callable[[int], KernelResult], tasks, done: int) -> None:
    """In a forked child: each launch the worker sends, compiled and answered (journal.answered,
    which the engine streams to the page), until the worker closes the pipe; then the child ends
    at once (no atexit handler, nothing of the parent's flushed twice)."""
    for line in tasks:
        i = int(line)
        _answer(job_dir, i, filename, lambda: compile_one(i))
        os.write(done, b"%d\n" % i)


def _answer(job_dir: Path, i: int, filename: str, compile_one: Callable[[], KernelResult]) -> None:
    """`compile_one()`'s kernel, or the error it raised, as launch i's answer."""
    try:
        data = {"kernel": compile_one().to_json()}
    except loading.JobError as e:
        data = {"error": e.error.to_json()}
    except BaseException as e:  # noqa: BLE001 - what the worker's one-process loop reports
        data = {"error": CompileError("runtime", f"{type(e).__name__}: {e}", filename, None,
                                      traceback.format_exc()).to_json()}
    journal.answered(job_dir, i, data)
    sys.stdout.flush()
    sys.stderr.flush()
