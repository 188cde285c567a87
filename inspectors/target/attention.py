"""scaled_dot_product_attention in a torch.compile graph, as the target GPU's graph has it.

AOTAutograd traces the code on the view's CPU tensors, where `scaled_dot_product_attention`
picks its CPU kernel, `_scaled_dot_product_flash_attention_for_cpu` (and its backward). On the
GPU it picks by the rules the CUDA build applies (inspectors/target/sdpa_backend.py): on sm_90
cuDNN's `_scaled_dot_product_cudnn_attention` for fp16/bf16, on sm_80 `_scaled_dot_product_flash_attention`,
else `_scaled_dot_product_efficient_attention`. cuDNN's is traced as the GPU's op itself
(`_gpu_attention`: its meta function lays its output out as the query, its autograd formula saves
what its backward takes), the others rewritten after the trace (`as_on_gpu`). All are
kernels of their own that Inductor calls, not Triton kernels; but their outputs' layouts (and
the strides their inputs must have: Inductor's `sdpa_constraint`) decide the copies and
transposes Inductor fuses around them, and the names of every kernel after (a GPT's backward
had one transpose kernel more, and every later kernel another number).

`as_on_gpu(gm, fakes, ...)` rewrites the graph Inductor compiles for the target (not the one
that runs on the CPU) in place: each CPU attention node becomes the GPU's, with the arguments
the GPU's autograd formula passes (the forward's philox state, the logsumexp padded to 32 rows
as the memory-efficient kernel returns it, an attention mask expanded to the attention's shape as
the GPU's bias, padded first where its strides are not multiples of 8, as the GPU's SDPA pads it:
a static KV cache of 19 positions). Left as traced, and said by the caller's docs: heads of
different sizes, grouped query attention the flash kernel cannot take (the GPU's math path copies
k and v per query head), an AMD target or an NVIDIA one before sm_80.

An attention with dropout, or with a mask the GPU pads, is traced as the GPU's op itself
(`_gpu_attention`): the forward saves its philox seed and offset, and the padded mask, for the
backward, as on a GPU (which pads once, in the forward), and the CPU graph that runs has the CPU's
flash kernel in its place (`attention_cpu.without_dropout`). A mask whose last dimension is not contiguous
(Hugging Face's expanded bidirectional masks) the GPU's fused kernels refuse, the CPU's take: such
an attention is traced on the math path, the GPU's (`traced_as_on_gpu` installs both). Backends
the code restricts (`sdpa_kernel`: `enabled()`) decide the GPU's choice while traced, and whether
eager code in the view runs at all (`eager`).
"""
from __future__ import annotations

import contextlib
import operator


from inspectors.target.sdpa_backend import FUSED, NO_BACKEND, choice as _choice, enabled

CUDNN_MASKED = -65504.0     # a boolean mask's masked value as cuDNN's entry makes it (fp16's lowest; not -inf)


def eager(func, args, kwargs, major: int):
    """F.scaled_dot_product_attention run in the view while the code restricts the backends
    (`sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION])`, which the CPU has not): the GPU's choice
    decides whether it runs (its error where it finds none), the CPU's own kernels compute it.
    NotImplemented for any other call."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if func is not torch._C._nn.scaled_dot_product_attention or (allowed := enabled()) == FUSED | {"math"}:
        return NotImplemented
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
    given = {**dict(zip(names, args)), **kwargs}
    q, k, v = given["query"], given["key"], given["value"]
    if _choice(q, k, v, given.get("is_causal", False), major, given.get("attn_mask"), allowed,
               given.get("dropout_p", 0.0), given.get("enable_gqa", False)) is None \
            and "math" not in allowed and major >= 8:          # (before sm_80 the choice is not modelled)
        raise RuntimeError(NO_BACKEND)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        return func(*args, **kwargs)


def _aligned(mask) -> bool:
    """Whether the memory-efficient kernel takes `mask` as it is (preprocess_mask in ATen's
    attention.cpp): every stride but the last a multiple of 8 (a symbolic one counts as not)."""
    return mask.stride()[-1] == 1 and all(isinstance(s, int) and s % 8 == 0 for s in mask.stride()[:-1])


def _padded(mask) -> bool:
    """Whether the GPU's SDPA pads `mask` before its memory-efficient kernel (`_aligned`)."""
    return mask is not None and mask.dim() > 0 and mask.stride()[-1] == 1 and not _aligned(mask)


