"""Bias + ReLU as TorchInductor writes it: a flat pointwise kernel

The shape of what torch.compile generates for relu(x + bias): one flat index (xindex)
over all B*N elements, the bias column recovered as x0 = xindex % ks0, the result
stored back in place (in_out_ptr0), ReLU as max.f32 against 0. With N=768 the JIT
marks ks0 divisible by 16, so Triton proves runs of 4 consecutive x0: one rem.s32 per
4 elements and a vector bias load, ld.global.L1::evict_last...v4.b32 (evict_last keeps
the small, reused bias cached). Launch 2 has N=1000, not divisible by 16: a rem.s32 per
element and scalar bias loads, while the activations still load as ld.global.v4.b32.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def triton_poi_fused_add_relu_0(in_out_ptr0,  # activations (B, N), read and overwritten
                                in_ptr0,  # bias (N,)
                                ks0,  # N, the bias length (a dynamic size in Inductor)
                                xnumel,  # B * N, elements to process
                                XBLOCK: tl.constexpr,  # elements per program
                                ):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = xindex % ks0
    tmp0 = tl.load(in_out_ptr0 + (x2), xmask)
    tmp1 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2)
    tl.store(in_out_ptr0 + (x2), tmp4, xmask)


def bias_relu_(x: torch.Tensor, bias: torch.Tensor, XBLOCK: int = 1024) -> torch.Tensor:
    """In place: x <- relu(x + bias), bias broadcast over the rows of x (B, N)."""
    assert x.dim() == 2 and bias.shape == (x.shape[1],)
    assert x.is_contiguous() and bias.is_contiguous()
    xnumel = x.numel()
    grid = (triton.cdiv(xnumel, XBLOCK),)
    triton_poi_fused_add_relu_0[grid](x, bias, x.shape[1], xnumel, XBLOCK=XBLOCK, num_warps=4)
    return x


def bias_relu(x: torch.Tensor, bias: torch.Tensor, XBLOCK: int = 1024) -> torch.Tensor:
    """relu(x + bias) into a new tensor (Inductor would reuse the buffer of x + bias)."""
    return bias_relu_(x.clone(), bias, XBLOCK)


def reference(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(x + bias)


def make_inputs(small: bool = False):
    B, N = (33, 50) if small else (4096, 768)
    return torch.randn(B, N), torch.randn(N)


def example():
    x, bias = make_inputs()
    bias_relu_(x, bias)  # N = 768: ks0 is divisible by 16
    bias_relu_(torch.randn(4096, 1000), torch.randn(1000))  # N = 1000: it is not


def check():
    torch.manual_seed(0)
    x, bias = make_inputs(small=True)
    torch.testing.assert_close(bias_relu(x, bias), reference(x, bias))
    torch.testing.assert_close(bias_relu(x, bias, XBLOCK=64), reference(x, bias))


# ---- benchmark: read by inspectors/bench/model.py (the Benchmark page, benchmarks/gpu_bench.py) ----
BENCH_N = 768
BENCH_SIZES = (256, 1024, 4096, 16384, 65536, 262144)
BENCH_SIZE = 16384
BENCH_SIZE_NAME = "B rows (N = 768, fp32)"
BENCH_BOUND = "memory"


def bench_inputs(size: int):
    return torch.randn(size, BENCH_N), torch.randn(BENCH_N)


bench_kernel = bias_relu_  # in place, as Inductor runs it


def bench_bytes(x, bias) -> int:
    return (2 * x.numel() + bias.numel()) * x.element_size()  # x read and written, bias read once


def bench_flops(x, bias) -> int:
    return 2 * x.numel()  # add, max
