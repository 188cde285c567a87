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

Inlined library code is attributed to the outermost location in the user's file (the
user's line that called tl.max, not standard.py). Declarations (`#loc = ...`, `!N = ...`,
`.loc`, `.file`, labels) are never mapped; ops and instructions are.

Two quirks of the line info need work-arounds (see `ptx_lines` and `sass_hints`):

- LLVM's NVPTX printer gives every line of an inline-asm block its own `.loc`, adding one
  to the line number per asm line (llvm-project PR 177718). Triton's loads are such blocks
  (four `mov` then `ld.global`), so the raw PTX claims a load on vector_add.py:30, a blank
  line, and ptxas copies that into the SASS line table. Inside a block only its first
  `.loc` is real.
- `nvdisasm -g` (what the engine runs) drops the inlined-at part: inlined code says
  `File ".../standard.py", line 196`. The PTX of the same kernel says which user line
  that came from, so `build` resolves SASS through the PTX when it has both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from inspectors.read.lines_asm import amdgcn_lines, ptx_lines, sass_hints, sass_lines
from inspectors.read.lines_llir import llir_lines
from inspectors.read.lines_mlir import mlir_lines
from inspectors.read.userfile import is_user_file

__all__ = ["SourceMap", "StageLines", "amdgcn_lines", "build", "is_user_file", "llir_lines", "mlir_lines",
           "ptx_lines", "sass_hints", "sass_lines", "stage_lines"]


@dataclass(frozen=True)
class StageLines:
    """One stage's map: 1-based stage line -> 1-based line of the user's file (only the
    lines that map)."""
    stage: str
    to_python: dict[int, int]

    def python_lines(self) -> frozenset[int]:
        return frozenset(self.to_python.values())


@dataclass(frozen=True)
class SourceMap:
    filename: str
    stages: dict[str, StageLines] = field(default_factory=dict)

    @cached_property
    def _index(self) -> dict[int, dict[str, tuple[int, ...]]]:
        index: dict[int, dict[str, list[int]]] = {}
        for name, sl in self.stages.items():
            for n, py in sl.to_python.items():
                index.setdefault(py, {}).setdefault(name, []).append(n)
        return {py: {s: tuple(sorted(ns)) for s, ns in per.items()}
                for py, per in sorted(index.items())}

    def python_to_stage(self) -> dict[int, dict[str, tuple[int, ...]]]:
        """{python line: {stage: sorted stage lines}}, only stages that have lines for it."""
        return {py: dict(per) for py, per in self._index.items()}

    def lines_for(self, stage: str, line: int) -> dict[str, tuple[int, ...]]:
        """Clicking `line` of `stage` ("source" for the Python file): the matching lines in
        every stage, "source" included (the Python line), an empty tuple where a stage has
        none. Stage to stage goes through the Python line. An empty dict when a stage line
        maps to nothing (a declaration, compiler-made code)."""
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


# --------------------------------------------------------------------------- all stages

_PARSERS = {
    "ttir": mlir_lines,
    "ttgir": mlir_lines,
    "llir": llir_lines,
    "ptx": ptx_lines,
    "sass": sass_lines,
    "amdgcn": amdgcn_lines,
}


def stage_lines(stage: str, text: str, filename: str) -> StageLines:
    """One stage's map, by stage name (ttir, ttgir, llir, ptx, sass, amdgcn)."""
    try:
        parser = _PARSERS[stage]
    except KeyError:
        raise KeyError(f"no source map for stage {stage!r}; known: {', '.join(_PARSERS)}") from None
    return StageLines(stage, parser(text, filename))


def build(stages: dict[str, str], filename: str) -> SourceMap:
    """The source map of one kernel from its stage texts (`KernelResult.stages`); stages
    without line info (source, unknown names, empty text) are left out. SASS is resolved
    through the PTX when both are there."""
    out: dict[str, StageLines] = {}
    for name, text in stages.items():
        if name not in _PARSERS or not text:
            continue
        if name == "sass" and stages.get("ptx"):
            out[name] = StageLines(name, sass_lines(text, filename, sass_hints(stages["ptx"], filename)))
        else:
            out[name] = stage_lines(name, text, filename)
    return SourceMap(filename, out)