def _bias(graph, node, mask, query, key):
    """The GPU's attention bias: the mask expanded to (B, H, Lq, Lk) before `node` (None: none);
    a mask the kernel cannot take as it is padded first, as the GPU's SDPA pads it: its last
    dimension to the next multiple of 8 and more (8 where it is one), then sliced back."""
    import torch
    aten = torch.ops.aten
    if mask is None:
        return None
    with graph.inserting_before(node):
        value = mask.meta["val"]
        if not _aligned(value):
            last = value.shape[-1]
            padded = graph.call_function(aten.constant_pad_nd.default, (mask, [0, 8 - last % 8], 0.0))
            _valued(padded)
            mask = graph.call_function(aten.slice.Tensor, (padded, -1, 0, last))
            _valued(mask)
        bias = graph.call_function(aten.expand.default,
                                   (mask, [query.shape[0], query.shape[1], query.shape[2], key.shape[2]]))
    _valued(bias)
    return bias


def as_on_gpu(gm, fakes: list, backend: str, major: int) -> bool:
    """The CPU attention nodes of `gm` (devices already the target's; `fakes`: its inputs, in
    placeholder order, changed where the GPU's input differs) made the GPU's. True if any."""
    import torch
    aten = torch.ops.aten
    if backend != "cuda":
        return False
    graph, changed = gm.graph, False
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    cuda = torch.device("cuda", 0)

    def val(node):
        return node.meta.get("val") if isinstance(node, torch.fx.Node) else None

    for node in list(graph.nodes):
        if node.target is aten._scaled_dot_product_flash_attention_for_cpu.default:
            q, k, v = (val(a) for a in node.args[:3])
            dropout = node.args[3] if len(node.args) > 3 else node.kwargs.get("dropout_p", 0.0)
            causal = node.args[4] if len(node.args) > 4 else node.kwargs.get("is_causal", False)
            mask = node.kwargs.get("attn_mask")
            if q is None:
                continue
            kind = _choice(q, k, v, causal, major, val(mask))
            if kind == "flash":
                node.target = aten._scaled_dot_product_flash_attention.default
                node.args = (*node.args[:3], dropout, causal, False)
            elif kind == "efficient":
                grad = any(u.args[1:2] == (1,) for u in node.users)    # its logsumexp is used (saved)
                node.target = aten._scaled_dot_product_efficient_attention.default
                node.args = (*node.args[:3], _bias(graph, node, mask, q, k), grad, dropout, causal)
            else:
                continue
            node.kwargs = {"scale": node.kwargs.get("scale")}
            _valued(node)
            changed = True
        elif node.target is aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
            grad_out, q, k, v, out, lse, dropout, causal = node.args[:8]
            qv, kv, vv = val(q), val(k), val(v)
            mask = node.kwargs.get("attn_mask")
            if qv is None:
                continue
            kind = _choice(qv, kv, vv, causal, major, val(mask))
            if kind not in ("flash", "efficient"):        # the math path (cuDNN's op is traced as the GPU's)
                continue
            with graph.inserting_before(node):     # the forward's philox state (dropout off: unused)
                seed = graph.call_function(aten.empty.memory_format, ([2],),
                                           {"dtype": torch.int64, "device": cuda})
                offset = graph.call_function(aten.empty.memory_format, ([0],),
                                             {"dtype": torch.int64, "device": cuda})
            if kind == "flash":
                node.target = aten._scaled_dot_product_flash_attention_backward.default
                node.args = (grad_out, q, k, v, out, lse, None, None, qv.shape[-2], kv.shape[-2], dropout, causal,
                             seed, offset)
            else:
                node.target = aten._scaled_dot_product_efficient_attention_backward.default
                node.args = (grad_out, q, k, v, _bias(graph, node, mask, qv, kv), out, lse, seed, offset, dropout,
                             [True, True, True, False], causal)
            node.kwargs = {"scale": node.kwargs.get("scale")}
            _saved_as_on_gpu(kind, (out, lse), (qv, kv, vv), placeholders, fakes)
            for made in (seed, offset, node):
                _valued(made)
            changed = True
    if changed:
        graph.lint()
        gm.recompile()
    return changed



