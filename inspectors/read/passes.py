"""The pass pipeline: what each MLIR and LLVM pass did to the IR.

Pure parser of the dump Triton's compiler prints with `MLIR_ENABLE_DUMP=1` and
`LLVM_IR_ENABLE_DUMP=1` (both read by libtriton's C++ at compile time; checked with triton
3.9.0 here and 3.6.0 on the GPU machine, whose MLIR spells the headers `Canonicalizer
(canonicalize)`; the worker sets them only around a compile that asks for it). The kinds of
headers, all from real compiles of `vector_add.py` (tests/fixtures/passes/):

MLIR prints the whole module *before* each pass (printModuleScope, print-before-all)::

    // -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //
    // -----// IR Dump Before CanonicalizerPass: canonicalize{...} ('tt.func' operation: @add_kernel) //----- //

and the software pipeliner adds its own steps inside its pass::

    // -----// SoftwarePipeliner internal IR Dump After: LowerLoops

LLVM prints the module, or just the function a function pass ran on, *after* each pass,
and then the machine IR after each codegen pass::

    ; *** IR Dump After InstCombinePass on add_kernel ***
    ; *** IR Dump After GlobalOptPass on [module] ***
    # *** IR Dump After Register Coalescer (register-coalescer) ***:

Interleaved lines of LLVM's pass manager (`Running pass: ...`) are dropped.

Each dump is a state of the IR; a step is the move from one state to the next, credited
to the pass that made it: the pass an "After" dump names, else the pass the previous
"Before" dump named. So for MLIR the IR after pass P is the dump before the next pass, the
first dump is the input (the TTIR from the Python AST), and what the last MLIR pass did is
not dumped (its result is translated to LLVM IR). The first LLVM and machine-IR dumps have
nothing of their level to compare with, so whether they changed anything is unknown.

    steps = parse_dump(text)
    [s.name for s in steps if s.changed]          # the passes that changed the IR
    ir_after(steps, i), ir_before(steps, i)       # the texts either side of step i
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from inspectors.base.result import PassStep

# `// -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //`
# `// -----// IR Dump Before CanonicalizerPass: canonicalize{max-iterations=10 ...} ('tt.func' operation: @add_kernel) //----- //`
# and, as older MLIR spells it, `// -----// IR Dump Before TritonGPUCoalesce (tritongpu-coalesce) ('builtin.module' operation) //----- //`
_MLIR_RE = re.compile(r"^// -----// IR Dump (?P<when>Before|After) (?P<name>[^:(]+?)"
                      r"(?:: (?P<flag>.*?)| \((?P<flag2>[^()]*)\))?"
                      r" \('(?P<op>[^']+)' operation(?:: @(?P<sym>[^)']*))?\)(?P<failed>.*?)//----- //\s*$")
# (only tried on lines that end `//----- //`, see _split: with no end, the lazy `flag` and `failed`
# rescanned the line from every ` ('`; `sym` stops at a quote for the same reason)
# `// -----// SoftwarePipeliner internal IR Dump After: LowerLoops`
_MLIR_INTERNAL_RE = re.compile(r"^// -----// (?P<who>\w+) internal IR Dump After: (?P<name>.*\S|.)\s*$")   # (`.+?\s*$`: quadratic in blanks)
# `; *** IR Dump After InstCombinePass on add_kernel ***`, `... on [module] ***`, `... on (add_kernel) ***`
# (`omitted because no change` when LLVM prints only changes)
_LLVM_RE = re.compile(r"^; \*\*\* IR Dump (?P<when>Before|After) (?P<name>.+?) on (?P<scope>.+?)"
                      r"(?P<omitted> omitted because no change)? \*\*\*\s*$")
# `# *** IR Dump After Register Coalescer (register-coalescer) ***:`
_MIR_RE = re.compile(r"^# \*\*\* IR Dump (?P<when>Before|After) (?P<name>.+?) \((?P<flag>[\w.-]+)\) \*\*\*:?\s*$")
# The legacy pass manager of LLVM's codegen preparation, module or function:
# `*** IR Dump After Pre-ISel Intrinsic Lowering (pre-isel-intrinsic-lowering) ***`
_LLVM_CG_RE = re.compile(r"^\*\*\* IR Dump (?P<when>Before|After) (?P<name>.+?) \((?P<flag>[\w.-]+)\) \*\*\*\s*$")
# LLVM's pass manager narrating: `Running pass: MemProfRemoveInfo on [module]`, `Invalidating analysis: ...`
_NOISE_RE = re.compile(r"^(?:Running pass|Running analysis|Invalidating analysis|Invalidating all non-preserved"
                       r"|Clearing all analysis results|Skipping pass)\b")
# `define ptx_kernel void @add_kernel(` opens a function in LLVM IR; a line `}` closes it.
_DEFINE_RE = re.compile(r"^define\b[^@]*@(?P<name>[\w$.\"-]+)\(", re.M)

LEVELS = {"mlir": "MLIR", "llvm": "LLVM IR", "llvm-cg": "LLVM IR (codegen preparation)",
          "mir": "machine IR (codegen)"}
# A module, not a single function: `source_filename = "LLVMDialectModule"`, `target datalayout = ...`
_MODULE_MARK_RE = re.compile(r"^(?:source_filename|target datalayout) = ", re.M)


@dataclass(frozen=True)
class _Dump:
    level: str
    when: str            # Before | After
    name: str
    flag: str
    scope: str
    text: str
    omitted: bool = False


def _split(text: str) -> list[_Dump]:
    dumps: list[_Dump] = []
    header: _Dump | None = None
    body: list[str] = []

    def close():
        if header is not None:
            dumps.append(_Dump(header.level, header.when, header.name, header.flag, header.scope,
                               _tidy(body), header.omitted))

    for line in text.splitlines():
        if _NOISE_RE.match(line):
            continue
        tail = line.rstrip()
        m = _MLIR_RE.match(line) if tail.endswith("//----- //") else None
        if m:
            close()
            flag = (m["flag"] or m["flag2"] or "").split("{", 1)[0].strip()
            scope = m["op"] + (f" @{m['sym']}" if m["sym"] else "")
            header, body = _Dump("mlir", m["when"], m["name"].strip(), flag, scope, ""), []
            continue
        m = _MLIR_INTERNAL_RE.match(line)
        if m:
            close()
            header, body = _Dump("mlir", "After", f"{m['who']}: {m['name']}", "", "internal", ""), []
            continue
        m = _LLVM_RE.match(line) if tail.endswith("***") else None
        if m:
            close()
            header, body = _Dump("llvm", m["when"], m["name"], "", m["scope"], "", bool(m["omitted"])), []
            continue
        m = _MIR_RE.match(line) if tail.endswith(("***", "***:")) else None
        if m:
            close()
            header, body = _Dump("mir", m["when"], m["name"], m["flag"], "machine function", ""), []
            continue
        m = _LLVM_CG_RE.match(line) if tail.endswith("***") else None
        if m:
            close()
            header, body = _Dump("llvm-cg", m["when"], m["name"], m["flag"], "", ""), []
            continue
        if header is not None:
            body.append(line)
    close()
    return dumps


def _tidy(lines: list[str]) -> str:
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(l.rstrip() for l in lines) + ("\n" if lines else "")


def _function(module: str, name: str) -> tuple[int, int] | None:
    """Character span of `define ... @name(...) {` .. `}` in an LLVM module."""
    for m in _DEFINE_RE.finditer(module):
        if m["name"].strip('"') == name:
            start = module.rfind("\n", 0, m.start()) + 1
            end = module.find("\n}\n", m.end())
            return (start, end + 3) if end >= 0 else None
    return None


def _splice(module: str, fn_dump: str, scope: str) -> str | None:
    """The module with the functions of a function-pass dump put in place of the old ones
    (`on add_kernel`, or `on (a, b)` for a call-graph pass); None if one is not found."""
    names = [n.strip() for n in scope.strip("()").split(",") if n.strip()]
    if not names:
        names = [m["name"].strip('"') for m in _DEFINE_RE.finditer(fn_dump)]
    out = module
    for name in names:
        new = _function(fn_dump, name)
        old = _function(out, name)
        if new is None or old is None:
            return None
        out = out[:old[0]] + fn_dump[new[0]:new[1]] + out[old[1]:]
    return out


def _stage(level: str, ir: str) -> str:
    if level != "mlir":
        return "mir" if level == "mir" else "llir"
    if "llvm.func" in ir:
        return "llvm-dialect"
    return "ttgir" if "ttg." in ir else "ttir"


def parse_dump(text: str) -> tuple[PassStep, ...]:
    """The dump's text -> one PassStep per pass, in pipeline order (see the module docstring)."""
    steps: list[PassStep] = []
    dumps = _split(text)
    i, last = 0, None
    while i < len(dumps):
        level = dumps[i].level
        j = i
        while j < len(dumps) and dumps[j].level == level:
            j += 1
        # codegen preparation starts from the module the optimizer left (printed differently)
        seed = last if level == "llvm-cg" and steps and steps[-1].level == "llvm" else None
        chain, last = _chain(dumps[i:j], len(steps), seed)
        steps.extend(chain)
        i = j
    return tuple(steps)


