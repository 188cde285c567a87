"""What a kernel's program does, read from its TTIR and the launch's integer arguments: which
pointer arguments it loads through and which it stores through, the FLOPs of its dots
(`tt.dot`, `tt.dot_scaled`) and how many reductions (`tt.reduce`) it runs, for one program,
with every enclosing `scf.for` counted by its trip count (evaluated from the launch's integers; a bound that depends on the program id is
evaluated for each program, or 257 spread over a larger grid, and averaged). Pure: text and numbers in, data out.

    work = program_work(ttir, {"M": 4096, "N": 4096, "K": 4096}, programs=512)
    work.flops              # 2 * 128 * 256 * 64 * 64 trips = 268435456 per program
    work.reads, work.writes # ("a_ptr", "b_ptr"), ("c_ptr",)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from inspectors.read import mlir

# %accumulator_35:3 = scf.for %k = %c0_i32 to %1 step %c1_i32 iter_args(...)
_FOR_RE = re.compile(r"scf\.for %[\w.$]+ = (?P<lb>%[\w.$]+) to (?P<ub>%[\w.$]+) step (?P<st>%[\w.$]+)")
# tensor<128x64xf16> * tensor<64x256xf16> -> tensor<128x256xf32>
_DOT_TYPE_RE = re.compile(r"tensor<(?P<a>[\dx]+)x(?P<ta>\w+)(?:,[^>]*)?> \* tensor<(?P<b>[\dx]+)x\w+(?:,[^>]*)?>")
_CONST_RE = re.compile(r"arith\.constant (?P<v>-?\d+) : (?:i\d+|index)\b")
_ITER_RE = re.compile(r"(%[\w.$]+) = (%[\w.$]+)")
_ARITH = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None, "arith.divui": lambda a, b: a // b if b else None,
    "arith.floordivsi": lambda a, b: a // b if b else None, "arith.ceildivsi": lambda a, b: -(-a // b) if b else None,
    "arith.remsi": lambda a, b: a - b * int(a / b) if b else None, "arith.remui": lambda a, b: a % b if b else None,
    "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
}
_SAME = ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui")
# the dot's operand type as the targets' peak tables name it
_DOT_DTYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i8": "int8",
               "f8E4M3FN": "fp8", "f8E5M2": "fp8", "f8E4M3FNUZ": "fp8", "f8E5M2FNUZ": "fp8"}


@dataclass(frozen=True)
class ProgramWork:
    flops: int | None           # of one program's dots; None: a trip count not known before the run
    dtype: str                  # the dots' operand type (fp16, bf16, fp8, tf32, fp32, int8); "" without dots
    dots: int                   # dot ops in the kernel
    reads: tuple[str, ...]      # pointer arguments it loads through (TTIR's names)
    writes: tuple[str, ...]     # ... and stores through (atomics count as both)
    why: str = ""               # why `flops` is None
    reductions: float | None = 0.0   # `tt.reduce`s one program runs, each loop's counted by its trips


def program_work(ttir: str, ints: dict, programs: int = 1, names: tuple[str, ...] = (),
                 grid: tuple[int, ...] = ()) -> ProgramWork:
    """`ints`: the launch's integer arguments by name; `names`: the kernel's non-constexpr
    arguments in order, which name the TTIR's by position (Triton 3.6 calls them `%arg3`,
    3.9 `%K`). `reads` and `writes` use these names."""
    module = mlir.parse(ttir)
    values = _arguments(module, ints, names)
    reads, writes = _accesses(module, _named(module, names))
    flops, dots, dtype, why = 0, 0, "", ""
    reductions: float | None = 0.0
    sizes = (tuple(grid) + (1, 1, 1))[:3] if grid else (programs, 1, 1)
    for stripped, trips, _ in _walk(ttir, module, values, programs, sizes):
        if '"tt.reduce"(' in stripped or stripped.startswith("tt.reduce ") or " = tt.reduce " in stripped:
            reductions = None if trips is None or reductions is None else reductions + trips
        if " tt.dot " in f" {stripped} " or " tt.dot_scaled " in f" {stripped} ":
            dots += 1
            m = _DOT_TYPE_RE.search(stripped)
            if m is None:
                why = why or "a dot whose operand shapes could not be read"
                continue
            a, b = [int(x) for x in m["a"].split("x")], [int(x) for x in m["b"].split("x")]
            one = 2 * b[-1] * _prod(a)                      # 2·M·N·K, times the batch of a 3-D dot
            dtype = dtype or ("tf32" if m["ta"] == "f32" and "inputPrecision = ieee" not in stripped
                              else _DOT_DTYPES.get(m["ta"], m["ta"]))
            if trips is None:
                why = why or "a dot in a loop whose trip count is known only at run time"
                flops = None
            elif flops is not None:
                flops += int(one * trips)
    return ProgramWork(flops if dots else 0, dtype, dots, reads, writes, why if dots else "", reductions)


@dataclass(frozen=True)
class Loop:
    trips: float | None         # per entry, averaged over the grid; None: known only at run time
    constant: bool              # its bounds are constants (a loop the compiler may unroll whole)


def loop_trips(ttgir: str, ints: dict, programs: int = 1, names: tuple[str, ...] = (),
               grid: tuple[int, ...] = ()) -> list[Loop]:
    """Each `scf.for`'s own trip count, in the order the text has them (sass_work.issued pairs
    them with the SASS's loops)."""
    module = mlir.parse(ttgir)
    values = _arguments(module, ints, names)
    sizes = (tuple(grid) + (1, 1, 1))[:3] if grid else (programs, 1, 1)
    out = []
    for line in ttgir.splitlines():
        if "scf.for " in line:
            m = _FOR_RE.search(line)
            constant = m is not None and all(
                getattr(module.defs.get(m[k]), "name", "") == "arith.constant" for k in ("lb", "ub", "st"))
            out.append(Loop(_trips(m, module, values, programs, sizes), constant))
    return out


