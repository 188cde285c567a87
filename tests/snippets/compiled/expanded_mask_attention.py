"""Attention with a mask expanded along its last dimension, as Hugging Face's bidirectional masks are
(ViT, BERT under transformers 5: shape (B, 1, L, L), strides (0, L, 1, 0)): the CPU's flash kernel
takes it, the GPU's fused kernels require the mask's last stride to be 1, so the GPU's graph has
SDPA's math path, fused by Inductor into softmax kernels (an H200: benchmarks/results/gpu_drivers.txt)."""
import torch
import torch.nn.functional as F


class SelfAttention(torch.nn.Module):
    def __init__(self, dim=192, heads=3):
        super().__init__()
        self.heads, self.qkv, self.out = heads, torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

    def forward(self, x, keep):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        mask = keep[:, None, :, None].expand(b, 1, n, n)        # last stride 0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


def example():
    torch.manual_seed(0)
    attn = SelfAttention().cuda()
    x = torch.randn(2, 65, 192, device="cuda", requires_grad=True)
    keep = torch.ones(2, 65, dtype=torch.bool, device="cuda")
    torch.compile(attn)(x, keep).sum().backward()
