"""What differs when the same launch is compiled by two Triton versions, in words: the figure
delta (inspectors.explain.delta) plus what only a version change explains: the ptxas Triton
runs and its flags (inspectors.base.triton_support), a stage one version could not make, and small
tensors whose blocked layout keeps copies in registers in one version and not the other.

    notes = version_notes("3.6.0", "3.9.0", ka, kb)
    version_headline("3.6.0", "3.9.0", delta_table(...), notes)
    # '3.6.0 → 3.9.0: registers 40 → 56, `--regAllocOptLevel=2` added to ptxas'
"""
from __future__ import annotations

import re

from inspectors.base import stages as stage_table
from inspectors.base import triton_support
from inspectors.base.result import KernelResult
from inspectors.base.targets import TargetError, parse as parse_target
from inspectors.explain.delta import DeltaTable
from inspectors.read import layouts

_ALIAS_RE = re.compile(r"^(#[\w.]+) = (#ttg\.\w+<\{.*\}>)\s*$", re.M)
_TENSOR_ALL_RE = re.compile(r"tensor<(?:\d+x)+(?:!tt\.ptr<\w+>|(?!\d+x)\w+), #[\w.]+>")


def _arch(target: str) -> int | None:
    try:
        t = parse_target(target)
    except TargetError:
        return None
    return t.arch if getattr(t, "backend", "") == "cuda" else None


def ptxas_notes(va: str, vb: str, target: str) -> list[str]:
    """The ptxas binary and flags each version's make_cubin uses for `target` (CUDA only)."""
    arch = _arch(target)
    if arch is None:
        return []
    out = []
    fa, fb = set(triton_support.ptxas_extra_flags(va)), set(triton_support.ptxas_extra_flags(vb))
    out += [f"`{f}` added to ptxas" for f in sorted(fb - fa)]
    out += [f"`{f}` no longer passed to ptxas" for f in sorted(fa - fb)]
    ta, tb = triton_support.ptxas_tool(arch, va), triton_support.ptxas_tool(arch, vb)
    if ta != tb:
        out.append(f"sm_{arch} assembled by the wheel's `{tb}` instead of `{ta}`")
    return out


def small_tensor_copies(ttgir: str, version: str) -> dict[str, int]:
    """Tensor types of `ttgir` with a blocked layout smaller than sizePerThread -> registers per
    thread as `version` lays them out (3.6-3.8 keep copies in the extra registers, 3.9 drops
    them: triton_support.blocked_keeps_small_registers)."""
    from inspectors.explain.layout_view import to_linear
    aliases = dict(_ALIAS_RE.findall(ttgir))
    out: dict[str, int] = {}
    for text in sorted(set(_TENSOR_ALL_RE.findall(ttgir))):
        t = layouts.parse_tensor_type(text)
        layout = layouts.parse_layout(t.layout, aliases) if t and t.layout else None
        if not isinstance(layout, layouts.Blocked) or len(layout.size_per_thread) != len(t.shape):
            continue
        if not any(s < p for s, p in zip(t.shape, layout.size_per_thread)):
            continue
        try:
            out[text] = to_linear(layout, t.shape, version).size("register")
        except ValueError:
            continue
    return out


def layout_notes(va: str, vb: str, ka: KernelResult, kb: KernelResult) -> list[str]:
    """Small tensors whose registers per thread differ between the versions, in one sentence."""
    if "ttgir" not in ka.stages or "ttgir" not in kb.stages:
        return []
    ca, cb = small_tensor_copies(ka.stages["ttgir"], va), small_tensor_copies(kb.stages["ttgir"], vb)
    differ = [t for t in sorted(set(ca) & set(cb), key=lambda t: (-abs(ca[t] - cb[t]), t)) if ca[t] != cb[t]]
    if not differ:
        return []
    first = differ[0]
    more, fewer = (va, vb) if ca[first] > cb[first] else (vb, va)
    many = f"{len(differ)} small tensors" if len(differ) > 1 else "a small tensor"
    return [f"layout copies: {many} smaller than sizePerThread (e.g. `{first}`: {ca[first]} → {cb[first]} "
            f"registers per thread); {more} keeps copies in the extra registers, {fewer} drops them"]


def failure_notes(va: str, vb: str, ka: KernelResult, kb: KernelResult) -> list[str]:
    """A stage one version could not make while the other did."""
    out = []
    for v, k, other, ok in ((va, ka, vb, kb), (vb, kb, va, ka)):
        if k.error is not None and (ok.error is None or ok.error.stage != k.error.stage):
            stage = stage_table.BY_NAME[k.error.stage].label if k.error.stage in stage_table.BY_NAME else k.error.stage
            first = k.error.message.splitlines()[0] if k.error.message else k.error.kind
            first = first.split(":")[0] if len(first) > 80 else first
            out.append(f"{v} fails making {stage or 'a stage'} ({first}); {other} "
                       + ("makes it" if ok.error is None else f"fails later, at {ok.error.stage}"))
    return out


def version_notes(va: str, vb: str, ka: KernelResult, kb: KernelResult) -> tuple[str, ...]:
    """Everything a version change explains for launch `ka` (Triton `va`) against `kb` (`vb`)."""
    return tuple(failure_notes(va, vb, ka, kb) + ptxas_notes(va, vb, kb.target) + layout_notes(va, vb, ka, kb))


def version_headline(va: str, vb: str, delta: DeltaTable, notes: tuple[str, ...]) -> str:
    """`3.6.0 → 3.9.0: registers 40 → 56, `--regAllocOptLevel=2` added to ptxas`."""
    parts = [] if delta.headline.startswith("no change") else [delta.headline]
    parts += list(notes)
    return f"{va} → {vb}: " + ("; ".join(parts) if parts else "no change in the figures")
