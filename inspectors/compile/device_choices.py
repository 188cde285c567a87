"""Inductor's choices by device, made as for the target while AOTAutograd traces on CPU tensors.

AOTAutograd traces a torch.compile'd function on the CPU tensors that stand for the target's, and
two steps of that trace decide by the tensors' device:
- **decompositions** (Inductor's table, torch's own): an mm or addmm with K = 1 is an outer product
  the GPU fuses as a multiply (the CPU only when tiny); a convolution's backward has its bias
  gradient as a reduction kernel on a GPU; batch norm, layer norm, upsampling and scatter-reduce
  have branches of their own for CPU and GPU;
- **the joint-graph passes**, run before the graph is split into forward and backward: `bmm_to_mm`
  (a bmm with a batch of one is an mm on a GPU: a Llama's rotary position bmm, then fused into
  the rotary kernel), the attention patterns (`fuse_attention`: a hand-written fp32
  softmax(q @ kᵀ) @ v stays as written on a GPU without TF32, becomes SDPA on a CPU), `pad_mm`.

Decided on the CPU tensors, each picks the CPU's branch: other kernels than the GPU's. Here a
decomposition that reads a device sees its fake inputs on `cuda:0` while it runs, and the joint-graph
passes run on the graph with each node's value moved to `cuda:0` (shape, strides and dtype kept),
the target as their input device. Then every value and device argument goes back to the CPU,
where the graph still runs (inspectors/compile/compiled.py compiles it again for the target).

`pad_mm` pads a misaligned matmul where a timing on the GPU says it pays: here it pads only where
Inductor is told to (`force_shape_pad`), as max-autotune's first candidate stands for a timing.
"""
from __future__ import annotations

import inspect
import re

# a decomposition whose source reads a device (or asks `is_gpu`): it may branch on it
_READS_DEVICE = re.compile(r"\.device\b|\bis_gpu\(|\.is_cuda\b")


def _tensor_map(value, fn):
    from torch.utils import _pytree as pytree
    return pytree.tree_map(fn, value)


def _cpu_device(value):
    import torch
    if isinstance(value, torch.device) and value.type != "cpu":
        return torch.device("cpu")
    if isinstance(value, (list, tuple)):
        return type(value)(_cpu_device(v) for v in value)
    return value


def back_on_cpu(graph, mode) -> bool:
    """Every node's value and device argument on the CPU again; whether any changed."""
    import torch
    changed = False

    def one(t):
        nonlocal changed
        if not isinstance(t, torch.Tensor) or t.device.type == "cpu" or mode is None:
            return t
        changed = True
        with mode:
            return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="cpu")
    for node in graph.nodes:
        if "val" in node.meta:
            node.meta["val"] = _tensor_map(node.meta["val"], one)
        args, kwargs = _cpu_device(node.args), {k: _cpu_device(v) for k, v in node.kwargs.items()}
        if args != node.args or kwargs != node.kwargs:
            node.args, node.kwargs, changed = args, kwargs, True
    return changed


def joint_passes_on_target(real_passes):
    """`real_passes` (Inductor's joint_graph_passes) deciding as for `cuda:0`."""
    import torch
    from torch._guards import detect_fake_mode
    cuda = torch.device("cuda", 0)

    def joint_graph_passes(graph, input_device=None, *args, **kwargs):
        nodes = [n for n in graph.graph.nodes if "val" in n.meta]
        mode = detect_fake_mode([n.meta["val"] for n in nodes])
        if mode is None:
            return real_passes(graph, input_device, *args, **kwargs)

        def on_cuda(t):
            if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
                return t
            with mode:
                return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=cuda)
        for node in nodes:
            node.meta["val"] = _tensor_map(node.meta["val"], on_cuda)
        try:
            return real_passes(graph, cuda, *args, **kwargs)
        finally:
            if back_on_cpu(graph.graph, mode):
                graph.recompile()
    return joint_graph_passes


def decompositions_on_target(table: dict) -> dict:
    """Inductor's decomposition table, each one that reads a device deciding as for `cuda:0`."""
    return {op: _on_target(fn) if _reads_device(fn) else fn for op, fn in table.items()}


_SEEN: dict = {}


def _reads_device(fn) -> bool:
    if fn not in _SEEN:
        try:
            _SEEN[fn] = bool(_READS_DEVICE.search(inspect.getsource(inspect.unwrap(fn))))
        except (OSError, TypeError):
            _SEEN[fn] = False
    return _SEEN[fn]


def _on_target(fn):
    import torch
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils import _pytree as pytree
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")

    def decomposed(*args, **kwargs):
        moved = [t for t in pytree.tree_leaves((args, kwargs))
                 if isinstance(t, FakeTensor) and t.fake_device.type == "cpu"]
        for t in moved:
            t.fake_device = cuda
        try:
            out = fn(*args, **kwargs)
        finally:
            for t in moved:
                t.fake_device = cpu
        for t in pytree.tree_leaves(out):
            if isinstance(t, FakeTensor) and t.fake_device.type == "cuda":
                t.fake_device = cpu
        return out
    decomposed.__wrapped__ = fn
    return decomposed


def install(set_) -> None:
    """Patch Inductor for the job's compiles (`set_(obj, name, value)` records the undo)."""
    import torch
    from torch._inductor import compile_fx
    from torch._inductor.fx_passes import pad_mm
    table = compile_fx.select_decomp_table
    set_(compile_fx, "select_decomp_table", lambda: decompositions_on_target(table()))
    set_(compile_fx, "joint_graph_passes", joint_passes_on_target(compile_fx.joint_graph_passes))
    set_(pad_mm, "_should_pad", lambda *args, **kwargs: bool(torch._inductor.config.force_shape_pad))