def branches_by_program(ttgir: str) -> bool:
    """Whether an `scf.if` picks its branch by the program id: a combo kernel's programs each
    run one of its parts (Inductor's `triton_for_…`), so no program runs all of its code."""
    module = mlir.parse(ttgir)
    seen: set[str] = set()

    def from_pid(v: str, depth: int = 0) -> bool:
        if v in seen or depth > 64:
            return False
        seen.add(v)
        op = module.defs.get(v)
        return op is not None and (op.name == "tt.get_program_id"
                                   or any(from_pid(o, depth + 1) for o in op.operands))
    return any(op.name == "scf.if" and op.operands and from_pid(op.operands[0]) for op in module.ops)


def _walk(text: str, module: mlir.Module, values: dict, programs: int, sizes: tuple[int, int, int]):
    """Each op line of `text` with how many times one program runs it (None: a trip count
    not known before the run) and the loop nest it sits in (the line numbers of its `scf.for`s)."""
    loops: list[tuple[float | None, int | None]] = []   # each region we are in: (trips, its scf.for line)
    for n, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if stripped.startswith("}"):
            if loops:
                loops.pop()
            if stripped.endswith("{"):      # } else {
                loops.append((1.0, None))
            continue
        if "scf.for " in stripped:
            loops.append((_trips(_FOR_RE.search(stripped), module, values, programs, sizes), n))
            continue
        yield stripped, _product([t for t, _ in loops]), tuple(i for _, i in loops if i is not None)
        if stripped.endswith("{"):
            loops.append((1.0, None))


def _product(loops: list) -> float | None:
    """How many times the innermost of `loops` runs its body (None: a trip count not known)."""
    trips = 1.0
    for t in loops:
        trips = None if t is None or trips is None else trips * t
    return trips


def _prod(dims) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _named(module: mlir.Module, names: tuple[str, ...]) -> dict[str, str]:
    """TTIR argument (`%arg3`, `%K`) -> the kernel's argument name."""
    return {a: (names[i] if i < len(names) else a.lstrip("%")) for i, a in enumerate(module.args)}


def _arguments(module: mlir.Module, ints: dict, names: tuple[str, ...]) -> dict:
    """TTIR argument -> the launch's integer value."""
    return {a: ints[n] for a, n in _named(module, names).items() if n in ints}


_AXIS = {"x": 0, "y": 1, "z": 2}


