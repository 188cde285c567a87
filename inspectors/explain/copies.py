"""How a kernel's main loop brings its tiles from global to shared memory, read from the PTX
(and the TTGIR for TMA tiles): per K step, which instruction, how many of them a program issues,
how many threads issue them, and the bytes each one moves.

    plan = copy_plan(ptx, ttgir, num_warps=8)
    plan.instruction, plan.per_step, plan.issuers, plan.bytes_each, plan.bytes_per_step

cp.async (sm_80 and later): every thread copies 4, 8 or 16 bytes per instruction; a 128 x 64 fp16
tile over 256 threads is 4 instructions of 16 bytes each, per thread. TMA (sm_90 and later,
`cp.async.bulk.tensor`): one elected thread copies a whole tile per instruction; the tile's shape
is in the descriptor (TTGIR), and the bytes a step waits for are announced on its mbarrier
(`mbarrier.arrive.expect_tx ... 32768`). Pure: text in, a frozen dataclass out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from inspectors.read import memops, ptxops, tma

_EXPECT_RE = re.compile(r"mbarrier\.arrive\.expect_tx\S*\s+[^;]*,\s*(\d+)\s*;")


@dataclass(frozen=True)
class CopyPlan:
    instruction: str        # "cp.async (16 B per thread)", "TMA cp.async.bulk.tensor", "ld.global", or "" (no loop copy)
    per_step: int           # copy instructions one thread (cp.async, ld.global) or the one issuer (TMA) runs per K step
    issuers: int            # threads that issue them: every thread, or 1 for TMA
    bytes_each: int         # bytes one instruction moves (the tile, for TMA)
    loop_lines: tuple[int, int] = (0, 0)   # PTX lines of the loop read (label, back branch)
    expect_tx: int = 0      # bytes the loop's mbarrier expects per step (TMA), 0 without one

    @property
    def bytes_per_step(self) -> int:
        return self.per_step * self.issuers * self.bytes_each

    @property
    def instructions_per_step(self) -> int:
        """Copy instructions a whole program issues per K step."""
        return self.per_step * self.issuers


def _copy_ops(ops, start: int, end: int) -> list[memops.MemOp]:
    return [m for m in ops if start <= m.line <= end and m.kind == "load" and m.space == "global"]


def copy_plan(ptx: str, ttgir: str, num_warps: int) -> CopyPlan:
    """The copy pattern of the loop that issues the most global → shared copies (innermost on ties)."""
    ops = memops.ptx_memops(ptx)
    best: tuple[int, int, int] | None = None
    for start, end in ptxops.loops(ptx):
        n = len(_copy_ops(ops, start, end))
        if n and (best is None or n > best[0] or (n == best[0] and end - start < best[2] - best[1])):
            best = (n, start, end)
    if best is None:
        return CopyPlan("", 0, 0, 0)
    _, start, end = best
    inside = _copy_ops(ops, start, end)
    body = ptx.splitlines()[start - 1:end]
    expect = sum(int(m.group(1)) for line in body if (m := _EXPECT_RE.search(line)))
    bulk = [m for m in inside if m.role == "tma"]
    if bulk:
        tiles = [c.bytes for c in tma.tma_copies(ttgir) if c.kind == "load"]
        each = max(tiles, default=0)
        return CopyPlan("TMA cp.async.bulk.tensor", len(bulk), 1, each, (start, end), expect)
    asyncs = [m for m in inside if m.text.startswith("cp.async")] or inside
    each = min(m.bytes for m in asyncs)
    name = f"cp.async ({each} B per thread)" if asyncs is not inside else f"ld.global ({each} B per thread)"
    return CopyPlan(name, len(asyncs), 32 * num_warps, each, (start, end), expect)
