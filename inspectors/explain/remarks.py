"""Why, not only what: the compiler's reasons and the tool's findings, each on the Python line
that caused it.

    found = remarks(stages, smap, rows, diagnostics_text, num_stages=3, filename="matmul.py")
    [Remark(line=46, file="matmul.py", kind="pipeline", message="loop pipelined ...", ...), ...]

Four kinds, in this order on a line:
- `compiler`: a remark or warning libtriton printed while compiling (MLIR diagnostics, captured
  by the worker for that compile: inspectors.read.diagnostics), at the line it names.
- `pipeline`: every `scf.for` of the TTGIR that loads from global memory: pipelined (its loads
  became `cp.async` or TMA copies issued ahead, and how many copy groups stay in flight) or not,
  and for a load left synchronous what stops it when the compile shows it (num_stages = 1, fewer
  than 4 bytes a thread per access, an address that comes from another load of the loop).
- `layout`: every `ttg.convert_layout`: its source and destination layouts, the tensor's bytes,
  and whether its PTX goes through shared memory (shared stores and loads on the same line).
- `vectorization`: global accesses narrower than their layout allows, with the reasons
  (inspectors.explain.vectorization).

Pure: stage texts and the source map in, frozen dataclasses out; linear in the text.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from inspectors.explain import bankconflicts
from inspectors.read import diagnostics as diag_reader
from inspectors.read import mlir

KINDS = ("compiler", "pipeline", "layout", "bank", "vectorization")
_FOR_RE = re.compile(r"\bscf\.for\b")
_DEF_RE = re.compile(r"^\s*(?P<defs>%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+)*)\s*=\s*(?P<op>[\w.]+)")
_WAIT_RE = re.compile(r"\bttg\.async_wait\b.*?\{num = (\d+) : i32\}")
_CONVERT_RE = re.compile(r"tensor<((?:\d+x)+)(\w+), (#[\w.]+)>")
_ASYNC_OPS = ("ttg.async_copy_global_to_local",)
_TMA_OPS = ("ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather")
_SYNC_OPS = ("tt.load", "tt.descriptor_load")
_DOT_OPS = ("tt.dot", "tt.dot_scaled", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled")
_BITS = {"f64": 64, "i64": 64, "f32": 32, "i32": 32, "f16": 16, "bf16": 16, "i16": 16, "i8": 8, "i1": 8}


@dataclass(frozen=True)
class Remark:
    line: int | None                 # Python line in `file` (None: the compiler named no line)
    file: str                        # the file's base name
    kind: str                        # compiler | pipeline | layout | vectorization
    severity: str                    # info | warning (costs time) | remark (the compiler's own)
    message: str
    stage_lines: dict[str, tuple[int, ...]] = field(default_factory=dict)   # where it shows: {"ttgir": (52,), "ptx": (...)}


def _py_lines(lines, to_python: dict[int, int]) -> list[int]:
    return sorted({to_python[n] for n in lines if n in to_python})


def _fmt(lines) -> str:
    lines = list(lines)
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))


@dataclass
class _Loop:
    line: int                        # TTGIR line of the scf.for
    end: int                         # TTGIR line of its closing brace
    ops: list = field(default_factory=list)       # (ttgir line, op name) directly inside (not in an inner loop)
    waits: list = field(default_factory=list)


def _loops(lines: list[str]) -> list[_Loop]:
    """Every scf.for with the ops it holds itself (an inner loop's ops are the inner loop's)."""
    stack: list[tuple[_Loop, int]] = []     # (loop, the brace depth its body opened at)
    found, depth = [], 0
    for n, text in enumerate(lines, 1):
        if text.startswith("#"):
            continue
        m = _DEF_RE.match(text)
        op = m["op"] if m else text.strip().split(" ", 1)[0]
        if stack:
            stack[-1][0].ops.append((n, op))
            if (w := _WAIT_RE.search(text)) is not None:
                stack[-1][0].waits.append(int(w.group(1)))
        opened, closed = text.count("{"), text.count("}")
        if _FOR_RE.search(text) and text.rstrip().endswith("{"):
            loop = _Loop(n, n)
            found.append(loop)
            stack.append((loop, depth + opened - closed))
        depth += opened - closed
        while stack and depth < stack[-1][1]:
            stack[-1][0].end = n
            stack.pop()
    return found


def _defs(ops_by_line: dict, first: int, last: int) -> dict:
    """SSA result name -> its op, for the ops between two TTGIR lines."""
    out = {}
    for n in range(first, last + 1):
        op = ops_by_line.get(n)
        if op is not None:
            for r in op.results:
                out[r.split(":")[0].split("#")[0]] = op
    return out


def _address_from_load(defs: dict, load, limit: int = 400) -> int | None:
    """The TTGIR line of a load in the same loop that `load`'s pointer is computed from."""
    todo, seen = list(load.operands[:1]), set()
    while todo and len(seen) < limit:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        op = defs[name]
        if op.name in _SYNC_OPS + _ASYNC_OPS + ("ttg.local_load",):
            return op.line
        todo.extend(op.operands)
    return None


