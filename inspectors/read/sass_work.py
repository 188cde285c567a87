"""How many instructions one warp of a program issues, read from its SASS: each instruction
once, and each loop's body (a backward branch to a label before it) once per trip, the trips
given by the TTGIR's `scf.for`s (ttir_work.loop_trips). Loops the compiler unrolled whole
have no backward branch: their trips are already in the straight-line code. Pure: text and
numbers in, a number out.

    issued(sass, [Loop(trips=4.0, constant=True)])   # 25 + 133 × 4 + 170 = 727.0
"""
from __future__ import annotations

import re

# /*01a0*/                   LDG.E.EF.64 R2, desc[UR4][R10.64] ;
_INSTR_RE = re.compile(r"^\s*/\*(?P<addr>[0-9a-f]{4,})\*/\s+(?P<text>[^;]*);")
_LABEL_RE = re.compile(r"^\s*(?P<label>\.L_x_\d+):")
_BRANCH_RE = re.compile(r"\bBRA\b[^`]*`\((?P<label>\.L_x_\d+)\)")


def loops(sass: str) -> list[tuple[int, int]]:
    """Each loop as (first, last) index into the instructions, in order of its first
    instruction: a branch back to a label at or before it, the kernel's closing branch to
    itself left out."""
    labels: dict[str, int] = {}
    branches: list[tuple[int, str]] = []
    count = 0
    for line in sass.splitlines():
        m = _LABEL_RE.match(line)
        if m:
            labels[m["label"]] = count
            continue
        m = _INSTR_RE.match(line)
        if m is None:
            continue
        b = _BRANCH_RE.search(m["text"])
        if b:
            branches.append((count, b["label"]))
        count += 1
    found = {(labels[label], at) for at, label in branches if label in labels and labels[label] < at}
    return sorted(found)


def instructions(sass: str) -> list[str]:
    """The instructions' text, NOPs (the padding after the kernel's end) left out of the count
    by `issued` but kept here so indexes match `loops`."""
    return [m["text"].strip() for m in map(_INSTR_RE.match, sass.splitlines()) if m]


def issued(sass: str, trips: list) -> float | None:
    """Instructions one warp issues in one program. `trips`: the TTGIR's loops in order
    (ttir_work.Loop). None where the SASS's loops cannot be told apart from the TTGIR's: more
    SASS loops than TTGIR ones (loops the compiler made), a trip count known only at run time."""
    found = loops(sass)
    kept = list(trips)
    while len(kept) > len(found):                # unrolled whole: a constant trip count, dropped first
        constant = next((i for i, t in enumerate(kept) if t.constant), None)
        if constant is None:
            return None
        kept.pop(constant)
    if len(kept) != len(found) or any(t.trips is None for t in kept):
        return None
    total = 0.0
    for i, text in enumerate(instructions(sass)):
        if text.startswith("NOP"):
            continue
        weight = 1.0
        for (first, last), t in zip(found, kept):
            if first <= i <= last:
                weight *= t.trips
        total += weight
    return total