def _chain(dumps: list[_Dump], first_index: int, seed: str | None = None) -> tuple[list[PassStep], str | None]:
    """Steps of one run of dumps of the same level, and the IR they end with."""
    out: list[PassStep] = []
    level = dumps[0].level
    state: str | None = seed          # the whole IR (module) as of the last dump
    running: _Dump | None = None      # the pass the last "Before" dump announced
    internal: str | None = None       # the last pass-internal dump (it shows part of the module)

    def add(name, flag, scope, after, changed):
        ir = "" if changed is False and out else after    # a chain's first step keeps its text
        out.append(PassStep(first_index + len(out), name, flag, level, _stage(level, after or state or ""),
                            scope, changed, ir, after.count("\n") if after else 0))

    for d in dumps:
        text = d.text
        if d.scope == "internal":           # e.g. the software pipeliner's own steps: the loop's function only
            add(d.name, d.flag, d.scope, text, None if internal is None else text != internal)
            internal = text
            continue
        is_function = (d.scope and not d.scope.startswith("[")) if level == "llvm" else \
            level == "llvm-cg" and not _MODULE_MARK_RE.search(text)
        if is_function and state is not None:
            text = _splice(state, d.text, d.scope if level == "llvm" else "") or d.text
        if d.omitted and state is not None:
            text = state
        if d.when == "Before":
            internal = None
            if state is None:
                add("input", "", d.scope, text, None)
            elif running is not None:
                add(running.name, running.flag, running.scope, text, _differs(text, state))
            running = d
        else:
            if state is None:
                add(d.name, d.flag, d.scope, text, None)
            else:
                add(d.name, d.flag, d.scope, text, _differs(text, state))
        state = text
    if running is not None and dumps[-1].when == "Before":
        # what the last announced pass did is not in the dump
        out.append(PassStep(first_index + len(out), running.name, running.flag, level, _stage(level, state or ""),
                            running.scope, None, "", 0))
    return out, state


