"""FlexAttention as a packed-document model uses it, under torch.compile, forward and backward:
a block mask from document ids (causal within each document), a tanh soft-capping score_mod,
and GQA (8 query heads over 2 key/value heads)."""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

SEQ, DIM = 256, 64


def example():
    docs = torch.repeat_interleave(torch.arange(4, device="cuda"), SEQ // 4)

    def document_causal(b, h, q_idx, kv_idx):
        return (docs[q_idx] == docs[kv_idx]) & (q_idx >= kv_idx)

    def soft_cap(score, b, h, q_idx, kv_idx):
        return 30.0 * torch.tanh(score / 30.0)

    mask = create_block_mask(document_causal, 1, 1, SEQ, SEQ, device="cuda")
    q = torch.randn(1, 8, SEQ, DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(1, 2, SEQ, DIM, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    attention = torch.compile(flex_attention)
    out = attention(q, k, v, score_mod=soft_cap, block_mask=mask, enable_gqa=True)
    out.sum().backward()
    assert out.shape == (1, 8, SEQ, DIM) and q.grad.shape == q.shape and k.grad.shape == k.shape
