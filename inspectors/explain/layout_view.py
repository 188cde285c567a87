"""Every layout a TTGIR module uses, in words, and which warp, lane and register of a
program own each element of a tensor in it.

TTGIR names its layouts once at the top and uses them in tensor types, e.g.

    #blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
    #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>
    #shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
    %7 = ttg.convert_layout %tile : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    %s = tt.reduce ... : tensor<128xf32, #ttg.slice<{dim = 1, parent = #blocked}>>

Triton lowers every distributed layout to a *linear layout*: a map from (register, lane,
warp, block) to a tensor index that is linear over GF(2) — each input bit flips a fixed
set of index bits, and the index is the XOR of the bases of the bits that are set
(Triton's LinearLayout.h; arXiv:2505.23819). This module builds those bases the way
Triton's LinearLayoutConversions.cpp does (blocked, slice, nvidia_mma v2/v3, amd_mfma
32x32 / 16x16, #ttg.linear) in pure Python, so the Streamlit server never imports Triton;
tests/unit/test_layouts_view.py checks the result against Triton's own `to_linear_layout` and
`LinearLayout.apply` on many layouts and shapes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from inspectors.base import triton_support
from inspectors.read import layouts
from inspectors.read.brackets import matching
from inspectors.read.layouts import (  # noqa: F401 - re-exported: layout_view.parse_layout(...)
    IN_DIMS, AmdMfma, DotOperand, Linear, NvidiaMma, NvmmaShared, Other, SHARED_KINDS, Slice, SwizzledShared, parse_layout)
from inspectors.read import mlir


# a tensor type with its encoding, the encoding possibly inline with nested <...>
# (`(?!\d+x)`: the element type starts where the shape ends, else quadratic in a long shape)
_TENSOR_RE = re.compile(r"tensor<(?P<shape>(?:\d+x)+)(?P<elem>!tt\.ptr<\w+>|(?!\d+x)\w+), (?P<enc>#[\w.]+(?:<)?)")
_MEMDESC_RE = re.compile(r"!ttg\.memdesc<(?P<shape>(?:\d+x)+)(?P<elem>(?!\d+x)\w+), (?P<enc>#[\w.]+)")


# ------------------------------------------------------------------------------------ linear layouts

@dataclass(frozen=True)
class LinearLayout:
    """Bases per input dimension; each basis a tuple with one entry per tensor dimension."""
    bases: dict                      # in-dim -> tuple of tuples
    shape: tuple[int, ...]

    def size(self, in_dim: str) -> int:
        return 1 << len(self.bases.get(in_dim, ()))

    def apply(self, register: int = 0, lane: int = 0, warp: int = 0, block: int = 0) -> tuple[int, ...]:
        out = [0] * len(self.shape)
        for dim, value in zip(IN_DIMS, (register, lane, warp, block)):
            for bit, basis in enumerate(self.bases.get(dim, ())):
                if value >> bit & 1:
                    out = [a ^ b for a, b in zip(out, basis)]
        return tuple(out)

    def owners(self) -> dict[tuple[int, ...], list[tuple[int, int, int]]]:
        """tensor index -> every (warp, lane, register) holding it (several when broadcast)."""
        out: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
        for warp in range(self.size("warp")):
            for lane in range(self.size("lane")):
                for reg in range(self.size("register")):
                    out.setdefault(self.apply(reg, lane, warp), []).append((warp, lane, reg))
        return out

    def thread_elements(self, warp: int, lane: int) -> list[tuple[int, ...]]:
        """The elements of one thread, in register order."""
        return [self.apply(r, lane, warp) for r in range(self.size("register"))]

    @property
    def warp_size(self) -> int:
        return self.size("lane")

    @property
    def num_warps(self) -> int:
        return self.size("warp")


class _LL:
    """Triton's LinearLayout algebra, enough to build the conversions: bases as
    {in_dim: [{out_dim: value}]}, out-dims with sizes, both in insertion order."""

    def __init__(self, bases: dict, outs: dict):
        self.bases = {k: [dict(b) for b in v] for k, v in bases.items()}
        self.outs = dict(outs)

    @staticmethod
    def identity1d(size: int, in_dim: str, out_dim: str) -> "_LL":
        return _LL({in_dim: [{out_dim: 1 << i} for i in range(int(math.log2(size)))]}, {out_dim: size})

    @staticmethod
    def zeros1d(size: int, in_dim: str, out_dim: str) -> "_LL":
        return _LL({in_dim: [{} for _ in range(int(math.log2(size)))]}, {out_dim: 1})

    @staticmethod
    def empty() -> "_LL":
        return _LL({}, {})

    def __mul__(self, other: "_LL") -> "_LL":
        """Triton's operator*: in-dims and out-dims united; `other`'s bases come after ours on
        a shared in-dim, and its values are scaled by our size on a shared out-dim."""
        outs = dict(self.outs)
        for d, s in other.outs.items():
            outs[d] = outs.get(d, 1) * s
        bases = {k: [dict(b) for b in v] for k, v in self.bases.items()}
        for k, vecs in other.bases.items():
            scaled = [{d: val * self.outs.get(d, 1) for d, val in b.items()} for b in vecs]
            bases.setdefault(k, []).extend(scaled)
        return _LL(bases, outs)

    def out_order(self, order: list[str]) -> "_LL":
        return _LL(self.bases, {d: self.outs[d] for d in order})

    def not_smaller(self, shape: dict) -> "_LL":
        """ensureLayoutNotSmallerThan: repeat over registers where the tensor is larger."""
        ret = self
        for d in list(self.outs):
            if self.outs[d] < shape[d]:
                ret = ret * _LL.identity1d(shape[d] // self.outs[d], "register", d)
        return ret

    def not_larger(self, shape: dict, keep_registers: bool = False) -> "_LL":
        """ensureLayoutNotLargerThan: where the tile is larger than the tensor, zero the
        largest lane/warp bases (those threads then hold copies: broadcast) and drop the
        largest register bases (Triton 3.9: no register holds a copy), or, with
        `keep_registers` (Triton 3.6-3.8, `triton_support.blocked_keeps_small_registers`), zero
        them too (those registers hold copies)."""
        bases = {k: [dict(b) for b in v] for k, v in self.bases.items()}
        outs = dict(self.outs)
        dropped: set[int] = set()
        for d in list(outs):
            actual, desired = outs[d], shape[d]
            if actual <= desired:
                continue
            found = [(b[d], k, i) for k, vecs in bases.items() for i, b in enumerate(vecs) if b.get(d, 0)]
            for _value, k, i in sorted(found, key=lambda t: -t[0]):
                if actual <= desired:
                    break
                if k == "register" and not keep_registers:
                    dropped.add(i)
                else:
                    bases[k][i][d] = 0
                actual >>= 1
            outs[d] = desired
        if dropped:
            bases["register"] = [b for i, b in enumerate(bases["register"]) if i not in dropped]
        return _LL(bases, outs)

    def freeze(self, rank: int) -> LinearLayout:
        names = [f"dim{i}" for i in range(rank)]
        bases = {k: tuple(tuple(b.get(n, 0) for n in names) for b in self.bases.get(k, ())) for k in IN_DIMS}
        return LinearLayout(bases, tuple(self.outs.get(n, 1) for n in names))


def _identity_nd(in_dim: str, sizes, order) -> _LL:
    ll = _LL.empty()
    for d in order:
        ll = ll * _LL.identity1d(sizes[d], in_dim, f"dim{d}")
    return ll


def _fit(cta: _LL, shape: tuple[int, ...], keep_registers: bool = False) -> LinearLayout:
    """combineCtaCgaWithShape for one CTA: repeat or broadcast to the tensor's shape."""
    want = {f"dim{i}": s for i, s in enumerate(shape)}
    for d in want:
        cta.outs.setdefault(d, 1)
    return cta.not_smaller(want).not_larger(want, keep_registers).freeze(len(shape))


