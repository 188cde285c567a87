"""Inductor's choices by device, made as for the target while AOTAutograd traces on CPU tensors.

AOTAutograd traces a torch.compile'd function on the CPU tensors that stand for the target's, and
two steps of that trace decide by the tensors' device:
- **decompositions**: an mm or addmm with K = 1 is an outer product the GPU fuses as a multiply
  (the CPU only when tiny, and it makes a dot product a sum the GPU leaves to cuBLAS); a
  convolution's backward has its bias gradient as a reduction kernel on a GPU;
- **the joint-graph passes**, run before the graph is split into forward and backward: `bmm_to_mm`
  (a bmm with a batch of one is an mm on a GPU: a Llama's rotary position bmm, then fused into
  the rotary kernel), the attention patterns (`fuse_attention`: a hand-written fp32
  softmax(q @ kᵀ) @ v stays as written on a GPU without TF32, becomes SDPA on a CPU), `pad_mm`.

Decided on the CPU tensors, each picks the CPU's branch: other kernels than the GPU's. Here those
decompositions see their fake inputs on `cuda:0` while they run, and the joint-graph
passes run on the graph with each node's value moved to `cuda:0` (shape, strides and dtype kept),
the target as their input device. Then every value and device argument goes back to the CPU,
where the graph still runs (inspectors/compile/torch_compile_target.py compiles it again for the target).

Left as traced: torch's decompositions that branch on the device for batch norm, layer norm,
upsampling and scatter-reduce (not yet compared with a GPU's).

`pad_mm` pads a misaligned matmul where a timing on the GPU says it pays: here it pads only where
Inductor is told to (`force_shape_pad`), as max-autotune's first candidate stands for a timing.
"""
from __future__ import annotations

import contextlib
import functools


def on_device(value, device, named=False):
    """`value` with each torch.device in it (lists and tuples too) `device`; where `named`, each
    "cuda…" string the CPU (`x.to("cuda")`, `device="cuda"`)."""
    import torch
    if isinstance(value, torch.device) and value != device:
        return device
    if named and device.type == "cpu" and isinstance(value, str) and value.split(":")[0] == "cuda":
        return "cpu"
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):      # not a named tuple
        return type(value)(on_device(v, device, named) for v in value)
    return value


def devices_on(graph, device) -> None:
    """Each node's device arguments `device`."""
    for node in graph.nodes:
        node.args = on_device(node.args, device)
        node.kwargs = {k: on_device(v, device) for k, v in node.kwargs.items()}


def cpu_born(graph) -> set[str]:
    """The nodes a graph computes on the CPU on a GPU too: a tensor the traced code made without
    a device where Dynamo leaves it on the CPU (`torch.tensor(32)` on torch 2.11:
    `cpu_born_factories`), from no input of the graph, up to its copy to the GPU (a
    `prims.device_put`: install_tracing's run_node makes the copy that a trace on the CPU would
    not have). Each such copy is named as the GPU's trace names it (`_to_copy`, which decomposes to
    it): Inductor names its kernel after it. Moved to `cuda:0`, the copy would be a no-op."""
    import torch
    born: set[str] = set()
    for node in graph.nodes:
        if node.target is torch.ops.prims.device_put.default:
            seen, stack = {}, [node.args[0]]
            while stack:
                n = stack.pop()
                if n.name not in seen:
                    seen[n.name] = n
                    stack.extend(n.all_input_nodes)
            if all(n.op != "placeholder" for n in seen.values()):
                born |= seen.keys()
                node.meta["original_aten"] = torch.ops.aten._to_copy.default
    return born