def _saved_as_on_gpu(kind: str, saved, qkv, placeholders: list, fakes: list) -> None:
    """The forward's output and logsumexp, where the backward takes them as inputs (saved
    tensors), with the GPU kernel's layout: its output in (B, T, H, D) memory, the
    memory-efficient kernel's logsumexp padded to 32 rows (the forward's meta function says)."""
    import torch
    aten = torch.ops.aten
    mode = qkv[0].fake_mode
    with mode:
        made = aten._scaled_dot_product_flash_attention.default(*qkv) if kind == "flash" else \
            aten._scaled_dot_product_efficient_attention.default(*qkv, None, True)
    for node, like in zip(saved, made[:2]):
        if node in placeholders:
            with mode:
                fake = torch.empty_strided(like.shape, like.stride(), dtype=like.dtype, device=like.device)
            fakes[placeholders.index(node)] = node.meta["val"] = fake


def _valued(node) -> None:
    """The node's value (a fake tensor, in the graph's fake mode) and its getitems' made again."""
    import torch
    from torch._guards import detect_fake_mode
    from torch.utils import _pytree as pytree

    def val(a):
        return a.meta["val"] if isinstance(a, torch.fx.Node) else a
    args, kwargs = pytree.tree_map(val, (node.args, node.kwargs))
    mode = detect_fake_mode(pytree.tree_leaves((args, kwargs)))
    with mode if mode is not None else torch._subclasses.fake_tensor.FakeTensorMode():
        node.meta["val"] = node.target(*args, **kwargs)
    was = node.meta.get("original_aten")
    node.meta["original_aten"] = node.target        # the op Inductor names the kernels after
    for user in node.users:
        if user.target is operator.getitem:
            user.meta["val"] = node.meta["val"][user.args[1]]
            if user.meta.get("original_aten") is was:
                user.meta["original_aten"] = node.target


