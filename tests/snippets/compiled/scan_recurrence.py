"""A linear recurrence h[t] = a[t] * h[t-1] + b[t] as torch.compile's associative_scan (a
higher-order op with a combine subgraph), batch size dynamic (mark_dynamic)."""
import torch
from torch._higher_order_ops.associative_scan import associative_scan


def combine(left, right):
    (a1, b1), (a2, b2) = left, right
    return a1 * a2, b1 * a2 + b2


def recurrence(a, b):
    return associative_scan(combine, (a, b), dim=1, combine_mode="pointwise")[1]


def example():
    a = torch.rand(4, 512, device="cuda")
    b = torch.randn(4, 512, device="cuda")
    torch._dynamo.mark_dynamic(a, 0)
    torch._dynamo.mark_dynamic(b, 0)
    h = torch.compile(recurrence, fullgraph=True)(a, b)
    assert h.shape == (4, 512)
