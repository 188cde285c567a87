"""TMA copies in TTGIR: which tile each bulk tensor copy moves. The PTX instruction
(`cp.async.bulk.tensor.2d...`) names neither the tile's shape nor its type (they are in the
descriptor, built at run time); the TTGIR op that lowers to it does, in its descriptor type:

    ttng.async_tma_copy_global_to_local %a_desc_2[%a, %c0_i32] %a_13, %acc_9, %acc_12 :
        !tt.tensordesc<128x64xf16, #shared>, !ttg.memdesc<1xi64, ...> -> !ttg.memdesc<128x64xf16, ...>
    ttng.async_tma_copy_local_to_global %c_desc_6[%a, %b] %1 : !tt.tensordesc<128x128xf16, #shared>, ...
    ttng.async_tma_reduce add, %desc[...] %src : !tt.tensordesc<64x64xf32, ...>, ...

Pure: text in, frozen dataclasses out; one pass, linear in the text.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_OP_RE = re.compile(r"\bttng\.async_tma_(?P<op>copy_global_to_local|copy_local_to_global|reduce|gather|scatter|"
                    r"prefetch)\b")
_DESC_RE = re.compile(r"!tt\.tensordesc<(?:tensor<)?(?P<shape>\d+(?:x\d+)*)x(?P<elem>[a-zA-Z]+\d*)")
_BITS_RE = re.compile(r"(\d+)$")
_DIRECTION = {"copy_global_to_local": "load", "gather": "load", "prefetch": "load",
              "copy_local_to_global": "store", "scatter": "store", "reduce": "atomic"}


@dataclass(frozen=True)
class TmaCopy:
    line: int                  # 1-based TTGIR line
    kind: str                  # load | store | atomic (a reduction into global)
    op: str                    # copy_global_to_local, ...
    shape: tuple[int, ...]     # the tile: the descriptor's block shape
    elem: str                  # f16, bf16, f32, i8, f8E4M3FN ...
    elem_bits: int

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * self.elem_bits // 8


def _bits(elem: str) -> int:
    if elem.startswith("f8") or elem in ("i8", "ui8"):
        return 8
    m = _BITS_RE.search(elem)
    return int(m.group(1)) if m else 0


def tma_copies(ttgir: str) -> tuple[TmaCopy, ...]:
    out = []
    for n, line in enumerate(ttgir.splitlines(), 1):
        m = _OP_RE.search(line)
        if not m:
            continue
        d = _DESC_RE.search(line, m.end())
        if not d:
            continue
        elem = d["elem"]
        out.append(TmaCopy(n, _DIRECTION[m["op"]], m["op"], tuple(int(x) for x in d["shape"].split("x")), elem,
                           _bits(elem)))
    return tuple(out)
