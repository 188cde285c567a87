import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, bias_ptr, out_ptr, n_cols, n_elements, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs % n_cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0), mask=mask)


def bias_relu(x, bias, XBLOCK=512):
    n = x.numel()
    out = torch.empty_like(x)
    bias_relu_kernel[(triton.cdiv(n, XBLOCK),)](x, bias, out, x.shape[1], n, XBLOCK=XBLOCK, num_warps=4)
    return out


def example():
    x, bias = torch.randn(4096, 768), torch.randn(768)
    bias_relu(x, bias)
