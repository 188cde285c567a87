"""Attention of jagged nested tensors (torch.nested, layout=torch.jagged: sequences of 17, 40 and
29 tokens without padding) under torch.compile, forward and backward: bf16 and causal, which takes
flash's variable-length kernel (`aten._flash_attention_forward` with cumulative offsets), and
float32, the memory-efficient kernel's (`aten._efficient_attention_forward`). Each sequence's
output is checked against dense attention of that sequence alone."""
import torch
import torch.nn.functional as F

LENGTHS = (17, 40, 29)


def attention(q, k, v, causal):
    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                          is_causal=causal).transpose(1, 2)


def step(dtype, causal, atol):
    dense = [[torch.randn(n, 4, 64) for n in LENGTHS] for _ in range(3)]
    q, k, v = (torch.nested.nested_tensor(d, layout=torch.jagged, device="cuda", dtype=dtype, requires_grad=True)
               for d in dense)
    out = torch.compile(attention)(q, k, v, causal)
    for i in range(len(LENGTHS)):
        a, b, c = (x[i].to("cuda", dtype).float().transpose(0, 1) for x in dense)
        ref = F.scaled_dot_product_attention(a, b, c, is_causal=causal).transpose(0, 1)
        assert torch.allclose(out[i].float(), ref, atol=atol), (dtype, i, (out[i].float() - ref).abs().max())
    out.values().float().square().sum().backward()
    assert q.grad is not None and q.grad.shape == q.shape


def example():
    torch.manual_seed(0)
    step(torch.bfloat16, True, 2e-2)
    step(torch.float32, False, 1e-4)