def values_on(graph, device, mode, originals: dict | None = None, stay: set[str] = frozenset()) -> dict:
    """Each node's value (fake tensors, in `mode`) on `device`, its shape, strides and dtype kept,
    a view a view of its base's copy; also the values Dynamo saw a higher-order op called with
    (`eager_input_vals`: an invoke_subgraph's subgraph is lowered on them). Returns what it made,
    {id(copy): (copy, value)}: handed back as `originals`, the way back gives each moved value
    itself again, not a copy (AOTAutograd donates to a backward only the saved tensors that share
    no memory with the inputs it traced with: the GPU's backward overwrites those in place).
    `stay`: the names of nodes whose values stay where they are (cpu_born)."""
    import torch
    from torch.utils import _pytree as pytree
    originals, copies = originals or {}, {}

    def one(t):
        if not isinstance(t, torch.Tensor) or t.device == device:
            return t
        if id(t) in originals:
            return originals[id(t)][1]
        if id(t) not in copies:
            with mode:
                made = None
                if t._base is not None:
                    with contextlib.suppress(RuntimeError):     # a view outside its base's extent
                        made = one(t._base).as_strided(t.shape, t.stride(), t.storage_offset())
                if made is None:
                    made = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=device)
            copies[id(t)] = (t, made)      # t kept: its id is not another's while the graph is walked
        return copies[id(t)][1]
    for node in graph.nodes:
        if node.name in stay:
            continue
        for key in ("val", "eager_input_vals"):
            if key in node.meta:
                node.meta[key] = pytree.tree_map(one, node.meta[key])
    return {id(made): (made, t) for t, made in copies.values()}


def joint_passes_on_target(real_passes):
    """`real_passes` (Inductor's joint_graph_passes) deciding as for `cuda:0`: the nodes' values
    there while they run, their device arguments the CPU (a pass that evaluates a node, as
    constant folding does, runs it on the CPU)."""
    import torch
    from torch._guards import detect_fake_mode
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")

    def joint_graph_passes(graph, input_device=None, *args, **kwargs):
        mode = detect_fake_mode([n.meta["val"] for n in graph.graph.nodes if "val" in n.meta])
        if mode is None:
            return real_passes(graph, input_device, *args, **kwargs)
        devices_on(graph.graph, cpu)
        moved = values_on(graph.graph, cuda, mode, stay=cpu_born(graph.graph))
        try:
            return real_passes(graph, cuda, *args, **kwargs)
        finally:
            values_on(graph.graph, cpu, mode, moved)
            devices_on(graph.graph, cpu)
            graph.recompile()
    return joint_graph_passes


# the decompositions whose device branch makes other kernels on a GPU than on a CPU (read in
# torch/_inductor/decomposition.py, torch 2.11 and 2.13): an mm, addmm or bmm with K = 1 (or
# M = N = 1, or tiny) a multiply or a sum; a convolution backward's bias gradient a reduction.
# Others read a device only to make their tensors there, or compare it with an argument's: as traced.
_BY_DEVICE = ("mm", "addmm", "bmm", "convolution_backward")


def upsampling_as_on_gpu(set_) -> None:
    """`F.interpolate` traced as a GPU decomposes it: torch's nearest and linear upsamplings (their
    CompositeImplicit kernels, which Dynamo and AOTAutograd trace, not Inductor's table) write a
    channels-last input of fewer than 4 (nearest) or 16 (linear) channels in contiguous memory on
    a GPU, in the input's memory format on a CPU (torch/_decomp/decompositions.py: "only use
    channels_last path when it's faster"). A 3-channel image on an H200: no copy of the output.
    `set_(obj, name, value)` records the undo."""
    import torch
    from torch._C import DispatchKey
    from torch._prims_common import suggest_memory_format
    from torch._subclasses.fake_tensor import is_fake
    import torch._prims_common as utils
    key, aten = DispatchKey.CompositeImplicitAutograd, torch.ops.aten
    nearest = [getattr(aten, f"{kind}{d}d").vec for kind in ("upsample_nearest", "_upsample_nearest_exact")
               for d in (1, 2, 3)] + [getattr(aten, f"{kind}{d}d").default
                                      for kind in ("upsample_nearest", "_upsample_nearest_exact") for d in (1, 2, 3)]
    linear = [aten.upsample_linear1d.vec, aten.upsample_bilinear2d.vec, aten.upsample_trilinear3d.vec]

    def as_on_gpu(kernel, fewer_than: int):
        def upsample(input, *args, **kwargs):
            if not is_fake(input) or input.dim() < 4 or input.shape[1] >= fewer_than:
                return kernel(input, *args, **kwargs)
            # asked of the input (or its float32 copy: pw_cast_for_opmath) only
            utils.suggest_memory_format = lambda t: torch.contiguous_format if t.shape == input.shape \
                else suggest_memory_format(t)
            try:
                return kernel(input, *args, **kwargs)
            finally:
                utils.suggest_memory_format = suggest_memory_format
        return upsample
    for ops, fewer_than in ((nearest, 4), (linear, 16)):
        for op in ops:
            if key in op.py_kernels:
                set_(op, "py_kernels", {**op.py_kernels, key: as_on_gpu(op.py_kernels[key], fewer_than)})
                set_(op, "_dispatch_cache", {})