def _pipeline(lines, module, ttgir_map, rows_by_py, num_stages: int, filename: str) -> list[Remark]:
    out = []
    ops_by_line = {o.line: o for o in module.ops}
    for loop in _loops(lines):
        asyncs = [n for n, op in loop.ops if op in _ASYNC_OPS]
        tmas = [n for n, op in loop.ops if op in _TMA_OPS]
        syncs = [n for n, op in loop.ops if op in _SYNC_OPS]
        if not (asyncs or tmas or syncs):
            continue
        py = ttgir_map.get(loop.line)
        parts = []
        if asyncs or tmas:
            kinds = []
            if asyncs:
                kinds.append(f"{_fmt(_py_lines(asyncs, ttgir_map))} → cp.async copies into shared memory")
            if tmas:
                kinds.append(f"{_fmt(_py_lines(tmas, ttgir_map))} → TMA copies (cp.async.bulk.tensor)")
            many = len(_py_lines(asyncs + tmas, ttgir_map)) > 1
            flight = f"; ttg.async_wait keeps {max(loop.waits)} copy group(s) in flight" if loop.waits else ""
            parts.append(f"loop pipelined (num_stages={num_stages}): the load{'s' if many else ''} on {'; '.join(kinds)}, "
                         f"issued iterations ahead of {'their' if many else 'its'} use{flight}")
        severity = "info"
        defs = _defs(ops_by_line, loop.line, loop.end)
        why: dict[str, list] = {}
        for py_load in sorted({ttgir_map.get(n) for n in syncs}, key=lambda x: (x is None, x or 0)):
            here = [ops_by_line[n] for n in syncs if ttgir_map.get(n) == py_load and n in ops_by_line]
            asked = "tt.num_stages" in lines[loop.end - 1] or "tt.num_stages" in lines[loop.line - 1]
            has_dot = any(op in _DOT_OPS for _, op in loop.ops)
            reason = _why_synchronous(here, defs, num_stages, rows_by_py.get(py_load, []), ttgir_map,
                                      no_dot=not has_dot and not asked)
            why.setdefault(reason, []).append(py_load)
        for reason, at in why.items():
            known = [n for n in at if n is not None]
            where = f"the load{'s' if len(known) > 1 else ''} on {_fmt(known)}" if known else "a load"
            parts.append(f"{where} stay{'' if len(known) > 1 else 's'} synchronous (global → registers, waited for "
                         f"in the same iteration): {reason}")
            severity = "warning"
        stage_lines = {"ttgir": tuple([loop.line] + asyncs + tmas + syncs)}
        out.append(Remark(py, filename, "pipeline", severity, "; ".join(parts), stage_lines))
    return out


