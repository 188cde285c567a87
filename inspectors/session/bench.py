"""Benchmark jobs: a kernel checked against torch and timed on a GPU, in the benchmark worker's
process (never in the caller's), and the benchmark model the pages draw (pure: GB/s, TFLOP/s,
the CSV, a kernel file's benchmark names read statically).

    result = run(BenchRequest(slug="vector_add", source=text, size=2**24), on_progress)
    probe()                       # which GPUs the worker sees (a subprocess imports torch)
    versions(lens, request, "3.6.0", "3.9.0", rounds=2)   # Triton rows under two versions, in turns
"""
from __future__ import annotations

from typing import Callable

from inspectors.bench import compare_versions as bench_versions
from inspectors.bench import worker
from inspectors.bench.model import (  # noqa: F401 - the benchmark model the pages draw
    TIMING_NEEDS_GPU, TRITON, BenchRequest, BenchResult, BenchUsageError, StaticInfo, format_size,
    static_info, to_csv)
from inspectors.bench.profiler import ProfileError, profile_launch  # noqa: F401 - Nsight Compute per line
from inspectors.bench.compare_versions import VersionBench  # noqa: F401
from inspectors.bench.worker import Progress  # noqa: F401
from inspectors.bench.step_times import MeasureError, measure as measure_step, per_call  # noqa: F401 - a step timed
from inspectors.session.lens import Lens


def run(request: BenchRequest, on_progress: Callable[[Progress], None] | None = None) -> BenchResult:
    """One benchmark run in a fresh worker process (its errors are the result's, never raised)."""
    return worker.run_benchmark(request, on_progress)


def measure_source(source: str, filename: str, files: dict | None = None) -> dict:
    """A step's kernels timed on this server's GPU, in a benchmark worker: {"times": ...} or {"error": ...}."""
    return worker.measure_step(source, filename, files)


def probe() -> dict:
    """Which GPUs the benchmark worker sees."""
    return worker.probe()


def versions(lens: Lens, request: BenchRequest, va: str, vb: str, rounds: int = 2,
             on_progress: Callable[[Progress], None] | None = None) -> VersionBench:
    """`request`'s Triton rows under Triton `va` and `vb` (the versions `lens` is set up with),
    each round in its own worker, in turns A B, B A, ..."""
    envs = lens.engines.envs
    return bench_versions.run_versions(request, [envs[va], envs[vb]], rounds=rounds, on_progress=on_progress)
