"""Which kernel scaled_dot_product_attention runs on the target GPU: cuDNN's, flash, memory-efficient
or the math path, by the rules the CUDA build applies (aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp: a priority order, then each backend's checks), read from the attention's inputs.

The order: on sm_90 and sm_10x with a cuDNN newer than 9.15 (the CUDA 13 wheels ship 9.19), cuDNN
first, then flash, then memory-efficient (`TORCH_CUDNN_SDPA_DEPRIORITIZED=1` puts cuDNN last, as
torch does); elsewhere flash, then memory-efficient. Measured on an H100 with torch 2.11 and cuDNN
9.19 (benchmarks/sdpa_choice.py, its table in benchmarks/results/sdpa_choice.txt, which
tests/unit/test_sdpa_backend.py replays): every float16/bfloat16 attention there is cuDNN's, except
a one-query attention with dropout; float32 ones are memory-efficient.
"""
from __future__ import annotations

import os

FUSED = frozenset({"cudnn", "flash", "efficient"})
NO_BACKEND = "No viable backend for scaled_dot_product_attention was found."
CUDNN_MAX_DIM = 65535            # cuDNN takes at most this many batches and heads
CUDNN_MAX_HEAD = 256             # sm_90/sm_10x with cuDNN 9.19 (the H100's table: head size 256 is cuDNN's)


def enabled() -> frozenset:
    """The attention backends the code left enabled ("cudnn", "flash", "efficient", "math"):
    torch.backends.cuda's flags, which `torch.nn.attention.sdpa_kernel` sets while its block runs."""
    import torch
    cuda = torch.backends.cuda
    return frozenset(name for name, on in (("cudnn", cuda.cudnn_sdp_enabled()), ("flash", cuda.flash_sdp_enabled()),
                                           ("efficient", cuda.mem_efficient_sdp_enabled()),
                                           ("math", cuda.math_sdp_enabled())) if on)


def cudnn_first(major: int) -> bool:
    """Whether the GPU tries cuDNN's attention first (check_prefer_cudnn_attention)."""
    return major in (9, 10) and os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED", "").lower() not in ("1", "true", "on")


def _cudnn(query, key, value, mask, dropout: float) -> bool:
    """Whether cuDNN's attention takes these inputs (can_use_cudnn_attention, dense inputs)."""
    import torch
    if query.dtype not in (torch.float16, torch.bfloat16) or not (query.dtype == key.dtype == value.dtype):
        return False
    if torch.are_deterministic_algorithms_enabled() and not torch.is_deterministic_algorithms_warn_only_enabled():
        return False
    b, h, lq, d = query.shape
    lk, dv = key.shape[-2], value.shape[-1]
    if mask is not None:                        # check_attn_mask_shape
        if mask.requires_grad or mask.shape[-2] not in (lq, 1) or mask.shape[-1] not in (lk, 1) \
                or mask.dim() not in (2, 4) or (mask.dim() == 4 and (mask.shape[0] not in (1, b)
                                                                      or mask.shape[1] not in (1, h))):
            return False
        if mask.stride()[-1] != 1:
            return False
    return (b <= CUDNN_MAX_DIM and h <= CUDNN_MAX_DIM and d <= CUDNN_MAX_HEAD and dv <= CUDNN_MAX_HEAD
            and d % 8 == 0 and dv % 8 == 0 and lk != 1 and not (dropout > 0 and lq == 1))


def choice(query, key, value, is_causal: bool, major: int, mask=None, allowed=FUSED, dropout: float = 0.0,
           enable_gqa: bool = True) -> str | None:
    """"cudnn", "flash", "efficient", or None (the math path: leave the CPU's node) for this attention
    on sm_<major>x; `mask`: the additive mask's value (flash takes none; the memory-efficient kernel
    one whose last stride is 1, padded first where its other strides are not multiples of 8);
    `allowed`: the fused kernels the code left enabled (`sdpa_kernel`); `dropout`: its probability;
    `enable_gqa`: whether fewer key heads than query heads are grouped (else no fused kernel)."""
    import torch
    if major < 8 or query.dim() != 4 or key.shape[1] != value.shape[1] or query.shape[1] % key.shape[1] \
            or (query.shape[1] != key.shape[1] and not enable_gqa):
        return None
    head, vhead = query.shape[-1], value.shape[-1]
    if head != key.shape[-1] or head != vhead or head % 8:
        return None
    if "cudnn" in allowed and cudnn_first(major) and _cudnn(query, key, value, mask, dropout):
        return "cudnn"
    flash = "flash" in allowed and mask is None and query.dtype in (torch.float16, torch.bfloat16) and \
        head <= 256 and not (is_causal and not query.is_nested and query.shape[-2] != key.shape[-2])
    if query.shape[1] != key.shape[1]:      # grouped query heads: flash takes them, the efficient kernel
        return "flash" if flash else None   # does not (the math path, which copies k and v: as traced)
    if mask is not None and mask.stride()[-1] != 1:     # the math path (as traced)
        return None
    return "flash" if flash else "efficient" if "efficient" in allowed else None
