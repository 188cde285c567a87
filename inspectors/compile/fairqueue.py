"""The fair queue in front of the engine's workers (the scheduling half of `Engine`).

* A free worker goes to the waiting session served least recently (then to the one waiting
  longest; the sessions of one `_group` count as one), not first come first served: one student pressing Compile ten times cannot push the
  class back ten places (`_next_session`, and `_play_out` for everyone's queue position).
* A session may have `session_jobs` jobs waiting or running (one more is refused: `busy`) and
  `session_running` of them running at once (1 on a class server: a student's tabs share one
  worker, however many hang).
* A job past `straggler_s` gets the lowest CPU priority and a spare worker started beside it at
  once (at most `size` spares), retired when the job ends. A job in a student's own sandbox
  instead gives its slot back (it is *detached*: it runs on in its sandbox at the lowest
  priority, still counted against its session's limits) after `OWN_DETACH_S`, or after
  `OWN_FIRST_LAUNCH_S` if it has not begun to compile a kernel by then (the file's own Python
  is running: a `while True` in example() costs the class a tenth of a second of a core, not
  a second), so hangs never hold the slots a class compiles on. Such a job that then begins a
  launch was slow, not hung: it gets its sandbox's usual CPU share back (still without a slot).
  A detached job compiling its launches (a library op's fifty) keeps that share while they
  keep coming (its sandbox's cgroup weighs as one student's compile, however many launches
  compile side by side), and is lowered once none has finished for OWN_STALL_S: the class's
  hangs, at the lowest priority, do not take a long compile's CPU. One waiter (the *watcher*) wakes at the next
  such deadline and looks at the running jobs; the others sleep until a worker is given or
  their queue line is due (WAITER_WAKE_S): every waiting student reading every own job's cgroup
  cost the class server a large share of its CPU (docs/09-benchmark-results.md#figures-behind-design-choices).

`Engine` owns the slots and starts workers (`_spawn`); this class decides who runs where.
"""
from __future__ import annotations

import heapq
import os
import time
from collections import deque

from inspectors.process import proctree
from inspectors.compile.worker_handle import lower_priority, restore_priority


# A job in its student's own sandbox gives its slot back after this long at most (straggler_s if
# less): that costs nothing (no spare to start), and a long compile then yields to short ones
# (most library kernels compile within it: docs/09-benchmark-results.md#figures-behind-design-choices).
OWN_DETACH_S = 1.0
# ... and after this much of its sandbox's CPU (sandbox_cpu; wall time where the sandbox has no
# cgroup) if no kernel launch has begun (journal's `launch-0` folder): a file reaches its first
# launch well within it (the library's files, their example() run once, warm:
# docs/09-benchmark-results.md#figures-behind-design-choices);
# one that takes longer gets its CPU share back when its launch begins (`_check_detached`).
# A longer one lets a class's hangs cost its p95 (docs/09-benchmark-results.md#the-class-of-30-on-one-process).
OWN_FIRST_LAUNCH_S = 0.1
OWN_LAUNCH_POLL_S = 0.025     # how often a job before its first launch (or lowered before it) is looked at
# A detached job whose launches have begun keeps its share while a launch finishes at least this
# often (a launch compiles in well under it: benchmarks/library_ops.py), else it is lowered.
OWN_STALL_S = 15.0
WAITER_WAKE_S = 0.5           # how often a waiter that is not the watcher wakes (its queue line)


class Ticket:
    """One job waiting for (or holding) a worker."""

    def __init__(self, session: str):
        self.session = session
        self.slot: int | None = None          # set by the scheduler when it is this job's turn
        self.enqueued = time.monotonic()
        self.started: float | None = None     # when it got its worker
        self.reniced = False                  # its worker was given the lowest CPU priority
        self.worker = None                    # the worker it runs on: its slot's, or its student's own sandbox
        self.start_s = 0.0                    # how long it waited for that worker to start
        self.sent: float | None = None        # when the job was sent to the worker
        self.job = None                       # its journal.JobDir (has a launch begun?)
        self.on_progress = None               # told of its launches as they are done (journal.streamer)
        self.cpu0: float | None = None        # its sandbox's CPU seconds when it was sent (sandbox_cpu)
        self.watch: str | None = None         # detached and lowered before its first launch: "launch"
                                              # (watched for one); compiling launches: "compiling"
        self.done_at: tuple[int, float] = (0, 0.0)   # "compiling": launches done, when that last changed


