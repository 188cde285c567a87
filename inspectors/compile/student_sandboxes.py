"""Each student's own warm sandbox, on a class server: a sandboxed worker started for one student
(when their page opens, or at their first compile of a file of their own) and kept for that
student's jobs only, each job in a fresh child of it (zygote.py). Its scratch folder and its
Triton cache are the student's alone; nobody else's code ever runs there.

    own = OwnSandboxes(spawn=lambda: engine._spawn(fork=True), cap=24, idle_s=600)
    own.prewarm("user:alice")             # starts hers in the background
    worker = own.acquire("user:alice")    # hers (started now if she has none); None: at the cap
    ...
    own.release("user:alice", renew=False)

* **Capped.** At most `cap` live at once (TLENS_OWN_SANDBOXES, from the memory: each holds
  torch and Triton), and one starts only while the machine has memory to spare (`memory_room`).
  A new student at the cap takes the place of the one idle longest; if every one is busy,
  `acquire` returns None and the engine runs the job the old way (a one-off sandbox from the
  pool, replaced after it).
* **Identities cost something** (`Gate`). A student named only by a browser's cookie (no
  proxy header: anyone can make a new one per request) gets no sandbox when the page opens, only
  at their first compile; starts are limited per address and overall (at most `starting` at
  once), and a new sandbox runs at the lowest CPU share until its first job, so a flood of page
  opens imports torch on idle CPU only. At the cap, only a sandbox that never compiled or has
  been idle for `protect_s` is taken: a flood cannot evict students who are working (`acquire`
  then returns None and the job runs the old way).
* **Reaped when idle** for `idle_s` (TLENS_OWN_IDLE_S), by a thread of its own, and at once
  when the app says its student is gone (`forget`: their tabs closed).
* **Renewed** (`renew`) after a job that broke it (timeout, crash of the sandbox, a quota, an
  answer that was not one, or what the sweep after a job could not put right): killed at
  once, a fresh one started for the student's next job.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable

from inspectors.compile.worker_handle import Worker


class _Own:
    def __init__(self, worker: Worker):
        self.worker = worker
        self.busy = 0
        self.jobs = 0
        self.used = time.monotonic()


class Gate:
    """Who may start a sandbox now: at most `per_address` starts a minute from one address for
    identities the proxy did not name, and at most `starting` being started at once overall."""

    def __init__(self, per_address: int = 4, starting: int = 2, window_s: float = 60.0):
        self.per_address, self.starting, self.window_s = per_address, max(1, starting), window_s
        self._starts: dict[str, list[float]] = {}
        self.refused = 0

    def allow(self, address: str, named: bool, pending: int, now: float) -> bool:
        """Whether a start may begin (the caller holds the sandboxes' lock); counts it if so."""
        if pending >= self.starting:
            self.refused += 1
            return False
        if not named:
            recent = [t for t in self._starts.get(address, ()) if now - t < self.window_s]
            if len(recent) >= self.per_address:
                self._starts[address] = recent
                self.refused += 1
                return False
            self._starts[address] = recent + [now]
            if len(self._starts) > 10_000:        # the table itself is bounded
                self._starts = {a: ts for a, ts in self._starts.items() if ts and now - ts[-1] < self.window_s}
        return True


def memory_room(need_mib: float = 210.0) -> bool:
    """Whether the machine has room for one more sandbox: MemAvailable after it above a reserve
    (2 GiB or a tenth of the memory) for compiles and the servers. Several server processes on
    one box (deploy/serve_class.py) each ask the machine, not a share of it."""
    try:
        info = {line.split(":")[0]: int(line.split()[1]) for line in open("/proc/meminfo")}
    except (OSError, ValueError, IndexError):
        return True
    available, total = info.get("MemAvailable", 0) / 1024, info.get("MemTotal", 0) / 1024
    return available - need_mib > max(2048.0, total / 10)


def _share(worker: Worker, low: bool) -> None:
    cgroup = getattr(worker, "cgroup", None)
    if cgroup is not None:
        cgroup.cpu_share(low=low)


class OwnSandboxes:
    def __init__(self, spawn: Callable[[], Worker], cap: int, idle_s: float,
                 room: Callable[[], bool] = lambda: True, gate: Gate | None = None, protect_s: float = 0.0):
        self._spawn, self._room = spawn, room
        self.cap, self.idle_s = max(1, cap), idle_s
        self.gate, self.protect_s = gate or Gate(), protect_s
        self._who: dict[str, tuple[str, bool]] = {}             # session -> (address, named by the proxy)
        self._lock = threading.Lock()
        self._live: OrderedDict[str, _Own] = OrderedDict()        # least recently used first
        self._pending: dict[str, threading.Event] = {}            # sessions whose sandbox is being started
        self._wanted: OrderedDict[str, None] = OrderedDict()      # named sessions a start was refused: next
        self.started = 0          # sandboxes started, over the engine's life
        self.evicted = 0          # taken away at the cap for a new student
        self._closed = threading.Event()
        threading.Thread(target=self._reaper, daemon=True, name="tlens-own-reaper").start()

    def _take(self, session: str, start: bool) -> _Own | None:
        """The session's entry (started if absent and `start`), marked used. The new worker is
        started outside the lock: every page run of every student passes here (prewarm), and
        must not wait for another student's sandbox to be set up."""
        victims, pending, reserved = [], None, False
        with self._lock:
            if self._closed.is_set():
                return None
            own = self._live.get(session)
            if own is not None and not own.worker.alive() and not own.busy:
                victims.append(self._live.pop(session).worker)
                own = None
            if own is None and start and session in self._pending:
                pending = self._pending[session]            # being started by another of its runs
            elif own is None and start:
                now = time.monotonic()
                roomy = self._room()
                while len(self._live) + len(self._pending) >= self.cap or (not roomy and self._live):
                    idle = next((s for s, o in self._live.items()
                                 if not o.busy and (not o.jobs or now - o.used >= self.protect_s)), None)
                    if idle is None:
                        break
                    victims.append(self._live.pop(idle).worker)
                    self.evicted += 1
                    roomy = True          # one taken away makes room for one
                address, named = self._who.get(session, ("", True))
                if len(self._live) + len(self._pending) < self.cap and roomy and \
                        self.gate.allow(address, named, len(self._pending), now):
                    self._pending[session], reserved = threading.Event(), True
            if own is not None:
                own.used = time.monotonic()
                self._live.move_to_end(session)
        for w in victims:
            w.kill()
        if pending is not None:
            pending.wait(60)
            with self._lock:
                return self._live.get(session)
        if not reserved:
            return own
        try:
            worker = self._spawn()
            _share(worker, low=True)           # until its first job: a page open imports torch on idle CPU
        except BaseException:
            with self._lock:
                self._pending.pop(session).set()
            raise
        with self._lock:
            done = self._pending.pop(session)
            if self._closed.is_set():
                own = None
            else:
                own = self._live[session] = _Own(worker)
                self.started += 1
        done.set()
        if own is None:
            worker.kill()
        else:
            self._start_wanted()
        return own

    def _start_wanted(self) -> None:
        """A start is done: the next named student whose page opened while others were starting
        (Gate's `starting` limit) gets theirs now, in the background. (A class opens its pages
        at once: without this, all but the first few would start their sandbox at their first
        compile, with the class's compiles queued behind.)"""
        with self._lock:
            session = next(iter(self._wanted), None) if not self._closed.is_set() else None
            if session is not None:
                del self._wanted[session]
        if session is not None:
            threading.Thread(target=self.prewarm, args=(session,), daemon=True, name="tlens-own-next").start()

    def note(self, session: str, address: str, named: bool) -> None:
        """Where the session's requests come from, and whether the proxy named its user."""
        with self._lock:
            self._who[session] = (address, named)
            if len(self._who) > 4 * self.cap + 10_000:
                keep = set(self._live) | set(self._pending)
                self._who = {s: w for s, w in self._who.items() if s in keep}

    def group(self, session: str) -> str:
        """The fair queue's turn for `session`: its own if the proxy named it (or nobody said),
        else its address's (a flood of new cookies from one address takes one student's turns)."""
        address, named = self._who.get(session, ("", True))
        return session if named else f"address:{address}"

    def prewarm(self, session: str) -> None:
        """Start the session's sandbox now (returns at once; it imports torch and triton on its
        own) if its user is named by the proxy; a cookie's identity waits for its first compile."""
        with self._lock:
            named = self._who.get(session, ("", True))[1]       # a caller that never said: named
        if session and named and self._take(session, start=True) is None:
            with self._lock:                 # refused for now: started when a start is done
                if session not in self._live and session not in self._pending:
                    self._wanted[session] = None
                    while len(self._wanted) > self.cap:
                        self._wanted.popitem(last=False)

    def acquire(self, session: str) -> Worker | None:
        """The session's sandbox for one job; None at the cap, or while it runs another job of
        the session's (a sandbox answers one job at a time: the engine runs this one the old way)."""
        own = self._take(session, start=True)
        if own is None:
            return None
        with self._lock:
            if own.busy:
                return None
            own.busy += 1
            first = not own.jobs
        if first:
            _share(own.worker, low=False)
        return own.worker

    def release(self, session: str, worker: Worker, renew: bool = False) -> None:
        """The job on `worker` is over; `renew`: the sandbox is stopped, the next job gets a fresh one."""
        with self._lock:
            own = self._live.get(session)
            if own is not None and own.worker is worker:
                own.busy = max(0, own.busy - 1)
                own.used = time.monotonic()
                own.jobs += 1
                if renew:
                    del self._live[session]
        if renew:
            worker.kill()

    def forget(self, session: str) -> bool:
        """The session's student is gone (their tabs closed): their sandbox stopped now, unless a
        job of theirs runs (then at the next reap). True if one was stopped."""
        with self._lock:
            self._wanted.pop(session, None)
            own = self._live.get(session)
            if own is None or own.busy:
                return False
            del self._live[session]
            self._who.pop(session, None)
        own.worker.kill()
        return True

    def sessions(self) -> dict[str, dict]:
        """Each live sandbox's session: its jobs, whether it runs one, seconds since its last use."""
        now = time.monotonic()
        with self._lock:
            return {s: {"jobs": o.jobs, "busy": bool(o.busy), "idle_s": round(now - o.used, 1), "worker": o.worker}
                    for s, o in self._live.items()}

    def owner_of(self, worker: Worker) -> str | None:
        with self._lock:
            return next((s for s, o in self._live.items() if o.worker is worker), None)

    def workers(self) -> list[Worker]:
        with self._lock:
            return [o.worker for o in self._live.values()]

    def status(self) -> dict:
        with self._lock:
            return {"live": len(self._live), "busy": sum(1 for o in self._live.values() if o.busy),
                    "cap": self.cap, "started": self.started, "evicted": self.evicted, "refused": self.gate.refused}

    def reap(self, now: float | None = None) -> int:
        """Stop the sandboxes idle for `idle_s` or more; how many."""
        now = time.monotonic() if now is None else now
        with self._lock:
            old = [s for s, o in self._live.items() if not o.busy and now - o.used >= self.idle_s]
            victims = [self._live.pop(s).worker for s in old]
        for w in victims:
            w.kill()
        return len(victims)

    def _reaper(self) -> None:
        while not self._closed.wait(min(30.0, max(1.0, self.idle_s / 4))):
            self.reap()

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            victims, self._live = [o.worker for o in self._live.values()], OrderedDict()
        for w in victims:
            w.kill()
