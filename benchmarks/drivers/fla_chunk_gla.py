"""flash-linear-attention's chunked gated linear attention (fla-core 0.6.0), forward: the
library's own Triton kernels and autotuners, as a model calls it on an H100."""
import torch
from fla.ops.gla import chunk_gla


def example():
    B, T, H, K, V = 2, 1024, 4, 64, 64
    q = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16)
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, K, device="cuda", dtype=torch.float32))
    o, _ = chunk_gla(q, k, v, g)
    return o
