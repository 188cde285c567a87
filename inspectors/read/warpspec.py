"""Warp specialization in TTGIR: the partitions a `tl.range(..., warp_specialize=True)` loop
was split into, how many warps each runs in, the registers it asked for, and what it does.

    ttg.warp_specialize(%a, ...) attributes {requestedRegisters = array<i32: 24, 24>}
    default {                                  <- the kernel's own num_warps warps
      ... ttng.tmem_load ... ttng.async_tma_copy_local_to_global ...
    }
    partition0(%arg0: ...) num_warps(1) {      <- each partition: its own warps
      ... ttng.tc_gen5_mma ...
    }
    partition1(%arg0: ...) num_warps(2) {
      ... ttng.async_tma_copy_global_to_local ...
    } : (...) -> ()

Pure: text in, frozen dataclasses out; one pass, linear in the text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_WS_RE = re.compile(r"\bttg\.warp_specialize\(")
# one character class for the numbers and their blanks: `\s*([\d,\s]+)` was quadratic on a run of tabs
_REGS_RE = re.compile(r"requestedRegisters\s*=\s*array<i32:([\d,\s]*)>")
_DEFAULT_RE = re.compile(r"^\s*default\s*\{\s*$")
_PARTITION_RE = re.compile(r"^\s*partition(?P<n>\d+)\(.*\bnum_warps\((?P<warps>\d+)\)\s*\{\s*$")
# what a partition does, by the ops in it
_WORK = (
    ("tma_load", re.compile(r"\bttng\.async_tma_copy_global_to_local\b|\bttng\.async_tma_gather\b")),
    ("tma_store", re.compile(r"\bttng\.async_tma_copy_local_to_global\b|\bttng\.async_tma_(?:reduce|scatter)\b")),
    ("mma", re.compile(r"\bttng\.(?:tc_gen5_mma\w*|warp_group_dot)\b|\btt\.dot\b")),
    ("tmem_load", re.compile(r"\bttng\.tmem_load\b")),
    ("load", re.compile(r"\btt\.load\b|\bttg\.async_copy_global_to_local\b")),
    ("store", re.compile(r"\btt\.store\b")),
    ("wait", re.compile(r"\bttng\.wait_barrier\b")),
)


@dataclass(frozen=True)
class Partition:
    name: str                  # "default", "partition0", ...
    warps: int | None          # None for the default partition: the kernel's num_warps
    registers: int | None      # requestedRegisters (partitions only)
    first_line: int            # 1-based TTGIR lines of its region
    last_line: int
    work: dict[str, int]       # op kind -> count: tma_load, tma_store, mma, tmem_load, load, store, wait

    @property
    def role(self) -> str:
        w = self.work
        if w.get("tma_load") or w.get("load"):
            return "producer: loads tiles (TMA)" if w.get("tma_load") else "producer: loads"
        if w.get("mma"):
            return "MMA: issues the tensor-core ops"
        if w.get("tma_store") or w.get("store") or w.get("tmem_load"):
            return "epilogue: reads the accumulator, stores the tile"
        return "other"


@dataclass(frozen=True)
class WarpSpecialize:
    line: int                              # TTGIR line of the ttg.warp_specialize op
    partitions: tuple[Partition, ...]      # default first


def warp_specializations(ttgir: str) -> tuple[WarpSpecialize, ...]:
    out: list[WarpSpecialize] = []
    lines = ttgir.splitlines()
    i = 0
    while i < len(lines):
        if not _WS_RE.search(lines[i]):
            i += 1
            continue
        start = i + 1
        regs_m = _REGS_RE.search(lines[i])
        regs = [int(x) for x in re.sub(r"\s", "", regs_m.group(1)).split(",") if x] if regs_m else []
        parts: list[Partition] = []
        j = i + 1
        while j < len(lines):
            d, p = _DEFAULT_RE.match(lines[j]), _PARTITION_RE.match(lines[j])
            if not (d or p):
                break
            depth, first, work = 0, j + 1, {}
            k = j
            while k < len(lines):
                depth += lines[k].count("{") - lines[k].count("}")
                if k > j:
                    for kind, rx in _WORK:
                        if rx.search(lines[k]):
                            work[kind] = work.get(kind, 0) + 1
                if depth <= 0:
                    break
                k += 1
            if p:
                n = int(p["n"])
                parts.append(Partition(f"partition{n}", int(p["warps"]), regs[n] if n < len(regs) else None,
                                       first, k + 1, work))
            else:
                parts.append(Partition("default", None, None, first, k + 1, work))
            j = k + 1
        out.append(WarpSpecialize(start, tuple(parts)))
        i = max(j, i + 1)
    return tuple(out)
