"""A library that turns Triton's line info off at import, as unsloth_zoo does (smaller
binaries): its kernels' PTX has no .loc lines (tests/unit/test_line_twin.py)."""
import os

os.environ["TRITON_DISABLE_LINE_INFO"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _scale(x, s):
    return x * s


@triton.jit
def rms_scale_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    w = tl.load(w_ptr + offs, mask=mask)
    y = _scale(x, w)
    tl.store(out_ptr + offs, y, mask=mask)


def example():
    n = 4096
    x, w = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    rms_scale_kernel[(n // 1024,)](x, w, out, n, BLOCK=1024)
    rms_scale_kernel[(n // 1024,)](x[1:], w[1:], out[1:], n - 1, BLOCK=1024)    # misaligned: scalar loads
