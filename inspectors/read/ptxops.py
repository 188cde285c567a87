"""PTX instructions by family, and the main loop's order of events: what the fusion and
tiling lessons count (tensor-core instructions, asynchronous copies, barriers). Pure.

    counts = families(ptx)              # {"wgmma": 4, "cp_async": 36, "cp_async_wait": 2, ...}
    loop = main_loop(ptx)               # the innermost loop's events, in order
    loop.waits                          # (2,): the `cp.async.wait_group 2` arguments
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

# An instruction and its optional guard, e.g.
#   @%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
#   cp.async.wait_group 	2;
#   wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%r378, ...
_INSN_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?(?P<op>[a-z][\w]*(?:\.[\w:]+)*)(?P<rest>.*)$")
# A label, e.g. `$L__BB0_2:                              // =>This Inner Loop Header: Depth=1`
_LABEL_RE = re.compile(r"^\s*(?P<label>\$?[\w.$]+):")
# A branch, e.g. `@%p23 bra 	$L__BB0_2;`
_BRA_RE = re.compile(r"^\s*(?:@!?%\w+\s+)?bra(?:\.uni)?\s+(?P<label>\$?[\w.$]+)\s*;")
_WAIT_ARG_RE = re.compile(r"^\s*(?P<n>0x[0-9a-fA-F]+|\d+)")

# (family, test on the full opcode) in priority order: the first that matches names it.
FAMILIES: tuple[tuple[str, str], ...] = (
    ("tma", r"^cp\.async\.bulk"),                        # TMA: cp.async.bulk.tensor.2d.shared::cluster.global...
    ("cp_async_commit", r"^cp\.async\.commit_group"),
    ("cp_async_wait", r"^cp\.async\.wait_group"),
    ("cp_async", r"^cp\.async\."),                       # cp.async.cg.shared.global [dst], [src], 0x10
    ("wgmma_fence", r"^wgmma\.fence"),
    ("wgmma_commit", r"^wgmma\.commit_group"),
    ("wgmma_wait", r"^wgmma\.wait_group"),
    ("wgmma", r"^wgmma\.mma_async"),                     # Hopper warpgroup MMA, operands in shared memory
    ("mma", r"^mma\.sync"),                              # Ampere warp MMA, operands in registers
    ("tcgen05_mma", r"^tcgen05\.mma"),                   # Blackwell MMA: operands in shared memory, the
                                                         # accumulator in tensor memory (TMEM)
    ("tcgen05_ld", r"^tcgen05\.ld"),                     # TMEM -> registers (the epilogue's read)
    ("tcgen05_st", r"^tcgen05\.st"),                     # registers -> TMEM
    ("tcgen05_alloc", r"^tcgen05\.(?:alloc|dealloc|relinquish_alloc_permit)"),
    ("tcgen05_commit", r"^tcgen05\.(?:commit|wait|fence)"),
    ("tensormap", r"^tensormap\."),                      # a TMA descriptor built or updated on the device
    ("setmaxnreg", r"^setmaxnreg"),                      # a warp group's register budget (warp specialization)
    ("ldmatrix", r"^ldmatrix"),
    ("stmatrix", r"^stmatrix"),
    ("mbarrier", r"^mbarrier"),
    ("bar_sync", r"^(bar\.sync|barrier\.sync|bar\.warp\.sync)"),
    ("ld_global", r"^ld\.global"),
    ("st_global", r"^st\.global"),
    ("ld_shared", r"^ld\.shared"),
    ("st_shared", r"^st\.shared"),
)
_FAMILY_RES = tuple((name, re.compile(rx)) for name, rx in FAMILIES)
# What each family is, for tables
DESCRIBE = {
    "tma": "TMA bulk tensor copy (global ↔ shared)",
    "tcgen05_mma": "tcgen05.mma (Blackwell tensor cores, accumulator in TMEM)", "tcgen05_ld": "tcgen05.ld (TMEM → registers)",
    "tcgen05_st": "tcgen05.st (registers → TMEM)", "tcgen05_alloc": "tcgen05.alloc/dealloc (TMEM)",
    "tcgen05_commit": "tcgen05.commit/wait/fence", "tensormap": "tensormap.* (a TMA descriptor built on the device)",
    "setmaxnreg": "setmaxnreg (a warp group's register budget)", "cp_async": "cp.async copy (global → shared)",
    "cp_async_commit": "cp.async.commit_group", "cp_async_wait": "cp.async.wait_group",
    "wgmma": "wgmma.mma_async (Hopper tensor cores)", "wgmma_fence": "wgmma.fence",
    "wgmma_commit": "wgmma.commit_group", "wgmma_wait": "wgmma.wait_group",
    "mma": "mma.sync (Ampere tensor cores)", "ldmatrix": "ldmatrix (shared → registers)",
    "stmatrix": "stmatrix (registers → shared)", "mbarrier": "mbarrier (async barrier)",
    "bar_sync": "bar.sync (CTA barrier)", "ld_global": "ld.global", "st_global": "st.global",
    "ld_shared": "ld.shared", "st_shared": "st.shared",
}


def family(opcode: str) -> str | None:
    for name, rx in _FAMILY_RES:
        if rx.match(opcode):
            return name
    return None


def _instructions(ptx: str):
    """(1-based line, opcode, rest) of each instruction line (not directives, labels, comments)."""
    for n, line in enumerate(ptx.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith(("//", ".", "$", "{", "}")) or _LABEL_RE.match(s):
            continue
        m = _INSN_RE.match(s)
        if m:
            yield n, m["op"], m["rest"]


def families(ptx: str) -> dict[str, int]:
    """How many instructions of each family the PTX holds (every family, 0 when absent)."""
    counts = Counter(f for _, op, _ in _instructions(ptx) if (f := family(op)))
    return {name: counts.get(name, 0) for name, _ in FAMILIES}


@dataclass(frozen=True)
class Event:
    family: str
    count: int          # consecutive instructions of the family folded into one event
    line: int           # 1-based PTX line of the first
    text: str           # the first instruction, stripped

    def label(self) -> str:
        if self.family in ("cp_async_wait", "wgmma_wait"):
            return " ".join(self.text.rstrip(";").replace(".sync.aligned", "").split())
        return f"{self.count}× {DESCRIBE[self.family]}" if self.count > 1 else DESCRIBE[self.family]


@dataclass(frozen=True)
class Loop:
    start: int                      # line of the loop's label
    end: int                        # line of the branch back to it
    events: tuple[Event, ...]       # pipeline-relevant instructions in order, consecutive ones folded
    waits: tuple[int, ...]          # cp.async.wait_group arguments inside the loop
    wgmma_waits: tuple[int, ...]    # wgmma.wait_group arguments inside the loop
    counts: dict                    # families() of the loop body

    @property
    def commits(self) -> int:
        return self.counts.get("cp_async_commit", 0)


PIPELINE = ("tma", "cp_async", "cp_async_commit", "cp_async_wait", "wgmma_fence", "wgmma", "wgmma_commit",
            "wgmma_wait", "mma", "ldmatrix", "mbarrier", "bar_sync", "ld_global", "st_shared")


def loops(ptx: str) -> list[tuple[int, int]]:
    """(label line, back-branch line) of every backward branch: the loops, innermost last on ties."""
    labels: dict[str, int] = {}
    found = []
    for n, line in enumerate(ptx.splitlines(), 1):
        if m := _LABEL_RE.match(line):
            labels[m["label"]] = n
        if (b := _BRA_RE.match(line)) and b["label"] in labels and labels[b["label"]] < n:
            found.append((labels[b["label"]], n))
    return found


def main_loop(ptx: str) -> Loop | None:
    """The loop holding the most tensor-core or copy instructions (the K loop of a matmul),
    or None when the kernel has no loop."""
    lines = ptx.splitlines()
    best = None
    for start, end in loops(ptx):
        body = "\n".join(lines[start - 1:end])
        c = families(body)
        score = c["wgmma"] + c["mma"] + c["cp_async"] + c["tma"] + c["ld_global"]
        if best is None or score > best[0]:
            best = (score, start, end, body, c)
    if best is None:
        return None
    _, start, end, body, counts = best
    events: list[Event] = []
    waits, wg_waits = [], []
    for n, op, rest in _instructions(body):
        fam = family(op)
        if fam not in PIPELINE:
            continue
        text = f"{op}{rest}".strip()
        if fam in ("cp_async_wait", "wgmma_wait"):
            arg = _WAIT_ARG_RE.match(rest.replace(".sync.aligned", "").strip()) if fam == "cp_async_wait" else \
                re.search(r"(\d+)\s*;", rest)
            value = int(arg.group(1), 0) if arg else 0
            (waits if fam == "cp_async_wait" else wg_waits).append(value)
        if events and events[-1].family == fam and fam not in ("cp_async_wait", "wgmma_wait"):
            last = events[-1]
            events[-1] = Event(fam, last.count + 1, last.line, last.text)
        else:
            events.append(Event(fam, 1, start + n - 1, text))
    return Loop(start, end, tuple(events), tuple(waits), tuple(wg_waits), counts)
