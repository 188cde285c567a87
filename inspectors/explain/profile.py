"""Measured cost per line: Nsight Compute's per-instruction figures (inspectors.read.ncu_source)
put on the SASS lines of the compiled kernel, and through the source map on the Python lines,
helper lines with their call sites included. Pure: texts and parsed tables in, frozen
dataclasses out; `to_json`/`from_json` are the saved-profile format (inspectors.store.profiles
writes it beside the raw CSV).

    page = ncu_source.parse(csv_text)[0]
    prof = build(page, sass_text, source_map, meta={...})
    prof.lines[0]          # the hottest Python line: samples, share, top stall, sectors/request
    prof.unexplained       # instructions with samples that map to no line and are neither
                           # prologue nor epilogue: the mapping check wants none

Instructions pair up by address: ncu's addresses less the first one are the `/*0180*/`
offsets nvdisasm prints; each pair must be the same opcode, or the profile is of other code
(`ProfileMismatch`). An instruction the source map leaves out is prologue (before the first
mapped one), epilogue (after the last: EXIT, the branch-to-self padding) or unexplained.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from inspectors.read import callsites
from inspectors.read import ncu_source as ncu
from inspectors.read.lines_asm import sass_insn

FORMAT = "tlens-profile/1"

# nvdisasm, e.g.        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
# (the instruction is `rest` without its `;`: lines_asm.sass_insn; `(?P<insn>.*?)\s*;?\s*$` was cubic in blanks)
_SASS_RE = re.compile(r"^\s*/\*(?P<off>[0-9a-f]+)\*/\s+(?P<rest>.*)")
_MEM_RE = re.compile(r"^(?:LDG|STG|ATOMG|RED|LDGSTS|LD|ST|ATOM)\b")


class ProfileMismatch(ValueError):
    """The profiled code is not the compiled code (different opcodes at the same addresses)."""


@dataclass(frozen=True)
class InstructionCost:
    sass_line: int                 # 1-based line of the SASS stage text
    offset: int                    # the /*0180*/ number
    text: str
    chain: tuple                   # source-map frames, innermost first; () when unmapped
    samples: float
    executed: float
    stalls: dict                   # reason -> samples
    sectors: float = 0.0           # L2 theoretical sectors, global
    sectors_ideal: float = 0.0
    where: str = ""                # "" mapped | prologue | epilogue | padding (a NOP) | unexplained

    @property
    def python_line(self) -> int | None:
        return next((ln for path, ln in self.chain if not path), None)

    @property
    def sectors_per_request(self) -> float | None:
        """Measured 32-byte sectors per warp-level request of a global access."""
        return self.sectors / self.executed if self.sectors and self.executed else None


@dataclass(frozen=True)
class LineCost:
    python_line: int
    samples: float
    share: float                   # of all the kernel's samples
    executed: float
    stalls: dict
    sectors: float
    sectors_ideal: float
    instructions: int              # SASS instructions that map here

    @property
    def top_stall(self) -> tuple[str, float] | None:
        """(reason, share of this line's samples)."""
        if not self.stalls or not self.samples:
            return None
        reason, n = max(self.stalls.items(), key=lambda kv: kv[1])
        return reason, n / self.samples


@dataclass(frozen=True)
class Profile:
    meta: dict                     # gpu, driver, cuda, torch, triton, ncu, date, command, file, kernel, launch
    instructions: tuple[InstructionCost, ...]
    lines: tuple[LineCost, ...]    # hottest first
    total_samples: float
    opcode_mismatches: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def unexplained(self) -> tuple[InstructionCost, ...]:
        return tuple(i for i in self.instructions if i.where == "unexplained" and i.samples > 0)

    def by_line(self) -> dict[int, LineCost]:
        return {c.python_line: c for c in self.lines}

    def heat(self, stage_lines) -> dict[int, float]:
        """Share of samples per line of one stage (a sourcemap.StageLines): SASS lines their
        own; any other stage's line the share of its (innermost) Python line."""
        if stage_lines.stage == "sass":
            return {i.sass_line: i.samples / self.total_samples for i in self.instructions
                    if i.samples and self.total_samples}
        per = self.by_line()
        return {n: per[py].share for n, py in stage_lines.to_python.items() if py in per}

    def hottest(self, source: str = "", n: int = 5) -> list[dict]:
        """The `n` lines with the most samples, in words; `waits_for`: the instruction whose result
        the line's scoreboard stalls wait for, and its line (inspectors.explain.stallcause)."""
        from inspectors.explain import stallcause
        waits = stallcause.by_line(stallcause.causes(self.instructions))
        out = []
        for c in self.lines[:n]:
            chains = {i.chain for i in self.instructions if i.python_line == c.python_line and i.samples}
            where = callsites.describe(next(iter(chains)), source) if len(chains) == 1 else f"line {c.python_line}"
            top = c.top_stall
            why = ""
            if top:
                reason, share = top
                why = f"{share:.0%} of its samples: {ncu.STALL_WORDS.get(reason, reason)}"
            producers = waits.get(c.python_line, [])
            waits_for = ""
            if producers:
                line, op, samples = producers[0]
                kind = "load" if op.startswith(("LD", "ATOM", "TEX")) else op
                waits_for = (f"{samples / c.samples:.0%} of its samples wait for the {kind} ({op}) on "
                             f"{'line ' + str(line) if line else 'an unmapped instruction'}"
                             + (" (its own line)" if line == c.python_line else ""))
            out.append({"python_line": c.python_line, "where": where, "share": c.share, "samples": c.samples,
                        "waits_for": waits_for,
                        "executed": c.executed, "top_stall": top[0] if top else None, "why": why,
                        "sectors_per_request": _ratio(c.sectors, _requests(self, c.python_line)),
                        "ideal_sectors_per_request": _ratio(c.sectors_ideal, _requests(self, c.python_line))})
        return out

    def to_json(self) -> dict:
        return {"format": FORMAT, "meta": self.meta, "total_samples": self.total_samples,
                "opcode_mismatches": self.opcode_mismatches, "notes": list(self.notes),
                "instructions": [{"sass_line": i.sass_line, "offset": i.offset, "text": i.text,
                                  "chain": [[p, ln] for p, ln in i.chain], "samples": i.samples,
                                  "executed": i.executed, "stalls": i.stalls, "sectors": i.sectors,
                                  "sectors_ideal": i.sectors_ideal, "where": i.where}
                                 for i in self.instructions],
                "lines": [{"python_line": c.python_line, "samples": c.samples, "share": c.share,
                           "executed": c.executed, "stalls": c.stalls, "sectors": c.sectors,
                           "sectors_ideal": c.sectors_ideal, "instructions": c.instructions}
                          for c in self.lines]}

    @classmethod
    def from_json(cls, data: dict) -> "Profile":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"not a saved profile of this version: format {got!r}, wanted {FORMAT!r}")
        instructions = tuple(InstructionCost(
            d["sass_line"], d["offset"], d["text"], tuple((p, ln) for p, ln in d["chain"]), d["samples"],
            d["executed"], dict(d["stalls"]), d.get("sectors", 0.0), d.get("sectors_ideal", 0.0), d.get("where", ""))
            for d in data["instructions"])
        lines = tuple(LineCost(d["python_line"], d["samples"], d["share"], d["executed"], dict(d["stalls"]),
                               d["sectors"], d["sectors_ideal"], d["instructions"]) for d in data["lines"])
        return cls(dict(data["meta"]), instructions, lines, data["total_samples"],
                   data.get("opcode_mismatches", 0), tuple(data.get("notes", ())))


