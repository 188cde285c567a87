"""What a compiled graph runs that is not a Triton kernel, as the GPU would run it: the matmuls
Inductor leaves to cuBLAS (`extern_kernels.mm(...)` in its wrapper), attention it leaves to the
flash, memory-efficient or cuDNN kernels (`aten._scaled_dot_product_*_attention`), convolutions
to cuDNN. Read in the worker from the graph Inductor compiled (each node's shapes and dtype, its
FLOPs by torch.utils.flop_counter's formulas, its bytes) and the wrapper it wrote (which ops it
calls outside Triton); a node a Triton template computes (max-autotune's matmul, FlexAttention)
is not one, nor is a view (a GPU launches nothing for it). Each is a plain dict, kept with the result (CompileResult.outside) and listed in the
step table with an estimated time (inspectors/explain/estimate.py).
"""
from __future__ import annotations

import re
from collections import Counter

# extern_kernels.mm(  /  torch.ops.aten._scaled_dot_product_flash_attention.default(  /  aten.bmm.default(
_EXTERN_RE = re.compile(r"\bextern_kernels\.(\w+)\(|\btorch\.ops\.aten\.(\w+)\.\w+\(|\baten\.(\w+)\.default\(")
MAX_CALLS = 512

_KINDS = (("pack_mm", {"": "ATen weight-only matmul"}),      # _weight_int8pack_mm: CUDA's own kernel
          ("attention", {"flash": "flash attention", "efficient": "memory-efficient attention",
                         "cudnn": "cuDNN attention"}),
          ("conv", {"": "cuDNN convolution"}),
          ("mm", {"": "cuBLAS"}))
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64", "int8": "int8",
           "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8"}


def kind_of(op: str) -> str:
    """aten.mm -> cuBLAS, aten._scaled_dot_product_flash_attention -> flash attention, ..."""
    for word, by in _KINDS:
        if word in op and (word != "mm" or re.search(r"mm(_|$)", op)):      # not a dummy's "mm"
            return next((v for k, v in by.items() if k in op), next(iter(by.values())))
    return "ATen"


def extern_ops(wrapper: str) -> set[str]:
    """The ATen ops (`mm`, `_scaled_dot_product_flash_attention`) a wrapper calls outside Triton."""
    return {next(g for g in m.groups() if g) for m in _EXTERN_RE.finditer(wrapper)}


def of_graph(graph, wrapper: str, lines_of, which: str, fused: set[str]) -> list[dict]:
    """The graph's nodes that run outside Triton, in graph order; then the calls of ops no node
    of the graph is (a pattern Inductor lowers to one: a bf16 matmul with an int8 weight to
    `_weight_int8pack_mm`), read from the wrapper. `lines_of(node)`: the user's lines it comes
    from ({file: [line, ...]}); `fused`: nodes a Triton kernel computes. A node a kernel names
    among its origins is still listed where the wrapper calls its op more often than the nodes
    left (a `_scaled_mm` whose operands' scales a Triton kernel computes: an origin of it)."""
    import torch
    called = extern_ops(wrapper)
    times = Counter(next(g for g in m.groups() if g) for m in _EXTERN_RE.finditer(wrapper))
    nodes = [n for n in _calls(graph) if getattr(getattr(n.target, "overloadpacket", None), "__name__", "") in called
             and not _is_view(n)]
    free = Counter(n.target.overloadpacket.__name__ for n in nodes if n.name not in fused)
    out, seen = [], set()
    for node in nodes:
        name = node.target.overloadpacket.__name__
        if len(out) >= MAX_CALLS:
            break
        if node.name in fused:
            if free[name] >= times[name]:
                continue
            free[name] += 1                     # a call of the wrapper's that no other node is
        inputs, val = _hinted(torch.fx.node.map_arg(((node.args, node.kwargs), node.meta.get("val")),
                                                    lambda n: n.meta.get("val")))
        seen.add(name)
        out.append(entry(which, name, inputs, val, lines_of(node), _flops(node)))
    if called - seen:
        out += _lowered(graph, wrapper, called - seen, lines_of, which)[:max(0, MAX_CALLS - len(out))]
    return out


def _is_view(node) -> bool:
    """Whether the node's op returns a view of its input (`permute`, `slice`, `view_as_real`): the
    wrapper calls such an op of a graph Inductor left to ATen (a complex tensor's) in Python, and a
    GPU runs no kernel for it."""
    return getattr(node.target, "overloadpacket", None).__name__ == "_unsafe_view" or aliases(node.target)


def aliases(op) -> bool:
    """Whether each output of the ATen op is a view of an input (its schema's returns alias one, read-only)."""
    returns = getattr(getattr(op, "_schema", None), "returns", None)
    return bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write for r in returns)