def decompositions_on_target(table: dict) -> dict:
    """Inductor's decomposition table, those of `_BY_DEVICE` deciding as for `cuda:0`."""
    return {op: _on_target(fn) if getattr(op, "_opname", None) in _BY_DEVICE else fn for op, fn in table.items()}


def _on_target(fn):
    import torch
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils import _pytree as pytree
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")

    def decomposed(*args, **kwargs):
        moved = [t for t in pytree.tree_leaves((args, kwargs))
                 if isinstance(t, FakeTensor) and t.fake_device.type == "cpu"]
        if not moved:
            return fn(*args, **kwargs)
        # a device argument too (`_to_copy(x, device=...)` compares it with x's)
        args, kwargs = pytree.tree_map(lambda v: cuda if isinstance(v, torch.device) and v.type == "cpu" else v,
                                       (args, kwargs))
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


_CPU_BORN = "tlens_cpu_born"
# torch's factory functions, called without a device in traced code
_FACTORIES = ("tensor", "as_tensor", "scalar_tensor", "arange", "zeros", "ones", "full", "empty", "rand", "randn",
              "randint", "linspace", "eye")


@functools.cache
def cpu_born_factories() -> frozenset:
    """The factories (`_FACTORIES`' names) whose tensor Dynamo leaves on the CPU where the code
    gives no device, while a default device is set: the tool sets `cuda` on a GPU (the user
    guide's kernel files), and Dynamo traces torch's DeviceContext for some of them, not others
    (torch 2.11: `zeros`, `ones`, `empty` and `full` the default device's, `tensor`, `arange` and
    the rest the CPU's; torch 2.13: none the CPU's). Asked of this torch: one traced call of each
    under the `meta` device, in a thread of its own (the caller's torch-function modes are its
    thread's)."""
    import threading

    import torch
    found: dict[str, str] = {}

    def backend(gm, inputs):
        for n in gm.graph.nodes:
            value = n.meta.get("example_value")
            if n.op == "call_function" and isinstance(value, torch.Tensor):
                found[getattr(n.target, "__name__", "")] = value.device.type
        return gm.forward

    def calls(x):
        return (torch.tensor(3.0), torch.as_tensor([1, 2]), torch.scalar_tensor(1), torch.arange(4), torch.zeros(2),
                torch.ones(2), torch.full((2,), 1.0), torch.empty(2), torch.rand(2), torch.randn(2),
                torch.randint(0, 5, (2,)), torch.linspace(0, 1, 5), torch.eye(3), x + 1)

    def run():
        with torch.device("meta"):
            torch._dynamo.optimize(backend, nopython=True)(calls)(torch.empty(4))
    probe = threading.Thread(target=run, name="tlens-factory-devices")
    probe.start()
    probe.join()
    return frozenset(name for name in _FACTORIES if found.get(name) == "cpu")


def _to_target(device) -> bool:
    """Whether `device` (an argument of the traced code) is the target: a CUDA device or "cuda…"."""
    import torch
    return (isinstance(device, torch.device) and device.type == "cuda") or \
        (isinstance(device, str) and device.split(":")[0] == "cuda")


def _copies_to_target(node):
    """`t.to(x.device)` or `t.to(x.device, dtype)` of a tensor the traced code made on the CPU
    (`torch.tensor(32)`, no device): on a GPU a copy to it, a kernel of its own (Hugging Face's
    sliding-window cache layer moves its window size so); traced on the CPU, a no-op. Returns the
    dtype asked ("" for none), or None where it is no such move."""
    import torch
    source = node.args[0] if node.args else None
    if not getattr(source, "meta", {}).get(_CPU_BORN, False) or node.kwargs.keys() - {"device", "dtype", "non_blocking"}:
        return None
    rest = (*node.args[1:], node.kwargs.get("device"), node.kwargs.get("dtype"))
    dtypes = [a for a in rest if isinstance(a, torch.dtype)]
    if not any(_to_target(a) for a in rest) or len(dtypes) > 1 or \
            any(a is not None and not _to_target(a) and not isinstance(a, (torch.dtype, bool)) for a in rest):
        return None
    return dtypes[0] if dtypes else ""


