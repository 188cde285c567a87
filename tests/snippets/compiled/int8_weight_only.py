"""torchao's int8 weight-only quantization (`quantize_`, as a user serves a bf16 model) under
torch.compile: each Linear's weight an Int8Tensor (a tensor subclass wrapping int8 data and a
scale), its matmul lowered by Inductor to `_weight_int8pack_mm`, a CUDA kernel outside Triton."""
import torch
from torchao.quantization import Int8WeightOnlyConfig, quantize_


def example():
    m = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.SiLU(), torch.nn.Linear(1024, 512))
    m = m.to("cuda", torch.bfloat16)
    quantize_(m, Int8WeightOnlyConfig())
    assert m[0].weight.device.type == "cuda" and m[0].weight.is_cuda, m[0].weight.device
    with torch.no_grad():
        y = torch.compile(m)(torch.randn(16, 512, device="cuda", dtype=torch.bfloat16))
    assert y.shape == (16, 512) and y.dtype == torch.bfloat16
