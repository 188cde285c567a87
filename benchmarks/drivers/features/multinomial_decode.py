"""A compiled sampling step of decoding: temperature, top-k, softmax, multinomial."""
import torch


@torch.compile
def sample(logits, temperature: float, k: int):
    logits = logits / temperature
    v, _ = torch.topk(logits, k)
    logits = logits.masked_fill(logits < v[:, -1:], float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1)


def example():
    logits = torch.randn(4, 32000, device="cuda")
    tok = sample(logits, 0.8, 50)
    assert tok.shape == (4, 1)
