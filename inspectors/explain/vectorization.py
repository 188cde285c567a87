"""Why a `tl.load`/`tl.store` did or did not become a vector access, from what the
TTGIR says: the pointer's and the mask's arguments with their `tt.divisibility`, runtime
multipliers in the offsets, and how many contiguous elements the layout gives a thread.

Triton's rule (AxisInfo + the coalesce pass): the vector width is the smallest of
  the contiguous elements per thread in the layout (sizePerThread along `order[0]`),
  the pointer's provable alignment (16 bytes when the JIT marked the base pointer and
  every offset term divisible by 16), the mask's provable constancy (a bound divisible
  by 16 keeps groups of elements all-in or all-out), and 128 bits.
This module names which of those limited an access; the PTX says what width it got."""
from __future__ import annotations

from dataclasses import dataclass

from inspectors.read import layouts
from inspectors.read import mlir

# ops that read or write global memory, e.g.
#   %x = tt.load %ptr, %mask : tensor<1024x!tt.ptr<f32>, #blocked>
#   %12 = ttg.async_copy_global_to_local %ptrs, %buf mask %m : tensor<128x64x!tt.ptr<f16>, #blocked1> -> <...>
ACCESS_OPS = {"tt.load": "load", "tt.store": "store", "ttg.async_copy_global_to_local": "load",
              "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic", "tt.descriptor_load": "load",
              "tt.descriptor_store": "store", "ttng.async_tma_copy_global_to_local": "load"}


@dataclass(frozen=True)
class Access:
    line: int                    # TTGIR line of the op
    kind: str                    # load | store | atomic
    op: str
    pointers: tuple[str, ...]    # pointer arguments the address comes from
    elem_bits: int
    contiguous: int              # elements per thread along the fastest dimension (layout)
    max_vector: int              # what the layout and 128 bits would allow
    reasons: tuple[str, ...]     # what stops (or would stop) a wider access


def analyze(ttgir: str) -> tuple[Access, ...]:
    module = mlir.parse(ttgir)
    out = []
    for op in module.ops:
        kind = ACCESS_OPS.get(op.name)
        if kind is None or not op.operands:
            continue
        out.append(_access(module, op, kind))
    return tuple(out)


def _access(module: mlir.Module, op: mlir.Op, kind: str) -> Access:
    ptr_value = op.operands[0]
    tensor = layouts.parse_tensor_type(op.type)
    elem_bits = layouts.ELEMENT_BITS.get(tensor.pointee if tensor else "", 32)
    layout = layouts.parse_blocked(module.aliases.get(tensor.layout, "")) if tensor and tensor.layout else None
    contiguous = layout.contiguous_per_thread() if layout else 1
    max_vector = max(1, min(contiguous, 128 // elem_bits))

    ptr_roots, path = mlir.roots(module, ptr_value)
    pointers = tuple(sorted(module.args[r].name for r in ptr_roots if module.args[r].is_pointer))
    reasons: list[str] = []
    for r in sorted(ptr_roots):
        arg = module.args[r]
        if arg.is_pointer and arg.divisibility < 16:
            reasons.append(f"pointer `{arg.name}` is not known to be 16-byte aligned (at launch its "
                           f"data_ptr() % 16 != 0, so the JIT did not mark it tt.divisibility = 16)")
    for stride in _runtime_multipliers(module, path):
        arg = module.args[stride]
        note = "" if arg.divisibility >= 16 else " and not divisible by 16"
        reasons.append(f"offsets are multiplied by `{arg.name}`, a runtime value{note}: neighbouring elements "
                       f"are not known to be contiguous in memory")
    if any(o.name in ACCESS_OPS for o in path if o is not op):
        reasons.append("offsets come from loaded data (a gather): nothing is known about their contiguity")
    mask_value = _mask_operand(op)
    if mask_value:
        mask_roots, _ = mlir.roots(module, mask_value)
        for r in sorted(mask_roots):
            arg = module.args[r]
            if not arg.is_pointer and arg.divisibility < 16:
                reasons.append(f"the mask compares with `{arg.name}`, which is not divisible by 16 at launch: "
                               f"the mask may change inside a group of elements, so each is checked alone")
    if contiguous == 1 and max_vector == 1 and tensor:
        reasons.append(f"the layout gives each thread 1 contiguous element ({layout.describe() if layout else 'no blocked layout'}); "
                       f"a larger BLOCK or fewer warps gives each thread more")
    return Access(op.line, kind, op.name, pointers, elem_bits, contiguous, max_vector, tuple(reasons))


def _mask_operand(op: mlir.Op) -> str | None:
    """tt.load %ptr, %mask[, %other]; tt.store %ptr, %value, %mask; async copy `... mask %m`."""
    if op.name == "tt.load":
        return op.operands[1] if len(op.operands) > 1 else None
    if op.name == "tt.store":
        return op.operands[2] if len(op.operands) > 2 else None
    if op.name == "ttg.async_copy_global_to_local" and " mask " in op.text:
        return op.operands[2] if len(op.operands) > 2 else None
    return None


def _runtime_multipliers(module: mlir.Module, path: list) -> list[str]:
    """Scalar integer arguments that multiply offsets (`arith.muli %offs, splat(%stride)`)."""
    found = []
    for o in path:
        if o.name != "arith.muli":
            continue
        for operand in o.operands:
            roots, _ = mlir.roots(module, operand, limit=8)
            for r in roots:
                arg = module.args[r]
                if not arg.is_pointer and _only_through_splat(module, operand, r) and r not in found:
                    found.append(r)
    return found


def _only_through_splat(module: mlir.Module, value: str, root: str) -> bool:
    """`value` is the argument itself or a splat/broadcast of it (not an index computed from it)."""
    while value != root:
        op = module.defs.get(value)
        if op is None or op.name not in ("tt.splat", "tt.broadcast", "tt.expand_dims", "arith.extsi") or not op.operands:
            return False
        value = op.operands[0]
    return True