def _ratio(a: float, b: float) -> float | None:
    return a / b if a and b else None


def _requests(prof: Profile, line: int) -> float:
    """Warp-level requests of a line's global memory instructions (their executions)."""
    return sum(i.executed for i in prof.instructions
               if i.python_line == line and i.sectors and _MEM_RE.match(_opcode(i.text)))


def _opcode(text: str) -> str:
    parts = text.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0] if parts else ""


def sass_instructions(sass: str) -> list[tuple[int, int, str]]:
    """(1-based line, offset, instruction) of every instruction nvdisasm printed, in order."""
    out = []
    for n, line in enumerate(sass.splitlines(), 1):
        m = _SASS_RE.match(line)
        if m:
            out.append((n, int(m["off"], 16), sass_insn(m["rest"]).strip()))
    return out


def build(page: ncu.SourcePage, sass: str, sass_lines, meta: dict | None = None,
          max_mismatch: float = 0.02) -> Profile:
    """Pair ncu's rows with the SASS lines of the compiled kernel (`sass_lines`: the source
    map's sourcemap.StageLines of that SASS) and sum them per Python line."""
    ours = {off: (n, text) for n, off, text in sass_instructions(sass)}
    if not ours:
        raise ProfileMismatch("the SASS text has no instructions (nvdisasm output with /*offset*/ numbers expected)")
    offsets = page.offsets()
    paired, mismatches, missing = [], 0, 0
    for row, off in zip(page.rows, offsets):
        mine = ours.get(off)
        if mine is None:
            missing += 1
            continue
        if _opcode(mine[1]).split(".")[0] != row.opcode:
            mismatches += 1
        paired.append((row, off, mine))
    if not paired or (mismatches + missing) > max_mismatch * max(len(page.rows), 1):
        raise ProfileMismatch(f"the profiled kernel is not this SASS: {mismatches} of {len(page.rows)} instructions "
                              f"differ in opcode and {missing} have no instruction at their offset "
                              f"(another launch, other options, or another Triton/ptxas made it)")
    mapped = [k for k, (_row, _off, (n, _t)) in enumerate(paired) if sass_lines.chain(n)]
    first, last = (mapped[0], mapped[-1]) if mapped else (len(paired), -1)
    instructions = []
    for k, (row, off, (n, text)) in enumerate(paired):
        chain = sass_lines.chain(n)
        # a NOP without line info is ptxas's scheduling filler (seen in matmul's wgmma loop on the
        # H100, 4 samples): no source line wrote it
        where = ("" if chain else "prologue" if k < first else "epilogue" if k > last
                 else "padding" if _opcode(text).split(".")[0] == "NOP" else "unexplained")
        instructions.append(InstructionCost(
            n, off, text, chain, row.samples, row.executed, row.stalls,
            row.get(ncu.SECTORS), row.get(ncu.SECTORS_IDEAL), where))
    total = sum(i.samples for i in instructions)
    per: dict[int, dict] = {}
    for i in instructions:
        py = i.python_line
        if py is None:
            continue
        acc = per.setdefault(py, {"samples": 0.0, "executed": 0.0, "stalls": {}, "sectors": 0.0,
                                  "sectors_ideal": 0.0, "instructions": 0})
        acc["samples"] += i.samples
        acc["executed"] += i.executed
        acc["sectors"] += i.sectors
        acc["sectors_ideal"] += i.sectors_ideal
        acc["instructions"] += 1
        for reason, v in i.stalls.items():
            acc["stalls"][reason] = acc["stalls"].get(reason, 0.0) + v
    lines = sorted((LineCost(py, a["samples"], a["samples"] / total if total else 0.0, a["executed"], a["stalls"],
                             a["sectors"], a["sectors_ideal"], a["instructions"]) for py, a in per.items()),
                   key=lambda c: (-c.samples, -c.executed, c.python_line))
    notes = []
    if not page.has_samples:
        notes.append("no warp-stall sampling in this export: collect the WarpStateStats / SourceCounters sections")
    if mismatches or missing:
        notes.append(f"{mismatches} opcode differences and {missing} unpaired instructions between ncu and nvdisasm")
    return Profile(dict(meta or {}), tuple(instructions), tuple(lines), total, mismatches, tuple(notes))


