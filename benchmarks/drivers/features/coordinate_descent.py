"""gpt-fast's Inductor settings: coordinate descent tuning, unique kernel names, the FX graph
cache. An RMSNorm and a SwiGLU MLP in bf16. On a GPU, Inductor times the neighbours of each
kernel's fastest config (a block size or warp count up or down) and compiles the one it keeps;
the view lists the configs Inductor starts from and says that the GPU's timing may add one."""
import torch
import torch._inductor.config as inductor_config

inductor_config.coordinate_descent_tuning = True
inductor_config.triton.unique_kernel_names = True
inductor_config.fx_graph_cache = True


def rms_norm(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def swiglu(x, w1, w3):
    return torch.nn.functional.silu(x @ w1) * (x @ w3)


def example():
    torch.manual_seed(0)
    x = torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(1024, device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(1024, 2048, device="cuda", dtype=torch.bfloat16) / 32
    w3 = torch.randn(1024, 2048, device="cuda", dtype=torch.bfloat16) / 32
    h = torch.compile(rms_norm)(x, w)
    y = torch.compile(swiglu)(h, w1, w3)
    ref = torch.nn.functional.silu(h.float() @ w1.float()) * (h.float() @ w3.float())
    assert torch.allclose(y.float(), ref, atol=0.1, rtol=0.05), (y.float() - ref).abs().max()
