"""@triton.jit helpers kept in a module of their own, for the source-map test of a kernel
that imports its helpers from another file (tests/snippets/helpers_user.py)."""
import triton
import triton.language as tl


@triton.jit
def scaled_load(ptr, offs, mask, scale):
    x = tl.load(ptr + offs, mask=mask)
    return x * scale