def traced_as_on_gpu(set_, major: int) -> None:
    """scaled_dot_product_attention traced on the path the GPU takes where the CPU's differs
    (Python dispatcher on, fake tensors). With dropout the CPU takes its math path (softmax, dropout
    and two matmuls: kernels of Inductor's), the GPU its flash or memory-efficient kernel, which
    take the dropout themselves: traced as the GPU's op (`_gpu_attention`; `attention_cpu.without_dropout` makes
    the graph that runs on the CPU one the CPU's flash kernel can run: attention_cpu). With a mask whose last stride is not 1 the CPU takes its flash kernel, the GPU its math
    path: traced on the math path. `set_(obj, name, value)` records the undo."""
    import torch
    from torch._C import DispatchKey
    from torch._subclasses.fake_tensor import is_fake
    from torch.nn.attention import SDPBackend
    op = torch.ops.aten.scaled_dot_product_attention.default
    composite = DispatchKey.CompositeImplicitAutograd

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        allowed, fake = enabled(), is_fake(query)
        kind = _choice(query, key, value, is_causal, major, attn_mask, allowed, dropout_p, enable_gqa) if fake else None
        # cuDNN's attention (sm_90's choice for half precision), or one with dropout or a mask the GPU pads
        # (its padded copy is what the forward saves for the backward): the GPU's op itself, as its C++
        # entry calls it
        as_gpu = fake and kind is not None and (kind == "cudnn" or not enable_gqa and (dropout_p > 0 or _padded(attn_mask)))
        # a mask whose last dimension is not contiguous (an expanded one: Hugging Face's bidirectional
        # masks): the CPU's kernels take it, the GPU's fused ones do not (sdp_utils.cpp,
        # check_last_dim_stride_equals_1_dense): the GPU's math path, the CPU's C++ entry made to take it
        math = fake and attn_mask is not None and attn_mask.stride(-1) != 1
        if fake and allowed != FUSED | {"math"}:    # the code's sdpa_kernel([...]): decided here
            if kind is None and "math" not in allowed and major >= 8:
                raise RuntimeError(NO_BACKEND)
            as_gpu, math = kind is not None, kind is None
        if not as_gpu:
            with torch.nn.attention.sdpa_kernel([SDPBackend.MATH]) if math else contextlib.nullcontext():
                return op._op_dk(composite, query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                 enable_gqa=enable_gqa)
        if attn_mask is not None and attn_mask.dtype == torch.bool:    # as the C++ entry converts it
            masked = CUDNN_MASKED if kind == "cudnn" else float("-inf")    # (convert_boolean_attn_mask_)
            attn_mask = torch.where(attn_mask, 0.0, torch.scalar_tensor(masked, dtype=query.dtype,
                                                                        device=attn_mask.device))
        return _gpu_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, kind)
    set_(op, "py_kernels", {**op.py_kernels, composite: sdpa})
    set_(op, "_dispatch_cache", {})


_BACKEND_QUESTIONS = (("_can_use_flash_attention", "flash"), ("_can_use_mem_efficient_attention", "efficient"))


def answered_as_on_gpu(major: int):
    """While the view lasts: torch._C's can_use_flash / can_use_efficient questions answered as the
    GPU's rules answer them, for fake tensors and for the view's jagged nested tensors, and the
    GPU's variable-length ops (`_flash_attention_forward`, `_efficient_attention_forward` and their
    backwards) given attention_cpu's stand-ins as their CPU kernels. causal_lower_right
    (torch.nn.attention.bias) asks the questions itself and Dynamo folds the answers into the
    graph: on the CPU's tensors no, and the mask is materialized (a Triton kernel of its own);
    the GPU runs its flash kernel (half precision; its is_causal is lower-right there) or the
    memory-efficient kernel with its own lower-right mask (float32, custom_mask_type 2). torch's
    nested SDPA asks them too, traced or eager: the GPU takes the variable-length kernels (eager,
    the CPU has no backend for a causal jagged attention). Returns the undo."""
    import torch
    from inspectors.target import attention_cpu
    saved = {name: getattr(torch._C, name) for name, _ in _BACKEND_QUESTIONS}
    for name, kind in _BACKEND_QUESTIONS:
        setattr(torch._C, name, _answered_as_gpu(saved[name], kind, major))
    kernels = attention_cpu.varlen_cpu_kernels()

    def undo():
        for name, fn in saved.items():
            setattr(torch._C, name, fn)
        kernels._destroy()
    return undo


def _answered_as_gpu(cpu_answer, kind: str, major: int):
    """torch._C's can_use_<kind> question answered for fake tensors as the GPU's rules answer it,
    and for jagged nested tensors (traced or eager; torch's nested SDPA makes their values plain
    CPU tensors before it asks): torch's nested SDPA then takes the GPU's variable-length op,
    whose CPU kernel is attention_cpu's."""
    from torch._subclasses.fake_tensor import is_fake

    def can_use(params, debug=False):
        if not (params.query.is_nested or is_fake(params.query)):     # a dense attention run eagerly
            return cpu_answer(params, debug)
        return _choice(params.query, params.key, params.value, params.is_causal, major, params.attn_mask,
                       enabled() & {kind}, params.dropout, params.enable_gqa) == kind
    return can_use


