"""A library op's launches on this machine: how soon the first kernel is on screen and how soon
the whole op is, against the goals, side by side in one run.

    .venv/bin/python benchmarks/library_ops.py [--reps 3] [--children 0]

Per op (drivers in benchmarks/drivers/; fla-core 0.6.0 and torchao 0.18.0, which `make setup`
installs): a warm worker, a cold Triton cache for every run, the request the explorer sends (SASS
on demand, the analysis budget), through Lens.compile with `on_progress` as the page streams it.
Medians of --reps runs:

- launches: what example() made (an autotuner's configs each one);
- example: loading the file and running example() (the worker's own clock, launches.json);
- Σ compile: every launch's compile (its own clock, in its own child), added up;
- job CPU: the worker's whole CPU for the job, its children's included (timings.cpu_s);
- first: from the launches being listed (example() has made them) to the first launch
  compiled and read by the server (polled five times a second, as the page is);
- whole: the compile call's wall time.

Goals (issue 45): first ≤ 3 s; whole ≤ 1.2 × Σ compile ÷ cores + example. Beside the last, the
same with the job's whole CPU for Σ compile (`job`: each launch's analysis too, memory ops, source
map, bank conflicts, which the worker runs beside its compile): how well the job's work spreads
over the cores.
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
DRIVERS = ("benchmarks/drivers/fla_chunk_gla.py", "benchmarks/drivers/torchao_fp8_gemm.py",
           "tests/snippets/autotune_matmul.py")
FIRST_GOAL_S = 3.0
WHOLE_FACTOR = 1.2


def one(path: Path) -> dict:
    from inspectors.base import settings as settings_mod
    from inspectors.base.result import CompileRequest
    from inspectors.session.lens import Lens
    os.environ["TLENS_TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tlens-libops-")
    settings = settings_mod.load()
    lens = Lens(settings, cache=False, workers=1)
    seen: list = []
    try:
        lens.engine().wait_ready()
        request = CompileRequest(source=path.read_text(), filename=path.name, sass=False,
                                 analysis_s=settings.analysis_budget_s)
        t0 = time.perf_counter()
        # as the page: the first launch done is read and shown, the others only ticked
        result = lens.compile(request, timeout=900, on_progress=lambda p: (p.first(), seen.append(p))).result
        whole = time.perf_counter() - t0
    finally:
        lens.close()
    if not result.ok:
        raise SystemExit(f"{path.name}: {result.error}")
    progress = seen[-1] if seen else None
    first = (min(progress.done.values()) - progress.listed_s
             if progress and progress.done and progress.listed_s is not None else float("nan"))
    return {"launches": len(result.kernels), "example": progress.example_s if progress else float("nan"),
            "compile": sum(k.compile_seconds for k in result.kernels), "cpu": result.timings.get("cpu_s", 0.0),
            "first": first, "whole": whole}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--children", default="0", help="TLENS_COMPILE_CHILDREN (0: one per core)")
    ap.add_argument("--only", help="run the drivers whose path contains this")
    args = ap.parse_args()
    os.environ["TLENS_COMPILE_CHILDREN"] = args.children
    from inspectors.compile import parallel
    cores = parallel.cores()
    import torch
    import triton
    print(f"library_ops: cold Triton cache, warm worker, medians of {args.reps}; {cores} compile children, "
          f"{os.cpu_count()} CPUs; torch {torch.__version__}, triton {triton.__version__}")
    print(f"{'op':24} {'launches':>8} {'example':>8} {'Σ compile':>10} {'job CPU':>8} {'first':>6} "
          f"{'goal':>5} {'whole':>7} {'goal':>7} {'job':>7}  met")
    for rel in DRIVERS:
        if args.only and args.only not in rel:
            continue
        runs = [one(ROOT / rel) for _ in range(args.reps)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        whole_goal = WHOLE_FACTOR * med["compile"] / cores + med["example"]
        job_goal = WHOLE_FACTOR * (med["cpu"] - med["example"]) / cores + med["example"]
        met = ("first " + ("met" if med["first"] <= FIRST_GOAL_S else "MISSED") + ", whole "
               + ("met" if med["whole"] <= whole_goal else "MISSED") + " (job: "
               + ("met" if med["whole"] <= job_goal else "MISSED") + ")")
        print(f"{Path(rel).stem:24} {med['launches']:8.0f} {med['example']:7.1f}s {med['compile']:9.1f}s "
              f"{med['cpu']:7.1f}s {med['first']:5.1f}s {FIRST_GOAL_S:4.0f}s {med['whole']:6.1f}s {whole_goal:6.1f}s "
              f"{job_goal:6.1f}s  {met}")
        wholes = ", ".join(f"{r['whole']:.1f}" for r in runs)
        print(f"{'':24} runs (whole): {wholes} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