def _why_synchronous(loads, defs, num_stages: int, rows, ttgir_map, no_dot: bool = False) -> str:
    if num_stages <= 1:
        return "num_stages=1, so Triton does not pipeline this loop (2 or more stages let it copy ahead)"
    for load in loads:
        src = _address_from_load(defs, load)
        if src is not None:
            at = ttgir_map.get(src)
            return (f"its address comes from the load on line {at} in the same loop (an indirect access): "
                    "the address is known only once that load returns" if at else
                    "its address comes from another load in the same loop (an indirect access)")
    if no_dot:
        return ("this loop has no tl.dot, and Triton copies the loads of such a loop ahead only when the loop asks "
                "for it: `for ... in tl.range(..., num_stages=3)` (a plain range uses num_stages for dot loops only)")
    widths = [r.vector * r.bits // 8 for r in rows if r.space == "global" and r.kind == "load" and not r.role]
    if widths and max(widths) < 4:
        return (f"it moves {max(widths)} byte(s) a thread per access, and a cp.async copies 4, 8 or 16 bytes "
                "(a wider, contiguous access would let it be copied ahead)")
    return "the compiler's pipeliner left it synchronous and printed no reason"


def _layouts(module, ttgir_map, shared_rows_by_py, filename: str) -> list[Remark]:
    out = []
    for op in module.ops_named("ttg.convert_layout"):
        types = _CONVERT_RE.findall(op.text)
        if len(types) < 2:
            continue
        shape = tuple(int(x) for x in types[0][0].rstrip("x").split("x"))
        elem, source, target = types[0][1], types[0][2], types[-1][2]
        size = math.prod(shape) * _BITS.get(elem, 32) // 8
        py = ttgir_map.get(op.line)
        shared = shared_rows_by_py.get(py, []) if py is not None else []
        if shared:
            st, ld = sum(r.kind == "store" for r in shared), sum(r.kind == "load" for r in shared)
            via = (f"through shared memory: the PTX has {st} shared store(s) and {ld} shared load(s) from this "
                   f"line, for a {'×'.join(map(str, shape))} {elem} tensor ({size:,} B a program)")
            severity = "warning"
        else:
            via = "in registers or by warp shuffles: no shared-memory instruction in the PTX comes from this line"
            severity = "info"
        ptx = tuple(sorted(r.ptx_line for r in shared))
        out.append(Remark(py, filename, "layout", severity, f"layout conversion {source} → {target} {via}",
                          {"ttgir": (op.line,), **({"ptx": ptx} if ptx else {})}))
    return out


def _banks(ptx: str, ptx_map: dict[int, int], filename: str) -> list[Remark]:
    """Lines whose shared-memory accesses are predicted to conflict (inspectors.explain.bankconflicts)."""
    out = []
    accesses = bankconflicts.predict(ptx)
    for py, (waves, ideal) in sorted(bankconflicts.by_line(accesses, ptx_map).items()):
        if ideal and waves > ideal * 1.05:
            here = [a for a in accesses if ptx_map.get(a.line) == py]
            worst = max(here, key=lambda a: a.ways)
            out.append(Remark(py, filename, "bank", "warning",
                              f"shared-memory bank conflicts: {waves} wavefronts where {ideal} would do "
                              f"({waves / ideal:.1f}-way on average; the worst, {worst.op}, {worst.ways:.0f}-way), "
                              "predicted from warp 0's addresses; a swizzled or padded layout spreads them over the banks",
                              {"ptx": tuple(a.line for a in here if a.ways > 1)}))
    return out


def _compiler(text: str, filename: str, home: str) -> list[Remark]:
    """The compiler's diagnostics: those in the kernel's own file at their line; another file's
    keep its name (a helper imported from a module beside it)."""
    out: list[Remark] = []
    for d in diag_reader.diagnostics(text):
        if d.severity == "error":
            continue                # an error fails the compile: the error panel shows it
        if d.severity == "note" and d.message == "called from":
            if out and out[-1].kind == "compiler":        # a helper's remark: where the helper was called
                last = out[-1]
                out[-1] = Remark(last.line, last.file, last.kind, last.severity,
                                 f"{last.message} (in a helper called from line {d.line} of {d.basename})")
            continue
        mine = d.basename in (filename, home.rsplit("/", 1)[-1]) if home else d.basename == filename
        out.append(Remark(d.line, filename if mine else d.basename, "compiler", d.severity,
                          d.message[:500]))
    return out


def remarks(stages: dict[str, str], smap, rows, diagnostics_text: str, num_stages: int, filename: str,
            home: str = "") -> tuple[Remark, ...]:
    """Every remark of one compiled kernel, by Python line (remarks without a line last).
    `rows`: the insight's memory operations (MemoryOpRow); `smap`: its source map."""
    ttgir = stages.get("ttgir", "")
    tl = smap.stages.get("ttgir")
    ttgir_map = tl.to_python if tl else {}
    lines = ttgir.splitlines()
    rows_by_py, shared_by_py = {}, {}
    for r in rows:
        if r.python_line is None:
            continue
        rows_by_py.setdefault(r.python_line, []).append(r)
        if r.space == "shared":
            shared_by_py.setdefault(r.python_line, []).append(r)
    found = _compiler(diagnostics_text, filename, home)
    if ttgir:
        module = mlir.parse(ttgir)
        found += _pipeline(lines, module, ttgir_map, rows_by_py, num_stages, filename)
        found += _layouts(module, ttgir_map, shared_by_py, filename)
    pl = smap.stages.get("ptx")
    if pl and stages.get("ptx"):
        found += _banks(stages["ptx"], pl.to_python, filename)
    for py, group in sorted(rows_by_py.items()):
        narrow = [r for r in group if r.why and r.space == "global"]
        if narrow:
            r = narrow[0]
            found.append(Remark(py, filename, "vectorization", "warning",
                                f"{r.kind} of {r.width} a thread per instruction: {r.why}",
                                {"ptx": tuple(sorted({x.ptx_line for x in narrow}))}))
    order = {k: i for i, k in enumerate(KINDS)}
    return tuple(sorted(found, key=lambda r: (r.line is None, r.line or 0, order.get(r.kind, 9))))
