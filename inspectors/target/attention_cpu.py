"""The GPU's attention ops as the graph that runs on the CPU runs them: the view traces cuDNN's,
flash's and the memory-efficient kernel's ops (inspectors/target/attention.py), whose meta functions
and autograd formulas serve fake CPU tensors but which have no CPU kernel. `without_dropout(gm)`
swaps each for its stand-in here (the CPU's flash kernel, or masked attention in float32 for the
memory-efficient kernel's own causal masks), dropout off (the values differ from a GPU's by the
dropped elements), outputs laid out as the GPU's meta functions lay them."""
from __future__ import annotations


def _lower_right(q, k, is_causal: bool):
    """(is_causal, attn_mask) for the CPU's flash kernel where the GPU's flash op is causal: its
    is_causal is lower-right (causal_lower_right calls it so), the CPU's upper-left, which differ
    where the query and key lengths do: there the mask, additive."""
    import torch
    m, n = q.shape[-2], k.shape[-2]
    if not is_causal or m == n:
        return is_causal, None
    keep = torch.arange(n)[None, :] <= torch.arange(m)[:, None] + (n - m)
    return False, torch.zeros(m, n, dtype=q.dtype).masked_fill(~keep, float("-inf"))


def _cpu_flash(q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    """The GPU's flash forward as the CPU graph runs it (dropout off): its 9 outputs."""
    import torch
    causal, mask = _lower_right(q, k, is_causal)
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask,
                                                                         scale=scale)
    state = torch.zeros(2, dtype=torch.int64)
    return out, lse, None, None, q.shape[-2], k.shape[-2], state, state[0], torch.empty(0, dtype=q.dtype)


def _cpu_flash_backward(grad, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, dropout_p, is_causal, seed, offset,
                        *, scale=None):
    import torch
    causal, mask = _lower_right(q, k, is_causal)
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        grad, q, k, v, out, lse, 0.0, causal, attn_mask=mask, scale=scale)


def _spans(cu_q, cu_k):
    """Each sequence's (query rows, key rows) of a jagged nested tensor's attention, from the
    cumulative offsets of its variable-length op."""
    for i in range(cu_q.numel() - 1):
        yield slice(int(cu_q[i]), int(cu_q[i + 1])), slice(int(cu_k[i]), int(cu_k[i + 1]))


def _varlen(q, k, v, cum_q, cum_k, is_causal: bool, scale):
    """Flash's variable-length attention (a jagged nested tensor's: (total, H, K) tensors; causal
    from the bottom right, as flash's) by the CPU's flash kernel one sequence at a time:
    (out (total_q, H, K), logsumexp (H, total_q))."""
    import torch
    outs, lses = [], []
    for rows, cols in _spans(cum_q, cum_k):
        qi, ki, vi = (t[at].transpose(0, 1)[None] for t, at in ((q, rows), (k, cols), (v, cols)))
        causal, mask = _lower_right(qi, ki, is_causal)
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(qi, ki, vi, 0.0, causal, attn_mask=mask,
                                                                             scale=scale)
        outs.append(out[0].transpose(0, 1))
        lses.append(lse[0])
    return torch.cat(outs), torch.cat(lses, dim=-1).float()


def _cpu_flash_varlen(q, k, v, cum_q, cum_k, max_q, max_k, dropout_p, is_causal, return_debug_mask=False, *,
                      scale=None, **unused):
    """The GPU's `_flash_attention_forward` (a jagged nested tensor's attention) as the CPU graph runs
    it (dropout off): its 5 outputs, the logsumexp shaped as its meta function's."""
    import torch
    out, lse = _varlen(q, k, v, cum_q, cum_k, is_causal, scale)
    state = torch.zeros(2, dtype=torch.int64)
    return out, lse, state, state[0], torch.empty(0, dtype=q.dtype)


def _cpu_flash_varlen_backward(grad, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, dropout_p, is_causal, seed,
                               offset, *, scale=None, **unused):
    import torch
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        o, _ = _varlen(*leaves, cum_q, cum_k, is_causal, scale)
        return torch.autograd.grad(o, leaves, grad)


