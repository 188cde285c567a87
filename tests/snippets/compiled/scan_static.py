"""The linear recurrence h[t] = a[t] * h[t-1] + b[t] of scan_recurrence.py as associative_scan at
fixed sizes: torch 2.11's Inductor lowers this one (with mark_dynamic it
refuses the lifted size, on a GPU too), so the scan's kernels can be compared on the GPU machine."""
import torch
from torch._higher_order_ops.associative_scan import associative_scan


def combine(left, right):
    (a1, b1), (a2, b2) = left, right
    return a1 * a2, b1 * a2 + b2


def recurrence(a, b):
    return associative_scan(combine, (a, b), dim=1, combine_mode="pointwise")[1]


def example():
    a = torch.rand(8, 1024, device="cuda")
    b = torch.randn(8, 1024, device="cuda")
    h = torch.compile(recurrence, fullgraph=True)(a, b)
    assert h.shape == (8, 1024)
