"""A compiled attention layer in training, with attention dropout and a padding mask (as BERT's and
GPT-2's layers train): the CPU takes its math path for a dropout (softmax, dropout and two matmuls
as Inductor's kernels), the GPU its memory-efficient kernel, which drops the elements itself."""
import torch
import torch.nn.functional as F


class Attention(torch.nn.Module):
    def __init__(self, d=128, h=4, p=0.1):
        super().__init__()
        self.h, self.p = h, p
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)

    def forward(self, x, keep):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        mask = keep[:, None, None, :].expand(B, 1, T, T)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=self.p if self.training else 0.0)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


def example():
    layer = torch.compile(Attention().cuda())
    x = torch.randn(2, 64, 128, device="cuda", requires_grad=True)
    keep = torch.ones(2, 64, dtype=torch.bool, device="cuda")
    keep[1, 48:] = False
    layer(x, keep).square().mean().backward()
