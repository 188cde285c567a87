"""One kernel file compiled by two Triton versions and compared launch by launch: the stage
diffs (noise ignored), the figure deltas, and what only the version change explains
(inspectors.explain.versions), the headline in words.

    engines = Engines()
    ra, rb = compile_both(engines, request, "3.6.0", "3.9.0")
    cmp = compare_results("3.6.0", "3.9.0", ra, rb, "flash_attention.py")
    cmp.launches[0].headline   # '3.6.0 → 3.9.0: registers 40 → 56; `--regAllocOptLevel=2` added to ptxas'

Used by `python -m inspectors diff FILE --triton A --triton B`, benchmarks/version_compare.py
and the app's Compare page.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

from inspectors.base.result import CompileRequest, CompileResult
from inspectors.compile.engines import Engines
from inspectors.explain.delta import delta_table, figures
from inspectors.explain.diff import KernelDiff, diff_kernels
from inspectors.explain.insight import analyze
from inspectors.explain.versions import version_headline, version_notes
from inspectors.store.export import all_stages


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


def compile_both(engines: Engines, request: CompileRequest, va: str, vb: str, timeout: float | None = None,
                 session: str = "") -> tuple[CompileResult, CompileResult]:
    """`request` compiled by Triton `va` and by `vb`, at the same time (each version has its own
    workers)."""
    out: dict[str, CompileResult] = {}

    def one(side: str, version: str) -> None:
        out[side] = engines.compile(dataclasses.replace(request, triton_version=version), timeout=timeout,
                                    session=f"{session}/{side}")
    threads = [threading.Thread(target=one, args=s) for s in (("a", va), ("b", vb))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out["a"], out["b"]


def compare_results(va: str, vb: str, ra: CompileResult, rb: CompileResult, filename: str,
                    ignore_noise: bool = True, launches: list[int] | None = None) -> VersionCompare:
    """Launch i of `ra` (Triton `va`) against launch i of `rb` (`vb`); launches one version
    compiled only in part are compared on the stages both made."""
    pairs = list(zip(ra.kernels, rb.kernels))
    out = []
    for i in (range(len(pairs)) if launches is None else launches):
        ka, kb = pairs[i]
        sa, sb = all_stages(ka), all_stages(kb)
        d = diff_kernels(i, ka, kb, analyze(ka, sa, filename), analyze(kb, sb, filename), sa, sb,
                         ignore_noise=ignore_noise)
        if _unassembled(ka) or _unassembled(kb):
            # a launch one version could not assemble has no cubin: its shared memory and
            # occupancy are unknown, not 0
            fa, fb = (figures(k, analyze(k, s, filename)) for k, s in ((ka, sa), (kb, sb)))
            fa, fb = (dataclasses.replace(f, shared_bytes=None, occupancy=None) if _unassembled(k) else f
                      for f, k in ((fa, ka), (fb, kb)))
            d = dataclasses.replace(d, delta=delta_table(fa, fb))
        notes = version_notes(va, vb, ka, kb)
        out.append(LaunchCompare(i, d, notes, version_headline(va, vb, d.delta, notes)))
    return VersionCompare(va, vb, ra, rb, tuple(out))


def _unassembled(k) -> bool:
    return k.error is not None and k.target.startswith("cuda") and not k.cubin
