"""How program ids and thread ids become element indices, two ways:

* from the PTX: the address of each global access, rebuilt from the instructions that
  compute it, back to `%ctaid`/`%tid` and the kernel parameters, e.g. for vector add

      mov.u32 %r25, %ctaid.x;  shl.b32 %r26, %r25, 10;  mov.u32 %r28, %tid.x;
      shl.b32 %r29, %r28, 2;   and.b32 %r30, %r29, 508; or.b32 %r31, %r30, %r26;
      mul.wide.s32 %rd10, %r31, 4;  add.s64 %rd1, %rd7, %rd10;   ... ld.global.v4.b32 [ %rd1 + 0 ]

  gives `x_ptr + 4·(4·(tid.x mod 128) + 1024·ctaid.x)`;
* from the TTGIR layout of the accessed tensor: which elements thread t of warp w owns.
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass

from inspectors.read import layouts
from inspectors.read import mlir
from inspectors.explain.vectorization import ACCESS_OPS
from inspectors.read.memops import ptx_memops

# `	shl.b32 	%r26, %r25, 10;`  `	@%p1 ld.global.v4.b32 { %r1, ... }, [ %rd1 + 0 ];`
_INSN_RE = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?P<op>[a-z][\w.:]*)(?=(?P<ws>\s+))(?P=ws)(?P<args>[^;]*);")   # (blanks at once: else quadratic)
_PARAM_RE = re.compile(r"\[(?P<kernel>\w+)_param_(?P<index>\d+)\]")
_ADDR_RE = re.compile(r"\[\s*(?P<reg>%\w+)\s*(?:\+\s*(?P<off>-?\d+))?\s*\]")


# ---- expressions: ("sym", name) ("const", v) ("add", (terms)) ("mul", c, term) ("mod", term, n) ("raw", text)

def _const(v):
    return ("const", v)


def _add(a, b):
    terms = []
    for t in (a, b):
        terms.extend(t[1] if t[0] == "add" else (t,))
    consts = sum(t[1] for t in terms if t[0] == "const")
    terms = [t for t in terms if t[0] != "const"] + ([_const(consts)] if consts else [])
    return terms[0] if len(terms) == 1 else ("add", tuple(terms)) if terms else _const(0)


def _mul(a, b):
    if a[0] == "const" and b[0] == "const":
        return _const(a[1] * b[1])
    if b[0] == "const":
        a, b = b, a
    if a[0] == "const":
        if a[1] == 1:
            return b
        if b[0] == "mul":
            return ("mul", a[1] * b[1], b[2])
        return ("mul", a[1], b)
    return ("mul2", a, b)


def _and(a, mask):
    """(c·x) & (c·(2^n − 1)) is c·(x mod 2^n): how Triton's PTX keeps a thread id in range."""
    if mask[0] == "const" and a[0] == "mul" and a[1] > 0 and mask[1] % a[1] == 0:
        n = mask[1] // a[1] + 1
        if n & (n - 1) == 0:
            return ("mul", a[1], ("mod", a[2], n))
    if mask[0] == "const" and a[0] == "sym":
        n = mask[1] + 1
        if n & (n - 1) == 0:
            return ("mod", a, n)
    return ("raw", f"({fmt(a)} & {fmt(mask)})")


def fmt(e) -> str:
    kind = e[0]
    if kind == "sym":
        return e[1]
    if kind == "const":
        return str(e[1])
    if kind == "add":
        return " + ".join(fmt(t) for t in e[1])
    if kind == "mul":
        inner = fmt(e[2])
        return f"{e[1]}·({inner})" if e[2][0] == "add" else f"{e[1]}·{inner}"
    if kind == "mul2":
        return f"{_paren(e[1])}·{_paren(e[2])}"
    if kind == "mod":
        return f"({fmt(e[1])} mod {e[2]})"
    return e[1]


def _paren(e) -> str:
    return f"({fmt(e)})" if e[0] == "add" else fmt(e)


_MAX_TERMS = 64


def _size(e) -> int:
    """Nodes of an expression, counted up to a little past _MAX_TERMS."""
    n, stack = 0, [e]
    while stack and n <= _MAX_TERMS:
        x = stack.pop()
        n += 1
        if x[0] == "add":
            stack.extend(x[1])
        elif x[0] in ("mul", "mod"):
            stack.append(x[2] if x[0] == "mul" else x[1])
        elif x[0] == "mul2":
            stack.extend(x[1:])
        elif x[0] == "raw":
            n += len(x[1]) // 16
    return n