def copy_to_target(t, dtype=None):
    """A GPU's `t.to("cuda", dtype)` of a CPU tensor as its trace decomposes it: a copy to the device
    (the CPU here, where the graph runs; cpu_born makes it the target's), then the dtype's
    conversion there."""
    import torch
    moved = torch.ops.prims.device_put.default(t, torch.device("cpu"))
    return moved if dtype is None else moved.to(dtype)


def install_tracing(set_) -> None:
    """Dynamo: a tensor's `.device` and `.is_cuda`, read by the traced code, are the target's (a
    branch on `x.is_cuda` or `x.device.type` takes the GPU's way, `torch.autocast(x.device.type)`
    is CUDA's autocast); a device the code hands an op is the CPU, where the graph is traced and runs."""
    import torch
    from torch._dynamo import utils
    from torch._dynamo.variables.tensor import TensorVariable
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")

    def read_as_target(method):
        def read(self, tx):
            saved = self.device
            if saved is not None and saved.type == "cpu":
                self.device = cuda
            try:
                return method(self, tx)
            finally:
                self.device = saved
        return read
    for name in ("method_attr_device", "method_attr_is_cuda"):
        set_(TensorVariable, name, read_as_target(getattr(TensorVariable, name)))
    run = utils.run_node
    factories = {getattr(torch, name) for name in cpu_born_factories()}     # the others: the target's

    def run_node(tracer, node, args, kwargs, nnmodule):
        if node.op == "call_method" and node.target == "cuda":         # x.cuda(): x.to("cuda") (a CPU-only
            node.target, node.args, node.kwargs = "to", (node.args[0], cuda), {}     # torch refuses .cuda())
            args, kwargs = (args[0], cuda), {}
        named = node.op == "call_method" and node.target == "to"      # x.to("cuda")
        if node.op == "call_function" and node.target in factories and not _to_target(node.kwargs.get("device")):
            node.meta[_CPU_BORN] = True
        elif named and (dtype := _copies_to_target(node)) is not None:    # a copy to the GPU there
            node.op, node.target = "call_function", copy_to_target
            node.args, node.kwargs, args, kwargs = (node.args[0],), {"dtype": dtype or None}, (args[0],), {"dtype": dtype or None}
        node.args, args = on_device(node.args, cpu, named), on_device(args, cpu, named)
        node.kwargs, kwargs = ({k: on_device(v, cpu, k == "device") for k, v in kw.items()}
                               for kw in (node.kwargs, kwargs))
        return run(tracer, node, args, kwargs, nnmodule)
    set_(utils, "run_node", run_node)
    # the target's device properties (Liger's backward reads the SM count): a constant, as a GPU's
    from torch._dynamo.utils import common_constant_types
    from torch._dynamo.variables.builder import SourcelessBuilder
    from torch._dynamo.variables.constant import ConstantVariable

    from inspectors.target.cuda_probes import TargetProperties
    common_constant_types.add(TargetProperties)            # the type exists only in the view
    SourcelessBuilder._type_handlers.setdefault(TargetProperties, lambda tx, value: ConstantVariable(value))


def install(set_) -> None:
    """Patch Inductor for the job's compiles (`set_(obj, name, value)` records the undo)."""
    import torch
    from torch._inductor import compile_fx
    from torch._inductor.fx_passes import pad_mm
    table = compile_fx.select_decomp_table
    set_(compile_fx, "select_decomp_table", lambda: decompositions_on_target(table()))
    set_(compile_fx, "joint_graph_passes", joint_passes_on_target(compile_fx.joint_graph_passes))
    set_(pad_mm, "_should_pad", lambda *args, **kwargs: bool(torch._inductor.config.force_shape_pad))