_KIND = {"LDG": "load", "LDGSTS": "load", "STG": "store", "ATOMG": "atomic", "RED": "atomic", "REDG": "atomic"}


def measured_vs_static(profile: Profile, estimate, ptx_lines) -> list[dict]:
    """Per Python line and access kind: the static estimate's sectors per request
    (inspectors.explain.coalescing.estimate of the PTX, its accesses put on Python lines by
    `ptx_lines`, a sourcemap.StageLines) next to the measured one (L2 theoretical sectors of
    the line's global SASS accesses over their warp-level executions), and the ratio."""
    static: dict[tuple[int, str], list[float]] = {}
    for a in estimate.accesses:
        py = ptx_lines.to_python.get(a.ptx_line)
        if py is not None and not a.error and a.requests:
            static.setdefault((py, a.kind), []).append(a.sectors_per_request)
    measured: dict[tuple[int, str], list[float]] = {}
    for i in profile.instructions:
        kind = _KIND.get(_opcode(i.text).split(".")[0])
        if kind and i.python_line is not None and i.sectors and i.executed:
            m = measured.setdefault((i.python_line, kind), [0.0, 0.0])
            m[0] += i.sectors
            m[1] += i.executed
    out = []
    for key in sorted(set(static) | set(measured)):
        s = sum(static[key]) / len(static[key]) if key in static else None
        m = measured[key][0] / measured[key][1] if key in measured else None
        out.append({"python_line": key[0], "kind": key[1], "static": s, "measured": m,
                    "ratio": (m / s) if s and m else None})
    return out


def compare(a: Profile, b: Profile) -> list[dict]:
    """Two profiles of two edits (or two configurations) of a file, per Python line: the share
    of samples and the samples in each, and the change, the biggest changes first. Lines are
    matched by number: compare edits that keep the lines where they were."""
    pa, pb = a.by_line(), b.by_line()
    rows = []
    for line in sorted(set(pa) | set(pb)):
        ca, cb = pa.get(line), pb.get(line)
        rows.append({"python_line": line,
                     "share_a": ca.share if ca else 0.0, "share_b": cb.share if cb else 0.0,
                     "samples_a": ca.samples if ca else 0.0, "samples_b": cb.samples if cb else 0.0,
                     "executed_a": ca.executed if ca else 0.0, "executed_b": cb.executed if cb else 0.0})
    for r in rows:
        r["change"] = r["share_b"] - r["share_a"]
    return sorted(rows, key=lambda r: (-abs(r["change"]), r["python_line"]))
