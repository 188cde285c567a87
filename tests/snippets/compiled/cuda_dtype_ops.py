"""Ops whose CUDA kernels take dtypes the CPU's refuse (benchmarks/results/cuda_dtype_survey.txt), in
eager code and under torch.compile: nansum of complex, abs, softsign and trace of bool, rrelu of
float16. On the GPU each runs; on the target each gives CUDA's dtype."""
import torch
import torch.nn.functional as F

def f(x, y, h):
    return torch.nansum(x), torch.abs(y), F.softsign(y), torch.trace(y.view(2, 2)), F.rrelu(h)

def example():
    c = torch.tensor([1 + 1j, float("nan") + 0j, 2 - 1j, 3j], device="cuda")
    b = torch.tensor([True, False, False, True], device="cuda")
    h = torch.randn(64, device="cuda", dtype=torch.float16)
    eager = f(c, b, h)
    compiled = torch.compile(f)(c, b, h)
    assert compiled[0].dtype == torch.complex64 and compiled[1].dtype == torch.bool and compiled[3].dtype == torch.int64
    assert compiled[4].dtype == torch.float16 and eager[3].item() == 2
