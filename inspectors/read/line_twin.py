"""A kernel compiled without line info (TRITON_DISABLE_LINE_INFO: unsloth sets it at import) has
no `.loc` in its PTX and no `!dbg` in its LLVM IR: nothing maps its instructions to Python lines.
The worker compiles a twin with line info on (triton_shim.compile_line_twin); its instruction
stream is the real one's plus what line info adds. `align` pairs the two texts line by line:

    pairs = align("ptx", real_ptx, twin_ptx)     # {twin line: real line}, 1-based; None: they differ

What line info adds, and is left out of the comparison: in TTIR and TTGIR the `loc(...)` of
each op and the `#locN = ...` lines (the real ones say `loc(unknown)`), and the names of values
(`%pid` with line info, `%0` without: compared by first appearance); in PTX the `.loc` and `.file` lines,
the `$L__func_begin0:` / `$L__tmp3:` / `$L__func_end0:` labels its ranges need and the
`.section .debug_*` blocks; in LLVM IR the `, !dbg !N` of each instruction, `#dbg_*` records and
`!N = ...` metadata (and a function's ` !dbg !N`). Every other line must be the same, in the same order, or there is no map.
"""
from __future__ import annotations

import re

from inspectors.base import stages as stage_table

NOTE = ("This kernel was compiled without line info (TRITON_DISABLE_LINE_INFO, as its library asks): "
        "its PTX has no .loc lines, as on the GPU. Its instructions are mapped to lines through a twin "
        "compiled with line info, whose instruction stream is the same.")
DIFFERS = ("This kernel was compiled without line info (TRITON_DISABLE_LINE_INFO, as its library asks), "
           "and {why}: its instructions are not mapped to lines.")

_PTX_ONLY = re.compile(r"^\s*(?:\.loc\s|\.file\s|\$L__(?:func_begin|func_end|tmp)\d+:)")
_LLIR_ONLY = re.compile(r"^\s*(?:!\d+ = |!llvm\.dbg|!llvm\.module\.flags|#dbg_)")
_LOC = re.compile(r"\s*\bloc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")
_SSA = re.compile(r"%[\w.$-]+")
_DBG = re.compile(r"(?:,\s*|\s+)!dbg !\d+")


def _kept(stage: str, text: str, twin: bool) -> list[tuple[int, str]]:
    """(1-based line, its text as compared) of the lines that are not line info."""
    out, in_debug, names = [], False, {}
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stage_table.family_of(stage) == "mlir":
            if stripped.startswith("#loc"):
                continue
            # with line info Triton names values after the Python variables (%pid, not %0):
            # each value renamed by its first appearance
            out.append((n, _SSA.sub(lambda m: names.setdefault(m[0], f"%v{len(names)}"), _LOC.sub("", stripped))))
        elif stage == "ptx":
            if in_debug:
                in_debug = stripped != "}"
                continue
            if stripped.startswith(".section") and ".debug" in stripped:
                in_debug = not stripped.endswith("}")       # `.section .debug_macinfo { }`: one line
                continue
            if twin and _PTX_ONLY.match(line):
                continue
            out.append((n, stripped.split("//", 1)[0].rstrip()))
        else:
            if _LLIR_ONLY.match(line) or stripped.startswith("!"):
                continue
            out.append((n, _DBG.sub("", stripped)))
    return out


FAMILIES = ("mlir", "llir", "ptx")     # the stages a twin maps, by family (SASS: not yet, it is disassembled later)


def mapped(stage: str) -> bool:
    """Whether a twin maps `stage` (TTIR, TTGIR, LLVM IR, PTX)."""
    return stage_table.family_of(stage) in FAMILIES


def twins(real: dict, twin: dict) -> dict:
    """What a kernel keeps of its twin (KernelResult.line_twin): the twin's TTIR, TTGIR, LLVM IR and PTX
    where they pair with the real ones, else why not ({"differs": ...})."""
    kept = {s: twin[s] for s in real if mapped(s) and real.get(s) and twin.get(s) and align(s, real[s], twin[s]) is not None}
    if real.get("ptx") and "ptx" not in kept:
        return {"differs": "a twin compiled with line info has another PTX instruction stream"}
    return kept


def note(line_twin: dict) -> str:
    """What the page says of a kernel's line twin ("" when it has none)."""
    if line_twin.get("differs"):
        return DIFFERS.format(why=line_twin["differs"])
    return NOTE if line_twin else ""


def align(stage: str, real: str, twin: str) -> dict[int, int] | None:
    """{twin line: real line} for every line of `twin` that is in `real` (PTX or LLVM IR,
    1-based), or None when their instruction streams differ."""
    a, b = _kept(stage, real, False), _kept(stage, twin, True)
    if len(a) != len(b) or any(x[1] != y[1] for x, y in zip(a, b)):
        return None
    return {t: r for (r, _), (t, _) in zip(a, b)}