def _blocked(b: layouts.Blocked, shape, triton_version: str | None = None) -> LinearLayout:
    cta = (_identity_nd("register", b.size_per_thread, b.order) * _identity_nd("lane", b.threads_per_warp, b.order)
           * _identity_nd("warp", b.warps_per_cta, b.order))
    return _fit(cta, shape, triton_support.blocked_keeps_small_registers(triton_version))


def _nvidia_mma(m: NvidiaMma, shape) -> LinearLayout:
    """NvidiaMmaEncodingAttr::toLinearLayout: per 16×8 (Ampere) or 16×N (Hopper) tile,
    2 registers along N, 4 lanes along N, 8 lanes along M, then M/8 and N/8 registers; warps
    row-major on Ampere, column-major on Hopper."""
    rank = len(shape)
    if rank != 2 or m.version_major not in (2, 3):
        raise ValueError(f"MMA v{m.version_major} of rank {rank} is not drawn")
    tile_m, tile_n = m.instr_shape[0], m.instr_shape[1]
    k_width = 2
    cta = (_identity_nd("register", [1, 1], [1, 0]) * _LL.identity1d(k_width, "register", "dim1")
           * _LL.identity1d(4, "lane", "dim1") * _LL.identity1d(8, "lane", "dim0")
           * _LL.identity1d(tile_m // 8, "register", "dim0")
           * _LL.identity1d(tile_n // (k_width * 4), "register", "dim1"))
    warp_order = [1, 0] if m.version_major == 2 else [0, 1]
    cta = cta * _identity_nd("warp", m.warps_per_cta, warp_order).out_order(list(cta.outs))
    return _fit(cta, shape)


def _amd_mfma(m: AmdMfma, shape) -> LinearLayout:
    """AMDMfmaEncodingAttr::toLinearLayout for 32×32 and 16×16 instructions, rank 2, one
    tile per warp: registers run along M in groups of 4 rows, 32 (16) lanes along N."""
    if len(shape) != 2 or tuple(m.instr_shape[:2]) not in ((32, 32), (16, 16)) or \
            any(t != 1 for t in m.tiles_per_warp):
        raise ValueError(f"MFMA {m.instr_shape} is not drawn")
    n_dim, m_dim = "dim1", "dim0"
    if m.instr_shape[0] == 32:
        reg = [{m_dim: 1}, {m_dim: 2}, {m_dim: 8}, {m_dim: 16}]
        lane = [{n_dim: 1}, {n_dim: 2}, {n_dim: 4}, {n_dim: 8}, {n_dim: 16}, {m_dim: 4}]
        size = 32
    else:
        reg = [{m_dim: 1}, {m_dim: 2}]
        lane = [{n_dim: 1}, {n_dim: 2}, {n_dim: 4}, {n_dim: 8}, {m_dim: 4}, {m_dim: 8}]
        size = 16
    if m.is_transposed:
        swap = {m_dim: n_dim, n_dim: m_dim}
        reg = [{swap[k]: v for k, v in b.items()} for b in reg]
        lane = [{swap[k]: v for k, v in b.items()} for b in lane]
    tile = _LL({"register": reg, "lane": lane}, {n_dim: size, m_dim: size})
    warps = _identity_nd("warp", m.warps_per_cta, [1, 0])
    cta = tile * warps.out_order([d for d in tile.outs])
    return _fit(cta, shape)


def _slice(s: Slice, shape, triton_version: str | None = None) -> LinearLayout:
    """SliceEncodingAttr::toLinearLayout: the parent on the shape with a 1 inserted at `dim`,
    that coordinate dropped, registers that became all-zero removed."""
    parent_shape = list(shape)
    parent_shape.insert(s.dim, 1)
    parent = to_linear(s.parent, tuple(parent_shape), triton_version)
    bases = {}
    for k, vecs in parent.bases.items():
        kept = [tuple(v for i, v in enumerate(b) if i != s.dim) for b in vecs]
        bases[k] = tuple(b for b in kept if any(b)) if k == "register" else tuple(kept)
    return LinearLayout(bases, tuple(shape))


def to_linear(layout, shape: tuple[int, ...], triton_version: str | None = None) -> LinearLayout:
    """The linear layout of `layout` for a tensor of `shape`, as the installed Triton (or
    `triton_version`) builds it; ValueError if not modelled."""
    shape = tuple(shape)
    if isinstance(layout, layouts.Blocked):
        return _blocked(layout, shape, triton_version)
    if isinstance(layout, NvidiaMma):
        return _nvidia_mma(layout, shape)
    if isinstance(layout, AmdMfma):
        return _amd_mfma(layout, shape)
    if isinstance(layout, Slice):
        return _slice(layout, shape, triton_version)
    if isinstance(layout, Linear):
        return LinearLayout({k: tuple(tuple(b) for b in layout.bases.get(k, ())) for k in IN_DIMS}, shape)
    raise ValueError(f"{type(layout).__name__} layouts are not drawn: {layout.describe()}")


# ------------------------------------------------------------------------------------ the module's layouts

@dataclass(frozen=True)
class LayoutUse:
    """One layout of a TTGIR module and the tensors that carry it."""
    name: str                               # "#blocked1" or the inline text
    text: str                               # "#ttg.blocked<{...}>"
    layout: object
    shapes: tuple[tuple[int, ...], ...]     # every tensor shape seen with it, most used first
    elements: tuple[str, ...]               # element types seen ("f32", "!tt.ptr<f32>")
    lines: tuple[int, ...]                  # TTGIR lines that use it
    ops: tuple[str, ...] = ()               # the ops that produce or consume it (tt.load, ttg.convert_layout)

    @property
    def shared(self) -> bool:
        return isinstance(self.layout, SHARED_KINDS)

    @property
    def drawable(self) -> bool:
        return isinstance(self.layout, (layouts.Blocked, NvidiaMma, AmdMfma, Slice, Linear))


@dataclass(frozen=True)
class Conversion:
    """A `ttg.convert_layout` and whether its lowering goes through shared memory."""
    line: int
    source: str
    target: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class ModuleLayouts:
    uses: tuple[LayoutUse, ...]
    conversions: tuple[Conversion, ...] = ()
    shared_allocs: tuple[tuple[int, str], ...] = ()    # (line, layout name) of ttg.local_alloc
    num_warps: int | None = None
    warp_size: int = 32


def module_layouts(ttgir: str) -> ModuleLayouts:
    """Every layout the module uses, with its tensors, in order of first use."""
    module = mlir.parse(ttgir)
    found: dict[str, dict] = {}

    def note(enc: str, shape: tuple[int, ...], elem: str, line: int, op: str):
        entry = found.setdefault(enc, {"shapes": {}, "elems": [], "lines": [], "ops": []})
        entry["shapes"][shape] = entry["shapes"].get(shape, 0) + 1
        if elem not in entry["elems"]:
            entry["elems"].append(elem)
        if line not in entry["lines"]:
            entry["lines"].append(line)
        if op and op not in entry["ops"]:
            entry["ops"].append(op)

    lines = ttgir.splitlines()
    ops_by_line = {o.line: o.name for o in module.ops}
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        for m in _TENSOR_RE.finditer(line):
            enc = _encoding_at(line, m.start("enc"))
            shape = tuple(int(x) for x in m["shape"].rstrip("x").split("x"))
            note(enc, shape, m["elem"], n, ops_by_line.get(n, ""))
        for m in _MEMDESC_RE.finditer(line):
            shape = tuple(int(x) for x in m["shape"].rstrip("x").split("x"))
            note(m["enc"], shape[-2:] if len(shape) > 2 else shape, m["elem"], n, ops_by_line.get(n, ""))
    uses = []
    for enc, entry in found.items():
        text = module.aliases.get(enc, enc)
        shapes = tuple(sorted(entry["shapes"], key=lambda s: (-entry["shapes"][s], -math.prod(s))))
        uses.append(LayoutUse(enc, text, parse_layout(enc, module.aliases), shapes, tuple(entry["elems"]),
                              tuple(entry["lines"]), tuple(entry["ops"])))
    conversions = []
    for o in module.ops_named("ttg.convert_layout"):
        types = re.findall(r"tensor<((?:\d+x)+)(?!\d+x)\w+, (#[\w.]+)", o.text)
        if len(types) >= 2:
            shape = tuple(int(x) for x in types[0][0].rstrip("x").split("x"))
            conversions.append(Conversion(o.line, types[0][1], types[-1][1], shape))
    allocs = []
    for o in module.ops_named("ttg.local_alloc"):
        m = _MEMDESC_RE.search(o.text)
        if m:
            allocs.append((o.line, m["enc"]))
    warps = re.search(r'"ttg\.num-warps" = (\d+)', ttgir)
    threads = re.search(r'"ttg\.threads-per-warp" = (\d+)', ttgir)
    return ModuleLayouts(tuple(uses), tuple(conversions), tuple(allocs),
                         int(warps.group(1)) if warps else None, int(threads.group(1)) if threads else 32)


def _encoding_at(line: str, start: int) -> str:
    """The encoding starting at `start`: an alias (`#blocked`) or inline text with nested <...>."""
    m = re.match(r"#[\w.]+", line[start:])
    end = start + m.end()
    if end < len(line) and line[end] == "<":
        close = matching(line, end, "<", ">", quotes="")
        if close >= 0:
            return line[start:close + 1]
    return line[start:end]


# ------------------------------------------------------------------------------------ summaries in words

@dataclass(frozen=True)
class Ownership:
    """Who holds what, for one layout and shape."""
    layout: LinearLayout
    owners: dict = field(repr=False)       # index -> [(warp, lane, register)]

    @property
    def registers(self) -> int:
        return self.layout.size("register")

    @property
    def replication(self) -> int:
        """How many threads hold each element (1: every element once)."""
        return max(len(v) for v in self.owners.values()) if self.owners else 0


def ownership(layout, shape: tuple[int, ...], triton_version: str | None = None) -> Ownership:
    ll = to_linear(layout, shape, triton_version)
    return Ownership(ll, ll.owners())


def words(layout, shape: tuple[int, ...], elem_bits: int = 32, triton_version: str | None = None) -> list[str]:
    """A few sentences about `layout` on a tensor of `shape` (as the installed Triton, or
    `triton_version`, lays it out)."""
    out = [layout.describe()]
    try:
        own = ownership(layout, shape, triton_version)
    except ValueError:
        return out
    ll = own.layout
    threads = ll.size("lane") * ll.size("warp")
    total = math.prod(shape)
    out.append(f"A {'×'.join(map(str, shape))} tensor: {ll.num_warps} warp{'s' if ll.num_warps != 1 else ''} × "
               f"{ll.warp_size} lanes = {threads} threads, {own.registers} register{'s' if own.registers != 1 else ''} "
               f"each ({threads * own.registers} slots for {total} elements).")
    if own.replication > 1:
        out.append(f"Every element is held by {own.replication} threads: the tensor is smaller than the "
                   f"layout's tile (or a sliced dimension), so the extra threads hold copies.")
    reg_bases = ll.bases.get("register", ())
    if isinstance(layout, layouts.Blocked) and any(not any(b) for b in reg_bases):
        version = triton_version or triton_support.installed() or "3.9"
        out.append(f"Some registers hold copies: the tensor is smaller than sizePerThread, and Triton "
                   f"{version} keeps the extra registers (3.6–3.8 do; 3.9 drops them, leaving fewer "
                   f"registers per thread).")
    contiguous = 1
    fast = len(shape) - 1
    for b in reg_bases:
        if b == tuple(contiguous if i == fast else 0 for i in range(len(shape))):
            contiguous *= 2
        else:
            break
    if contiguous > 1:
        out.append(f"Registers 0–{contiguous - 1} of a thread are {contiguous} neighbours along the last "
                   f"dimension: up to {min(contiguous * elem_bits, 128) // 8} bytes in one vector access.")
    first = ll.thread_elements(0, 1)
    out.append(f"Lane 1 of warp 0 holds {_cells(first)}.")
    return out


def _cells(cells: list[tuple[int, ...]], limit: int = 8) -> str:
    shown = ", ".join("(" + ", ".join(map(str, c)) + ")" if len(c) > 1 else str(c[0]) for c in cells[:limit])
    return f"{shown}{' …' if len(cells) > limit else ''}"


def thread_elements_blocked(layout: layouts.Blocked, shape: tuple[int, ...], thread: int) -> list[tuple[int, ...]]:
    """Convenience for comparisons with inspectors.explain.threadmap: elements of flat thread id `thread`."""
    ll = to_linear(layout, shape)
    return ll.thread_elements(thread // ll.warp_size, thread % ll.warp_size)