def _with_autograd(fn):
    """`fn` with autograd on where the dispatcher calls it as an op's kernel (below autograd: a
    backward stand-in's `torch.autograd.grad` would find no graph), as where a graph calls it."""
    import functools

    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        import torch
        from torch._C import DispatchKey
        exclude = torch._C._dispatch_tls_local_exclude_set()
        for key in (DispatchKey.AutogradFunctionality, DispatchKey.ADInplaceOrView, DispatchKey.AutogradOther,
                    DispatchKey.AutogradNestedTensor):
            exclude = exclude.remove(key)
        with torch._C._ForceDispatchKeyGuard(torch._C._dispatch_tls_local_include_set(), exclude):
            return fn(*args, **kwargs)
    return kernel


def varlen_cpu_kernels():
    """A torch.library of the GPU's variable-length attention ops' CPU kernels (they have none):
    these stand-ins, for a jagged nested tensor's attention run eagerly in the view. `_destroy()`
    removes them."""
    import torch
    lib = torch.library.Library("aten", "IMPL")
    for op, fn in (("_flash_attention_forward", _cpu_flash_varlen), ("_efficient_attention_forward", _cpu_efficient_forward),
                   ("_flash_attention_backward", _with_autograd(_cpu_flash_varlen_backward)),
                   ("_efficient_attention_backward", _with_autograd(_cpu_efficient_backward_))):
        lib.impl(op, fn, "CPU")
    return lib


def _cpu_efficient(q, k, v, bias, compute_lse, dropout_p=0.0, is_causal=False, *, scale=None):
    import torch
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, is_causal, attn_mask=bias,
                                                                         scale=scale)
    state = torch.zeros((), dtype=torch.int64)
    return out, lse, state, state


def _cpu_efficient_backward(grad, q, k, v, bias, out, lse, seed, offset, dropout_p, grad_input_mask,
                            is_causal=False, *, scale=None):
    import torch
    return (*torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        grad, q, k, v, out, lse, 0.0, is_causal, attn_mask=bias, scale=scale), None)


def _masked(q, k, v, bias, mask_type: int, scale):
    """Attention of (B, H, M, K) tensors with the memory-efficient kernel's own causal mask
    (custom_mask_type 1: from the top left, 2: from the bottom right), in float32: (out, logsumexp)."""
    import torch
    scores = (q.float() @ k.float().transpose(-2, -1)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    if bias is not None:
        scores = scores + bias.float()
    if mask_type:
        m, n = q.shape[-2], k.shape[-2]
        rows = torch.arange(m)[:, None] + (n - m if mask_type == 2 else 0)
        scores = scores.masked_fill(torch.arange(n)[None, :] > rows, float("-inf"))
    lse = scores.logsumexp(-1)
    return ((scores - lse[..., None]).exp() @ v.float()).to(q.dtype), lse


def _masked_bmhk(q, k, v, bias, cu_q, cu_k, mask_type: int, scale):
    """`_masked` of (B, M, H, K) tensors, each sequence alone where cumulative offsets are given (a
    jagged nested tensor's: B is 1, the sequences one after another): (out (B, M, H, K), [logsumexp
    (1, H, rows) of each sequence] or [(B, H, M)])."""
    import torch
    if cu_q is None:
        out, lse = _masked(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), bias, mask_type, scale)
        return out.transpose(1, 2), [lse]
    outs, lses = [], []
    for rows, cols in _spans(cu_q, cu_k):
        out, lse = _masked(q[:, rows].transpose(1, 2), k[:, cols].transpose(1, 2), v[:, cols].transpose(1, 2), None,
                           mask_type, scale)
        outs.append(out.transpose(1, 2))
        lses.append(lse)
    return torch.cat(outs, dim=1), lses


