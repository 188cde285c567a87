"""max-autotune: the matmul template candidates Inductor would time on the GPU, and the fused mm + ReLU."""
import torch


def example():
    a = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    f = torch.compile(lambda a, b: torch.relu(a @ b), mode="max-autotune-no-cudagraphs")
    f(a, b)
