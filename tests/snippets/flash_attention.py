"""Flash-attention forward (as in Triton's tutorial 06): the big-kernel case for tests
and browser benchmarks. Two passes over the key blocks (off-band and on-band for the
causal mask), online softmax, fp16 in, fp32 accumulators."""
import torch
import triton
import triton.language as tl


@triton.jit
def _attn_inner(acc, l_i, m_i, q, k_ptr, v_ptr, stride_kn, stride_vn, start_m, qk_scale,
                BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                STAGE: tl.constexpr, offs_m, offs_n, N_CTX, UNROLL: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    else:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in tl.range(lo, hi, BLOCK_N, loop_unroll_factor=UNROLL):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptr + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None])
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale,
             stride_qh, stride_qm, stride_kh, stride_kn, stride_vh, stride_vn, stride_oh, stride_om,
             N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, UNROLL: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    k_base, v_base = k_ptr + off_h * stride_kh, v_ptr + off_h * stride_vh
    acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale,
                                BLOCK_M, HEAD_DIM, BLOCK_N, 1, offs_m, offs_n, N_CTX, UNROLL)
    acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale,
                                BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX, UNROLL)
    acc = acc / l_i[:, None]
    tl.store(o_ptr + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(tl.float16))


def attention(q, k, v, sm_scale, BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3, UNROLL=1):
    h, n, d = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(n, BLOCK_M), h)
    attn_fwd[grid](q, k, v, o, sm_scale, q.stride(0), q.stride(1), k.stride(0), k.stride(1),
                   v.stride(0), v.stride(1), o.stride(0), o.stride(1), n,
                   HEAD_DIM=d, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, UNROLL=UNROLL, num_warps=num_warps,
                   num_stages=num_stages)
    return o


def example():
    q, k, v = (torch.randn(4, 1024, 128, dtype=torch.float16) for _ in range(3))
    attention(q, k, v, 0.08)                      # the tutorial's configuration
    attention(q, k, v, 0.08, UNROLL=8)            # both loops unrolled 8x: SASS > 10,000 lines
