"""Step 3 of the Hopper lesson: a persistent TMA matmul whose tile loop is warp-specialized.

`tl.range(..., warp_specialize=True)` asks the compiler to split the loop into partitions that run
in warps of their own: a producer that issues the TMA loads, an MMA issuer, and the default warps
that run the epilogue, talking through mbarriers. On sm_100 (Blackwell) Triton does the split;
on sm_90 this Triton compiles the same loop without partitions. B is stored N x K (K-major)."""
import torch
import triton
import triton.language as tl


@triton.jit
def ws_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=True, warp_specialize=True):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([off_m, k])
            b = b_desc.load([off_n, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(tl.float16))


def matmul(a, b_nk, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3, sms=None):
    M, K = a.shape
    N = b_nk.shape[0]
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=a.device))
    if sms is None:
        sms = torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 132
    c = torch.empty(M, N, dtype=torch.float16, device=a.device)
    ws_matmul_kernel[(sms,)](a, b_nk, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                             NUM_SMS=sms, num_warps=num_warps, num_stages=num_stages)
    return c


def example():
    a = torch.randn(1024, 1024, dtype=torch.float16)
    b_nk = torch.randn(1024, 1024, dtype=torch.float16)
    matmul(a, b_nk)
