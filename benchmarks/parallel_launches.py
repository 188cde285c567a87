"""A job's launches compiled one after another vs in the worker's children at once
(inspectors/compile/parallel.py), side by side in one run.

    .venv/bin/python benchmarks/parallel_launches.py [--reps 3]

Per file: the wall time of Engine.compile (a warm worker, a fresh Triton cache each time, SASS on
demand as in the app), TLENS_COMPILE_CHILDREN=1 and the default (one child per core) taking turns,
medians. The launches are what the file's example() runs: a training step's forward and backward
kernels, an autotuner's configs.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("tests/snippets/autotune_matmul.py", "tests/snippets/training/liger_train_step.py",
         "tests/snippets/autotune_prune.py", "tests/snippets/flash_attention.py")


def one(path: Path, children: str) -> tuple[float, int]:
    from inspectors.base import settings as settings_mod
    from inspectors.base.result import CompileRequest
    from inspectors.compile.engine import Engine
    os.environ["TLENS_COMPILE_CHILDREN"] = children
    os.environ["TLENS_TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tlens-par-")
    engine = Engine(settings_mod.load(), workers=1)
    try:
        engine.wait_ready()
        t = time.perf_counter()
        r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, sass=False), timeout=900)
        wall = time.perf_counter() - t
    finally:
        engine.close()
    if not r.kernels:
        raise SystemExit(f"{path.name}: {r.error}")
    return wall, len(r.kernels)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"parallel_launches: Engine.compile wall, fresh Triton cache, medians of {args.reps} ({cores} cores)")
    print(f"{'file':28} {'launches':>8} {'one at a time':>14} {'children':>10} {'ratio':>6}")
    for rel in FILES:
        path = ROOT / rel
        serial, forked = [], []
        for _ in range(args.reps):
            w, n = one(path, "1")
            serial.append(w)
            w, n = one(path, "0")
            forked.append(w)
        s, f = statistics.median(serial), statistics.median(forked)
        print(f"{path.name:28} {n:8d} {s:13.2f}s {f:9.2f}s {f / s:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
