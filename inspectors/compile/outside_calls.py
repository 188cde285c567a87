"""What a compiled graph runs that is not a Triton kernel, as the GPU would run it: the matmuls
Inductor leaves to cuBLAS (`extern_kernels.mm(...)` in its wrapper), attention it leaves to the
flash, memory-efficient or cuDNN kernels (`aten._scaled_dot_product_*_attention`), convolutions
to cuDNN. Read in the worker from the graph Inductor compiled (each node's shapes and dtype, its
FLOPs by torch.utils.flop_counter's formulas, its bytes) and the wrapper it wrote (which ops it
calls outside Triton); a node a Triton template computes (max-autotune's matmul, FlexAttention)
is not one. Each is a plain dict, kept with the result (CompileResult.outside) and listed in the
step table with an estimated time (inspectors/explain/estimate.py).
"""
from __future__ import annotations

import re

# extern_kernels.mm(  /  torch.ops.aten._scaled_dot_product_flash_attention.default(  /  aten.bmm.default(
_EXTERN_RE = re.compile(r"\bextern_kernels\.(\w+)\(|\btorch\.ops\.aten\.(\w+)\.\w+\(|\baten\.(\w+)\.default\(")
MAX_CALLS = 512

_KINDS = (("attention", {"flash": "flash attention", "efficient": "memory-efficient attention",
                         "cudnn": "cuDNN attention"}),
          ("conv", {"": "cuDNN convolution"}),
          ("mm", {"": "cuBLAS"}))
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64", "int8": "int8",
           "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8"}


def kind_of(op: str) -> str:
    """aten.mm -> cuBLAS, aten._scaled_dot_product_flash_attention -> flash attention, ..."""
    for word, by in _KINDS:
        if word in op:
            return next((v for k, v in by.items() if k in op), next(iter(by.values())))
    return "ATen"


def extern_ops(wrapper: str) -> set[str]:
    """The ATen ops (`mm`, `_scaled_dot_product_flash_attention`) a wrapper calls outside Triton."""
    return {next(g for g in m.groups() if g) for m in _EXTERN_RE.finditer(wrapper)}


def of_graph(graph, wrapper: str, lines_of, which: str, fused: set[str]) -> list[dict]:
    """The graph's nodes that run outside Triton, in graph order. `lines_of(node)`: the user's
    lines it comes from ({file: [line, ...]}); `fused`: nodes a Triton kernel computes."""
    import torch
    from torch.utils.flop_counter import flop_registry
    called = extern_ops(wrapper)
    out = []
    for node in _calls(graph):
        if node.name in fused or len(out) >= MAX_CALLS:
            continue
        packet = getattr(node.target, "overloadpacket", None)
        name = getattr(packet, "__name__", "")
        if packet is None or name not in called:
            continue
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: n.meta.get("val"))
        val = node.meta.get("val")
        tensors = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        outs = [t for t in torch.utils._pytree.tree_leaves(val) if isinstance(t, torch.Tensor)]
        call = {"graph": which, "op": f"aten.{name}", "kind": kind_of(name),
                "shapes": [list(map(_int, t.shape)) for t in tensors][:8],
                "dtype": _DTYPES.get(str(tensors[0].dtype).removeprefix("torch."), "") if tensors else "",
                "bytes": sum(_nbytes(t) for t in tensors + outs), "lines": lines_of(node)}
        if packet in flop_registry:
            try:
                call["flops"] = int(flop_registry[packet](*args, **kwargs, out_val=val))
            except Exception:  # noqa: BLE001 - a formula that does not take these arguments: bytes only
                pass
        out.append(call)
    return out


def _calls(graph, depth: int = 0):
    """The graph's call_function nodes in order; a higher-order op's subgraphs' nodes in its place,
    each time it is called (an invoke_subgraph block called twice runs its matmuls twice; both of a
    cond's branches are listed)."""
    import torch
    module = graph.owning_module
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        subgraphs = [getattr(module, a.target, None) for a in node.args
                     if module is not None and depth < 4 and isinstance(a, torch.fx.Node) and a.op == "get_attr"]
        subgraphs = [g for g in subgraphs if isinstance(g, torch.fx.GraphModule)]
        if not subgraphs:
            yield node
        for g in subgraphs:
            yield from _calls(g.graph, depth + 1)


def _int(v) -> int:
    try:
        return int(v)
    except Exception:  # noqa: BLE001 - a symbolic size without a hint
        return -1


def _nbytes(t) -> int:
    try:
        return int(t.numel()) * t.element_size()
    except Exception:  # noqa: BLE001
        return 0
