"""The compile engine: a pool of warm worker processes (torch and triton imported) and a
fair queue in front of them, shared by every session of the server.

    engine = Engine()
    result = engine.compile(CompileRequest(source=text, target="cuda:90"), session="alice",
                            on_wait=lambda position, seconds: ...)

* **Pool.** `TLENS_WORKERS` warm workers (default: from the cores and the memory, see
  `settings.default_workers`). A job past its time limit, or a worker that dies, gets that worker
  killed (its whole process group) and a fresh one started in its slot; the other workers keep
  compiling. If it died mid-compile (LLVM aborted), the stages it had made are read back from
  the job folder (`journal`) and returned with the crash.
* **Hangs cost only their own slot.** A job that has run longer than `straggler_s` (3 s by
  default, `TLENS_STRAGGLER_S`; a library kernel compiles in 0.1-1.5 s on a 2-core box) no
  longer counts against the pool: while it runs on, a spare worker is started so the others
  in the queue are not held up by it, up to as many spares as the pool has workers. A spare is
  stopped when the job it stood in for ends.
* **Fair queue.** A free worker goes to the waiting session served least recently (then to
  the one waiting longest), not first come first served: one student pressing Compile ten
  times cannot push the class back ten places. A
  session may have at most `TLENS_SESSION_JOBS` jobs waiting or running (default 2); one more
  is refused at once with an error of kind `busy`.
* **Where am I?** `on_wait(position, seconds)` is called while a job waits, about twice a
  second: `position` = how many jobs will be served before it.

The engine never imports torch or triton: it is safe to use from the Streamlit server.
"""
from __future__ import annotations

import dataclasses
import heapq
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable

from inspectors.base import settings as settings_mod
from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.compile import journal

_REPO_ROOT = Path(__file__).resolve().parents[2]


class _Worker:
    def __init__(self, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "inspectors.compile.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=str(_REPO_ROOT), env=env, text=True, encoding="utf-8", start_new_session=True,
        )
        self.lines: queue.Queue = queue.Queue()
        self.ready = threading.Event()
        self.info: dict = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            if msg.get("ready"):
                self.info = msg
                self.ready.set()
            else:
                self.lines.put(msg)
        self.lines.put(None)   # EOF: the worker died
        self.ready.set()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


class _Ticket:
    """One job waiting for (or holding) a worker."""

    def __init__(self, session: str):
        self.session = session
        self.slot: int | None = None          # set by the scheduler when it is this job's turn
        self.enqueued = time.monotonic()
        self.started: float | None = None     # when it got its worker
        self.reniced = False                  # its worker was given the lowest CPU priority


