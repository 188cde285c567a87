"""torchao's blockwise fp8 GEMM (torchao 0.18.0, the DeepSeek-V3 recipe): the activation
quantized in 1x128 groups, the weight (K x N) in 128x128 blocks, then the autotuned fp8 GEMM.
(The transposed weight quantizer fails Triton 3.9's front end, "too many indices for tensor of
rank 0": the tool shows that error at the library's line.)"""
import torch
from torchao.prototype.blockwise_fp8_training.kernels import (
    triton_fp8_blockwise_act_quant_lhs, triton_fp8_blockwise_weight_quant_rhs, triton_fp8_gemm_1x128_128x128)


def example():
    M, K, N = 1024, 2048, 1024
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    xq, xs = triton_fp8_blockwise_act_quant_lhs(x, 128)
    wq, ws = triton_fp8_blockwise_weight_quant_rhs(w, 128)
    return triton_fp8_gemm_1x128_128x128(xq, wq, xs, ws, 128, torch.bfloat16)