def entry(which: str, name: str, inputs, val, lines: dict, flops: int | None) -> dict:
    """One call outside Triton: its graph, op, kind, operands' sizes and dtype, bytes, lines, FLOPs."""
    import torch
    tensors = [t for t in torch.utils._pytree.tree_leaves(inputs) if isinstance(t, torch.Tensor)]
    outs = [t for t in torch.utils._pytree.tree_leaves(val) if isinstance(t, torch.Tensor)]
    call = {"graph": which, "op": f"aten.{name}", "kind": kind_of(name),
            "shapes": [list(map(_int, t.shape)) for t in tensors][:8],
            "dtype": _DTYPES.get(str(tensors[0].dtype).removeprefix("torch."), "") if tensors else "",
            "bytes": sum(_nbytes(t) for t in tensors + outs), "lines": lines}
    if flops is not None:
        call["flops"] = flops
    return call


def _flops(node) -> int | None:
    """The node's FLOPs (flops_of) on its sizes' hints."""
    import torch
    args, kwargs, val = _hinted(torch.fx.node.map_arg((node.args, node.kwargs, node.meta.get("val")),
                                                      lambda n: n.meta.get("val")))
    return flops_of(getattr(node.target, "overloadpacket", None), args, kwargs, val)


def flops_of(packet, args, kwargs, val) -> int | None:
    """An ATen op's FLOPs by torch.utils.flop_counter's formula (or _OWN's); None where it has none."""
    from torch.utils.flop_counter import flop_registry
    formula = _OWN.get(getattr(packet, "__name__", None)) or flop_registry.get(packet)
    if formula is None:
        return None
    try:
        return int(formula(*args, **kwargs, out_val=val))
    except Exception:  # noqa: BLE001 - a formula that does not take these arguments: bytes only
        return None


def _grouped_mm_flops(a, b, *args, out_val=None, **kwargs) -> int:
    """A grouped matmul's 2·M·N·K summed over its groups (torch.utils.flop_counter has no formula
    for it): 2-D × 2-D splits the shared K by the offsets (an MoE's weight gradients), so the
    groups' Ks add up to a's; otherwise each output element is a K-long dot, K = a's last size."""
    if a.dim() == 2 and b.dim() == 2:
        return 2 * a.shape[0] * a.shape[1] * b.shape[1]
    return 2 * out_val.numel() * a.shape[-1]


def _heads_first(t) -> tuple:
    """(B, M, H, K), the memory-efficient kernel's own layout, as (B, H, M, K)."""
    return t.shape[0], t.shape[2], t.shape[1], t.shape[3]


def _efficient_flops(query, key, value, *args, out_val=None, **kwargs) -> int:
    """`_efficient_attention_forward`'s FLOPs (torch 2.13's formula reads its (B, M, H, K) inputs as
    (B, H, M, K) and raises)."""
    from torch.utils.flop_counter import sdpa_flop_count
    return sdpa_flop_count(_heads_first(query), _heads_first(key), _heads_first(value))


def _efficient_backward_flops(grad, query, key, value, *args, out_val=None, **kwargs) -> int:
    from torch.utils.flop_counter import sdpa_backward_flop_count
    return sdpa_backward_flop_count(*(_heads_first(t) for t in (grad, query, key, value)))


# formulas torch's registry lacks: the grouped matmuls of MoE layers (torchtitan's, torchao's float8
# MoE); or gets wrong: the memory-efficient kernel's own entry (causal_lower_right's float32 attention)
_OWN = {"_grouped_mm": _grouped_mm_flops, "_scaled_grouped_mm": _grouped_mm_flops,
        "_efficient_attention_forward": _efficient_flops, "_efficient_attention_backward": _efficient_backward_flops}


def _hinted(value):
    """`value` with each tensor a meta tensor of its sizes' hints, each symbolic int its hint: a
    size read here (int(), a formula's comparison) adds no guard to a dynamic graph (one did:
    its next size compiled again). A data-dependent size (an MoE's tokens for one expert, from
    torch.where) has no hint: it takes Inductor's own fallback clamped to the size's known range,
    as Inductor sizes the Triton kernels beside the call."""
    import torch

    def one(v):
        if isinstance(v, torch.Tensor):
            return torch.empty_strided([_hint(d) for d in v.shape], [_hint(d) for d in v.stride()],
                                       dtype=v.dtype, device="meta")
        return _hint(v) if isinstance(v, torch.SymInt) else v
    return torch.utils._pytree.tree_map(one, value)