def _cpu_efficient_forward(q, k, v, bias, cu_q, cu_k, max_q, max_k, dropout_p, mask_type, compute_lse=False, *,
                           scale=None, seqlen_k=None, window_size=None):
    """The GPU's `_efficient_attention_forward` ((B, M, H, K) tensors: causal_lower_right's float32
    kernel, a jagged nested tensor's attention) as the CPU graph runs it (dropout off), its outputs
    shaped as its meta function's."""
    import torch
    out, lses = _masked_bmhk(q, k, v, bias, cu_q, cu_k, mask_type, scale)
    rows = -(-(q.shape[1] if cu_q is None else max_q) // 32) * 32 if compute_lse else 0
    lse = torch.cat([torch.nn.functional.pad(lse, (0, max(0, rows - lse.shape[-1])))[..., :rows] for lse in lses])
    state = torch.zeros((), dtype=torch.int64)
    return out, lse, state, state, q.shape[1], k.shape[1]


def _cpu_efficient_backward_(grad, q, k, v, bias, out, cu_q, cu_k, max_q, max_k, lse, dropout_p, seed, offset,
                             mask_type, bias_requires_grad, *, scale=None, num_splits_key=None, window_size=None,
                             shared_storage_dqdkdv=False):
    import torch
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        o, _ = _masked_bmhk(*leaves, bias, cu_q, cu_k, mask_type, scale)
        grads = torch.autograd.grad(o, leaves, grad)
    return (*grads, None)


def _laid_as(t, like):
    """`t`'s values in `like`'s layout (the meta function's, which the traced graph's views assume)."""
    if t.stride() == like.stride():
        return t
    return like.copy_(t)


def _cpu_cudnn(q, k, v, bias, compute_lse, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    """cuDNN's forward as the CPU graph runs it (dropout off): its 9 outputs, laid out as its meta
    function lays them (the output in the query's dimension order, the logsumexp (B, H, Lq, 1))."""
    import torch
    from torch._meta_registrations import alloc_with_matching_layout
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, is_causal, attn_mask=bias,
                                                                         scale=scale)
    out = _laid_as(out, alloc_with_matching_layout(q, (*q.shape[:-1], v.shape[-1])))
    state = torch.zeros((), dtype=torch.int64)
    return out, lse.unsqueeze(-1), None, None, q.shape[-2], k.shape[-2], state, state, None


def _cpu_cudnn_backward(grad, q, k, v, out, lse, seed, offset, bias, cum_q, cum_k, max_q, max_k, dropout_p,
                        is_causal, *, scale=None):
    import torch
    grads = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
        grad, q, k, v, out, lse.squeeze(-1), 0.0, is_causal, attn_mask=bias, scale=scale)
    # each gradient in its input's layout (the meta function's empty_like), copied only where it differs
    return tuple(g if g.stride() == t.stride() else torch.empty_like(t).copy_(g) for g, t in zip(grads, (q, k, v)))


def without_dropout(gm) -> None:
    """The CPU graph that runs: its flash attention nodes (forward, backward) without dropout,
    which the CPU's kernel refuses (the values differ from a GPU's by the dropped elements), and
    the GPU's attention ops traced for dropout (`_gpu_attention`) as the CPU's flash kernel."""
    import torch
    aten = torch.ops.aten
    changed = False
    stand_ins = {aten._scaled_dot_product_cudnn_attention.default: _cpu_cudnn,
                 aten._scaled_dot_product_cudnn_attention_backward.default: _cpu_cudnn_backward,
                 aten._scaled_dot_product_flash_attention.default: _cpu_flash,
                 aten._scaled_dot_product_flash_attention_backward.default: _cpu_flash_backward,
                 aten._scaled_dot_product_efficient_attention.default: _cpu_efficient,
                 aten._scaled_dot_product_efficient_attention_backward.default: _cpu_efficient_backward,
                 aten._flash_attention_forward.default: _cpu_flash_varlen,
                 aten._flash_attention_backward.default: _cpu_flash_varlen_backward,
                 aten._efficient_attention_forward.default: _cpu_efficient_forward,
                 aten._efficient_attention_backward.default: _cpu_efficient_backward_}
    for node in gm.graph.nodes:
        if node.target in stand_ins:
            node.target = stand_ins[node.target]
            changed = True
            continue
        if node.target is aten._scaled_dot_product_flash_attention_for_cpu.default and len(node.args) > 3:
            at = 3
        elif node.target is aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
            at = 6
        else:
            continue
        if node.args[at]:
            node.args = (*node.args[:at], 0.0, *node.args[at + 1:])
            changed = True
        if at == 3 and node.kwargs.get("dropout_p"):
            node.kwargs = {**node.kwargs, "dropout_p": 0.0}
            changed = True
    if changed:
        gm.recompile()
