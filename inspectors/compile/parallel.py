"""A job's launches compiled at the same time: each in a child forked from the worker after
example() recorded them, at most one child per core. The children share the worker's sandbox,
its limits and its CPU share (a class server's cgroup weight: one student's fifty launches do not
take more of the machine than one compile of theirs would), and each child's fd 2 is its own, so
a launch's compiler diagnostics (its remarks, its errors) stay that launch's.

    kernels = compile_forked(len(launches), job_dir, "k.py", lambda i: compile_one(i))

What one process would do, the children do: the results come in launch order; the first launch
(in order) whose compile raised a JobError raises it; a child that died (an LLVM abort) ends the
worker the same way once the other children are done, and the engine reads every launch's stages
back from the job folder (inspectors/compile/journal.py).
"""
from __future__ import annotations

import json
import os
import sys
import traceback
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


def compile_forked(n: int, job_dir: Path, filename: str, compile_one: Callable[[int], KernelResult]
                   ) -> list[KernelResult]:
    answers: dict[int, int] = {}
    running: dict[int, int] = {}
    todo = list(range(n))
    while todo or running:
        while todo and len(running) < cores():
            i = journal.next_launch(job_dir, todo)        # a launch the page opened first, else in order
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:                     # the child: compile launch i, write its answer, leave
                _answer(job_dir, i, filename, lambda i=i: compile_one(i))
            running[pid] = i
        pid, status = os.wait()
        if pid in running:
            answers[running.pop(pid)] = status
    kernels = []
    for i in range(n):
        try:
            data = json.loads(_path(job_dir, i).read_text())
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):       # the child died mid-compile: end as it did
            code = os.waitstatus_to_exitcode(answers[i])
            if code < 0:
                os.kill(os.getpid(), -code)
            os._exit(code or 70)
        if "error" in data:
            raise loading.JobError(CompileError.from_json(data["error"]))
        kernels.append(KernelResult.from_json(data["kernel"]))
    return kernels


def _path(job_dir: Path, i: int) -> Path:
    return job_dir / f"launch-{i}.answer.json"


def _answer(job_dir: Path, i: int, filename: str, compile_one: Callable[[], KernelResult]) -> None:
    """In a forked child: `compile_one()`'s kernel, or the error it raised, as launch i's answer
    (journal.answered, which the engine streams to the page); then the child ends at once (no
    atexit handler, nothing of the parent's flushed twice)."""
    try:
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
    finally:
        os._exit(0)