def _value(v: str, module: mlir.Module, values: dict, pid: int, depth: int = 0,
           sizes: tuple[int, int, int] = (1, 1, 1), memo: dict | None = None) -> int | None:
    """`v`'s value in program `pid` (None: not known before the run); `memo`: values found
    for this pid so far (a value shared by many ops is evaluated once)."""
    if v in values:
        return values[v]
    if memo is not None and v in memo:
        return memo[v]
    found = _evaluate(v, module, values, pid, depth, sizes, memo)
    if memo is not None:
        memo[v] = found
    return found


def _evaluate(v: str, module: mlir.Module, values: dict, pid: int, depth: int,
              sizes: tuple[int, int, int], memo: dict | None) -> int | None:
    op = module.defs.get(v)
    if op is None or depth > 64:
        return None
    if op.name == "arith.constant":
        m = _CONST_RE.search(op.text)
        return int(m["v"]) if m else None
    if op.name == "tt.get_program_id":
        return pid
    if op.name == "tt.get_num_programs":          # a persistent kernel's stride over its work
        m = re.search(r"get_num_programs (\w)", op.text)
        return sizes[_AXIS.get(m.group(1), 0)] if m else sizes[0]
    args = [_value(o, module, values, pid, depth + 1, sizes, memo) for o in op.operands]
    if any(a is None for a in args):
        return None
    if op.name in _SAME and len(args) == 1:
        return args[0]
    fn = _ARITH.get(op.name)
    return fn(*args[:2]) if fn is not None and len(args) >= 2 else None


def _trips(m, module: mlir.Module, values: dict, programs: int,
           sizes: tuple[int, int, int] = (1, 1, 1)) -> float | None:
    """A loop's trips, averaged over the grid: every program's where there are a few hundred,
    else 257 spread evenly (a persistent kernel's last program takes the rows left over)."""
    if m is None:
        return None
    last = max(programs - 1, 0)
    pids = range(programs) if programs <= 256 else sorted({round(last * i / 256) for i in range(257)})
    counts = []
    for pid in pids:
        memo: dict = {}
        lb, ub, st = (_value(m[k], module, values, pid, 0, sizes, memo) for k in ("lb", "ub", "st"))
        if None in (lb, ub, st) or st <= 0:
            return None
        counts.append(max(0, -(-(ub - lb) // st)))
    return sum(counts) / len(counts)


def _accesses(module: mlir.Module, named: dict) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Pointer arguments reaching a load's and a store's pointer operand (through addptr,
    splat, broadcast, block pointers, descriptors and loops' iter_args)."""
    carried: dict[str, list[str]] = {}          # a loop's region argument -> its initial value
    for op in module.ops:
        if op.name == "scf.for":
            for inner, init in _ITER_RE.findall(op.text.split("iter_args(", 1)[-1] if "iter_args(" in op.text else ""):
                carried.setdefault(inner, []).append(init)
    cache: dict[str, frozenset] = {}

    def sources(v: str, depth: int = 0) -> frozenset:
        if v in cache:
            return cache[v]
        cache[v] = frozenset()                  # a cycle through a loop reads as nothing more
        if v in module.args:
            found = frozenset([v]) if module.args[v].is_pointer else frozenset()
        elif depth > 200:
            found = frozenset()
        elif v in carried:
            found = frozenset().union(*(sources(i, depth + 1) for i in carried[v]))
        elif v in module.defs and module.defs[v].name not in ("tt.load", "tt.descriptor_load"):
            found = frozenset().union(*(sources(o, depth + 1) for o in module.defs[v].operands))
        else:
            found = frozenset()
        cache[v] = found
        return found

    reads, writes = set(), set()
    for op in module.ops:
        if not op.operands:
            continue
        if op.name in ("tt.load", "tt.descriptor_load", "tt.descriptor_gather"):
            reads |= sources(op.operands[0])
        elif op.name in ("tt.store", "tt.descriptor_store", "tt.descriptor_scatter"):
            writes |= sources(op.operands[0])
        elif op.name in ("tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_reduce"):
            found = sources(op.operands[0])
            reads |= found
            writes |= found
    return tuple(named[a] for a in module.args if a in reads), tuple(named[a] for a in module.args if a in writes)
