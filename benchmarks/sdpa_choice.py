"""Which kernel does scaled_dot_product_attention pick on this GPU, and does the target view pick
the same? (not a test: it prints; run it on the GPU machine)

The view traces each attention as the GPU's op by `inspectors.target.sdpa_backend.choice` (cuDNN's
first on sm_90 and sm_10x, then flash, then memory-efficient, else the math path, as the GPU's C++
entry orders them: sdp_utils.cpp). For a grid of shapes, dtypes,
masks, dropout and grouped heads, this prints torch's own choice (`torch._fused_sdp_choice` on
the GPU's tensors) beside the view's, and a count of the rows that differ.

    python3 benchmarks/sdpa_choice.py          # on the GPU machine (PYTHONPATH: the checkout)
"""
from __future__ import annotations

import itertools
import sys


def main() -> int:
    import torch
    from torch.nn.attention import SDPBackend

    from inspectors.target.sdpa_backend import choice
    if not torch.cuda.is_available():
        print("no GPU here: this compares the GPU's own choice with the view's")
        return 1
    major = torch.cuda.get_device_capability()[0]
    names = {int(b): b.name for b in (SDPBackend.ERROR, SDPBackend.MATH, SDPBackend.FLASH_ATTENTION,
                                      SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION)}
    view_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                  None: "MATH"}
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    print(f"{torch.cuda.get_device_name()} · torch {torch.__version__} · cuDNN {cudnn}")
    print(f"{'dtype':9} {'B,H,Hkv,L,S,D':22} {'causal':6} {'grad':5} {'mask':6} {'drop':5} {'GPU':20} {'view':20}")
    differ = rows = 0
    for dtype, (b, h, hkv, lq, lk, d), causal, grad, mask, drop in itertools.product(
            (torch.bfloat16, torch.float16, torch.float32),
            ((2, 4, 4, 128, 128, 64), (2, 8, 8, 1024, 1024, 128), (4, 12, 12, 197, 197, 64), (1, 8, 2, 512, 512, 64),
             (2, 4, 4, 1, 256, 64), (2, 16, 16, 2048, 2048, 256)),
            (False, True), (False, True), (None, "float", "bool"), (0.0, 0.1)):
        if causal and mask:
            continue
        q = torch.randn(b, h, lq, d, device="cuda", dtype=dtype, requires_grad=grad)
        k = torch.randn(b, hkv, lk, d, device="cuda", dtype=dtype, requires_grad=grad)
        v = torch.randn(b, hkv, lk, d, device="cuda", dtype=dtype, requires_grad=grad)
        m = None if mask is None else (torch.randn(lq, lk, device="cuda", dtype=dtype) if mask == "float"
                                       else torch.rand(lq, lk, device="cuda") > 0.2)
        gqa = h != hkv
        try:
            gpu = names.get(torch._fused_sdp_choice(q, k, v, m, drop, causal, enable_gqa=gqa), "?")
        except RuntimeError as e:
            gpu = f"error: {str(e)[:12]}"
        bias = None if m is None else (m if m.dtype != torch.bool else torch.zeros(lq, lk, dtype=dtype, device="cuda"))
        view = view_names[choice(q, k, v, causal, major, bias, dropout=drop, enable_gqa=gqa)]
        rows += 1
        differ += gpu != view
        mark = "" if gpu == view else "   <- differs"
        print(f"{str(dtype)[6:]:9} {f'{b},{h},{hkv},{lq},{lk},{d}':22} {causal!s:6} {grad!s:5} {mask or '-':6} {drop:<5} "
              f"{gpu:20} {view:20}{mark}")
    print(f"# {differ} of {rows} choices differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
