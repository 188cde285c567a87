"""Half-precision attention on sm_90 (cuDNN's kernel on an H100 with torch 2.11): a boolean padding
mask, grouped query heads, dropout and a head size of 256, fwd+bwd; then float32 (memory-efficient)."""
import torch
import torch.nn.functional as F


def _qkv(b, h, hkv, t, d, dtype):
    return (torch.randn(b, n, t, d, device="cuda", dtype=dtype, requires_grad=True) for n in (h, hkv, hkv))


def example():
    torch.manual_seed(0)

    @torch.compile
    def padded(q, k, v, keep):              # keep: (B, 1, 1, T) bool, True where a token is real
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)

    @torch.compile
    def grouped(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    @torch.compile
    def dropped(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)

    q, k, v = _qkv(2, 8, 8, 128, 64, torch.bfloat16)
    keep = (torch.arange(128, device="cuda") < torch.tensor([[100], [128]], device="cuda"))[:, None, None, :]
    padded(q, k, v, keep).float().sum().backward()
    q, k, v = _qkv(2, 8, 2, 256, 64, torch.bfloat16)
    grouped(q, k, v).float().sum().backward()
    q, k, v = _qkv(2, 4, 4, 128, 256, torch.float16)
    dropped(q, k, v).float().sum().backward()
    q, k, v = _qkv(2, 4, 4, 128, 64, torch.float32)
    grouped(q, k, v).sum().backward()
