"""Two compiles compared launch by launch: the figures' delta table (from the one insight
policy, insights.insight), the stage diffs (noise ignored), and — when two Triton versions made
them — what only the version change explains (explain.version_notes) and the headline in words.

    lens = Lens(settings, cache=False)
    ra, rb = compile_both(lens, request, "3.6.0", "3.9.0")
    cmp = compare_results("3.6.0", "3.9.0", ra, rb, "flash_attention.py")
    cmp.launches[0].headline   # '3.6.0 → 3.9.0: registers 40 → 56; `--regAllocOptLevel=2` added to ptxas'

Used by `python -m inspectors diff`, benchmarks/version_compare.py and the app's Compare page.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

from inspectors.base.result import CompileRequest, CompileResult, KernelResult
from inspectors.explain.delta import DeltaTable, Figures, delta_table, figures
from inspectors.explain.diff import KernelDiff, diff_stage
from inspectors.explain.version_notes import version_headline, version_notes
from inspectors.session import insights
from inspectors.session.lens import Lens


@dataclass(frozen=True)
class LaunchCompare:
    launch: int                  # 0-based
    diff: KernelDiff
    notes: tuple[str, ...]       # what only the version change explains
    headline: str

    def to_json(self) -> dict:
        d = self.diff
        return {"launch": self.launch + 1, "kernel": d.a.label or d.a.name, "headline": self.headline,
                "figures": d.delta.headline, "notes": list(self.notes),
                "a_error": d.a.error.to_json() if d.a.error else None,
                "b_error": d.b.error.to_json() if d.b.error else None,
                "delta": [r.to_json() for r in d.delta.rows],
                "stages": {name: sd.to_json() for name, sd in d.stages.items()}}


@dataclass(frozen=True)
class VersionCompare:
    a_version: str
    b_version: str
    a: CompileResult
    b: CompileResult
    launches: tuple[LaunchCompare, ...]

    def to_json(self) -> dict:
        return {"triton": {"a": self.a_version, "b": self.b_version},
                "launches_a": len(self.a.kernels), "launches_b": len(self.b.kernels),
                "a_error": self.a.error.to_json() if self.a.error and not self.a.kernels else None,
                "b_error": self.b.error.to_json() if self.b.error and not self.b.kernels else None,
                "launches": [lc.to_json() for lc in self.launches]}


def compile_pair(lens: Lens, ra: CompileRequest, rb: CompileRequest, timeout: float | None = None,
                 who: str = "") -> tuple[CompileResult, CompileResult]:
    """Two requests compiled at the same time (two Triton versions: each has its own workers)."""
    out: dict[str, CompileResult] = {}

    def one(side: str, request: CompileRequest) -> None:
        out[side] = lens.compile(request, who=f"{who}/{side}", timeout=timeout).result
    threads = [threading.Thread(target=one, args=s) for s in (("a", ra), ("b", rb))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out["a"], out["b"]


def compile_both(lens: Lens, request: CompileRequest, va: str, vb: str, timeout: float | None = None,
                 who: str = "") -> tuple[CompileResult, CompileResult]:
    """`request` compiled by Triton `va` and by `vb`, at the same time."""
    return compile_pair(lens, dataclasses.replace(request, triton_version=va),
                        dataclasses.replace(request, triton_version=vb), timeout, who)


def _unassembled(k: KernelResult) -> bool:
    return k.error is not None and k.target.startswith("cuda") and not k.cubin


def launch_figures(kernel: KernelResult, filename: str, with_sass: bool = True) -> Figures:
    """The comparable numbers of one launch; one that was not assembled (no cubin) has unknown
    shared memory and occupancy, not 0."""
    f = figures(kernel, insights.insight(kernel, filename, with_sass=with_sass and bool(kernel.cubin)))
    return dataclasses.replace(f, shared_bytes=None, occupancy=None) if _unassembled(kernel) else f


def delta(ka: KernelResult, kb: KernelResult, file_a: str, file_b: str) -> DeltaTable:
    """The figures of launch A beside launch B (SASS counted when both have a cubin)."""
    both = bool(ka.cubin and kb.cubin)
    return delta_table(launch_figures(ka, file_a, both), launch_figures(kb, file_b, both))


def diff_launch(i: int, ka: KernelResult, kb: KernelResult, file_a: str, file_b: str,
                ignore_noise: bool = True) -> KernelDiff:
    """Launch `i` of A against B: the delta table and every stage both have, diffed."""
    sa, sb = insights.all_stages(ka), insights.all_stages(kb)
    stage_diffs = {name: diff_stage(name, sa[name], sb[name], ignore_noise) for name in sa if name in sb}
    return KernelDiff(i, ka, kb, delta(ka, kb, file_a, file_b), stage_diffs)


def compare_results(va: str, vb: str, ra: CompileResult, rb: CompileResult, filename: str,
                    ignore_noise: bool = True, launches: list[int] | None = None) -> VersionCompare:
    """Launch i of `ra` (Triton `va`) against launch i of `rb` (`vb`); launches one version
    compiled only in part are compared on the stages both made."""
    pairs = list(zip(ra.kernels, rb.kernels))
    out = []
    for i in (range(len(pairs)) if launches is None else launches):
        ka, kb = pairs[i]
        d = diff_launch(i, ka, kb, filename, filename, ignore_noise)
        notes = version_notes(va, vb, ka, kb)
        out.append(LaunchCompare(i, d, notes, version_headline(va, vb, d.delta, notes)))
    return VersionCompare(va, vb, ra, rb, tuple(out))
