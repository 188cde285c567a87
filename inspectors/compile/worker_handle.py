"""One warm compile worker: a process (sandboxed or not) that imports torch and triton once and
answers one JSON line per job on its stdout, read by a thread of its own.

    worker = Worker(argv, env, folder=scratch, cgroup=cgroup, preexec=limits.preexec(cgroup))
    worker.ready.wait(); msg = worker.lines.get(timeout=60); worker.kill()

Also what the engine needs to watch a sandboxed job: the quota scan of its scratch folder
(`folder_usage`) and the lowest CPU priority for a job that runs long (`lower_priority`).
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

from inspectors.base.result import loads_bounded
from inspectors.compile import journal
from inspectors.process import sandbox, scratch

_REPO_ROOT = Path(__file__).resolve().parents[2]

# A worker's answer larger than this is not read: a job's code can write anything to the
# protocol pipe, and the server must not hold it (nor spend seconds of its GIL parsing it).
MAX_REPLY_BYTES = 128 << 20


class Worker:
    def __init__(self, argv: list[str], env: dict | None, folder: Path | None = None,
                 cgroup: sandbox.Cgroup | None = None, preexec=None):
        """`folder`: the sandboxed worker's own scratch (its jobs, its Triton cache), removed with it;
        `cgroup`: the sandbox's cgroup, whose tasks are killed with it."""
        self.folder, self.cgroup = folder, cgroup
        self.jobs = 0
        self.clean = True       # has run only the library's own files (see Engine._run)
        self.cpu_s = 0.0        # CPU seconds the worker process has used, from its last reply
        self._stop_lock = threading.Lock()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=str(_REPO_ROOT), env=env, text=True, encoding="utf-8", errors="replace", start_new_session=True,
            preexec_fn=preexec,
        )
        self.lines: queue.Queue = queue.Queue()
        self.ready = threading.Event()
        self.info: dict = {}
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def sandboxed(self) -> bool:
        return self.folder is not None

    def _read(self):
        while True:
            line = self.proc.stdout.readline(MAX_REPLY_BYTES)
            if not line:
                break
            if not line.endswith("\n"):          # over the limit (or cut off by death)
                if len(line) >= MAX_REPLY_BYTES:
                    self.lines.put({"_oversize": True})
                    self.kill()
                break
            parse0 = time.thread_time()
            try:
                msg = loads_bounded(line)             # not more objects than its bytes allow
            except (ValueError, RecursionError) as e:      # RecursionError: [[[[... nested past the parser's depth
                msg = {"_malformed": line[:200], "_why": str(e)[:300]}
            if not isinstance(msg, dict):
                msg = {"_malformed": line[:200]}
            line = ""       # its bytes not held while this thread waits on the next one (a 128 MB answer: twice)
            if "kernels" in msg or "error" in msg or "timings" in msg:     # an answer: what parsing it cost the server
                msg["timings"] = {**(msg.get("timings") if isinstance(msg.get("timings"), dict) else {}),
                                  "server_parse_s": round(time.thread_time() - parse0, 4)}
            if msg.get("ready") and not self.ready.is_set():
                self.info = msg
                self.ready.set()
            else:
                self.lines.put(msg)
        self.lines.put(None)   # EOF: the worker died
        self.ready.set()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        """Every process of this worker ended (its sandbox's too); its folder is kept to be read.
        Its process group is signalled only while its leader is not yet reaped: after that the
        number is free, and on a busy server (a class's sandboxes and their threads; pid_max is
        32768 on the GPU machine) a second stop of the same worker could kill another worker's
        group, mid-compile, by a reused number. (Linux gives no new process a number still in
        use as a group's id, so while any member lives the group is still this worker's.)"""
        with self._stop_lock:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if self.cgroup is not None:
            self.cgroup.kill()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass

    def kill(self):
        self.stop()
        if self.folder is not None:
            scratch.remove(self.folder)


def lower_priority(worker: Worker | None) -> None:
    """nice 19 for the worker's whole process group (its launcher's children too), and the
    lowest CPU share for its sandbox's cgroup (nice counts only inside a cgroup)."""
    if worker is None:
        return
    try:
        os.setpriority(os.PRIO_PGRP, worker.proc.pid, 19)
    except (OSError, AttributeError):
        pass
    if worker.cgroup is not None:
        worker.cgroup.cpu_share(low=True)


def restore_priority(worker: Worker) -> bool:
    """The usual CPU share again for the worker's sandbox (its cgroup's: what counts between
    sandboxes) and nice 0, which only a server that may raise a priority (root) can set: False
    where it could not."""
    if worker.cgroup is not None:
        worker.cgroup.cpu_share(low=False)
    try:
        os.setpriority(os.PRIO_PGRP, worker.proc.pid, 0)
        return True
    except (OSError, AttributeError):
        return False


class OverQuota(Exception):
    pass


SCRATCH_FILES = 50_000       # files and folders a sandbox's scratch may hold (its bytes: TLENS_SCRATCH_MB)
KEPT_SHARE = 4               # at an answer, the folder may hold a quarter of TLENS_SCRATCH_MB (a running job: all)


