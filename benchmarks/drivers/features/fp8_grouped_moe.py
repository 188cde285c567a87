"""torchao's float8 MoE training (prototype.moe_training): each expert group's tokens and weights
quantized rowwise to float8 by Triton kernels, then one torch._scaled_grouped_mm, forward and backward."""
import torch
from torchao.prototype.moe_training import _to_fp8_rowwise_then_scaled_grouped_mm as fp8_grouped_mm


def example():
    experts, d, hidden = 4, 256, 512
    tokens = torch.randn(1024, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    # (E, N, K) transposed to (E, K, N): per-group column-major, as the op asks
    w = torch.randn(experts, hidden, d, device="cuda", dtype=torch.bfloat16).transpose(-2, -1).requires_grad_()
    offs = torch.tensor([256, 512, 768, 1024], device="cuda", dtype=torch.int32)
    # each group's 256 tokens a multiple of 16 already: the op's padding (its default, which torchao 0.18
    # asserts is not supported yet) is not asked for
    out = fp8_grouped_mm(tokens, w, offs, out_dtype=torch.bfloat16, pad_token_groups_for_grouped_mm=False)
    out.float().square().mean().backward()
