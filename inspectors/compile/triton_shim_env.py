"""What a library or Inductor sets in the environment while example() runs and Triton reads when it
compiles: each launch keeps the values it was launched under (triton_shim.Launch.env) and is
compiled with them, as the JIT compiled it at that moment on the GPU.

- TRITON_PTXAS_PATH: Inductor on a CUDA wheel points it at torch/bin/ptxas before its first kernel.
  On the GPU a library's kernels launched after that get that ptxas's PTX `.version` (CUDA 13's
  9.0), those launched before it Triton's own (8.7) (cut-cross-entropy's backward, after its
  torch.compile'd copy: benchmarks/results/gpu_drivers.txt).
- TRITON_DISABLE_LINE_INFO: unsloth turns line info off at import (inspectors/read/line_twin.py).
"""
from __future__ import annotations

import contextlib
import os

COMPILE_ENV = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_DISABLE_LINE_INFO")


def now() -> dict:
    return {k: os.environ.get(k) for k in COMPILE_ENV}


def _forget_ptxas_version() -> None:
    """Triton keys its cache by the ptxas version it first read in the process (an lru_cache): read
    it again, so a kernel another ptxas compiled is not served from the cache as this one's."""
    with contextlib.suppress(ImportError, AttributeError):
        from triton.backends.nvidia import compiler as nvidia_compiler
        nvidia_compiler.get_ptxas_version.cache_clear()


def _put(values: dict) -> None:
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextlib.contextmanager
def launched(env: dict):
    """COMPILE_ENV as `env` has it (a launch's), for the compile inside; as before after it."""
    saved = now()
    changed = any(saved[k] != env.get(k) for k in COMPILE_ENV if "PTXAS" in k)   # another ptxas: read again
    _put(env)
    if changed:
        _forget_ptxas_version()
    try:
        yield
    finally:
        _put(saved)
        if changed:
            _forget_ptxas_version()