class Engine:
    """A pool of warm workers behind a fair queue (see the module docstring)."""

    def __init__(self, settings: settings_mod.Settings | None = None, workers: int | None = None,
                 session_jobs: int | None = None, straggler_s: float | None = None, env: dict | None = None):
        """`env`: variables added to the environment of every worker this engine starts; the
        others default to the settings."""
        self.settings = settings or settings_mod.load()
        self.extra_env = dict(env or {})
        self.size = max(1, workers or self.settings.workers)
        self.session_jobs = max(1, session_jobs or self.settings.session_jobs)
        self.straggler_s = self.settings.straggler_s if straggler_s is None else straggler_s
        self.scratch = Path(tempfile.mkdtemp(prefix="tlens-"))
        self._cv = threading.Condition()
        self._jobs = 0
        self._slots: list[_Worker | None] = [self._spawn() for _ in range(self.size)]
        self._busy: dict[int, _Ticket] = {}              # slot -> the job running there
        self._queues: dict[str, deque[_Ticket]] = {}     # session -> its waiting jobs, oldest first
        self._served: dict[str, int] = {}                # session -> when it was last given a worker
        self._dispatches = 0
        self._changes = 0                                # bumped whenever the queues change
        self._order: tuple[int, dict[int, int]] = (-1, {})   # (_changes, id(ticket) -> jobs ahead)
        self._stragglers: set[int] = set()               # slots whose job outran straggler_s
        self.completed = 0
        self._closed = False

    # -- the pool -------------------------------------------------------------------------------

    def _spawn(self) -> _Worker:
        env = {**os.environ, **self.extra_env}
        env["TRITON_CACHE_DIR"] = str(self.settings.triton_cache_dir)
        env["TLENS_TRITON_CACHE_BASE"] = str(self.settings.triton_cache_dir)
        env["TLENS_WORKER_MEMORY_MB"] = str(self.settings.worker_memory_mb)
        env["TLENS_REPRO_DIR"] = str(self.settings.repro_dir)
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # triton 3.9 warns when unset; 1 is its default
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        self.settings.triton_cache_dir.mkdir(parents=True, exist_ok=True)
        return _Worker(env)

    @property
    def triton_version(self) -> str:
        for w in list(self._slots):
            if w is not None and w.ready.wait(300) and w.info.get("triton_version"):
                return w.info["triton_version"]
        return ""

    @property
    def memory_limit_mb(self) -> int:
        """The workers' address-space limit in MB; 0 where they set none (a GPU machine)."""
        for w in list(self._slots):
            if w is not None and w.ready.wait(300):
                return int(w.info.get("memory_limit_mb", 0))
        return 0

    def wait_ready(self, timeout: float = 300) -> bool:
        """All of the pool's workers started (each imports torch and triton)."""
        deadline = time.monotonic() + timeout
        return all(w is not None and w.ready.wait(max(0.0, deadline - time.monotonic())) and w.alive()
                   for w in list(self._slots))

    def status(self) -> dict:
        """What the pool is doing now: workers, running and waiting jobs (for the UI)."""
        with self._cv:
            return {"workers": self.size, "slots": len(self._slots), "running": len(self._busy),
                    "waiting": sum(len(q) for q in self._queues.values()),
                    "stragglers": len(self._stragglers), "completed": self.completed,
                    "pids": [w.proc.pid for w in self._slots if w is not None]}

    def worker_pids(self) -> list[int]:
        return self.status()["pids"]

    # -- the queue ------------------------------------------------------------------------------

    def compile(self, request: CompileRequest, timeout: float | None = None, session: str = "",
                on_wait: Callable[[int, float], None] | None = None) -> CompileResult:
        timeout = self.settings.compile_timeout_s if timeout is None else timeout
        ticket = self._enqueue(session)
        if ticket is None:
            return CompileResult(error=CompileError(
                "busy", f"you already have {self.session_jobs} compiles waiting or running; this one was not "
                "queued. Wait for them to finish, then press Compile again.", request.filename, None))
        try:
            slot = self._wait_turn(ticket, on_wait)
            return self._run(slot, request, timeout)
        finally:
            if ticket.reniced and ticket.slot is not None:
                self._restore_priority(ticket.slot)
            self._finish(ticket)

    def _enqueue(self, session: str) -> _Ticket | None:
        with self._cv:
            mine = len(self._queues.get(session, ())) + sum(t.session == session for t in self._busy.values())
            if mine >= self.session_jobs:
                return None
            ticket = _Ticket(session)
            self._queues.setdefault(session, deque()).append(ticket)
            self._changes += 1
            self._dispatch()
            return ticket

    def _wait_turn(self, ticket: _Ticket, on_wait) -> int:
        with self._cv:
            while ticket.slot is None:
                if on_wait is not None:
                    position = self._position(ticket)
                    waited = time.monotonic() - ticket.enqueued
                    self._cv.release()
                    try:
                        on_wait(position, waited)
                    finally:
                        self._cv.acquire()
                    if ticket.slot is not None:
                        break
                self._cv.wait(0.5)
                self._check_stragglers()
            return ticket.slot

    def _next_session(self, queues: dict, served: dict) -> str:
        """Fair order: the waiting session served least recently (never served first), ties
        broken by who has waited longest."""
        return min(queues, key=lambda s: (served.get(s, -1), queues[s][0].enqueued))

    def _position(self, ticket: _Ticket) -> int:
        """Jobs that will be served before `ticket`: the scheduler's order, played out once per
        change of the queues for every waiting job (each waiting session asks after every
        dispatch: with 300 of them, playing it out per asker was the server's busiest loop)."""
        if self._order[0] != self._changes:
            self._order = (self._changes, self._play_out())
        return self._order[1].get(id(ticket), 0)

    def _play_out(self) -> dict[int, int]:
        """id(ticket) -> jobs ahead of it, for every waiting job: `_next_session`'s order (least
        recently served first, then the longest waiting) with a heap, n log n."""
        queues = {s: list(q) for s, q in self._queues.items() if q}
        heap = [(self._served.get(s, -1), q[0].enqueued, s) for s, q in queues.items()]
        heapq.heapify(heap)
        ahead, clock, out, nxt = 0, self._dispatches, {}, {s: 0 for s in queues}
        while heap:
            _, _, s = heapq.heappop(heap)
            q = queues[s]
            out[id(q[nxt[s]])] = ahead
            nxt[s] += 1
            ahead += 1
            clock += 1
            if nxt[s] < len(q):
                heapq.heappush(heap, (clock, q[nxt[s]].enqueued, s))
        return out

    def _free_slot(self) -> int | None:
        for i in range(len(self._slots)):
            if i not in self._busy and self._slots[i] is not None:
                return i
        return None

    def _dispatch(self) -> None:
        """Give free workers to waiting jobs in the fair order. Holds self._cv."""
        while self._queues:
            slot = self._free_slot()
            if slot is None:
                return
            session = self._next_session(self._queues, self._served)
            ticket = self._queues[session].popleft()
            if not self._queues[session]:
                del self._queues[session]
            self._changes += 1
            self._dispatches += 1
            self._served[session] = self._dispatches
            ticket.slot = slot
            ticket.started = time.monotonic()
            self._busy[slot] = ticket
            self._cv.notify_all()

    def _check_stragglers(self) -> None:
        """A job running past straggler_s gets a spare worker started beside it (once), so
        the queue moves on at the pool's size. The straggler's processes get the lowest CPU
        priority: a `while True` in example() must not slow the class's compiles on a machine
        with few cores. Holds self._cv."""
        now = time.monotonic()
        for slot, t in list(self._busy.items()):
            if slot in self._stragglers or t.started is None or now - t.started < self.straggler_s:
                continue
            if not t.reniced:
                t.reniced = True
                _lower_priority(self._slots[slot])
            if len(self._slots) >= 2 * self.size or not any(self._queues.values()):
                continue
            self._stragglers.add(slot)
            self._slots.append(self._spawn())
            self._dispatch()

    def _finish(self, ticket: _Ticket) -> None:
        with self._cv:
            if ticket.slot is None:                         # never ran (refused or abandoned)
                q = self._queues.get(ticket.session)
                if q and ticket in q:
                    q.remove(ticket)
                    self._changes += 1
                    if not q:
                        del self._queues[ticket.session]
            else:
                self._busy.pop(ticket.slot, None)
                self.completed += 1
                if ticket.slot in self._stragglers:
                    self._stragglers.discard(ticket.slot)
                    self._retire_spare()
            self._dispatch()
            self._cv.notify_all()

    def _retire_spare(self) -> None:
        """Back to `size` workers once a straggler has ended: stop an idle spare. Holds self._cv."""
        for i in range(len(self._slots) - 1, self.size - 1, -1):
            if i not in self._busy and len([s for s in self._slots if s is not None]) > self.size:
                w, self._slots[i] = self._slots[i], None
                if w is not None:
                    w.kill()
                while self._slots and self._slots[-1] is None and len(self._slots) > self.size:
                    self._slots.pop()
                return

    # -- one job on one worker ------------------------------------------------------------------

    def _run(self, slot: int, request: CompileRequest, timeout: float) -> CompileResult:
        with self._cv:
            worker = self._slots[slot] if slot < len(self._slots) else None
        if worker is None:
            return CompileResult(error=CompileError("crash", "the compile server is shutting down"))
        # Start-up time (imports) is not the job's: wait for the worker to be ready first.
        if not (worker.ready.wait(300) and worker.alive()):
            worker = self._replace(slot)
            if not (worker.ready.wait(300) and worker.alive()):
                return CompileResult(error=CompileError("crash", "the compile worker failed to start"))
        with self._cv:
            self._jobs += 1
            job_dir = self.scratch / f"job-{self._jobs}"
        msg = {"op": "compile", "job_dir": str(job_dir), "request": request.to_json()}
        started = time.perf_counter()
        try:
            worker.proc.stdin.write(json.dumps(msg) + "\n")
            worker.proc.stdin.flush()
            reply = worker.lines.get(timeout=timeout)
        except queue.Empty:
            self._replace(slot)
            return CompileResult(error=CompileError(
                "timeout", f"compile took longer than {timeout:g} s and was stopped (the worker was replaced); "
                f"does example() loop forever?", request.filename, None, _output_tail(job_dir)),
                seconds=time.perf_counter() - started)
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:
            try:   # stdout closes a moment before the process is reaped
                code = worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            self._replace(slot)
            kernels, stage = journal.recover(job_dir)
            label = stage_table.BY_NAME[stage].label if stage in stage_table.BY_NAME else stage
            where = f" while making {label}" if stage else " while running the file"
            error = CompileError("crash", f"the compile worker died ({_describe_exit(code)}){where}; it was restarted",
                                 request.filename, None, _output_tail(job_dir), stage=stage)
            if kernels and stage:      # the stages made before the crash, the last launch's error in place
                kernels = kernels[:-1] + (dataclasses.replace(kernels[-1], error=error),)
            shutil.rmtree(job_dir, ignore_errors=True)
            return CompileResult(kernels=kernels if stage else (), error=error, triton_version=self.triton_version,
                                 seconds=time.perf_counter() - started)
        shutil.rmtree(job_dir, ignore_errors=True)
        return CompileResult.from_json(reply)

    def _restore_priority(self, slot: int) -> None:
        """Normal priority again for the next job on this slot; a server that may not raise a
        priority (not root) gets a fresh worker there instead."""
        with self._cv:
            worker = self._slots[slot] if slot < len(self._slots) else None
        if worker is None or not worker.alive():
            return
        try:
            os.setpriority(os.PRIO_PGRP, worker.proc.pid, 0)
        except OSError:
            self._replace(slot)

    def _replace(self, slot: int) -> _Worker:
        with self._cv:
            old = self._slots[slot] if slot < len(self._slots) else None
        if old is not None:
            old.kill()
        if self._closed:
            return old
        fresh = self._spawn()
        with self._cv:
            self._slots[slot] = fresh
        return fresh

    def close(self):
        with self._cv:
            self._closed = True
            workers, self._slots = list(self._slots), []
        for w in workers:
            if w is not None:
                w.kill()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _lower_priority(worker: _Worker | None) -> None:
    """nice 19 for the worker's whole process group (its launcher's children too)."""
    if worker is None:
        return
    try:
        os.setpriority(os.PRIO_PGRP, worker.proc.pid, 19)
    except (OSError, AttributeError):
        pass


def _describe_exit(code) -> str:
    if code is None:
        return "no answer"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _output_tail(job_dir: Path, limit: int = 8000) -> str:
    path = job_dir / "output.txt"
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""
