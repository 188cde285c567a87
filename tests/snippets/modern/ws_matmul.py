"""A persistent matmul for Blackwell whose K loop is warp-specialized
(`tl.range(..., warp_specialize=True)`): the compiler splits it into partitions (a TMA loader,
an MMA issuer) that run in warps of their own, beside the num_warps asked for."""
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


def example():
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8))
    M = N = K = 1024
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(N, K, dtype=torch.float16)
    c = torch.empty(M, N, dtype=torch.float16)
    sms = torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 148
    ws_matmul_kernel[(sms,)](a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, NUM_SMS=sms,
                             num_warps=8, num_stages=3)
