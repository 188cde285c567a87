"""A student's own sandbox: a worker that imported torch and triton once and runs each job in a
fresh child (`fork`), so that a job starts warm and still leaves nothing behind in the process
that serves the next one. Used by `worker.main` when the engine starts it with
TLENS_WORKER_FORK=1 (one such worker per student on a class server, `student_sandboxes.py`).

    serve(proto_in, proto_out, handle)     # handle(msg) -> the reply dict, run in the child

Per job:
* **The child** gets the job; its protocol descriptors are closed first (the job writes its
  answer to a pipe of its own, which this process forwards), it answers and `_exit`s.
* **Afterwards, inside the sandbox** (`sweep`): every other process of the sandbox's PID space
  is killed (a `setsid` or double-forked leftover too: the sandbox's `/proc` lists exactly its
  own processes), `/tmp` and `/dev/shm` (the sandbox's own tmpfs) and `$HOME` are emptied and
  System V shared memory segments removed (memory that outlives its processes); before the
  next job (`tidy`) the scratch folder is cleared of all but its own parts. What the sweep
  cannot put right, it reports (`_dirty`): the engine then starts the student a fresh sandbox.
* Trust: what this process answers is read by the engine as untrusted, exactly as a worker's
  that ran the user's code itself (bounded, one line per job, anything else ends the sandbox).
  A job runs as the same user in the same sandbox, so it could attach to this process (ptrace)
  and change what it does for that student's *later* jobs: theirs alone (another student's
  jobs run in another sandbox, and results made here are keyed to the student, app/backend/
  services.py). It is left dumpable on purpose: a hostile-file test reads every
  `/proc/*/environ` it can see, and a job must run as it did in a worker of its own.

What stays from one job to the next is the student's own Triton cache (private to the student,
in the scratch folder), as on their laptop.
"""
from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import time

from inspectors.process import proctree
from inspectors.base import settings as settings_mod

MAX_REPLY_BYTES = 128 << 20        # as workers.MAX_REPLY_BYTES: beyond it the engine stops the worker


def serve(proto_in, proto_out, handle) -> None:
    """One line in, one line out, a child per compile (see the module docstring)."""
    gc.collect()
    gc.freeze()            # the imports' objects stay shared with every child, not copied on write
    for line in proto_in:
        msg = json.loads(line)
        if msg.get("op") == "ping":
            proto_out.write(json.dumps({"pong": True}) + "\n")
            proto_out.flush()
            continue
        problems: list[str] = []
        cpu0 = _cpu_now()
        tidy(msg.get("job_dir", ""), problems)
        reply, died = _run_child(msg, handle, (proto_in.fileno(), proto_out.fileno()))
        dirty = "; ".join(problems + [sweep()]).strip("; ")[:500]
        # the job's whole cost to the sandbox: the fork, the child (its answer and its exit
        # included, which its own `cpu_s` cannot see), its leftovers, the sweep
        extra: dict = {"_job_cpu_s": round(_cpu_now() - cpu0, 4)}
        if dirty:
            extra["_dirty"] = dirty
        if died is None and (reply.count(b"\n") != 1 or not reply.endswith(b"\n")):
            # the job wrote to its answer's pipe itself: one line is answered per job, always
            extra["_malformed"] = "the job's answer was not one line"
            out = json.dumps(extra).encode()
        elif died is not None or not reply.startswith(b"{"):
            extra["_child_died"] = died if died is not None else 0
            out = json.dumps(extra).encode()
        else:          # the child's JSON object, with ours spliced in front (not parsed here)
            out = b"{" + json.dumps(extra).encode()[1:-1] + (b", " if reply[1:].lstrip()[:1] != b"}" else b"") + reply[1:]
        proto_out.flush()
        _write_all(proto_out.fileno(), out.rstrip(b"\n") + b"\n")


