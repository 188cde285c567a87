"""The compile pool behind a class's server (inspectors/compile/engine.py): fair order between
sessions, queue positions, the per-session limit, a killed worker replaced while the others
compile, and a hung compile that holds up only its own session. Real workers, real compiles;
order and positions are asserted, never durations."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine

# example() sleeps first, so a job holds its worker long enough for others to queue behind it.
SLOW = """
import time, torch, triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + {tag})

def example():
    time.sleep({seconds})
    k[(1,)](torch.zeros(4))
"""


def _req(tag: int, seconds: float = 0.0) -> CompileRequest:
    return CompileRequest(source=SLOW.format(tag=tag, seconds=seconds), filename=f"slow{tag}.py")


@pytest.fixture
def make_engine():
    made = []

    def make(**kw) -> Engine:
        e = Engine(settings_mod.load(), **kw)
        assert e.wait_ready(), "workers did not start"
        made.append(e)
        return e
    yield make
    for e in made:
        e.close()


def _submit(engine, session, request, log, waits=None, timeout=60):
    def run():
        def on_wait(pos, secs):
            if waits is not None:
                waits.append((session, pos))
        r = engine.compile(request, timeout=timeout, session=session, on_wait=on_wait)
        log.append((session, r))
    t = threading.Thread(target=run)
    t.start()
    return t


def _until(cond, limit=60.0):
    end = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.05)


def test_fair_order_and_queue_positions(make_engine):
    """One worker. A takes it; A queues two more, then B one: B is served before A's second
    and third (A was served last), and each waiting job was told how many were ahead of it."""
    eng = make_engine(workers=1, session_jobs=4, straggler_s=600)   # no spares: the order is the queue's
    done, waits = [], []
    threads = [_submit(eng, "A", _req(1, 2.0), done)]
    _until(lambda: eng.status()["running"] == 1)
    threads.append(_submit(eng, "A", _req(2, 0.5), done, waits))
    _until(lambda: eng.status()["waiting"] == 1)
    threads.append(_submit(eng, "A", _req(3, 0.5), done, waits))
    _until(lambda: eng.status()["waiting"] == 2)
    threads.append(_submit(eng, "B", _req(4, 0.5), done, waits))
    for t in threads:
        t.join(120)
    assert [s for s, _ in done] == ["A", "B", "A", "A"], [s for s, _ in done]
    assert all(r.ok for _, r in done), [r.error for _, r in done]
    # B arrived last but was told it is next (0 ahead); A's third saw A's second and B ahead.
    assert ("B", 0) in waits
    assert max(p for s, p in waits if s == "A") == 2


def test_session_limit_refuses_at_once(make_engine):
    eng = make_engine(workers=1, session_jobs=1, straggler_s=600)
    done = []
    t = _submit(eng, "A", _req(5, 2.0), done)
    _until(lambda: eng.status()["running"] == 1)
    r = eng.compile(_req(6), session="A")
    assert r.error is not None and r.error.kind == "busy" and "1 compiles waiting or running" in r.error.message
    other = eng.compile(_req(7), session="B", timeout=60)       # another session is not refused
    assert other.ok, other.error
    t.join(60)
    assert done[0][1].ok


def test_killed_worker_is_replaced_while_others_compile(make_engine):
    eng = make_engine(workers=2, session_jobs=4, straggler_s=600)
    done = []
    busy = _submit(eng, "A", _req(8, 3.0), done)
    _until(lambda: eng.status()["running"] == 1)
    running_pid = eng._slots[next(iter(eng._busy))].proc.pid
    idle = [p for p in eng.worker_pids() if p != running_pid]
    os.kill(idle[0], signal.SIGKILL)
    killed = next(w for w in eng._slots if w.proc.pid == idle[0])
    _until(lambda: not killed.alive())                             # it died while idle
    r = eng.compile(_req(9), session="B", timeout=120)             # lands on the killed slot
    assert r.ok, r.error
    busy.join(60)
    assert done and done[0][1].ok                                  # the other job was not disturbed
    assert idle[0] not in eng.worker_pids() and running_pid in eng.worker_pids()


def test_a_hung_compile_holds_up_only_its_own_session(make_engine):
    """One worker, and A's kernel never returns: B's compile, queued behind it, gets a spare
    worker and finishes while A's is still hanging."""
    eng = make_engine(workers=1, session_jobs=2, straggler_s=1.0)
    done = []
    hung = _submit(eng, "A", CompileRequest(source=SLOW.format(tag=10, seconds=3600), filename="hang.py"),
                   done, timeout=90)
    _until(lambda: eng.status()["running"] == 1)
    r = eng.compile(_req(11), session="B", timeout=120)
    assert r.ok, r.error
    assert not done, "B finished only after A's hang ended"
    assert eng.status()["stragglers"] == 1
    hung_pid = eng._slots[next(iter(eng._stragglers))].proc.pid
    assert os.getpriority(os.PRIO_PROCESS, hung_pid) == 19          # it no longer competes for the cores
    eng.close()                                                    # ends the hang
    hung.join(30)


def test_queue_positions_of_a_lecture_hall_are_the_schedulers_order():
    """The positions every waiting session is shown (played out once per change of the queue,
    with a heap) are the order `_next_session` serves them in, played out one by one: 300
    sessions, some with two jobs, some served before."""
    import random
    from collections import deque
    from inspectors.compile.fairqueue import Ticket
    rng = random.Random(24)
    eng = Engine.__new__(Engine)                    # the scheduler's state only: no workers
    eng._queues, eng._served, eng._dispatches, eng._changes, eng._order = {}, {}, 500, 0, (-1, {})
    for i in range(300):
        s = f"s{i}"
        eng._queues[s] = deque(Ticket(s) for _ in range(rng.choice((1, 1, 2))))
        for t in eng._queues[s]:
            t.enqueued = rng.random()
        if rng.random() < 0.4:
            eng._served[s] = rng.randrange(500)
    # the reference: serve one job at a time in `_next_session`'s order
    queues, served, clock, expected = {s: deque(q) for s, q in eng._queues.items()}, dict(eng._served), 500, {}
    while queues:
        s = eng._next_session(queues, served)
        expected[id(queues[s].popleft())] = len(expected)
        if not queues[s]:
            del queues[s]
        clock += 1
        served[s] = clock
    tickets = [t for q in eng._queues.values() for t in q]
    assert [eng._position(t) for t in tickets] == [expected[id(t)] for t in tickets]
    assert sorted(expected.values()) == list(range(len(tickets)))
