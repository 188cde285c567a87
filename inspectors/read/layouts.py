"""Triton GPU layouts as TTGIR prints them, e.g.

    #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

Semantics (TritonGPUAttrDefs.td, BlockedEncodingAttr): per dimension one tile is
sizePerThread × threadsPerWarp × warpsPerCTA elements; `order` lists dimensions fastest
first; a tensor larger than the tile wraps, giving each thread more registers."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_BLOCKED_RE = re.compile(r"#ttg\.blocked<\{(?P<body>[^}]*)\}>")
_FIELD_RE = re.compile(r"(\w+) = \[([\d, ]*)\]")
# tensor<1024x!tt.ptr<f32>, #blocked>   tensor<64x64xf16, #blocked1>
_TENSOR_RE = re.compile(r"tensor<(?P<shape>(?:\d+x)+)(?P<elem>!tt\.ptr<\w+>|\w+)(?:, (?P<layout>#[\w.]+))?>")


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
