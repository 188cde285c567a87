"""Ops whose CUDA kernel takes dtypes the CPU's does not, answered as CUDA's for the view's tensors.

The view's tensors are CPU tensors, so an op runs the CPU's kernel, and Dynamo's and AOTAutograd's
fake tensors, made from them, run the CPU's checks. Where the two builds differ in the dtypes they
take, code that runs on the GPU fails here (and the kernels after it are never compiled):

- `histc` on integer tensors: CUDA's kernel takes every type (aten/src/ATen/native/cuda/
  SummaryOps.cu, AT_DISPATCH_ALL_TYPES), the CPU's floating ones only ("histogram_cpu" not
  implemented for 'Int'), and its meta function refuses them for a CPU tensor
  (torch/_meta_registrations.py, meta_histc). A MoE router counts its tokens per expert with it
  (Qwen3-MoE: `torch.histc(expert_ids.int(), ...)`). CUDA's result has the input's dtype; its
  bin of an integer is the float formula's (non-negative offsets: the same floor).

Three places answer: the view's mode for eager code (`eager`), a Meta kernel without the CPU's
check while torch.compile traces (`install_tracing`), and the CPU graph that runs after Inductor
compiled the target's (`on_cpu_graph`: each such node computes as CUDA does).
"""
from __future__ import annotations

INT_ON_CUDA = ("histc",)          # ops whose CUDA kernel takes integer inputs and the CPU's does not


def _name(func) -> str | None:
    """'histc' for torch.histc, Tensor.histc and aten.histc.default (and its overloads)."""
    schema = getattr(func, "_schema", None)
    if schema is not None:
        name = schema.name
        return name.split("::", 1)[1] if name.startswith("aten::") else None
    return getattr(func, "__name__", None)


def histc_as_cuda(input, bins=100, min=0, max=0, *, out=None):
    """torch.histc as CUDA computes it, for any dtype it takes: an integer input binned as float64
    (every int32 value exactly) between bounds made integers as CUDA makes them (its accumulator
    type for an integer input is int64: SummaryOps.cu), the counts in the input's dtype. A bool
    input is refused, as CUDA's AT_DISPATCH_ALL_TYPES refuses it."""
    import torch
    if input.is_floating_point():
        return torch.histc(input, bins, min, max, out=out) if out is not None else torch.histc(input, bins, min, max)
    if input.dtype == torch.bool or input.is_complex():
        raise RuntimeError(f'"histogram_cuda" not implemented for \'{input.dtype}\'')
    counts = torch.histc(input.to(torch.float64), bins, int(min), int(max)).to(input.dtype)
    return out.copy_(counts) if out is not None else counts


def eager(func, args, kwargs):
    """The result of `func(*args, **kwargs)` as CUDA gives it, where the CPU's kernel would refuse
    the dtype; NotImplemented for any other call."""
    if _name(func) != "histc":
        return NotImplemented
    input = args[0] if args else kwargs.get("input")
    if input is None or input.is_floating_point():
        return NotImplemented
    rest = {k: v for k, v in kwargs.items() if k != "input"}
    return histc_as_cuda(input, *args[1:], **rest)


def install_tracing(undo: list) -> None:
    """While torch.compile traces (fake CPU tensors): histc's meta function without the CPU's dtype
    check, the output as CUDA's (`bins` counts of the input's dtype). Dynamo and AOTAutograd run
    fake tensors under the Python dispatcher, which asks the op's Python Meta kernel (and the meta
    table): both are replaced. `undo`: where the way back goes (a list of callables)."""
    import torch
    from torch._C import DispatchKey
    from torch._decomp import meta_table

    def histc_meta(input, bins=100, min=0, max=0):
        return input.new_empty((bins,))
    op = torch.ops.aten.histc.default
    had_kernel, had_meta = DispatchKey.Meta in op.py_kernels, op in meta_table
    saved_kernel, saved_meta = op.py_kernels.get(DispatchKey.Meta), meta_table.get(op)
    op.py_kernels[DispatchKey.Meta] = histc_meta
    meta_table[op] = histc_meta
    op._dispatch_cache.clear()
    from torch._subclasses.fake_tensor import FakeTensorMode
    FakeTensorMode.cache_clear()                 # a refusal cached before is not served

    def back():
        from torch._subclasses.fake_tensor import FakeTensorMode
        FakeTensorMode.cache_clear()             # fake results made meanwhile are not kept
        if had_kernel:
            op.py_kernels[DispatchKey.Meta] = saved_kernel
        else:
            op.py_kernels.pop(DispatchKey.Meta, None)
        if had_meta:
            meta_table[op] = saved_meta
        else:
            meta_table.pop(op, None)
        op._dispatch_cache.clear()
    undo.append(back)


def on_cpu_graph(gm) -> None:
    """The CPU graph that runs after Inductor compiled the target's: each op of INT_ON_CUDA
    computes as CUDA does (an integer histc binned as float). In place."""
    import torch
    changed = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.ops.aten.histc.default, torch.histc):
            node.target = histc_as_cuda
            changed = True
    if changed:
        gm.recompile()