MAX_EXTRA_LAUNCHES = 20       # the launches a compile's time limit grows by, at most


def launches_begun(job_fd: int) -> int:
    """The launches a job's worker has begun to compile, as far as its limit grows: its
    `launch-N` folders (journal.begin) among the first few, asked for by name through the job
    folder's descriptor (never a listing: the job may fill its folder with files)."""
    begun = 0
    for i in range(4 * (MAX_EXTRA_LAUNCHES + 1)):      # a launch the page asked for may be begun early
        try:
            os.stat(f"launch-{i}", dir_fd=job_fd, follow_symlinks=False)
            begun += 1
        except OSError:
            pass
    return begun


def grown_by_launches(per_launch_s: float, job_fd: int):
    """The seconds a job's limit has grown by now: `per_launch_s` for each launch it has begun
    after its first and for each torch.compile graph its example() has begun (a big model's step
    lowers its graphs for minutes before its first launch), for at most MAX_EXTRA_LAUNCHES of
    them in all (a job makes these files itself)."""
    return lambda: per_launch_s * min(MAX_EXTRA_LAUNCHES, max(0, launches_begun(job_fd) - 1)
                                           + journal.graphs_begun(job_fd, MAX_EXTRA_LAUNCHES)[0])


def await_reply(worker: Worker, timeout: float, scratch_mb: int, more=lambda: 0.0, tick=None):
    """The worker's answer; raises queue.Empty past `timeout` (plus `more()` seconds, asked as
    the job runs: a job's limit grows with its launches), OverQuota when a sandboxed job's
    scratch folder is over its allowance: `scratch_mb` checked twice a second while the job
    runs, and a quarter of it once more when it has answered (what a job leaves there stays for
    the student's next jobs, as their Triton cache; an answer does not make it right).
    `tick()`, if given, is called about five times a second while the job runs, and once
    when it has answered (the stream)."""
    start = time.monotonic()
    while True:
        left = start + timeout + more() - time.monotonic()
        if left <= 0:
            raise queue.Empty
        try:
            reply = worker.lines.get(timeout=min(0.2 if tick else 0.5, left))
        except queue.Empty:
            reply = queue.Empty
        running = reply is queue.Empty
        problem = over_allowance(worker.folder, scratch_mb if running else scratch_mb // KEPT_SHARE,
                                 final=not running) if worker.sandboxed else ""
        if problem:
            raise OverQuota(problem + (" while it ran" if running else " when it answered (what a sandbox keeps "
                                       "between compiles)") + "; it was stopped and your sandbox reset "
                            "(TLENS_SCRATCH_MB)")
        if tick is not None:
            tick()                  # once more with the answer: every launch is streamed
        if reply is not queue.Empty:
            return reply


SCAN_BACKOFF = 20       # a plain scratch folder's walk runs again only after 20 times what the last one took
_next_scan: dict[str, float] = {}


def over_allowance(folder: Path, scratch_mb: int, final: bool = True) -> str:
    """What is wrong with a sandbox's scratch folder, in words ('' if nothing): more bytes than
    `scratch_mb` MB or more than SCRATCH_FILES files. A mounted scratch (a tmpfs the kernel
    bounds) is read from its filesystem's counts, whatever its files; a plain folder is walked,
    while the job runs (`final=False`) at most one twentieth of the time (a job's 48,000 files
    cost a walk each tick)."""
    measured = scratch.usage(folder)
    if measured is None:
        key, now = str(folder), time.monotonic()
        if not final and now < _next_scan.get(key, 0.0):
            return ""
        measured = folder_usage(folder, limit_files=SCRATCH_FILES)
        if len(_next_scan) > 4096:
            _next_scan.clear()
        _next_scan[key] = time.monotonic() + SCAN_BACKOFF * (time.monotonic() - now)
    used, files = measured
    if used <= scratch_mb << 20 and files < SCRATCH_FILES:
        return ""
    held = f"{used / 2**20:,.0f} MB" if files < SCRATCH_FILES else f"{SCRATCH_FILES:,} files or more"
    return (f"the job's scratch folder (its files and the Triton cache kept between your compiles) held {held}: "
            f"more than its scratch allowance ({scratch_mb:,} MB and {SCRATCH_FILES:,} files)")


def folder_usage(folder: Path, limit_files: int) -> tuple[int, int]:
    """(bytes, files) under `folder`, not following links; stops counting at `limit_files`. A
    file counts its size or its blocks, whichever is more (a sparse file is still its size to
    whoever reads it); a folder the server may not read (a job's `chmod 000`, on a server not
    run as root) counts as the whole allowance: what cannot be measured cannot be allowed."""
    total = files = 0
    stack = [str(folder)]
    while stack and files < limit_files:
        path = stack.pop()
        try:
            with os.scandir(path) as it:
                for e in it:
                    files += 1
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            st = e.stat(follow_symlinks=False)
                            total += max(st.st_size, st.st_blocks * 512)
                    except OSError:
                        pass
        except PermissionError:
            return total, limit_files
        except OSError:
            pass
    return total, files
