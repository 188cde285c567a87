"""The seeds' kernels (kernels/) launched once each at a size `scale` picks (1: the sizes their
talks benchmark, a few tens to a few hundred µs on an H200; 1/4, 1/16: smaller), for
benchmarks/time_estimates.py. Inputs made once per process: a second run (the measurement's)
launches the same kernels on the same tensors."""
import functools

import torch

from kernels import add_mul_act, gelu, matmul, softmax, transpose, vector_add


@functools.cache
def _inputs(scale: float):
    dev, n = "cuda", lambda k: max(16, int(k * scale))
    side = lambda k: max(64, int(k * scale ** 0.5) // 64 * 64)       # a matrix's side: its area scales
    mm = side(4096)
    return {
        "add": (torch.rand(n(2 ** 26), device=dev), torch.rand(n(2 ** 26), device=dev)),
        "softmax": torch.randn(n(16384), 4096, device=dev),
        "gelu": torch.randn(n(2 ** 25), device=dev),
        "mm": (torch.randn(mm, mm, device=dev, dtype=torch.float16), torch.randn(mm, mm, device=dev, dtype=torch.float16)),
        "t": torch.randn(side(8192), side(8192), device=dev),
        "ama": (torch.randn(n(16384), 4096, device=dev), torch.randn(n(16384), 4096, device=dev),
                torch.randn(4096, device=dev)),
    }


def run(scale: float) -> None:
    x = _inputs(scale)
    vector_add.add(*x["add"])
    softmax.softmax(x["softmax"])
    gelu.gelu(x["gelu"])
    matmul.matmul(*x["mm"])
    transpose.transpose(x["t"])
    add_mul_act.add_mul_act(*x["ama"], "relu")
