"""Live registers per instruction and per Python line, from nvdisasm's life ranges.

`nvdisasm -c -plr -lrm count` prints, after every instruction, how many registers of each file
are live there:

        /*0070*/                   CS2R R24, SRZ ;                 // |   5   |        |    7   |         |
                                                                   //   GPR     PRED     UGPR     UPRED

It ignores -gi (no line info in that mode), so the instructions are paired by their offset with
the line-info disassembly the SASS panel shows (`/*0070*/` there too), whose source map gives each
SASS line its Python line. A line's pressure is the most GPRs live at any of its instructions;
spills are its local-memory instructions (LDL/STL). Pure: text in, a frozen dataclass out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_PLR_RE = re.compile(r"^\s*/\*(?P<off>[0-9a-f]{4,8})\*/[^\n/]*?;\s*//\s*\|\s*(?P<gpr>\d*)\s*\|", re.M)
_OFF_RE = re.compile(r"/\*(?P<off>[0-9a-f]{4,8})\*/")
_SPILL_RE = re.compile(r"\b(?P<op>LDL|STL)(?:\.\w+)*\b")


@dataclass(frozen=True)
class Pressure:
    by_line: dict[int, int]          # Python line -> most GPRs live at its instructions
    peak: int                        # most GPRs live anywhere in the kernel
    spill_stores: dict[int, int]     # Python line -> STL instructions (registers spilled to local memory)
    spill_loads: dict[int, int]      # Python line -> LDL instructions (spilled values read back)

    def peak_line(self) -> int | None:
        return max(self.by_line, key=lambda n: (self.by_line[n], -n)) if self.by_line else None


def live_counts(plr_text: str) -> dict[int, int]:
    """Instruction offset -> live GPRs after it."""
    return {int(m["off"], 16): int(m["gpr"]) for m in _PLR_RE.finditer(plr_text) if m["gpr"]}


def pressure(plr_text: str, sass_text: str, sass_to_python: dict[int, int]) -> Pressure:
    """`sass_text`: the line-info disassembly; `sass_to_python`: its source map (SASS line -> Python line)."""
    counts = live_counts(plr_text)
    by_line: dict[int, int] = {}
    stores: dict[int, int] = {}
    loads: dict[int, int] = {}
    for n, line in enumerate(sass_text.splitlines(), 1):
        m = _OFF_RE.search(line)
        py = sass_to_python.get(n)
        if m is None or py is None:
            continue
        live = counts.get(int(m["off"], 16))
        if live is not None:
            by_line[py] = max(by_line.get(py, 0), live)
        s = _SPILL_RE.search(line, m.end())
        if s:
            (stores if s["op"] == "STL" else loads)[py] = (stores if s["op"] == "STL" else loads).get(py, 0) + 1
    return Pressure(by_line, max(counts.values(), default=0), stores, loads)


def of_kernel(cubin_b64: str, sass_text: str, ptx: str, filename: str) -> Pressure:
    """Runs nvdisasm for the life ranges of a kernel's cubin (sandboxed like the SASS stage) and
    pairs them with `sass_text` (its line-info disassembly). Raises sass.SassError."""
    from inspectors.read import sass, sourcemap
    lines = sourcemap.sass_stage_lines(sass_text, ptx, filename)
    return pressure(sass.life_ranges_b64(cubin_b64), sass_text, lines.to_python)
