"""Triton GPU layouts as TTGIR prints them: blocked (below) and every other kind
(`parse_layout`: nvidia_mma, amd_mfma, slice, dot_op, linear, the shared layouts), e.g.

    #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

Semantics (TritonGPUAttrDefs.td, BlockedEncodingAttr): per dimension one tile is
sizePerThread × threadsPerWarp × warpsPerCTA elements; `order` lists dimensions fastest
first; a tensor larger than the tile wraps, giving each thread more registers."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from inspectors.read.brackets import top_end

_BLOCKED_RE = re.compile(r"#ttg\.blocked<\{(?P<body>[^}]*)\}>")
_FIELD_RE = re.compile(r"(\w+) = \[([\d, ]*)\]")
# tensor<1024x!tt.ptr<f32>, #blocked>   tensor<64x64xf16, #blocked1>
# (`(?!\d+x)`: the element type starts where the shape ends; `\w+` also matching `1x1x...` made a
# long shape quadratic)
_TENSOR_RE = re.compile(r"tensor<(?P<shape>(?:\d+x)+)(?P<elem>!tt\.ptr<\w+>|(?!\d+x)\w+)(?:, (?P<layout>#[\w.]+))?>")


@dataclass(frozen=True)
class Blocked:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    def tile(self) -> tuple[int, ...]:
        return tuple(s * t * w for s, t, w in zip(self.size_per_thread, self.threads_per_warp, self.warps_per_cta))

    def elements_per_thread(self, shape: tuple[int, ...]) -> int:
        """Registers each thread holds for a tensor of `shape` (wrap-around included)."""
        per = 1
        for dim, size in enumerate(shape):
            reps = max(1, math.ceil(size / self.tile()[dim]))
            per *= self.size_per_thread[dim] * reps if size >= self.size_per_thread[dim] else size
        return per

    def contiguous_per_thread(self) -> int:
        """Elements a thread owns next to each other along the fastest dimension."""
        return self.size_per_thread[self.order[0]]

    def describe(self) -> str:
        return (f"blocked: {list(self.size_per_thread)} elements per thread × {list(self.threads_per_warp)} threads "
                f"per warp × {list(self.warps_per_cta)} warps, fastest dim {self.order[0]}")


def parse_blocked(text: str) -> Blocked | None:
    m = _BLOCKED_RE.search(text)
    if not m:
        return None
    fields = {k: tuple(int(x) for x in v.split(",") if x.strip()) for k, v in _FIELD_RE.findall(m["body"])}
    try:
        return Blocked(fields["sizePerThread"], fields["threadsPerWarp"], fields["warpsPerCTA"], fields["order"])
    except KeyError:
        return None


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    elem: str            # "f32", "!tt.ptr<f32>"
    layout: str | None   # "#blocked"

    @property
    def pointee(self) -> str:
        m = re.match(r"!tt\.ptr<(\w+)>", self.elem)
        return m.group(1) if m else self.elem


def parse_tensor_type(text: str) -> TensorType | None:
    m = _TENSOR_RE.search(text)
    if not m:
        return None
    shape = tuple(int(x) for x in m["shape"].rstrip("x").split("x"))
    return TensorType(shape, m["elem"], m["layout"])


ELEMENT_BITS = {"i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
                "f8E4M3FN": 8, "f8E5M2": 8}


# The inputs of a linear layout, in Triton's order
IN_DIMS = ("register", "lane", "warp", "block")
# `#ttg.blocked<{...}>`, `#ttg.nvidia_mma<{...}>`, ...: the kind and its body
_ATTR_RE = re.compile(r"#ttg\.(?P<kind>\w+)<\{(?P<body>.*)\}>$")
# `warpsPerCTA = [2, 4]`, `versionMajor = 2`, `transposed = false`, `parent = #blocked`
_LIST_FIELD_RE = re.compile(r"(\w+) = \[([-\d, ]*)\]")
_SCALAR_FIELD_RE = re.compile(r"(\w+) = (true|false|-?\d+|#[\w.]+)")
# `register = [[0, 1], [0, 2]]` inside #ttg.linear
_BASES_FIELD_RE = re.compile(r"(register|lane|warp|block) = \[((?:\[[-\d, ]*\](?:, )?)*)\]")


@dataclass(frozen=True)
class NvidiaMma:
    version_major: int
    version_minor: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]

    def describe(self) -> str:
        what = {2: "mma.sync (Ampere tensor cores)", 3: "wgmma (Hopper warp-group MMA)",
                5: "tcgen05 (Blackwell)"}.get(self.version_major, f"MMA v{self.version_major}")
        return (f"NVIDIA MMA accumulator, version {self.version_major}.{self.version_minor}: {what}; "
                f"instruction tile {'×'.join(map(str, self.instr_shape))}; warps {list(self.warps_per_cta)} "
                f"over (rows, cols). Each lane holds pairs of neighbouring columns: lanes 0–3 share a row, "
                f"8 rows per group of 32 lanes.")


@dataclass(frozen=True)
class AmdMfma:
    version: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    is_transposed: bool
    tiles_per_warp: tuple[int, ...] = ()

    def describe(self) -> str:
        return (f"AMD MFMA accumulator (CDNA{self.version}): instruction {'×'.join(map(str, self.instr_shape))}, "
                f"warps {list(self.warps_per_cta)}, {'transposed' if self.is_transposed else 'not transposed'}; "
                f"64 lanes per wavefront.")


@dataclass(frozen=True)
class Slice:
    dim: int
    parent: object

    def describe(self) -> str:
        parent = self.parent.describe() if hasattr(self.parent, "describe") else str(self.parent)
        return (f"slice of dimension {self.dim} of its parent (what a reduction along dim {self.dim} or "
                f"`x[:, None]`-style broadcasting leaves): the parent's threads that differed only along "
                f"dim {self.dim} now hold the same element. Parent: {parent}")


@dataclass(frozen=True)
class DotOperand:
    op_idx: int
    parent: object
    k_width: int

    def describe(self) -> str:
        return (f"operand {'A' if self.op_idx == 0 else 'B'} of a dot, fed to the parent MMA with "
                f"{self.k_width} consecutive K elements per register group")


@dataclass(frozen=True)
class Linear:
    bases: dict          # in-dim -> tuple of basis vectors

    def describe(self) -> str:
        return ("linear layout given by its bases: " +
                "; ".join(f"{k} {[list(b) for b in v]}" for k, v in self.bases.items() if v))


@dataclass(frozen=True)
class SwizzledShared:
    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]

    def describe(self) -> str:
        if self.max_phase <= 1:
            return f"shared memory, not swizzled, dim {self.order[0]} contiguous"
        return (f"shared memory, swizzled: groups of {self.vec} elements along dim {self.order[0]}; row r's "
                f"groups are XORed with (r / {self.per_phase}) mod {self.max_phase}, so a column of the tile "
                f"spreads over different banks")

    def offset(self, row: int, col: int, cols: int) -> int:
        """Element offset of (row, col) in a 2-D tile with `cols` elements per row (order [1, 0])."""
        phase = (row // self.per_phase) % self.max_phase
        return row * cols + ((col // self.vec) ^ phase) * self.vec + col % self.vec


@dataclass(frozen=True)
class NvmmaShared:
    swizzling_byte_width: int
    transposed: bool
    element_bit_width: int

    def describe(self) -> str:
        return (f"shared memory laid out for wgmma/TMA: {self.swizzling_byte_width}-byte swizzle, "
                f"{self.element_bit_width}-bit elements{', transposed' if self.transposed else ''}")


@dataclass(frozen=True)
class Other:
    text: str

    def describe(self) -> str:
        return f"not drawn here: {self.text}"


SHARED_KINDS = (SwizzledShared, NvmmaShared)


# Parents deeper than this (slice of slice of ...; or an alias naming itself) are not followed.
MAX_DEPTH = 16


def parse_layout(text: str, aliases: dict[str, str] | None = None, _depth: int = 0):
    """`#ttg.blocked<{...}>`, an alias like `#blocked1`, ... -> a layout object (Other if unknown)."""
    aliases = aliases or {}
    text = text.strip()
    if _depth > MAX_DEPTH:
        return Other(text)
    if text in aliases:
        text = aliases[text]
    m = _ATTR_RE.match(text)
    if not m:
        return Other(text)
    kind, body = m["kind"], m["body"]
    lists = {k: tuple(int(x) for x in v.split(",") if x.strip()) for k, v in _LIST_FIELD_RE.findall(body)}
    scalars = dict(_SCALAR_FIELD_RE.findall(body))
    try:
        if kind == "blocked":
            return Blocked(lists["sizePerThread"], lists["threadsPerWarp"], lists["warpsPerCTA"],
                           lists["order"])
        if kind == "nvidia_mma":
            return NvidiaMma(int(scalars["versionMajor"]), int(scalars.get("versionMinor", 0)),
                             lists["warpsPerCTA"], lists["instrShape"])
        if kind == "amd_mfma":
            return AmdMfma(int(scalars.get("version", 3)), lists["warpsPerCTA"], lists["instrShape"],
                           scalars.get("isTransposed") == "true", lists.get("tilesPerWarp", ()))
        if kind == "slice":
            return Slice(int(scalars["dim"]), parse_layout(_parent(body), aliases, _depth + 1))
        if kind == "dot_op":
            return DotOperand(int(scalars["opIdx"]), parse_layout(_parent(body), aliases, _depth + 1),
                              int(scalars.get("kWidth", 0)))
        if kind == "linear":
            bases = {k: tuple(tuple(int(x) for x in vec.split(",") if x.strip())
                              for vec in re.findall(r"\[([-\d, ]*)\]", v))
                     for k, v in _BASES_FIELD_RE.findall(body)}
            return Linear({k: bases.get(k, ()) for k in IN_DIMS})
        if kind == "swizzled_shared":
            return SwizzledShared(int(scalars["vec"]), int(scalars["perPhase"]), int(scalars["maxPhase"]),
                                  lists["order"])
        if kind == "nvmma_shared":
            return NvmmaShared(int(scalars["swizzlingByteWidth"]), scalars.get("transposed") == "true",
                               int(scalars["elementBitWidth"]))
    except (KeyError, ValueError):
        pass
    return Other(text)


def _parent(body: str) -> str:
    """`dim = 1, parent = #ttg.blocked<{...}>` or `parent = #blocked` -> the parent's text."""
    i = body.index("parent = ") + len("parent = ")
    return body[i:top_end(body, i, ",", "<{[", ">}]", quotes="")].strip()