def _gpu_attention(query, key, value, mask, dropout_p: float, is_causal: bool, scale, kind: str):
    """An attention as the GPU's C++ entry runs it with the backend `kind` ("cudnn", "flash",
    "efficient"): cuDNN's op (sm_90's choice for half precision: the mask as given, GQA's heads as
    they are), or the flash or memory-efficient op for dropout, a mask the GPU pads, or backends the
    code restricted (their meta functions and autograd formulas serve fake CPU tensors; a mask the
    memory-efficient kernel's bias, padded where ATen pads it and expanded to the attention's shape),
    whose philox seed and offset the forward saves for the backward, as AOTAutograd's partitioner
    sees on a GPU (GPT-2's dropout: 4 saved tensors more, and Inductor's memory-planned order of the
    backward's kernels with them)."""
    import torch
    aten = torch.ops.aten
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    if kind == "cudnn":
        return aten._scaled_dot_product_cudnn_attention(query, key, value, mask, grad, dropout_p, is_causal, False,
                                                        scale=scale)[0]
    if kind == "flash":
        scale = query.shape[-1] ** -0.5 if scale is None else scale     # the C++ entry passes it computed
        return aten._scaled_dot_product_flash_attention(query, key, value, dropout_p, is_causal, False,
                                                        scale=scale)[0]
    if mask is not None and not _aligned(mask):        # padded and sliced back, as the GPU's SDPA does
        last = mask.shape[-1]
        mask = aten.constant_pad_nd(mask, [0, 8 - last % 8], 0.0)[..., :last]
    bias = None if mask is None else mask.expand(*query.shape[:-1], key.shape[-2])
    return aten._scaled_dot_product_efficient_attention(query, key, value, bias, grad, dropout_p, is_causal,
                                                        scale=scale)[0]


def propagate(gm, mode, fakes: list) -> None:
    """The target graph's values propagated again from `fakes`. Where the GPU's attention layout
    makes a traced view invalid (the CPU's output was contiguous, so the code's `.contiguous()`
    before it left nothing in the graph), the view gets the clone that `.contiguous()` makes on the
    GPU (nn.MultiheadAttention's output). In a backward graph, where the view's input is a saved
    tensor permuted, the GPU's backward has that clone saved by its forward (AOTAutograd's
    partitioner saw it in the joint graph): here it becomes an input of the graph (appended to
    `fakes`), so no copy kernel is made that the GPU's backward has not."""
    import torch
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp
    aten = torch.ops.aten
    moves = (aten.permute.default, aten.transpose.int)

    class Prop(FakeTensorProp):
        def run_node(self, n):
            try:
                return super().run_node(n)
            except ValueError:
                if n.target not in (aten.view.default, aten._unsafe_view.default):
                    raise
            base = n.args[0]
            while base.op == "call_function" and base.target in moves:
                base = base.args[0]
            if base.op == "placeholder" and base is not n.args[0]:
                last = [p for p in n.graph.nodes if p.op == "placeholder"][-1]
                with n.graph.inserting_after(last):
                    saved = n.graph.placeholder(f"{base.name}_contiguous")
                value = self.env[n.args[0]].clone(memory_format=torch.contiguous_format)
                saved.meta["val"] = self.env[saved] = value
                fakes.append(value)
                n.args = (saved, *n.args[1:])
                return super().run_node(n)
            with n.graph.inserting_before(n):
                clone = n.graph.call_function(aten.clone.default, (n.args[0],),
                                              {"memory_format": torch.contiguous_format})
            clone.meta.update({k: n.meta[k] for k in ("stack_trace", "nn_module_stack", "seq_nr") if k in n.meta})
            clone.meta["original_aten"] = aten.clone.default
            self.env[clone] = super().run_node(clone)
            n.args = (clone, *n.args[1:])
            return super().run_node(n)

    try:
        Prop(gm, mode).propagate_dont_convert_inputs(*fakes)
    finally:                                   # a clone made before an op failed is kept
        gm.graph.lint()
        gm.recompile()