class _Ptx:
    def __init__(self, ptx: str, params: list[str]):
        self.lines = ptx.splitlines()
        self.params = params
        self.defs: dict[str, list[tuple[int, str, list[str]]]] = {}
        for n, line in enumerate(self.lines, 1):
            m = _INSN_RE.match(line)
            if not m or m["op"].startswith(("st.", "setp", "bra", "ret", "@")):
                continue
            args = [a.strip() for a in m["args"].split(",")]
            if args and args[0].startswith("%"):
                self.defs.setdefault(args[0], []).append((n, m["op"], args[1:]))

    def expr(self, token: str, before: int, depth: int = 0):
        """Memoized (an `add %r1, %r1, %r1` chain reads each definition twice: exponential
        without), and an expression that grows past `_MAX_TERMS` terms is left a symbol."""
        key = (token, before, depth)
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            e = self._expr(token, before, depth)
            memo[key] = ("sym", token.strip()) if _size(e) > _MAX_TERMS else e
        return memo[key]

    def _expr(self, token: str, before: int, depth: int = 0):
        token = token.strip()
        if re.fullmatch(r"-?\d+", token):
            return _const(int(token))
        if re.fullmatch(r"0x[0-9a-fA-F]+", token):
            return _const(int(token, 16))
        if token.startswith("%") and token[1:].split(".")[0] in ("tid", "ctaid", "ntid", "nctaid"):
            return ("sym", token[1:])
        if depth > 24 or not token.startswith("%"):
            return ("sym", token)
        defs = self.defs.get(token, ())
        k = bisect.bisect_left(defs, (before,))          # (a list per use was quadratic in the PTX)
        if not k:
            return ("sym", token)
        line, op, args = defs[k - 1]
        base = op.split(".")[0]
        e = lambda a: self.expr(a, line, depth + 1)  # noqa: E731
        if base == "ld" and ".param" in op:
            m = _PARAM_RE.search(args[0]) if args else None
            if m:
                i = int(m["index"])
                return ("sym", self.params[i] if i < len(self.params) else f"param{i}")
        if base in ("mov", "cvt", "cvta") and args:
            return e(args[0])
        if base == "shl" and len(args) == 2 and e(args[1])[0] == "const":
            return _mul(e(args[0]), _const(2 ** e(args[1])[1]))
        if base == "mul" and len(args) == 2:
            return _mul(e(args[0]), e(args[1]))
        if base == "mad" and len(args) == 3:
            return _add(_mul(e(args[0]), e(args[1])), e(args[2]))
        if base in ("add", "or") and len(args) == 2:
            return _add(e(args[0]), e(args[1]))
        if base == "and" and len(args) == 2:
            return _and(e(args[0]), e(args[1]))
        return ("sym", token)


@dataclass(frozen=True)
class AddressExpr:
    line: int          # PTX line of the access
    expr: str          # e.g. "x_ptr + 4·(4·(tid.x mod 128) + 1024·ctaid.x)"
    uses_ctaid: bool
    uses_tid: bool


def ptx_addresses(ptx: str, params: list[str], max_len: int = 200) -> dict[int, AddressExpr]:
    """For each global access in the PTX: its address as an expression of ctaid/tid and
    the kernel's parameters (`params`: names of the non-constexpr arguments in order)."""
    reader = _Ptx(ptx, params)
    out = {}
    for op in ptx_memops(ptx):
        if op.space != "global":
            continue
        brackets = list(_ADDR_RE.finditer(op.text))
        if not brackets:
            continue
        m = brackets[1] if op.text.lstrip("@%p0123456789! ").startswith("cp.async") and len(brackets) > 1 \
            else brackets[0]
        e = reader.expr(m["reg"], op.line)
        if m["off"] and int(m["off"]):
            e = _add(e, _const(int(m["off"])))
        if e[0] == "add":     # base pointer first: x_ptr + 4·(...)
            e = ("add", tuple(sorted(e[1], key=lambda t: not (t[0] == "sym" and t[1] in params))))
        text = fmt(e)
        if len(text) > max_len:
            text = text[:max_len] + "…"
        out[op.line] = AddressExpr(op.line, text, "ctaid" in text, "tid" in text)
    return out


# ---- the layout side -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TensorMapping:
    ttgir_line: int
    shape: tuple[int, ...]
    layout: layouts.Blocked
    program_stride: int | None     # C in `pid * C + tl.arange(...)`, when that pattern is there
    formula: str                   # element index as a function of ctaid.x and tid.x
    per_thread: int                # elements each thread holds
    threads: int

    def owned(self, thread: int) -> list[tuple[int, ...]]:
        """Indices (within the program's tile) that `thread` owns, in register order."""
        return owned_elements(self.layout, self.shape, thread)


