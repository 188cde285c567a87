"""The students' own sandboxes' bookkeeping (inspectors/compile/student_sandboxes.py), with stand-in workers:
one per student, at most `cap` at once (the one idle longest makes room; all busy: none, the
engine runs the job the old way), stopped when idle, renewed after a job that broke one."""
import threading
import time

from inspectors.compile.student_sandboxes import OwnSandboxes


class FakeWorker:
    def __init__(self):
        self.killed = False
        self.ready = threading.Event()
        self.ready.set()

    def alive(self):
        return not self.killed

    def kill(self):
        self.killed = True


def _queue():
    """A fair queue of one pool worker, for its deadlines (no engine)."""
    from inspectors.compile import fairqueue

    class Queue(fairqueue.FairQueue):
        size, session_jobs, session_running, straggler_s = 1, 2, 1, 3.0

        def __init__(self):
            self._cv = threading.Condition()
            self._slots = [FakeWorker()]
            self._init_queue()

    return Queue()


def make(cap=2, idle_s=600.0):
    started = []

    def spawn():
        started.append(FakeWorker())
        return started[-1]
    return OwnSandboxes(spawn, cap, idle_s), started


def test_one_sandbox_per_student_kept_across_jobs():
    own, started = make()
    a = own.acquire("alice")
    own.release("alice", a)
    assert own.acquire("alice") is a and len(started) == 1
    own.release("alice", a)
    b = own.acquire("bob")
    assert b is not a and len(started) == 2
    own.close()


def test_at_the_cap_the_longest_idle_makes_room_and_busy_ones_are_never_taken():
    own, started = make(cap=2)
    a = own.acquire("alice")
    own.release("alice", a)
    time.sleep(0.01)
    b = own.acquire("bob")                 # bob stays busy
    c = own.acquire("carol")               # alice, idle, makes room
    assert a.killed and not b.killed and c is not None
    assert own.status()["evicted"] == 1 and own.status()["live"] == 2
    assert own.acquire("dave") is None     # both busy: none for dave (the engine runs it the old way)
    assert own.status()["live"] == 2
    own.close()
    assert b.killed and c.killed


def test_idle_ones_are_reaped_and_renewal_replaces():
    own, started = make(idle_s=60)
    a = own.acquire("alice")
    own.release("alice", a)
    b = own.acquire("bob")
    assert own.reap(time.monotonic() + 61) == 1          # alice idle past the limit; bob busy
    assert a.killed and not b.killed
    own.release("bob", b, renew=True)
    assert b.killed and own.status()["live"] == 0
    assert own.acquire("bob") is not b
    own.close()


def test_a_dead_sandbox_is_replaced_at_the_next_job():
    own, started = make()
    a = own.acquire("alice")
    own.release("alice", a)
    a.killed = True                          # died on its own
    assert own.acquire("alice") is not a and len(started) == 2
    own.close()


def test_a_sandbox_runs_one_job_at_a_time():
    own, started = make()
    a = own.acquire("alice")
    assert own.acquire("alice") is None          # her second tab's job runs elsewhere
    own.release("alice", a)
    assert own.acquire("alice") is a
    own.close()


def test_without_memory_to_spare_the_longest_idle_makes_room_or_none_starts():
    room = {"ok": True}
    started = []
    own = OwnSandboxes(lambda: started.append(FakeWorker()) or started[-1], cap=10, idle_s=600,
                       room=lambda: room["ok"])
    a = own.acquire("alice")
    room["ok"] = False
    assert own.acquire("bob") is None and len(started) == 1      # alice busy: nothing to take
    own.release("alice", a)
    b = own.acquire("bob")                                        # alice, idle, makes room
    assert b is not None and a.killed and own.status()["live"] == 1
    own.close()


