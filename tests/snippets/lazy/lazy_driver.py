"""A driver whose import puts a lazy module in sys.modules, as transformers does (`_LazyModule`):
any attribute it lacks (`__path__` here) is imported on demand, and here that import fails, as
transformers' does on a machine without torchvision."""
import sys
import types

import torch
import triton
import triton.language as tl


class _Lazy(types.ModuleType):
    def __getattr__(self, name):
        raise ModuleNotFoundError(f"lazy import of {self.__name__}.{name} needs torchvision")


_lazy = _Lazy("tlens_lazy_models")
_lazy.__file__ = __file__          # as transformers' _LazyModule: a file, no __path__ of its own
sys.modules["tlens_lazy_models"] = _lazy


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def example():
    x = torch.randn(1000)
    y = torch.empty_like(x)
    copy_kernel[(triton.cdiv(1000, 256),)](x, y, 1000, BLOCK=256)