def owned_elements(layout: layouts.Blocked, shape: tuple[int, ...], thread: int) -> list[tuple[int, ...]]:
    """Blocked layout semantics: lane and warp ids split over dims in `order` (fastest
    first); each thread holds sizePerThread contiguous elements, repeated every tile."""
    nd = len(shape)
    warp_size = math.prod(layout.threads_per_warp)
    lane, warp = thread % warp_size, thread // warp_size
    lane_id, warp_id = [0] * nd, [0] * nd
    for d in layout.order:
        lane_id[d] = lane % layout.threads_per_warp[d]
        lane //= layout.threads_per_warp[d]
        warp_id[d] = warp % layout.warps_per_cta[d]
        warp //= layout.warps_per_cta[d]
    per_dim = []
    for d in range(nd):
        spt, tile = layout.size_per_thread[d], layout.tile()[d]
        base = spt * (lane_id[d] + layout.threads_per_warp[d] * warp_id[d])
        idx = []
        for rep in range(0, max(shape[d], tile), tile):
            idx.extend(base + rep + j for j in range(spt))
        per_dim.append([i % shape[d] for i in idx] if shape[d] < tile else [i for i in idx if i < shape[d]])
    out: list[tuple[int, ...]] = [()]
    for d in reversed(layout.order) if nd > 1 else range(nd):
        out = [o + (i,) for o in out for i in per_dim[d]] if nd == 1 else out
    if nd == 1:
        return [(i,) for i in per_dim[0]]
    slow, fast = layout.order[-1], layout.order[0]
    cells = []
    for a in per_dim[slow]:
        for b in per_dim[fast]:
            cell = [0] * nd
            cell[slow], cell[fast] = a, b
            cells.append(tuple(cell))
    return cells


def tensor_mappings(ttgir: str) -> list[TensorMapping]:
    """One mapping per global load/store whose tensor has a blocked layout."""
    module = mlir.parse(ttgir)
    stride = _program_stride(module)
    out = []
    for op in module.ops:
        if op.name not in ACCESS_OPS:
            continue
        tensor = layouts.parse_tensor_type(op.type)
        if not tensor or not tensor.layout:
            continue
        layout = layouts.parse_blocked(module.aliases.get(tensor.layout, ""))
        if layout is None:
            continue
        threads = math.prod(layout.threads_per_warp) * math.prod(layout.warps_per_cta)
        out.append(TensorMapping(op.line, tensor.shape, layout, stride if len(tensor.shape) == 1 else None,
                                 _formula(layout, tensor.shape, stride if len(tensor.shape) == 1 else None, threads),
                                 layout.elements_per_thread(tensor.shape), threads))
    return out


def _program_stride(module: mlir.Module) -> int | None:
    """C in `%pid = tt.get_program_id x; arith.muli %pid, %c1024` (the usual pid * BLOCK)."""
    pid = next((o.results[0] for o in module.ops if o.name == "tt.get_program_id" and " x " in o.text + " "
                and o.results), None)
    if pid is None:
        return None
    for o in module.ops:
        if o.name == "arith.muli" and pid in o.operands:
            other = next((x for x in o.operands if x != pid), None)
            d = module.defs.get(other)
            if d and d.name == "arith.constant":
                m = re.search(r"constant (\d+)", d.text)
                if m:
                    return int(m.group(1))
    return None


def _formula(layout: layouts.Blocked, shape: tuple[int, ...], stride: int | None, threads: int) -> str:
    if len(shape) == 1:
        s, tile = layout.size_per_thread[0], layout.tile()[0]
        lanes = f"{s}·tid.x" if s > 1 else "tid.x"
        if shape[0] < tile:
            lanes = f"({lanes} mod {shape[0]})"
        group = "{" + ",".join(str(j) for j in range(s)) + "}" if s > 1 else ""
        reps = [k * tile for k in range(1, math.ceil(shape[0] / tile))]
        text = (f"{stride}·ctaid.x + " if stride else "") + lanes + (f" + {group}" if group else "")
        if reps:
            text += " and " + ", ".join(f"+{r}" for r in reps[:4]) + (" …" if len(reps) > 4 else "")
        return f"element = {text}   (tid.x < {threads})"
    fast, slow = layout.order[0], layout.order[-1]
    return (f"{layout.describe()}; tile {layout.tile()[slow]}×{layout.tile()[fast]} over a "
            f"{shape[slow]}×{shape[fast]} tensor (dim {fast} fastest)")


def thread_examples(mapping: TensorMapping, threads=(0, 1, 32, None)) -> list[str]:
    """Plain sentences for a few threads, e.g. `thread 1 of warp 0 (tid.x = 1) owns
    elements 4–7 and 516–519 of its program's block`."""
    out = []
    warp_size = math.prod(mapping.layout.threads_per_warp)
    for t in threads:
        t = mapping.threads - 1 if t is None else t
        if t >= mapping.threads:
            continue
        cells = mapping.owned(t)
        out.append(f"thread {t % warp_size} of warp {t // warp_size} (tid.x = {t}) owns "
                   f"{_ranges(cells)}")
    return out


def _ranges(cells: list[tuple[int, ...]]) -> str:
    if cells and len(cells[0]) == 1:
        flat = [c[0] for c in cells]
        runs, start = [], flat[0]
        for a, b in zip(flat, flat[1:] + [None]):
            if b != a + 1:
                runs.append(f"{start}–{a}" if a != start else f"{a}")
                start = b
        return "elements " + ", ".join(runs[:6]) + (" …" if len(runs) > 6 else "")
    shown = ", ".join(f"({r},{c})" for r, c in cells[:8])
    return f"{len(cells)} elements: {shown}" + (" …" if len(cells) > 8 else "")