def _cpu_now() -> float:
    """CPU seconds of this process and of its children that have ended (the jobs)."""
    import resource
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _run_child(msg: dict, handle, protocol_fds: tuple[int, int]) -> tuple[bytes, int | None]:
    """(the child's answer, None or how it died when it gave no answer: -signal or exit code)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                            # the child: the job
        code = 0
        try:
            os.close(r)
            for fd in protocol_fds:
                os.close(fd)
            reply = handle(msg)       # (the frozen objects stay frozen: a child lives one job)
            data = (json.dumps(reply) + "\n").encode()
            _write_all(w, data)
        except BaseException:  # noqa: BLE001 - no answer: the zygote reports the death
            code = 70
        os._exit(code)
    os.close(w)
    chunks, size, status = [], 0, None
    while True:
        ready, _, _ = select.select([r], [], [], 0.2)
        if ready:
            data = os.read(r, 1 << 20)
            if not data:
                break
            size += len(data)
            if size <= MAX_REPLY_BYTES + 1:
                chunks.append(data)
            continue
        if status is None:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == 0:
                status = None
            else:            # the child is gone: whatever still holds the pipe is a leftover
                _kill_others()
    os.close(r)
    if status is None:
        _, status = os.waitpid(pid, 0)
    reply = b"".join(chunks)
    if os.WIFSIGNALED(status):
        return reply, -os.WTERMSIG(status)
    if os.WEXITSTATUS(status) != 0 and not reply.endswith(b"\n"):
        return reply, os.WEXITSTATUS(status)
    return reply, None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _kill_others() -> int:
    """SIGKILL to every process of this PID space but this one and its ancestors (bwrap's init);
    the sandbox's /proc lists only its own. Repeated until none is left (a fork racing the
    first pass). Returns how many were killed."""
    keep, p = {os.getpid()}, os.getpid()
    while p is not None and p > 1:
        p = proctree.parent_of(p)
        if p is not None:
            keep.add(p)
    keep.add(1)
    killed = 0
    for _ in range(20):
        others = [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) not in keep]
        if not others:
            break
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        _reap()
        time.sleep(0.01)
    _reap()
    return killed


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


KEEP = ("triton", "etc", "home", "repro")      # the scratch folder's own parts (engine._spawn_sandboxed)


def tidy(job_dir: str, problems: list[str]) -> None:
    """Before a job: the scratch folder holds only its own parts and this job's folder. What an
    earlier job put beside its folder (or its folder renamed) goes now, not after that job: the
    engine reads a dead job's folder back after the sweep."""
    cache = settings_mod.load().triton_cache_base
    scratch = os.path.dirname(cache) if cache else ""
    if scratch and os.path.isdir(scratch):
        for name in os.listdir(scratch):
            path = os.path.join(scratch, name)
            if name not in KEEP and path != job_dir:
                _remove(path, problems)


def sweep() -> str:
    """After a job: no process of it left; /tmp and $HOME emptied; the Triton cache still a
    folder this user can write. '' if so, else what is wrong (the engine then replaces the
    sandbox)."""
    _kill_others()
    cache = settings_mod.load().triton_cache_base
    problems: list[str] = []
    mounts = _mount_points()
    for folder in ("/tmp", "/dev/shm", os.environ.get("HOME", "")):
        _empty(folder, mounts, problems)
    _remove_shared_memory(problems)
    if cache and (os.path.islink(cache) or not os.path.isdir(cache) or not os.access(cache, os.W_OK | os.X_OK)):
        problems.append("the Triton cache folder was changed")
    return "; ".join(problems)[:500]


def _remove_shared_memory(problems: list[str]) -> None:
    """Every System V shared memory segment of the sandbox's IPC namespace marked for removal:
    a segment outlives the processes that made it (its memory held, unseen by any folder)
    until it is removed or the namespace ends, and the sandbox's namespace lives for the next job."""
    import ctypes
    try:
        rows = open("/proc/sysvipc/shm").read().splitlines()[1:]
    except OSError:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for row in rows:
        parts = row.split()
        if len(parts) > 1 and parts[1].isdigit() and libc.shmctl(int(parts[1]), 0, None) != 0:   # IPC_RMID
            problems.append(f"shared memory segment {parts[1]}: {os.strerror(ctypes.get_errno())}")


def _mount_points() -> set[str]:
    """The sandbox's mount points (its binds: the scratch folder, the trusted cache, ...)."""
    try:
        return {line.split()[4] for line in open("/proc/self/mountinfo") if len(line.split()) > 4}
    except OSError:
        return set()


def _empty(folder: str, mounts: set[str], problems: list[str]) -> None:
    """Everything in `folder` removed, but the sandbox's mount points (a bind inside /tmp at its
    host path) and the folders on the way to them."""
    if not folder or not os.path.isdir(folder) or os.path.islink(folder):
        return
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if path in mounts:
            continue
        if any(m.startswith(path + os.sep) for m in mounts):
            if not os.path.islink(path):
                _empty(path, mounts, problems)
            continue
        _remove(path, problems)


def _remove(path: str, problems: list[str]) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            _writable_tree(path)
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError as e:
        problems.append(f"{path}: {e.strerror}")


def _writable_tree(path: str) -> None:
    """u+rwx on the folders under `path` (a job's `chmod 000` must not keep its leftovers)."""
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    for root, dirs, _ in os.walk(path, topdown=True):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), 0o700)
            except OSError:
                pass