# `; ModuleID = 'LLVMDialectModule'`: printed by one pass manager and not the other
_MODULE_ID_RE = re.compile(r"^; ModuleID = .*\n", re.M)


def _differs(a: str, b: str) -> bool:
    return a != b and _MODULE_ID_RE.sub("", a) != _MODULE_ID_RE.sub("", b)


def ir_after(steps: tuple[PassStep, ...] | list[PassStep], i: int) -> str:
    """The IR after step `i` ("" when it was not dumped)."""
    level = steps[i].level
    while i >= 0 and steps[i].level == level:
        s = steps[i]
        if s.ir or s.changed is not False:
            return s.ir
        i -= 1
    return ""


def ir_before(steps: tuple[PassStep, ...] | list[PassStep], i: int) -> str:
    """The IR step `i` started from: the previous step's of the same level, else ""."""
    if i == 0 or steps[i - 1].level != steps[i].level:
        return ""
    return ir_after(steps, i - 1)


@dataclass(frozen=True)
class Summary:
    total: int
    changed: int
    unchanged: int
    unknown: int
    by_level: dict      # level -> (passes, changed)


def summarize(steps) -> Summary:
    by_level: dict[str, tuple[int, int]] = {}
    for s in steps:
        n, c = by_level.get(s.level, (0, 0))
        by_level[s.level] = (n + 1, c + (s.changed is True))
    return Summary(len(steps), sum(s.changed is True for s in steps), sum(s.changed is False for s in steps),
                   sum(s.changed is None for s in steps), by_level)