def test_a_sandbox_is_started_outside_the_lock_and_once_per_student():
    """Another student's page run does not wait for a sandbox being started; the same student's
    two runs at once start one."""
    gate, started = threading.Event(), []

    def slow_spawn():
        gate.wait(5)
        started.append(FakeWorker())
        return started[-1]
    own = OwnSandboxes(slow_spawn, cap=10, idle_s=600)
    threads = [threading.Thread(target=own.prewarm, args=("alice",)) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    other = threading.Thread(target=lambda: own._take("bob", start=False))
    other.start()
    other.join(1)
    assert not other.is_alive()              # not held up by alice's start
    gate.set()
    for t in threads:
        t.join(5)
    assert len(started) == 1 and own.acquire("alice") is started[0]
    own.close()


def test_an_own_job_holds_its_slot_shorter_until_it_begins_a_launch(tmp_path):
    """The fair queue's deadline for a job in its own sandbox: OWN_FIRST_LAUNCH_S after it was
    sent while the file's Python runs (a hang in example()), OWN_DETACH_S once the journal shows
    a launch begun; a pool worker's job keeps straggler_s."""

    from inspectors.compile import fairqueue, journal

    q, t = _queue(), fairqueue.Ticket("alice")
    t.started, t.sent, t.worker = 100.0, 100.5, FakeWorker()          # not the slot's worker: its own
    t.job = journal.JobDir.create(tmp_path)
    try:
        assert q._limits(0, t) == (100.5 + fairqueue.OWN_FIRST_LAUNCH_S, True)
        journal.begin(t.job.path, 0, _kernel())
        assert q._limits(0, t) == (100.5 + fairqueue.OWN_DETACH_S, True)
    finally:
        t.job.close()
    t.worker = q._slots[0]
    assert q._limits(0, t) == (100.0 + q.straggler_s, False)


def _kernel():
    from inspectors.base.result import KernelResult
    return KernelResult(name="k", target="cuda:90", stages={}, options={}, args=())


def test_a_job_lowered_before_its_first_launch_gets_its_share_back_when_one_begins(tmp_path, monkeypatch):
    """Detached at OWN_FIRST_LAUNCH_S with no launch begun (a hang, or a slow start), its sandbox
    lowered; once its journal shows a launch it was slow, not hung: its share back, kept while
    its launches keep finishing, lowered once none has for OWN_STALL_S. A hang is never given it
    back."""

    from inspectors.compile import fairqueue, journal

    calls = []
    monkeypatch.setattr(fairqueue, "lower_priority", lambda w: calls.append(("lower", w)))
    monkeypatch.setattr(fairqueue, "restore_priority", lambda w: calls.append(("restore", w)))

    q = _queue()
    slow, hang = fairqueue.Ticket("alice"), fairqueue.Ticket("bob")
    now = fairqueue.time.monotonic()
    jobs = []
    try:
        for t, slot in ((slow, 0), (hang, 1)):
            q._slots.append(FakeWorker())
            t.started = t.sent = now - fairqueue.OWN_FIRST_LAUNCH_S - 0.01
            (tmp_path / t.session).mkdir()
            t.worker, t.job = FakeWorker(), journal.JobDir.create(tmp_path / t.session)
            jobs.append(t.job)
            q._busy[slot] = t
        with q._cv:
            q._check_stragglers()                           # both past their first-launch deadline
        assert q._busy == {} and q._detached == {slow, hang}
        assert sorted(calls, key=lambda c: c[1] is hang.worker) == [("lower", slow.worker), ("lower", hang.worker)]
        assert q._next_check() == fairqueue.OWN_LAUNCH_POLL_S      # watched for a launch
        calls.clear()
        journal.begin(slow.job.path, 0, _kernel())           # alice's file reaches its launch
        with q._cv:
            q._check_stragglers()
        assert calls == [("restore", slow.worker)] and slow.watch == "compiling" and hang.watch == "launch"
        calls.clear()
        journal.answered(slow.job.path, 0, {"kernel": {}})   # a launch finished: progress
        slow.done_at = (slow.done_at[0], slow.done_at[1] - fairqueue.OWN_STALL_S)
        with q._cv:
            q._check_stragglers()
        assert calls == [] and slow.watch == "compiling" and slow.done_at[0] == 1     # its share kept
        slow.done_at = (1, slow.done_at[1] - fairqueue.OWN_STALL_S)      # then none for OWN_STALL_S
        with q._cv:
            q._check_stragglers()
        assert calls == [("lower", slow.worker)] and slow.watch is None and hang.watch == "launch"
        hang.job = None                                       # the engine let go of its job's folder: it is over
        with q._cv:
            q._check_stragglers()
            assert hang.watch is None and q._next_check() == 0.5
    finally:
        for job in jobs:
            job.close()


def test_before_its_first_launch_a_job_is_timed_by_its_sandboxs_cpu_not_the_wall(tmp_path, monkeypatch):
    """Where the sandbox has a cgroup, a job that has begun no launch is taken for a hang once
    its sandbox has used OWN_FIRST_LAUNCH_S of CPU since it was sent: a file's Python that waits
    for a core on a busy machine keeps its slot (up to OWN_DETACH_S)."""
    import os

    from inspectors.compile import fairqueue, journal

    class Cg:
        def pids(self):
            return {os.getpid()}

    me = FakeWorker()
    me.cgroup = Cg()
    assert fairqueue.sandbox_cpu(me) > 0 and fairqueue.sandbox_cpu(FakeWorker()) is None
    used = {"s": 5.0}
    monkeypatch.setattr(fairqueue, "sandbox_cpu", lambda w: used["s"])
    q, t = _queue(), fairqueue.Ticket("alice")
    t.started = t.sent = fairqueue.time.monotonic() - 0.5          # half a second of wall time
    t.worker, t.cpu0 = me, 5.0
    t.job = journal.JobDir.create(tmp_path)
    try:
        used["s"] = 5.0 + fairqueue.OWN_FIRST_LAUNCH_S / 2            # waited for a core: keeps its slot
        deadline, own = q._limits(0, t)
        assert own and deadline > fairqueue.time.monotonic() and deadline <= t.sent + fairqueue.OWN_DETACH_S
        used["s"] = 5.0 + fairqueue.OWN_FIRST_LAUNCH_S + 0.01        # spun: a hang
        assert q._limits(0, t) == (t.sent, True)
    finally:
        t.job.close()


def test_one_waiter_watches_the_running_jobs_while_the_others_sleep(monkeypatch):
    """Each waiting student reading every own job's cgroup 40 times a second was a fifth of a
    class server's CPU: one waiter (the watcher) looks, and when it is served another takes over."""
    q = _queue()
    holder = q._enqueue("holder")                         # the only slot
    calls = []
    check = q._check_stragglers

    def watched():
        calls.append(threading.current_thread().name)
        check()
    monkeypatch.setattr(q, "_check_stragglers", watched)
    monkeypatch.setattr(q, "_next_check", lambda: 0.005)
    waiting = [q._enqueue(f"student{i}") for i in range(4)]
    threads = [threading.Thread(target=q._wait_turn, args=(t, None), name=t.session, daemon=True) for t in waiting]
    for t in threads:
        t.start()
    running, seen = holder, []
    for _ in waiting:
        deadline = time.monotonic() + 20
        while len(calls) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        with q._cv:
            names, served = set(calls), {t.session for t in waiting if t.slot is not None}
        assert len(names) == 1 and not names & served, names       # one watcher, still waiting
        seen += names
        q._finish(running)                                # the slot to the next student in the fair order
        running = next(t for t in waiting if t.slot is not None and t.session not in served)
        threads[waiting.index(running)].join(10)          # served: it has stopped watching
        calls.clear()
    for t in threads:
        t.join(10)
    q._finish(running)
    assert not any(t.is_alive() for t in threads) and q._watcher is None
    assert len(set(seen)) >= 2                            # the watch passed on when its watcher was served


def test_a_lowered_sandbox_gets_the_lowest_share_and_is_made_idle_where_the_kernel_can(tmp_path, monkeypatch):
    """A share of 2 still let a detached hang take the core the balancer left to it (half a core
    of a 2-core class's compile time): where the cgroup has `cpu.idle`, the group is made idle.
    The kernel refuses a new weight for an idle group (EINVAL), as the files here do: restored,
    the group is made busy first, then given its usual share."""
    from pathlib import Path

    from inspectors.process.cgroups import CPU_SHARES, Cgroup
    write = Path.write_text

    def like_the_kernel(self, data, *args, **kwargs):
        idle = self.parent / "cpu.idle"
        if self.name in ("cpu.shares", "cpu.weight") and idle.exists() and idle.read_text() == "1":
            raise OSError(22, "Invalid argument")
        return write(self, data, *args, **kwargs)
    monkeypatch.setattr(Path, "write_text", like_the_kernel)
    v1, v2, old = tmp_path / "v1", tmp_path / "v2", tmp_path / "old"
    for d, files in ((v1, ("cpu.shares", "cpu.idle")), (v2, ("cpu.weight", "cpu.idle")), (old, ("cpu.shares",))):
        d.mkdir()
        for f in files:
            (d / f).write_text("x")
    group = Cgroup([v1, v2, old])
    group.cpu_share(low=True)
    assert [(d / f).read_text() for d, f in ((v1, "cpu.shares"), (v1, "cpu.idle"), (v2, "cpu.weight"),
                                               (v2, "cpu.idle"), (old, "cpu.shares"))] == ["2", "1", "1", "1", "2"]
    assert not (old / "cpu.idle").exists()                 # a kernel without it: the share alone
    group.cpu_share(low=False)
    assert [(v1 / "cpu.shares").read_text(), (v1 / "cpu.idle").read_text(), (v2 / "cpu.idle").read_text()] == \
        [str(CPU_SHARES), "0", "0"]


def test_identities_cost_something():
    """A page open of a cookie's identity (not named by the proxy) starts nothing; its starts are
    limited per address; at the cap a working student's sandbox is not taken; `forget` stops
    a student's sandbox at once; unnamed identities share their address's turn in the queue."""
    from inspectors.compile.student_sandboxes import Gate
    started = []
    own = OwnSandboxes(lambda: started.append(FakeWorker()) or started[-1], cap=4, idle_s=600,
                       gate=Gate(per_address=2, starting=5), protect_s=120)
    own.note("alice", "10.0.0.1", named=True)
    a = own.acquire("alice")
    own.release("alice", a)                                   # alice is working
    for i in range(10):
        own.note(f"flood{i}", "203.0.113.7", named=False)
        own.prewarm(f"flood{i}")
    assert len(started) == 1                                  # page opens: nothing started
    got = [own.acquire(f"flood{i}") for i in range(10)]
    assert sum(w is not None for w in got) == 2 and own.gate.refused >= 8   # two a minute from one address
    for i, w in enumerate(got):
        if w is not None:
            own.release(f"flood{i}", w)
    own.note("bob", "10.0.0.2", named=True)
    own.release("bob", own.acquire("bob"))                    # named: not the address's allowance
    own.note("carol", "10.0.0.3", named=True)
    assert own.acquire("carol") is None                       # at the cap, every sandbox in use lately
    assert not a.killed
    assert own.group("flood3") == own.group("flood4") == "address:203.0.113.7" and own.group("alice") == "alice"
    assert own.forget("alice") and a.killed and own.status()["live"] == 3
    own.close()


def test_a_student_whose_tabs_all_closed_is_gone_after_the_grace():
    from app.backend import presence
    presence._students.clear()
    presence._students["user:ann"] = presence._Student(tabs={"tab1": 0.0, "tab2": 0.0})
    presence._students["user:ben"] = presence._Student(tabs={"tab3": 0.0})
    connected = {"tab1": False, "tab2": False, "tab3": True}
    assert presence.gone(100.0, connected.get) == []                       # ann's tabs just closed
    assert presence.gone(100.0 + presence.GRACE_S, connected.get) == ["user:ann"]
    assert list(presence._students) == ["user:ben"]
    connected["tab3"] = False
    presence.gone(200.0, connected.get)
    connected["tab3"] = True                                               # ben came back in time
    assert presence.gone(200.0 + presence.GRACE_S, connected.get) == []
    presence._students.clear()


def test_the_status_line_shows_what_each_student_holds():
    """presence.rows: per student, the server CPU of their runs, what their session keeps, their
    sandbox and its memory (its cgroup's)."""
    from app.backend import presence

    class Cg:
        def memory_bytes(self):
            return 300 << 20

    class Eng:
        def __init__(self, own):
            self.own = own

    class Engines:
        def __init__(self, own):
            self._e = [Eng(own)]

        def started(self):
            return self._e

    own, _ = make(cap=4)
    w = own.acquire("user:ann")
    w.cgroup = Cg()
    presence._students.clear()
    presence._students["user:ann"] = presence._Student(tabs={}, cpu_s=1.5, runs=3, held_bytes=2 << 20)
    assert presence.rows(Engines(own)) == []                  # another student sees no row of hers
    rows = presence.rows(Engines(own), me="user:ann")
    assert {k: v for k, v in rows[0].items() if "MB" not in k or k == "sandbox MB"} == {
        "student": "ann (you)", "tabs": 0, "runs": 3, "server CPU s": 1.5, "server KB (session)": 2048.0,
        "sandbox": "compiling", "sandbox MB": 300.0}
    assert presence.held_bytes({"a": "x" * 1000, "b": ("y" * 500, b"z" * 24)}) >= 1524
    presence._students.clear()
    own.close()


def test_no_student_learns_of_another_from_the_panel_and_a_teacher_sees_all():
    """The per-student panel labelled others sha256("user:user:NAME")[:8], with no secret: any
    student could hash the class roster and watch who compiles. A student now sees their own row
    only, no label of anyone else in any form; a teacher named in TLENS_TEACHERS sees everyone."""
    import hashlib
    import json

    from app.backend import presence
    from inspectors.base import settings as settings_mod

    class Engines:
        def started(self):
            return []

    presence._students.clear()
    roster = ["ann", "ben", "chloe"]
    for i, name in enumerate(roster):                 # keys as services.who() makes them
        presence._students[f"user:user:{name}"] = presence._Student(tabs={}, cpu_s=0.5 * i, runs=i + 1, held_bytes=1024)
    try:
        seen_by_ben = json.dumps(presence.rows(Engines(), me="user:user:ben", teacher=False))
        assert [r["student"] for r in presence.rows(Engines(), me="user:user:ben")] == ["ben (you)"]
        for name in ("ann", "chloe"):            # the roster attack: every hash a label could be
            for key in (f"user:{name}", f"user:user:{name}", name):
                assert hashlib.sha256(key.encode()).hexdigest()[:8] not in seen_by_ben, key
            assert name not in seen_by_ben
        settings = settings_mod.load().__class__(**{**vars(settings_mod.load()), "teachers": ("prof",)})
        assert presence.is_teacher("user:user:prof", settings) and not presence.is_teacher("user:user:ben", settings)
        for cookie in ("user:browser:prof", "session:prof", "user:prof"):     # a cookie or a session never is one
            assert not presence.is_teacher(cookie, settings), cookie
        teacher = presence.rows(Engines(), me="user:user:prof", teacher=presence.is_teacher("user:user:prof", settings))
        assert [r["student"] for r in teacher] == roster and [r["runs"] for r in teacher] == [1, 2, 3]
    finally:
        presence._students.clear()


def test_a_class_opening_its_pages_at_once_gets_every_sandbox_started():
    """Twelve named students open their pages at the same moment; at most two sandboxes start
    at once (the Gate): the refused ones are started as the starts before them end, not left
    to their first compile. A student who leaves before their turn is not started."""
    from inspectors.compile.student_sandboxes import Gate
    started, lock = [], threading.Lock()

    def spawn():
        time.sleep(0.1)                     # a sandbox takes a while to start
        with lock:
            started.append(FakeWorker())
            return started[-1]
    own = OwnSandboxes(spawn, 20, 600.0, gate=Gate(starting=2))
    try:
        names = [f"user:s{i}" for i in range(12)]
        threads = [threading.Thread(target=own.prewarm, args=(n,)) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert own.status()["refused"] > 0                  # the limit held...
        own.forget(names[-1])                               # (gone before a start came to them, or not)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(own.sessions()) < 11:
            time.sleep(0.05)
        assert set(names[:-1]) <= set(own.sessions())      # ...and every other one started
    finally:
        own.close()
