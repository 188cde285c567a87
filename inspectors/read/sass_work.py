"""How many instructions one warp of a program issues, read from its SASS: each instruction
once, and each loop's body (a backward branch to a label before it) once per trip, the trips
given by the TTGIR's `scf.for`s (ttir_work.loop_trips). Loops the compiler unrolled whole
have no backward branch: their trips are already in the straight-line code. Pure: text and
numbers in, a number out.

    issued(sass, [Loop(trips=4.0, constant=True)])   # 25 + 133 × 4 + 170 = 727.0
    waits(sass, [Loop(trips=4.0, constant=True)])    # the loop's loads: 4 waits a program
"""
from __future__ import annotations

import functools
import re

# /*01a0*/                   LDG.E.EF.64 R2, desc[UR4][R10.64] ;
_INSTR_RE = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*);")
_LABEL_RE = re.compile(r"^\s*(?P<label>\.L_x_\d+):")
_BRANCH_RE = re.compile(r"\bBRA\b[^`]*`\((?P<label>\.L_x_\d+)\)")


def loops(sass: str) -> list[tuple[int, int]]:
    """Each loop as (first, last) index into the instructions, in order of its first
    instruction: a branch back to a label at or before it, the kernel's closing branch to
    itself left out."""
    return list(_read(sass)[1])


def instructions(sass: str) -> list[str]:
    """The instructions' text, NOPs (the padding after the kernel's end) left out of the count
    by `issued` but kept here so indexes match `loops`."""
    return list(_read(sass)[0])


@functools.lru_cache(maxsize=2)          # a launch's issued() and waits() read the same SASS
def _read(sass: str) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]]:
    """One pass over the SASS: its instructions' text and its loops."""
    labels: dict[str, int] = {}
    branches: list[tuple[int, str]] = []
    texts: list[str] = []
    for line in sass.splitlines():
        m = _LABEL_RE.match(line)
        if m:
            labels[m["label"]] = len(texts)
            continue
        m = _INSTR_RE.match(line)
        if m is None:
            continue
        b = _BRANCH_RE.search(m["text"])
        if b:
            branches.append((len(texts), b["label"]))
        texts.append(m["text"].strip())
    found = {(labels[label], at) for at, label in branches if label in labels and labels[label] < at}
    return tuple(texts), tuple(sorted(found))


def _matched(sass: str, trips: list) -> list[tuple[tuple[int, int], float]] | None:
    """The SASS's loops, each with its trips from the TTGIR's `trips` (ttir_work.Loop, in
    order). None where they cannot be paired: more SASS loops than TTGIR ones (loops the
    compiler made), a trip count known only at run time."""
    found = loops(sass)
    kept = list(trips)
    while len(kept) > len(found):                # unrolled whole: a constant trip count, dropped first
        constant = next((i for i, t in enumerate(kept) if t.constant), None)
        if constant is None:
            return None
        kept.pop(constant)
    if len(kept) != len(found) or any(t.trips is None for t in kept):
        return None
    return [(span, t.trips) for span, t in zip(found, kept)]


def _weight(i: int, paired) -> float:
    w = 1.0
    for (first, last), t in paired:
        if first <= i <= last:
            w *= t
    return w


def issued(sass: str, trips: list) -> float | None:
    """Instructions one warp issues in one program (None: see _matched)."""
    paired = _matched(sass, trips)
    if paired is None:
        return None
    return sum(_weight(i, paired) for i, text in enumerate(instructions(sass)) if not text.startswith("NOP"))


def waits(sass: str, trips: list) -> float | None:
    """How many times one program waits on global memory: once for its straight-line code
    (however many loads it issues, they are in flight together, an unrolled loop's too), and
    once each trip of a loop whose body loads from global memory (a trip's loads are used in
    the trip). None: see _matched."""
    paired = _matched(sass, trips)
    if paired is None:
        return None
    texts = instructions(sass)
    loads = [i for i, text in enumerate(texts) if _opcode(text).split(".")[0] == "LDG"]   # not LDGSTS (async)
    looped = {span: t for span, t in paired}
    inner = [span for span in looped if any(span[0] <= i <= span[1] for i in loads)
             and not any(o != span and span[0] <= o[0] <= o[1] <= span[1] and any(o[0] <= i <= o[1] for i in loads)
                         for o in looped)]
    total = float(any(_weight(i, paired) == 1.0 for i in loads))
    return total + sum(_weight(span[0], paired) for span in inner)


def _opcode(text: str) -> str:
    """`@!P0 LDG.E.64 R2, ...` -> `LDG.E.64`."""
    parts = text.split()
    return (parts[1] if parts and parts[0].startswith("@") and len(parts) > 1 else parts[0]) if parts else ""
