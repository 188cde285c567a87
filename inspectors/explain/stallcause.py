"""Stalls charged to their cause: a warp that stalls on a scoreboard waits for a register that an
earlier, variable-latency instruction has not written yet. ncu charges the samples to the waiting
instruction (in a naive transpose, the `STS` of the store's line waits for the `LDG` of the load's
line); this module follows the waiting instruction's source registers back to the instruction that
last wrote them, and names that producer and its Python line.

    for c in causes(profile.instructions): c.offset, c.producer_offset, c.producer_line, c.samples

Walk: from the stalled instruction backwards in program order (around to the end of the listing,
for a value produced in the previous iteration of a loop), the nearest writer of each source
register. A writer that is a memory load (`LDG`, `LDL`, `LD`, `ATOMG`, `LDS`, `LDSM`, ...) or another
variable-latency op (`MUFU`, `S2R`, `SHFL`) is the producer; long-scoreboard stalls name global
and local memory producers, short-scoreboard ones shared memory and the others. This reads
register dependencies from the SASS text; the scoreboard bits themselves are in the control codes,
which nvdisasm does not print. Pure: the profile's instructions in, frozen dataclasses out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_PRED_RE = re.compile(r"^@!?U?P\w+\s+")
_REG_RE = re.compile(r"\bR(\d{1,3})(?:\.(64|128))?\b")
_WIDTH_RE = re.compile(r"\.(64|128)\b")
LONG = ("LDG", "LDL", "LD", "ATOMG", "ATOM", "RED", "TEX", "TLD", "SULD", "LDGSTS")
SHORT = ("LDS", "LDSM", "MUFU", "S2R", "SHFL", "ATOMS", "LDTRAM")
_NO_DEST = ("ST", "STG", "STS", "STL", "STSM", "RED", "BAR", "BRA", "BSYNC", "BSSY", "EXIT", "RET", "CALL",
            "WARPSYNC", "DEPBAR", "MEMBAR", "FENCE", "ERRBAR", "NOP", "LDGSTS", "LDGDEPBAR", "SYNCS", "UTMALDG",
            "UTMASTG", "ARRIVES", "CCTL")
_STALLS = {"long_sb": LONG, "short_sb": SHORT}


@dataclass(frozen=True)
class Cause:
    offset: int                 # the stalled instruction (its /*0180*/ offset)
    line: int | None            # its Python line
    reason: str                 # long_sb | short_sb
    samples: float              # its samples of that reason
    register: str               # the register it waits for, e.g. "R20"
    producer_offset: int
    producer_text: str          # the instruction that writes it, e.g. "LDG.E R20, desc[UR6][R2.64]"
    producer_line: int | None   # the producer's Python line

    def words(self) -> str:
        op = _opcode(self.producer_text)
        what = "load" if op.startswith(("LD", "ATOM", "TEX", "TLD", "SULD")) else op
        return (f"waiting for the {what} on line {self.producer_line}" if self.producer_line
                else f"waiting for {op} at /*{self.producer_offset:04x}*/")


def _opcode(text: str) -> str:
    return _PRED_RE.sub("", text.strip()).split(" ", 1)[0]


def _base(op: str) -> str:
    return op.split(".", 1)[0]


def _regs(operand: str, width: int = 1) -> set[str]:
    out = set()
    for m in _REG_RE.finditer(operand):
        n = int(m.group(1))
        k = {"64": 2, "128": 4}.get(m.group(2) or "", width)
        out.update(f"R{n + i}" for i in range(k) if n + i != 255)     # R255 is RZ
    return out


def _split(text: str) -> tuple[str, list[str]]:
    body = _PRED_RE.sub("", text.strip()).rstrip(" ;")
    op, _, rest = body.partition(" ")
    return op, [p.strip() for p in rest.split(",")] if rest else []


def dests(text: str) -> set[str]:
    """Registers an instruction writes (its first operand, widened by `.64`/`.128`)."""
    op, operands = _split(text)
    if not operands or _base(op) in _NO_DEST or operands[0].startswith("["):
        return set()
    w = _WIDTH_RE.search(op)
    return _regs(operands[0].split()[0], {"64": 2, "128": 4}.get(w.group(1), 1) if w else 1)


def sources(text: str) -> set[str]:
    """Registers an instruction reads: every register operand but a written first one."""
    op, operands = _split(text)
    if not operands:
        return set()
    start = 0 if (_base(op) in _NO_DEST or operands[0].startswith("[")) else 1
    out = set()
    for o in operands[start:]:
        out |= _regs(o)
    if start == 0 and _base(op) in ("ST", "STG", "STS", "STL") and len(operands) > 1:
        w = _WIDTH_RE.search(op)          # a vector store reads its value registers as a group
        out |= _regs(operands[-1], {"64": 2, "128": 4}.get(w.group(1), 1) if w else 1)
    return out


def producer(instructions, index: int, kinds: tuple[str, ...]):
    """(register, producer instruction) for the instruction at `index`, or None."""
    waiting = sources(instructions[index].text)
    n = len(instructions)
    for step in range(1, n):
        prev = instructions[(index - step) % n]
        written = dests(prev.text) & waiting
        if not written:
            continue
        if _base(_opcode(prev.text)) in kinds:
            return sorted(written, key=lambda r: int(r[1:]))[0], prev
        waiting -= written
        if not waiting:
            return None
    return None


def causes(instructions) -> tuple[Cause, ...]:
    """One Cause per instruction with scoreboard-stall samples whose producer is found."""
    instructions = list(instructions)
    out = []
    for i, ins in enumerate(instructions):
        for reason, kinds in _STALLS.items():
            samples = float((ins.stalls or {}).get(reason, 0))
            if samples <= 0:
                continue
            found = producer(instructions, i, kinds)
            if found:
                reg, prev = found
                out.append(Cause(ins.offset, ins.python_line, reason, samples, reg, prev.offset,
                                 prev.text.strip(), prev.python_line))
    return tuple(out)


def by_line(found) -> dict[int, list[tuple[int | None, str, float]]]:
    """Stalled Python line -> [(producer line, producer opcode, samples)], most samples first."""
    agg: dict[int, dict[tuple, float]] = {}
    for c in found:
        if c.line is None:
            continue
        key = (c.producer_line, _base(_opcode(c.producer_text)))
        agg.setdefault(c.line, {}).setdefault(key, 0.0)
        agg[c.line][key] += c.samples
    return {line: sorted(((p, op, s) for (p, op), s in per.items()), key=lambda t: -t[2]) for line, per in agg.items()}


def confirmed(cause: Cause, controls: dict) -> bool | None:
    """Whether the SASS control bits agree (inspectors.read.sasscontrol.controls of the same
    cubin): the producer sets a scoreboard when its result is written, and the stalled
    instruction waits on that scoreboard. None when either instruction's bits are missing."""
    prod, stalled = controls.get(cause.producer_offset), controls.get(cause.offset)
    if prod is None or stalled is None:
        return None
    return prod.write_sb != 7 and stalled.waits_on(prod.write_sb)
