"""Step 2 of the Hopper lesson: the same matmul, its tiles described by tensor descriptors.

`tl.make_tensor_descriptor` records the global tensor's shape and strides and the tile's block
shape; `desc.load([row, col])` becomes one cp.async.bulk.tensor (TMA) copy issued by one thread
for the whole tile, completed on an mbarrier. `desc.store` writes the result tile back the same way."""
import torch
import triton
import triton.language as tl


@triton.jit
def tma_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


def matmul(a, b, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3):
    M, K = a.shape
    N = b.shape[1]
    # descriptors built on the device need a little global scratch: Triton asks this allocator
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=a.device))
    c = torch.empty(M, N, dtype=torch.float16, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    tma_matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                            num_warps=num_warps, num_stages=num_stages)
    return c


def example():
    a = torch.randn(512, 512, dtype=torch.float16)
    b = torch.randn(512, 512, dtype=torch.float16)
    matmul(a, b)
