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
  default, `TLENS_STRAGGLER_S`: above a library kernel's compile,
  docs/09-benchmark-results.md#figures-behind-design-choices) no longer counts against the
  pool: while it runs on, a spare worker is started so the others in the queue are not held up
  by it, up to as many spares as the pool has workers. A spare is stopped when the job it stood
  in for ends.
* **Fair queue** (`fairqueue.py`). A free worker goes to the waiting session served least
  recently (then to the one waiting longest), not first come first served: one student pressing
  Compile ten times cannot push the class back ten places. A session may have at most
  `TLENS_SESSION_JOBS` jobs waiting or running (default 2; one more is refused at once with an
  error of kind `busy`), and on a class server one of them running at a time.
* **Where am I?** `on_wait(position, seconds)`, about twice a second while a job waits.
* **Which Triton.** `triton=TritonEnv(...)` (inspectors.base.triton_installs) makes the workers run
  another Triton version: its folder first on their PYTHONPATH, or another interpreter.
  `Engines` (version_engines.py) keeps one Engine per configured version and routes a request by its
  `triton_version` ("" = the server's own).
* **A student's own sandbox** (sandboxed servers, `student_sandboxes.py`): a session's files other than the
  library's run in a warm sandbox of that student's alone, a fresh child of it per job
  (`zygote.py`); the pool's workers run the library's files. The pool's slots still bound how
  many jobs run at once.

The engine never imports torch or triton: it is safe to use from the Streamlit server. Its parts:
`worker_handle` (one worker process and the watch on its scratch), `fairqueue` (who runs where),
`trusted` (the sandboxes' shared, read-only Triton cache), `journal` (a job's folder, read back).
"""
from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Callable

from inspectors.base import settings as settings_mod
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult, bounded, timings_of
from inspectors.process import leftovers, sandbox, scratch
from inspectors.base.triton_installs import TritonEnv
from inspectors.compile import journal
from inspectors.compile import trusted as trusted_cache
from inspectors.compile.fairqueue import FairQueue, sandbox_cpu
from inspectors.compile.student_sandboxes import Gate, OwnSandboxes, memory_room
from inspectors.store.launches import LaunchStore
from inspectors.compile.worker_handle import (MAX_REPLY_BYTES, SCRATCH_FILES, OverQuota, Worker, await_reply,
                                        grown_by_launches, restore_priority)

_REPO_ROOT = Path(__file__).resolve().parents[2]


class Engine(FairQueue):
    """A pool of warm workers behind a fair queue (see the module docstring)."""

    def __init__(self, settings: settings_mod.Settings | None = None, workers: int | None = None,
                 session_jobs: int | None = None, straggler_s: float | None = None, env: dict | None = None,
                 sandboxed: bool | None = None, triton: TritonEnv | None = None, session_running: int | None = None):
        """`env`: variables added to the environment of every worker this engine starts; the
        others default to the settings. `sandboxed`: run every worker in bubblewrap (default:
        the settings' TLENS_SANDBOX); raises SandboxError when the sandbox does not work here.
        `triton`: which Triton the workers run (None: the server's own). `session_running`: jobs
        one session may have running at once (default: 1 on a class server, so that however many
        tabs a student opens, their hangs hold one worker; else as many as it may queue)."""
        self.settings = settings or settings_mod.load()
        self.extra_env = dict(env or {})
        self.triton = triton or TritonEnv("")
        self.size = max(1, workers or self.settings.workers)
        self.session_jobs = max(1, session_jobs or self.settings.session_jobs)
        self.session_running = max(1, session_running or (1 if self.settings.class_mode else self.session_jobs))
        self.straggler_s = self.settings.straggler_s if straggler_s is None else straggler_s
        leftovers.sweep()           # what a server that was killed or stopped left: its folders, mounts, cgroups
        self.scratch = Path(tempfile.mkdtemp(prefix=leftovers.PREFIX))
        leftovers.mark(self.scratch)
        self.sandboxed = self.settings.sandbox if sandboxed is None else sandboxed
        if self.sandboxed:
            problem = sandbox.check()
            if problem:
                raise sandbox.SandboxError(f"the sandbox for users' code does not work on this machine: {problem}")
        self._library = trusted_cache.library_digests()
        self.launch_store = LaunchStore.of(self.settings)     # a big result's launches (base/launches.py)
        self._spawned = 0
        self._spawn_lock = threading.Lock()
        # Every worker is started from this one thread, which lives as long as the engine: bwrap's
        # --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started it ends, and
        # a worker started from a session's script thread or a compile's thread was SIGKILLed
        # when that thread finished (a replacement dead before its first job).
        self._spawner = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tlens-spawn")
        self._cv = threading.Condition()
        self._slots: list[Worker | None] = [self._spawn() for _ in range(self.size)]
        # a class's students' own files run in their own warm sandboxes (student_sandboxes.py); the pool's
        # workers then run only the library's files, and stay
        self.own = OwnSandboxes(lambda: self._spawn(fork=True), self.settings.own_sandboxes, self.settings.own_idle_s,
                                memory_room, Gate(starting=max(2, os.cpu_count() or 2)), protect_s=PROTECT_S
                                ) if self.sandboxed and self.settings.own_sandboxes > 0 else None
        self._init_queue()
        self._closed = False
        # stopped by SIGTERM (Streamlit ends its loop, Python exits): closed; killed: the next start's sweep
        atexit.register(_close_at_exit, weakref.ref(self))

    # -- the pool -------------------------------------------------------------------------------

    def _spawn(self, fork: bool = False) -> Worker:
        """A fresh worker, started from the engine's spawner thread (see __init__); `fork`: a
        student's own sandbox, which runs each job in a child of its own (zygote.py)."""
        return self._spawner.submit(self._spawn_here, fork).result()

    def _spawn_here(self, fork: bool = False) -> Worker:
        env = {**os.environ, **self.extra_env}
        env["TRITON_CACHE_DIR"] = str(self.settings.triton_cache_dir)
        env["TLENS_TRITON_CACHE_BASE"] = str(self.settings.triton_cache_dir)
        env["TLENS_WORKER_MEMORY_MB"] = str(self.settings.worker_memory_mb)
        env["TLENS_REPRO_DIR"] = str(self.settings.repro_dir)
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # triton 3.9 warns when unset; 1 is its default
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (self.triton.path, str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        self.settings.triton_cache_dir.mkdir(parents=True, exist_ok=True)
        argv = [self.triton.python or sys.executable, "-m", "inspectors.compile.worker_main"]
        if not self.sandboxed:
            return Worker(argv, env)
        return self._spawn_sandboxed(argv, {"TLENS_WORKER_FORK": "1"} if fork else {})

    def _spawn_sandboxed(self, argv: list[str], extra: dict) -> Worker:
        """A worker in a sandbox of its own (sandbox.py), for one job (or one user's jobs): its scratch
        folder holds its jobs and a private Triton cache with the trusted cache's kernels read-only."""
        with self._spawn_lock:
            self._spawned += 1
            n = self._spawned
        # unguessable: a job knows its own folder's path (bound at the same path inside), and
        # must not be able to name another worker's from it
        folder = self.scratch / f"w-{secrets.token_hex(8)}"
        scratch.make(folder, self.settings.scratch_mb, SCRATCH_FILES + 10_000)   # a size the kernel enforces
        cache = folder / "triton"
        cache.mkdir(parents=True)
        sandbox.write_passwd(folder / "etc")
        trusted = self.settings.triton_cache_dir / trusted_cache.TRUSTED
        trusted.mkdir(parents=True, exist_ok=True)
        trusted_cache.link_trusted(trusted, cache)
        limits = sandbox.Limits(memory_mb=self.settings.worker_memory_mb or 8192, scratch_mb=self.settings.scratch_mb,
                                cpu_s=self._cpu_limit_s())
        env = {"TRITON_CACHE_DIR": str(cache), "TLENS_TRITON_CACHE_BASE": str(cache),
               "TLENS_WORKER_MEMORY_MB": str(self.settings.worker_memory_mb),
               "TLENS_REPRO_DIR": str(folder / "repro"), "TRITON_DEFAULT_FP_FUSION": "1",
               "TLENS_COMPILE_CHILDREN": str(self.settings.compile_children), **self.extra_env, **extra}
        if self.triton.path:      # an extra Triton version's folder, first on the path (inspectors.base.triton_installs)
            env["PYTHONPATH"] = os.pathsep.join((self.triton.path, str(_REPO_ROOT)))
        jail = sandbox.Jail(writable=(folder,), readable=(trusted,) + ((Path(self.triton.path),) if self.triton.path else ()),
                            env=env, limits=limits, python=self.triton.python or sys.executable)
        cgroup = sandbox.Cgroup.create(f"{self.scratch.name}-w{n}", limits)
        return Worker(sandbox.wrap(argv, jail, folder / "etc"), sandbox.BWRAP_ENV, folder=folder, cgroup=cgroup,
                       preexec=limits.preexec(cgroup))

    def _cpu_limit_s(self) -> int:
        """RLIMIT_CPU of a sandboxed worker: the CPU seconds of its whole life."""
        return int(max(60, 4 * self.settings.compile_timeout_s))

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
        """All of the pool's workers started (each imports torch and triton), and the students' own."""
        deadline = time.monotonic() + timeout
        return all(w.ready.wait(max(0.0, deadline - time.monotonic())) and w.alive()
                   for w in self.workers())

    def workers(self) -> list[Worker]:
        """The pool's live workers, then the students' own sandboxes."""
        return [w for w in list(self._slots) if w is not None] + (self.own.workers() if self.own else [])

    def uses_own(self, request: CompileRequest, session: str) -> bool:
        """Whether this request of this session runs in the session's own sandbox: a class server's
        request for anything but the library's own, unedited files."""
        return self.own is not None and bool(session) and trusted_cache.digest(request.source) not in self._library

    def prewarm(self, session: str, address: str = "", named: bool | None = None) -> None:
        """A student opened the page: their own sandbox started if the proxy named them (`named`;
        None: as said before); `address`: whence (student_sandboxes.Gate limits the starts of the unnamed)."""
        if self.own is not None and session:
            if named is not None:
                self.own.note(session, address, named)
            self.own.prewarm(session)

    def _group(self, session: str) -> str:          # the fair queue's turn (own.group)
        return self.own.group(session) if getattr(self, "own", None) is not None else session

    def forget(self, session: str) -> bool:         # their tabs closed: their sandbox stopped
        return self.own.forget(session) if self.own is not None else False

    def status(self) -> dict:
        """What the pool is doing now: workers, running and waiting jobs (for the UI)."""
        with self._cv:
            return {"workers": self.size, "slots": len(self._slots), "running": len(self._busy) + len(self._detached),
                    "waiting": sum(len(q) for q in self._queues.values()),
                    "stragglers": len(self._stragglers) + len(self._detached), "completed": self.completed,
                    "pids": [w.proc.pid for w in self._slots if w is not None],
                    **({"own": self.own.status()} if self.own else {})}

    def worker_pids(self) -> list[int]:
        """The pool's workers' and the students' own sandboxes' process ids."""
        return [w.proc.pid for w in self.workers()]

    # -- the queue ------------------------------------------------------------------------------

    def compile(self, request: CompileRequest, timeout: float | None = None, session: str = "",
                on_wait: Callable[[int, float], None] | None = None,
                on_progress: Callable[[journal.Progress], None] | None = None) -> CompileResult:
        timeout = self.settings.compile_timeout_s if timeout is None else timeout
        if self.settings.class_mode:       # a class server's limit is the server's: a student cannot raise it
            timeout = min(timeout, self.settings.compile_timeout_s)
        ticket = self._enqueue(session)
        if ticket is None:
            return CompileResult(error=CompileError(
                "busy", f"you already have {self.session_jobs} compiles waiting or running; this one was not "
                "queued. Wait for them to finish, then press Compile again.", request.filename, None))
        try:
            slot = self._wait_turn(ticket, on_wait)
            ticket.on_progress = on_progress
            result = self._run(slot, request, timeout, ticket)
            return dataclasses.replace(result, timings={
                **result.timings, "queue_s": round(ticket.started - ticket.enqueued, 4),
                "start_s": round(ticket.start_s, 4)})
        finally:
            if ticket.reniced and ticket.slot is not None:
                self._restore_priority(ticket)
            self._finish(ticket)

    # -- one job on one worker ------------------------------------------------------------------

    def _run(self, slot: int, request: CompileRequest, timeout: float, ticket) -> CompileResult:
        own = self.own.acquire(ticket.session) if self.uses_own(request, ticket.session) else None
        if own is None:
            return self._run_on(slot, request, timeout, ticket, lambda wait=True: self._replace(slot, wait))
        renewed = []
        try:
            return self._run_on(slot, request, timeout, ticket, lambda wait=True: renewed.append(True), own)
        finally:
            self.own.release(ticket.session, own, renew=bool(renewed))

    def _run_on(self, slot: int, request: CompileRequest, timeout: float, ticket, renew, own: Worker | None = None
                ) -> CompileResult:
        """The job on the slot's worker, or on the session's own sandbox (`own`); `renew()` stops the worker
        that ran it and puts a fresh one in its place, `renew(wait=False)` after its result is returned."""
        with self._cv:
            worker = own or (self._slots[slot] if slot < len(self._slots) else None)
        if worker is None:
            return CompileResult(error=CompileError("crash", "the compile server is shutting down"))
        ticket.worker = worker
        # Start-up time (imports) is not the job's: wait for the worker to be ready first.
        t0 = time.perf_counter()
        if not (worker.ready.wait(300) and worker.alive()):
            if own is not None:
                renew()
                return CompileResult(error=CompileError("crash", "your sandbox failed to start; press Compile again"))
            worker = ticket.worker = self._replace(slot)
            if not (worker.ready.wait(300) and worker.alive()):
                return CompileResult(error=CompileError("crash", "the compile worker failed to start"))
        ticket.start_s = time.perf_counter() - t0
        have = worker.info.get("triton_version", "")
        if request.triton_version and have != request.triton_version:
            return CompileResult(error=CompileError(
                "usage", f"this request asks for Triton {request.triton_version}, but these workers run "
                f"Triton {have} (route it through Engines)", request.filename, None), triton_version=have)
        # made by the server and held open before the job is sent: what is read back after the
        # job comes through this descriptor, whatever the job renames or links (journal.JobDir)
        try:
            job = journal.JobDir.create(worker.folder or self.scratch)
        except OSError as e:
            renew()
            return CompileResult(error=CompileError("crash", f"the job's folder could not be made ({e})"))
        ticket.job = job
        try:
            return self._run_job(worker, job, request, timeout, renew, own is not None, ticket)
        finally:
            with self._cv:
                ticket.job = None
            job.close()          # an own sandbox's job folder goes at its next job, in its time (zygote.tidy)
            if own is None:
                shutil.rmtree(job.path, ignore_errors=True)     # never follows a link put in its place

    def _run_job(self, worker: Worker, job: journal.JobDir, request: CompileRequest, timeout: float,
                 renew, own: bool, ticket) -> CompileResult:
        if request.inline_bytes < 0:          # the server's bound on one answer (TLENS_INLINE_MB)
            request = dataclasses.replace(request, inline_bytes=settings_mod.load().inline_mb << 20)
        msg = {"op": "compile", "job_dir": str(job.path), "request": request.to_json()}
        started = time.perf_counter()
        try:
            ticket.cpu0 = sandbox_cpu(worker) if own else None
            ticket.sent = time.monotonic()
            worker.proc.stdin.write(json.dumps(msg) + "\n")
            worker.proc.stdin.flush()
            worker.jobs += 1
            reply = await_reply(worker, timeout, self.settings.scratch_mb,
                                more := grown_by_launches(self.settings.compile_timeout_per_launch_s, job.fd),
                                journal.streamer(job, ticket.on_progress))
            job_cpu = reply.pop("_job_cpu_s", None) if isinstance(reply, dict) else None
            if isinstance(reply, dict) and isinstance(reply.get("_cpu_s"), (int, float)):
                worker.cpu_s = float(reply.pop("_cpu_s"))
            if isinstance(reply, dict) and reply.pop("_tainted", False):
                worker.clean = False       # the file replaced some of the worker's own code: not reused
        except queue.Empty:
            worker.stop()
            tail = journal.output_tail(job)
            renew()
            return CompileResult(error=CompileError(
                "timeout", f"compile took longer than {timeout + more():g} s and was stopped (the worker was "
                f"replaced); {journal.in_progress(job) or 'does example() loop forever?'} (the limit: TLENS_COMPILE_TIMEOUT, "
                f"or `tlens compile --timeout S`)", request.filename, None, tail), seconds=time.perf_counter() - started)
        except OverQuota as e:
            worker.stop()
            tail = journal.output_tail(job, 2000)
            renew()
            return CompileResult(error=CompileError("limit", str(e), request.filename, None, tail),
                                 seconds=time.perf_counter() - started)
        except (BrokenPipeError, OSError):
            reply = None
        if isinstance(reply, dict) and ("_oversize" in reply or "_malformed" in reply):
            renew()
            what = (f"more than {MAX_REPLY_BYTES >> 20} MB" if "_oversize" in reply else
                    f"something that is not a result{' (' + reply['_why'] + ')' if reply.get('_why') else ''}")
            return CompileResult(error=CompileError("crash", f"the compile worker answered {what}; it was stopped "
                                                    "and replaced", request.filename, None),
                                 seconds=time.perf_counter() - started)
        if isinstance(reply, dict) and "_child_died" in reply:     # an own sandbox's job died; the sandbox lives
            code = reply["_child_died"] if isinstance(reply["_child_died"], int) else None
            if reply.get("_dirty"):
                renew()
            reply = None
        elif reply is None:
            try:   # stdout closes a moment before the process is reaped
                code = worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            worker.stop()
            renew()
        if reply is None:
            return journal.crashed(job, sandbox.describe_exit(code), request.filename, self.triton_version,
                                   time.perf_counter() - started)
        if own:
            if reply.pop("_dirty", None):             # what its sweep could not put right: a fresh one
                renew(wait=False)
        elif not worker.sandboxed and not worker.clean:
            renew(wait=False)
        elif worker.sandboxed:
            # Nothing of a user's code may reach the next job: a fresh sandbox after it. A worker
            # that has run only the library's own, unedited files has run only our code: it stays
            # (no new worker to start: a class compiling the lesson kernels pays no start-up per
            # compile), and the kernels it compiled join the trusted cache.
            worker.clean = worker.clean and trusted_cache.digest(request.source) in self._library
            if worker.clean:
                trusted_cache.harvest(worker.folder / "triton", self.settings.triton_cache_dir / trusted_cache.TRUSTED)
            # RLIMIT_CPU counts a process's whole life: a worker kept for job after job retires
            # at half of it, before the kernel's SIGKILL could end a student's compile.
            if not worker.clean or worker.cpu_s > self._cpu_limit_s() * RETIRE_AT_CPU:
                renew(wait=False)
        try:
            stored, _ = reply.pop("_stored", None), reply.pop("stored", None)   # a token is the server's to give
            result = bounded(CompileResult.from_json(reply))
            if stored is not None:              # each launch whole in its answer file: into the launch store
                result = dataclasses.replace(result, kernels=self.launch_store.adopt(
                    result.kernels, lambda i: journal.read_at(job.fd, (f"launch-{i}.answer.json",)), ticket.session))
            if own and job_cpu is not None:        # its sandbox's whole CPU for it (zygote.py)
                result = dataclasses.replace(result, timings={**result.timings, **timings_of({"job_cpu_s": job_cpu})})
            return result
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            return CompileResult(error=CompileError("crash", f"the compile worker's answer could not be read ({e})",
                                                    request.filename, None))

    def _restore_priority(self, ticket) -> None:
        """Normal priority again for the next job of the worker the ticket ran on; a server that
        may not raise a priority (not root) gets a fresh worker there instead."""
        worker = ticket.worker
        if worker is None or not worker.alive():
            return
        if not restore_priority(worker):
            session = self.own.owner_of(worker) if self.own else None
            if session is not None:
                self.own.release(session, worker, renew=True)
            elif worker in self._slots:
                self._replace(self._slots.index(worker))

    def _replace(self, slot: int, wait: bool = True) -> Worker:
        """A fresh worker in `slot`; the old one is killed first, or, with wait=False (a sandbox
        whose job is done), beside the caller, who then returns its result without waiting."""
        with self._cv:
            old = self._slots[slot] if slot < len(self._slots) else None
        if old is not None and wait:
            old.kill()
        if self._closed:
            return old
        fresh = self._spawn()
        with self._cv:
            if slot < len(self._slots):
                self._slots[slot] = fresh
        if old is not None and not wait:
            threading.Thread(target=old.kill, daemon=True).start()
        return fresh

    def close(self):
        with self._cv:
            self._closed = True
            workers, self._slots = list(self._slots), []
        for w in workers:
            if w is not None:
                w.kill()
        if self.own is not None:
            self.own.close()
        self._spawner.shutdown(wait=False)
        leftovers.release(self.scratch)          # its sandboxes' tmpfs mounts too (rmtree left them mounted)


def _close_at_exit(ref) -> None:
    if (engine := ref()) is not None and not getattr(engine, "_closed", True):
        engine.close()


RETIRE_AT_CPU = 0.5      # share of RLIMIT_CPU after which a kept worker is replaced
PROTECT_S = 120.0        # an own sandbox that compiled this recently is not taken for another student