class FairQueue:
    """The queue's state and its scheduling; the subclass provides `_slots` (its workers),
    `size`, `session_jobs`, `session_running`, `straggler_s` and `_spawn()`."""

    def _init_queue(self) -> None:
        self._busy: dict[int, Ticket] = {}               # slot -> the job running there
        self._queues: dict[str, deque[Ticket]] = {}      # session -> its waiting jobs, oldest first
        self._served: dict[str, int] = {}                # session -> when it was last given a worker
        self._dispatches = 0
        self._changes = 0                                # bumped whenever the queues change
        self._order: tuple[int, dict[int, int]] = (-1, {})   # (_changes, id(ticket) -> jobs ahead)
        self._stragglers: set[int] = set()               # slots whose job outran straggler_s
        self._detached: set[Ticket] = set()              # own-sandbox jobs past straggler_s: slot given back
        self._watcher: Ticket | None = None              # the one waiter that looks at the running jobs
        self.completed = 0

    def _enqueue(self, session: str) -> Ticket | None:
        with self._cv:
            mine = len(self._queues.get(session, ())) + sum(t.session == session for t in self._running())
            if mine >= self.session_jobs:
                return None
            ticket = Ticket(session)
            self._queues.setdefault(session, deque()).append(ticket)
            self._changes += 1
            self._dispatch()
            return ticket

    def _wait_turn(self, ticket: Ticket, on_wait) -> int:
        with self._cv:
            try:
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
                    if self._watcher is None:
                        self._watcher = ticket
                    if self._watcher is ticket:
                        self._cv.wait(self._next_check())
                        self._check_stragglers()
                    else:                      # woken by a dispatch, or when its queue line is due
                        self._cv.wait(WAITER_WAKE_S)
                return ticket.slot
            finally:
                if self._watcher is ticket:    # another waiter takes over (dispatch woke them all)
                    self._watcher = None
                    self._cv.notify_all()

    def _next_check(self) -> float:
        """Seconds until the next running job may be detached or get a spare (0.5 at most).
        Holds self._cv."""
        now, wait = time.monotonic(), 0.5
        for slot, t in self._busy.items():
            if t.started is not None and slot not in self._stragglers:
                wait = min(wait, max(0.01, self._limits(slot, t)[0] - now))
        if any(t.watch == "launch" for t in self._detached):
            wait = min(wait, OWN_LAUNCH_POLL_S)
        return wait

    def _limits(self, slot: int, t: Ticket) -> tuple[float, bool]:
        """(when the job `t` on `slot` stops holding it as a normal job, whether it runs in its
        student's own sandbox). Holds self._cv."""
        own = t.worker is not None and t.worker is not self._slots[slot]
        if not own:
            return t.started + self.straggler_s, False
        since = t.sent if t.sent is not None else t.started
        limit = min(self.straggler_s, OWN_DETACH_S)
        if t.job is not None and not _launch_begun(t.job):
            used = sandbox_cpu(t.worker) if t.cpu0 is not None else None
            if used is None:                     # no cgroup to count its CPU in: wall time
                limit = min(limit, OWN_FIRST_LAUNCH_S)
            elif used - t.cpu0 >= OWN_FIRST_LAUNCH_S:
                return since, True               # its CPU, not a busy machine's wait: a hang
            else:
                return min(since + limit, time.monotonic() + OWN_LAUNCH_POLL_S), True
        return since + limit, True

    def _next_session(self, queues: dict, served: dict) -> str:
        """Fair order: the waiting session served least recently (never served first), ties
        broken by who has waited longest."""
        return min(queues, key=lambda s: (served.get(self._group(s), -1), queues[s][0].enqueued))

    def _group(self, session: str) -> str:
        """Whose turn a session's job counts as (the subclass may put several sessions in one:
        identities no proxy named, by their address)."""
        return session

    def _position(self, ticket: Ticket) -> int:
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
        heap = [(self._served.get(self._group(s), -1), q[0].enqueued, s) for s, q in queues.items()]
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

    def _eligible(self) -> dict[str, deque]:
        """The waiting sessions that may start a job now: those whose group (`_group`) has fewer
        than `session_running` jobs running. Holds self._cv."""
        running: dict[str, int] = {}
        for t in self._running():
            running[self._group(t.session)] = running.get(self._group(t.session), 0) + 1
        return {s: q for s, q in self._queues.items() if q and running.get(self._group(s), 0) < self.session_running}

    def _running(self) -> list[Ticket]:
        """The jobs running: on a slot, or detached in their own sandbox. Holds self._cv."""
        return list(self._busy.values()) + list(self._detached)

    def _dispatch(self) -> None:
        """Give free workers to waiting jobs in the fair order. Holds self._cv."""
        while self._queues:
            slot = self._free_slot()
            if slot is None:
                return
            eligible = self._eligible()
            if not eligible:
                return
            session = self._next_session(eligible, self._served)
            ticket = self._queues[session].popleft()
            if not self._queues[session]:
                del self._queues[session]
            self._changes += 1
            self._dispatches += 1
            self._served[self._group(session)] = self._dispatches
            ticket.slot = slot
            ticket.started = time.monotonic()
            self._busy[slot] = ticket
            self._cv.notify_all()

    def _check_stragglers(self) -> None:
        """A job running past straggler_s gets a spare worker started beside it (once, at
        most `size` spares), so the queue moves on at the pool's size. The straggler's processes get the lowest CPU
        priority: a `while True` in example() must not slow the class's compiles on a machine
        with few cores. Holds self._cv."""
        self._check_detached()
        now = time.monotonic()
        for slot, t in list(self._busy.items()):
            if slot in self._stragglers or t.started is None:
                continue
            deadline, own = self._limits(slot, t)          # own: in its student's own sandbox
            if now < deadline:
                continue
            compiling = own and t.job is not None and _launch_begun(t.job)
            if not t.reniced and not compiling:
                t.reniced = True
                lower_priority(t.worker or self._slots[slot])
            if own:
                del self._busy[slot]
                self._detached.add(t)
                t.watch = "compiling" if compiling else "launch" if t.job is not None else None
                t.done_at = (_launches_done(t.job), now)
                self._changes += 1
                self._dispatch()
                continue
            # the spare starts now, not when the next job arrives: a student pressing Compile
            # while hangs run then finds a worker already started
            if len(self._slots) >= 2 * self.size:
                continue
            self._stragglers.add(slot)
            self._slots.append(self._spawn())
            self._dispatch()

    def _check_detached(self) -> None:
        """A detached job lowered before its first launch that has now begun one was slow, not
        hung: its sandbox's usual CPU share back, and lowered again OWN_DETACH_S after it was
        sent if it still runs. Holds self._cv."""
        now = time.monotonic()
        for t in self._detached:
            if t.watch and t.job is None:           # its job is over (the engine let go of its folder)
                t.watch = None
            elif t.watch == "launch" and _launch_begun(t.job):
                t.watch, t.done_at = "compiling", (_launches_done(t.job), now)
                restore_priority(t.worker)
            elif t.watch == "compiling":
                done = _launches_done(t.job)
                if done != t.done_at[0]:
                    t.done_at = (done, now)
                elif now >= t.done_at[1] + OWN_STALL_S:     # no launch finished for a while: stuck
                    t.watch, t.reniced = None, True
                    lower_priority(t.worker)

    def _finish(self, ticket: Ticket) -> None:
        with self._cv:
            if ticket.slot is None:                         # never ran (refused or abandoned)
                q = self._queues.get(ticket.session)
                if q and ticket in q:
                    q.remove(ticket)
                    self._changes += 1
                    if not q:
                        del self._queues[ticket.session]
            elif ticket in self._detached:
                self._detached.discard(ticket)
                self.completed += 1
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