def _hint(v) -> int:
    import torch
    try:
        from torch.fx.experimental.symbolic_shapes import optimization_hint as hint_int    # torch 2.13
    except ImportError:
        from torch.fx.experimental.symbolic_shapes import hint_int                         # torch 2.11
    if not isinstance(v, torch.SymInt):
        return v
    from torch._inductor import config
    fallback = config.unbacked_symint_fallback
    try:
        bounds = v.node.shape_env.bound_sympy(v.node.expr)
        fallback = max(int(bounds.lower), fallback) if bounds.lower.is_finite else fallback
        fallback = min(int(bounds.upper), fallback) if bounds.upper.is_finite else fallback
    except Exception:  # noqa: BLE001 - no range known: Inductor's fallback as it is
        pass
    return hint_int(v, fallback)


# in Inductor's wrapper: `buf1 = empty_strided_cuda((1024, 1), (1, 1), torch.bfloat16)`,
# `buf2 = extern_kernels._weight_int8pack_mm(arg4_1, arg0_1, reinterpret_tensor(buf0, (1024, ), ...))`,
# its source nodes in the comment before it, its size in `assert_size_stride(buf2, (16, 1024), ...)`,
# `buf3 = buf2; del buf2  # reuse`
_ALLOC_RE = re.compile(r"(\w+) = empty_strided_\w+\(\(([\d, ]*)\), \([\d, ]*\), torch\.(\w+)\)")
_SIZE_RE = re.compile(r"assert_size_stride\((\w+), \(([\d, ]*)\)")
_REUSE_RE = re.compile(r"(\w+) = (\w+); del \2\s+# reuse")
_SOURCES_RE = re.compile(r"# Topologically Sorted Source Nodes: \[([^\]]*)\]")
_CALL_RE = re.compile(r"\s*(\w+) = extern_kernels\.(\w+)\((.*)\)\s*$")
_ARG_RE = re.compile(r"reinterpret_tensor\((\w+), \(([\d, ]*)\)|\b(\w+)\b")


def _lowered(graph, wrapper: str, ops: set[str], lines_of, which: str) -> list[dict]:
    """The wrapper's calls of `ops`, which no node of `graph` is: their tensors' sizes from the
    graph's inputs and the wrapper's buffers; their FLOPs a matmul's 2·M·N·K (else those of the
    nodes they compute), their lines those nodes' lines."""
    import torch
    known = {n.name: (list(_hinted(n.meta["val"]).shape), n.meta["val"].dtype) for n in graph.nodes
             if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.Tensor)}
    out, sources = [], []
    for line in wrapper.splitlines():
        if (m := _ALLOC_RE.search(line)) and hasattr(torch, m[3]):
            known[m[1]] = (_dims(m[2]), getattr(torch, m[3]))
        elif (m := _REUSE_RE.search(line)) and m[2] in known:
            known[m[1]] = known[m[2]]
        elif (m := _SOURCES_RE.search(line)):
            sources = [s.strip() for s in m[1].split(",") if s.strip()]
        if not (m := _CALL_RE.match(line)) or m[2] not in ops:
            continue
        tensors = []
        for a in _ARG_RE.finditer(m[3]):
            name = a[1] or a[3]
            if name in known and known[name][1] is not None:
                tensors.append(torch.empty(_dims(a[2]) if a[1] else known[name][0], dtype=known[name][1], device="meta"))
        # its size: the next assert_size_stride of its buffer (none: the buffer stays unknown)
        size = next((_dims(s[2]) for s in _SIZE_RE.finditer(wrapper, wrapper.find(line)) if s[1] == m[1]), None)
        made = [torch.empty(size, dtype=tensors[0].dtype, device="meta")] if size and tensors else []
        if made:
            known[m[1]] = (size, tensors[0].dtype)
        of = [n for n in graph.nodes if _source(n) in sources]
        flops = ([2 * tensors[0].shape[0] * tensors[0].shape[1] * made[0].shape[-1]]
                 if m[2].endswith("mm") and made and tensors[0].dim() == 2 and made[0].dim() == 2
                 else [f for f in map(_flops, of) if f is not None])
        lines: dict = {}
        for n in of:
            for f, ls in lines_of(n).items():
                lines[f] = sorted(set(lines.get(f, [])) | set(ls))
        out.append(entry(which, m[2], tensors, made, lines, max(flops) if flops else None))
    return out


def _source(node) -> str:
    """The node's name as Inductor's comments name its source nodes (the node it was made from)."""
    made_from = node.meta.get("from_node")
    return getattr(made_from[0], "name", node.name) if made_from else node.name


def _dims(text: str) -> list[int]:
    return [int(d) for d in text.replace(" ", "").split(",") if d]


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
