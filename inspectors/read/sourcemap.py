"""Source maps: which line of the user's Python file each line of each stage came from.

Pure parsers, text in, frozen dataclasses out. Every stage carries Triton's line info in
its own format (all of it from real Triton 3.9 compiles of `vector_add.py`, `softmax.py`):

TTIR / TTGIR (MLIR) put a location at the end of each op, usually an alias defined at the
bottom (or top) of the module; names wrap locations, `callsite(callee at caller)` marks
code inlined from a helper (here Triton's own `standard.py`)::

    %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>> loc(#loc23)
    #loc7 = loc("vector_add.py":27:9)
    #loc23 = loc("x"(#loc7))
    } {tt.num_stages = 2 : i32} loc(#loc7)      <- softmax: closes the `scf.for ... {` line
    #loc45 = loc(callsite(#loc11 at #loc38))    <- softmax: #loc11 is in standard.py

LLVM IR hangs `!dbg !N` on instructions; `!N` is a DILocation whose scope names the file,
and whose `inlinedAt` chain leads out to the user's line::

    %118 = tail call float @llvm.maxnum.f32(float %116, float %117), !dbg !21
    !21 = !DILocation(line: 196, column: 12, scope: !22, inlinedAt: !24)
    !22 = distinct !DILexicalBlockFile(scope: !4, file: !23, discriminator: 0)
    !23 = !DIFile(filename: "standard.py", directory: "/.../triton/language")

PTX and AMDGCN use `.loc FILE LINE COL` directives; every instruction after one belongs to
it. PTX may say where inlined code was inlined (one level per directive), AMDGCN says it
in the assembler comment (the whole stack)::

    .loc	2 196 12, function_name $L__info_string0, inlined_at 2 216 16 // standard.py:196:12
    .loc	2 196 12                        ; standard.py:196:12 @[ standard.py:216:16 @[ softmax.py:35:31 ] ]
    .file	1 "vector_add.py"                                   (PTX, after the function)
    .file	2 "/.../triton/language" "standard.py"              (AMDGCN, directory and name)

SASS (`nvdisasm -c -g`) has one comment line per change of line; `-gi` would add
`inlined at "softmax.py", line 35` and print the enclosing frames on lines of their own::

    //## File "vector_add.py", line 27
            /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;

Every op maps to a chain of user frames, innermost first: Triton's own library drops out
(tl.max maps to the user's line that called it, not standard.py), code inlined from a
user's `@triton.jit` helper keeps its own line and then its call sites:
(("", 20), ("", 56)) is line 20 of `_attn_inner`, called from line 56 (a helper in
another file of the user's: (path, line) frames). `StageLines.to_python` holds the
innermost kernel-file line, `StageLines.calls` the chains of helper code; following a
Python line lights its own ops and, for a call, everything the call made. Each stage says
it its own way (Triton 3.9 and 3.6, `tests/snippets/flash_attention.py`)::

    #loc128 = loc(callsite(#loc92 at #loc18))                      TTIR/TTGIR, both
    !29 = !DILocation(line: 18, column: 5, scope: !30, inlinedAt: !31)            LLVM IR
    .loc 1 20 13, function_name $L__info_string0, inlined_at 1 56 21             PTX, 3.9
    .loc 1 18 45 // flash_attention.py:18:45 @[ flash_attention.py:57:86 ]       PTX, 3.6
    //## File "flash_attention.py", line 20 inlined at "flash_attention.py", line 56
    //## File "flash_attention.py", line 56                       SASS (-gi), one line a frame

(3.9's PTX prints a chain's outer `.loc`s just before its inner ones; 3.6's PTX has no
inlined_at, so its SASS has the innermost frame only: see `sass_hints`.) Declarations
(`#loc = ...`, `!N = ...`, `.loc`, `.file`, labels) are never mapped; ops and instructions are.

Two quirks of the line info need work-arounds (see `ptx_lines` and `sass_hints`):

- LLVM's NVPTX printer gives every line of an inline-asm block its own `.loc`, adding one
  to the line number per asm line (llvm-project PR 177718). Triton's loads are such blocks
  (four `mov` then `ld.global`), so the raw PTX claims a load on vector_add.py:30, a blank
  line, and ptxas copies that into the SASS line table. Inside a block only its first
  `.loc` is real.
- `nvdisasm -g`, and any SASS of a PTX without inlined_at (Triton 3.6), drops the
  inlined-at part: inlined code says `File ".../standard.py", line 196`. The PTX of the
  same kernel says which user line that came from, so `build` resolves SASS through the
  PTX when it has both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from inspectors.read.lines_asm import (amdgcn_chains, amdgcn_lines, ptx_chains, ptx_lines, sass_chains,
                                       sass_hints, sass_lines)
from inspectors.read import line_twin
from inspectors.read.lines_llvm import llir_chains, llir_lines
from inspectors.read.lines_mlir import mlir_chains, mlir_lines
from inspectors.read.userfile import innermost, is_user_file
from inspectors.base import stages as stage_table

__all__ = ["SourceMap", "StageLines", "amdgcn_lines", "build", "is_user_file", "llir_lines", "mlir_lines",
           "ptx_lines", "sass_hints", "sass_lines", "stage_lines", "from_chains", "mlir_chains", "llir_chains",
           "ptx_chains", "sass_chains", "amdgcn_chains", "sass_stage_lines"]


@dataclass(frozen=True)
class StageLines:
    """One stage's map: 1-based stage line -> 1-based line of the user's file (only the
    lines that map): the innermost one, inside a `@triton.jit` helper for its code.
    `calls`: for the lines of inlined helper code, the whole chain of frames, innermost
    first (("", line) in the kernel file, (path, line) in another file of the user's),
    e.g. (("", 20), ("", 56)): line 20 of the helper, called from line 56."""
    stage: str
    to_python: dict[int, int]
    calls: dict[int, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    def python_lines(self) -> frozenset[int]:
        return frozenset(self.to_python.values())

    def chain(self, line: int) -> tuple:
        """The frames of one stage line, innermost first; () when it maps nowhere."""
        if line in self.calls:
            return self.calls[line]
        py = self.to_python.get(line)
        return () if py is None else (("", py),)

    def call_sites(self, line: int) -> tuple[int, ...]:
        """The kernel-file lines that called the helper this stage line is in, innermost
        call first (the line itself left out); () outside helpers."""
        py = self.to_python.get(line)
        return tuple(ln for path, ln in self.chain(line) if not path and ln != py)


def from_chains(stage: str, chains: dict[int, tuple]) -> StageLines:
    """A stage's map from its parser's chains (stage line -> frames, innermost first)."""
    to_python = {n: innermost(c) for n, c in chains.items()}
    return StageLines(stage, {n: py for n, py in to_python.items() if py is not None},
                      {n: c for n, c in chains.items() if len(c) > 1 and to_python[n] is not None})


@dataclass(frozen=True)
class SourceMap:
    filename: str
    stages: dict[str, StageLines] = field(default_factory=dict)

    @cached_property
    def _index(self) -> dict[int, dict[str, tuple[int, ...]]]:
        """Python line -> the stage lines that came from it: its own code, and for a call
        of a helper everything the call produced (each kernel-file line of a chain)."""
        index: dict[int, dict[str, set[int]]] = {}
        for name, sl in self.stages.items():
            for n, py in sl.to_python.items():
                index.setdefault(py, {}).setdefault(name, set()).add(n)
            for n, chain in sl.calls.items():
                for path, py in chain:
                    if not path:
                        index.setdefault(py, {}).setdefault(name, set()).add(n)
        return {py: {s: tuple(sorted(ns)) for s, ns in per.items()}
                for py, per in sorted(index.items())}

    def python_to_stage(self) -> dict[int, dict[str, tuple[int, ...]]]:
        """{python line: {stage: sorted stage lines}}, only stages that have lines for it.
        A call of a helper has the helper's lines too."""
        return {py: dict(per) for py, per in self._index.items()}

    def lines_for(self, stage: str, line: int) -> dict[str, tuple[int, ...]]:
        """Clicking `line` of `stage` ("source" for the Python file): the matching lines in
        every stage, "source" included (the Python line), an empty tuple where a stage has
        none. Stage to stage goes through the (innermost) Python line. An empty dict when a
        stage line maps to nothing (a declaration, compiler-made code)."""
        if stage == "source":
            py = line
        else:
            sl = self.stages.get(stage)
            py = sl.to_python.get(line) if sl else None
            if py is None:
                return {}
        per = self._index.get(py, {})
        out = {"source": (py,)}
        for name in self.stages:
            out[name] = per.get(name, ())
        return out

    def call_groups(self, stage: str, line: int) -> dict[tuple, tuple[int, ...]]:
        """The stage lines whose innermost kernel line is `line`, split by the other frames
        of their chain: {(("", 56),): (...), (("", 58),): (...)} for a helper called from
        lines 56 and 58; key () for code that is not in a helper."""
        sl = self.stages.get(stage)
        out: dict[tuple, list[int]] = {}
        if sl:
            for n, py in sl.to_python.items():
                if py == line:
                    out.setdefault(tuple(f for f in sl.chain(n) if f != ("", line)), []).append(n)
        return {k: tuple(v) for k, v in sorted(out.items())}


# --------------------------------------------------------------------------- all stages

# The line reader of each family of text (inspectors.base.stages: a stage's row names its family).
READERS = {
    "mlir": mlir_chains,
    "llir": llir_chains,
    "ptx": ptx_chains,
    "sass": sass_chains,
    "amdgcn": amdgcn_chains,
}


def stage_lines(stage: str, text: str, filename: str) -> StageLines:
    """One stage's map, by stage name (glir, ttir, ttgir, llir, ptx, sass, amdgcn): read by its
    family's reader."""
    try:
        parser = READERS[stage_table.family_of(stage)]
    except KeyError:
        raise KeyError(f"no source map for stage {stage!r}; the readers' families: {', '.join(READERS)}") from None
    return from_chains(stage, parser(text, filename))


def sass_stage_lines(sass: str, ptx: str | None, filename: str) -> StageLines:
    """The SASS map, resolved through the PTX (see `sass_hints`) when there is one."""
    hints = sass_hints(ptx, filename) if ptx else None
    return from_chains("sass", sass_chains(sass, filename, hints))


def build(stages: dict[str, str], filename: str, twins: dict | None = None) -> SourceMap:
    """The source map of one kernel from its stage texts (`KernelResult.stages`); stages
    without line info (source, unknown names, empty text) are left out. SASS is resolved
    through the PTX when both are there. `twins`: a kernel compiled without line info
    (`KernelResult.line_twin`): a stage's twin with line info maps it where line_twin.align
    pairs their lines."""
    out: dict[str, StageLines] = {}
    for name, text in stages.items():
        if stage_table.family_of(name) not in READERS or not text:
            continue
        twin = (twins or {}).get(name)
        if isinstance(twin, str) and twin and (pairs := line_twin.align(name, text, twin)) is not None:
            chains = READERS[stage_table.family_of(name)](twin, filename)
            out[name] = from_chains(name, {pairs[n]: c for n, c in chains.items() if n in pairs})
        elif stage_table.family_of(name) == "sass":
            out[name] = sass_stage_lines(text, stages.get("ptx"), filename)
        else:
            out[name] = stage_lines(name, text, filename)
    return SourceMap(filename, out)