def sandbox_cpu(worker) -> float | None:
    """CPU seconds of the processes in the worker's sandbox now (its cgroup's; exited ones are
    not counted), None where it has no cgroup. A job's deadline before its first launch counts
    this from when it was sent: on a busy machine a file's own Python waits for a core, and
    only a job that has used OWN_FIRST_LAUNCH_S of CPU without a launch is taken for a hang."""
    cgroup = getattr(worker, "cgroup", None)
    if cgroup is None:
        return None
    return sum(proctree.cpu_seconds(pid) for pid in cgroup.pids())


def _launches_done(job) -> int:
    """How many of the job's launches are done (journal.answered's files; the job makes them, so
    this only counts names, at most a listing a check)."""
    try:
        return sum(1 for n in os.listdir(job.fd) if n.endswith(".answer.json"))
    except (OSError, ValueError, AttributeError):
        return 0


def _launch_begun(job) -> bool:
    """Whether the job has begun its first kernel launch (journal.begin made `launch-0`). One
    stat through the job folder's descriptor: the folder is the job's to fill, so nothing here
    lists it. A job that makes the folder itself only keeps its slot as long as a compiling one."""
    try:
        os.stat("launch-0", dir_fd=job.fd, follow_symlinks=False)
        return True
    except (OSError, ValueError, AttributeError):      # (AttributeError: no folder, None)
        return False
