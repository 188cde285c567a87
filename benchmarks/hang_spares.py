"""What a hanging kernel costs the students queued behind it (not a test: it prints figures).

Two workers; two sessions start kernels whose example() never returns, then ten other sessions
each compile a small kernel (tests/sandbox/test_pool.py's SLOW, no sleep). The hangs hold both workers
until the engine treats them as stragglers (`straggler_s`) and starts spare workers beside them;
the queue moves on those. Printed, for each straggler threshold, side by side in one run: when
the ten were done (median, last), and the same ten on two free workers for comparison.

    .venv/bin/python benchmarks/hang_spares.py [--reps 2] [--thresholds 10 3]
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time

from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine
from tests_helpers import load  # (benchmarks/tests_helpers.py)

SLOW = load("test_pool").SLOW       # the pool tests' kernel: example() sleeps, then launches


def once(straggler_s: float, hangs: int = 2, quick: int = 10) -> list[float]:
    """Seconds from the first submit until each quick job was done."""
    engine = Engine(workers=2, session_jobs=2, straggler_s=straggler_s)
    assert engine.wait_ready(), "workers did not start"
    time.sleep(1)
    done: dict[int, float] = {}
    t0 = time.monotonic()

    def go(i: int, seconds: float, timeout: float):
        r = engine.compile(CompileRequest(source=SLOW.format(tag=i, seconds=seconds), filename=f"job{i}.py",
                                          target="cuda:90"), timeout=timeout, session=f"s{i}")
        if seconds == 0:
            assert r.ok, r.error
            done[i] = time.monotonic() - t0
    hung = [threading.Thread(target=go, args=(i, 3600, 30)) for i in range(hangs)]
    for t in hung:
        t.start()
    time.sleep(0.3)
    jobs = [threading.Thread(target=go, args=(i, 0, 120)) for i in range(hangs, hangs + quick)]
    for t in jobs:
        t.start()
    for t in jobs:
        t.join()
    engine.close()                       # ends the hangs
    for t in hung:
        t.join()
    return sorted(done.values())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--thresholds", type=float, nargs="+", default=[10.0, 3.0])
    args = ap.parse_args()
    rows: dict[str, list[list[float]]] = {}
    for _ in range(args.reps):                      # interleaved: the machine's drift hits each alike
        rows.setdefault("no hangs", []).append(once(3.0, hangs=0))
        for s in args.thresholds:
            rows.setdefault(f"straggler_s={s:g}", []).append(once(s))
    print(f"10 small compiles on 2 workers, behind 2 never-returning kernels; medians of {args.reps} runs")
    base = statistics.median(r[-1] for r in rows["no hangs"])
    for name, runs in rows.items():
        med = statistics.median(statistics.median(r) for r in runs)
        last = statistics.median(r[-1] for r in runs)
        print(f"{name:>18}: median job done at {med:5.1f} s, last at {last:5.1f} s  ({last / base:.1f}x no hangs)")


if __name__ == "__main__":
    main()
