"""The result cache a class shares (inspectors/store/results.py): one computation per key at a
time, its value handed to who waited (a timeout too, a refusal not), and both levels bounded."""
import threading
import time

from inspectors.store.results import ResultCache, key_of

TIMEOUT = {"error": {"kind": "timeout"}}
BUSY = {"error": {"kind": "busy"}}


def keep(v):
    return (v.get("error") or {}).get("kind") not in ("timeout", "crash", "busy")


def share(v):
    return (v.get("error") or {}).get("kind") != "busy"


def ask_together(cache, key, computes, n):
    """n threads ask for `key` at once; computes[i] is what the i-th computation returns. The
    first computation holds until every asker has called get_or_compute (then a moment more,
    for the last to reach its wait), so all of them ask while it runs, however slow the machine."""
    calls, out = [], [None] * n
    lock = threading.Lock()
    arrived = threading.Semaphore(0)

    def compute():
        with lock:
            i = len(calls)
            calls.append(i)
        if i == 0:
            for _ in range(n):
                assert arrived.acquire(timeout=30)
        time.sleep(0.3)                     # a computation takes a while: others arrive meanwhile
        return computes[min(i, len(computes) - 1)]

    def ask(j):
        arrived.release()
        out[j] = cache.get_or_compute(key, compute, keep, share)
    threads = [threading.Thread(target=ask, args=(j,)) for j in range(n)]
    for t in threads:
        t.start()
        time.sleep(0.02)
    for t in threads:
        t.join(60)
    return len(calls), out


def test_concurrent_askers_share_one_computation(tmp_path):
    cache = ResultCache(tmp_path)
    n, out = ask_together(cache, "k", [{"ok": 1}], 4)
    assert n == 1
    assert sorted(out, key=lambda o: o[1]) == [({"ok": 1}, False)] + [({"ok": 1}, True)] * 3  # the rest: cached
    assert cache.get_or_compute("k", lambda: {"ok": 2})[0] == {"ok": 1}


def test_a_hang_is_waited_for_once_and_not_kept(tmp_path):
    """Three students with one hanging kernel: one time limit for all three, not three in a
    row; and the next Compile tries again (a timeout says nothing about the source)."""
    cache = ResultCache(tmp_path)
    n, out = ask_together(cache, "hang", [TIMEOUT, {"ok": 1}], 3)
    assert n == 1                                   # one computation (one time limit) for the three
    assert [o[0] for o in out] == [TIMEOUT] * 3 and not any(o[1] for o in out)
    assert cache.get("hang") is None
    assert cache.get_or_compute("hang", lambda: {"ok": 1}, keep, share) == ({"ok": 1}, False)


def test_a_refusal_is_not_handed_to_who_waited(tmp_path):
    """`busy` was about the first asker's own limit: the others compute for themselves."""
    cache = ResultCache(tmp_path)
    n, out = ask_together(cache, "b", [BUSY, {"ok": 1}], 3)
    assert [o[0] for o in out].count(BUSY) == 1 and [o[0] for o in out].count({"ok": 1}) == 2
    assert n == 2                                   # one more computed; the third read its kept value


def test_a_computation_that_raises_lets_the_next_asker_compute(tmp_path):
    cache = ResultCache(tmp_path)
    started, release = threading.Event(), threading.Event()
    errors = []

    def failing():
        started.set()
        release.wait(5)
        raise RuntimeError("worker gone")

    def first():
        try:
            cache.get_or_compute("x", failing)
        except RuntimeError as e:
            errors.append(e)
    t = threading.Thread(target=first)
    t.start()
    started.wait(5)
    result = {}
    t2 = threading.Thread(target=lambda: result.setdefault("v", cache.get_or_compute("x", lambda: {"ok": 3})))
    t2.start()
    release.set()
    t.join(5)
    t2.join(5)
    assert errors and result["v"] == ({"ok": 3}, False)


