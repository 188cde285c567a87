"""The same benchmark under two Triton versions: each version runs in its own benchmark worker
(inspectors.bench.worker with that version's Triton), the runs interleaved A B, B A, A B, ... so
that clock and thermal drift fall on both, and the Triton rows compared as a ratio B / A.

    vb = run_versions(BenchRequest("softmax"), [envs["3.6.0"], envs["3.9.0"]], rounds=2)
    vb.ratios        # ((size, ms_a, ms_b, ms_b / ms_a), ...) on a GPU; () without one
    vb.checks        # without a GPU: each version's check() on the interpreter

Without a GPU each worker checks the kernel on that version's Triton interpreter and times
nothing (a CPU-emulated figure says nothing about a GPU), so `checks` says whether both
versions compute the right result.
"""
from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Callable

from inspectors.base.triton_installs import TritonEnv
from inspectors.bench.model import TRITON, BenchError, BenchRequest, BenchResult
from inspectors.bench.worker import Progress, run_benchmark


@dataclass(frozen=True)
class VersionBench:
    versions: tuple[str, str]
    runs: tuple[BenchResult, ...]          # in the order they ran
    order: tuple[str, ...]                 # which version each run was
    ratios: tuple[tuple[int, float, float, float], ...]   # (size, median ms A, median ms B, B / A)
    mode: str                              # "gpu" | "interpreter" | "none"

    @property
    def checks(self) -> tuple[tuple[str, bool, str], ...]:
        """(version, passed, what) of every check run (the interpreter's, without a GPU)."""
        return tuple((v, c.ok, c.message) for v, r in zip(self.order, self.runs) for c in r.checks)

    @property
    def errors(self) -> tuple[tuple[str, str], ...]:
        return tuple((v, r.error.headline()) for v, r in zip(self.order, self.runs) if r.error is not None)

    def describe(self) -> str:
        a, b = self.versions
        if self.ratios:
            return "; ".join(f"size {s}: Triton {a} {ma:.4f} ms, {b} {mb:.4f} ms, {b}/{a} = {r:.3f}×"
                             for s, ma, mb, r in self.ratios)
        if self.errors:
            return "; ".join(f"Triton {v}: {e}" for v, e in self.errors)
        passed = {v: all(ok for w, ok, _ in self.checks if w == v) for v in self.versions}
        return "no GPU: nothing timed; " + ", ".join(
            f"Triton {v} {'passes' if passed[v] else 'FAILS'} the check on its interpreter" for v in self.versions)


def interleaved(rounds: int) -> list[int]:
    """Which of the two versions runs next: 0 1, 1 0, 0 1, ... (`rounds` pairs)."""
    out: list[int] = []
    for r in range(max(1, rounds)):
        out += [0, 1] if r % 2 == 0 else [1, 0]
    return out


def run_versions(request: BenchRequest, envs: list[TritonEnv], rounds: int = 2,
                 on_progress: Callable[[Progress], None] | None = None, timeout: float | None = None,
                 runner: Callable[..., BenchResult] = run_benchmark) -> VersionBench:
    """`request`'s Triton rows under envs[0] and envs[1] (module docstring). Only Triton is timed
    (the torch baselines do not depend on the Triton version); each worker's rounds are one."""
    if len(envs) != 2:
        raise ValueError(f"two Triton versions to compare, got {len(envs)}")
    one = dataclasses.replace(request, providers=(TRITON,), rounds=1)
    plan = interleaved(rounds)
    runs: list[BenchResult] = []
    for n, side in enumerate(plan):
        env = envs[side]
        if on_progress:
            on_progress(Progress(n / len(plan), f"Triton {env.version}: run {n + 1} of {len(plan)}"))
        result = runner(one, timeout=timeout, triton=None if env.own else env)
        if result.triton_version and result.triton_version != env.version:     # a wrong environment
            result = dataclasses.replace(result, error=BenchError(
                "usage", f"asked for Triton {env.version}, the worker ran {result.triton_version}"))
        runs.append(result)
    order = tuple(envs[side].version for side in plan)
    mode = "gpu" if any(r.mode == "gpu" for r in runs) else ("interpreter" if any(r.mode == "interpreter" for r in runs)
                                                            else "none")
    ratios = []
    if mode == "gpu":
        sizes = sorted({row.size for r in runs for row in r.rows if row.provider == TRITON})
        for size in sizes:
            ms = [[row.ms for v, r in zip(order, runs) if v == env.version for row in r.rows
                   if row.size == size and row.provider == TRITON] for env in envs]
            if ms[0] and ms[1]:
                a, b = statistics.median(ms[0]), statistics.median(ms[1])
                ratios.append((size, a, b, b / a))
    return VersionBench((envs[0].version, envs[1].version), tuple(runs), order, tuple(ratios), mode)