def test_both_levels_are_bounded_and_clear_empties_them(tmp_path):
    big = {"text": "x" * 40_000}
    cache = ResultCache(tmp_path, max_items=3, max_bytes=3 * 2**20)
    for i in range(10):
        cache.put(key_of(f"r{i}", "3.9.0"), {"i": i, **big})
    size = cache.size()
    assert size.memory_items == 3 and size.disk_items == 10
    assert cache.get(key_of("r0", "3.9.0"))["i"] == 0                  # from disk, back in memory
    tight = ResultCache(tmp_path, max_items=3, max_bytes=1)
    tight.put("new", {"i": "new"})
    assert tight.size().disk_items <= 1                                  # trimmed oldest first
    tight.clear()
    assert tight.size().memory_items == 0 and tight.size().disk_items == 0
    assert "0 results in memory, 0 on disk" in tight.size().describe()


# -- several server processes sharing one folder (make serve-class REPLICAS=N) ------------------
ASKER = """
import json, os, sys, time
from pathlib import Path
from inspectors.store.results import ResultCache
folder, key, me, answer = Path(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
def compute():
    with open(folder.parent / "calls", "a") as f:
        f.write(me + "\\n")
    while not (folder.parent / "go").exists():     # the test says when every asker is waiting
        time.sleep(0.05)
    return answer
def keep(v): return (v.get("error") or {{}}).get("kind") not in ("timeout", "crash", "busy")
(folder.parent / f"asking-{{me}}").touch()
value, hit = ResultCache(folder).get_or_compute(key, compute, keep)
print(json.dumps([value, hit]))
"""


def ask_from_processes(tmp_path, key, answer, n=2):
    """n processes ask for `key` in one cache folder at once; the first computation holds until
    every process has started asking. (calls, [(value, hit)] per process)."""
    import json
    import subprocess
    import sys
    folder = tmp_path / "results"
    script = ASKER.format()
    procs = [subprocess.Popen([sys.executable, "-c", script, str(folder), key, str(i), json.dumps(answer)],
                              stdout=subprocess.PIPE, text=True) for i in range(n)]
    deadline = time.time() + 60
    while time.time() < deadline and not ((tmp_path / "calls").exists() and
                                          all((tmp_path / f"asking-{i}").exists() for i in range(n))):
        time.sleep(0.05)
    time.sleep(0.5)                          # the last to ask reaches the lock
    (tmp_path / "go").touch()
    out = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    return (tmp_path / "calls").read_text().split(), out


def test_two_processes_compute_a_key_once(tmp_path):
    calls, out = ask_from_processes(tmp_path, "k", {"ok": 1})
    assert len(calls) == 1
    assert sorted(hit for _, hit in out) == [False, True] and all(v == {"ok": 1} for v, _ in out)


def test_a_hang_is_shared_across_processes_once_and_not_kept(tmp_path):
    calls, out = ask_from_processes(tmp_path, "hang", TIMEOUT, n=3)
    assert len(calls) == 1                   # one time limit for the three processes
    assert [v for v, _ in out] == [TIMEOUT] * 3
    assert ResultCache(tmp_path / "results").get("hang") is None


def test_one_owner_cannot_push_the_class_out_of_the_disk_level(tmp_path):
    """Issue 56's cache flood: four ~90 MB answers of one student pushed every result cached
    before out of the shared disk cache. Now past their share (1/SHARE of the bytes) a student's
    own oldest go; the class's stay."""
    import os
    from inspectors.store import results
    cache = ResultCache(tmp_path, max_items=4, max_bytes=1 << 20)
    for i in range(3):
        cache.put(f"class{i}", {"text": os.urandom(50_000).hex()}, owner=f"user:student{i}")
    for i in range(10):                     # ~100 KB each gzipped: ten are past the whole cache
        cache.put(f"flood{i}", {"text": os.urandom(100_000).hex()}, owner="user:mallory")
    on_disk = {p.name.split(".")[0] for p in tmp_path.glob("*.json.gz")}
    assert {"class0", "class1", "class2"} <= on_disk, on_disk
    flood = sorted(n for n in on_disk if n.startswith("flood"))
    assert flood and flood[-1] == "flood9" and len(flood) <= 2                 # hers: the newest within her share
    assert sum(p.stat().st_size for p in tmp_path.glob("flood*")) <= (1 << 20) // results.SHARE + 220_000
