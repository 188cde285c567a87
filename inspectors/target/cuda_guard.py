"""A CUDA device guard for a CPU-only build of torch, so that Inductor can run its fake-tensor
passes on `cuda` tensors (inspectors/compile/torch_compile_target.py) where there is no CUDA at all.

Under `FakeTensorMode`, many ATen ops on a `cuda` fake tensor still open a device guard in C++
(`select`, `copy_`, `empty_like`, `contiguous`: "PyTorch is not linked with support for cuda
devices"). A CUDA build of torch registers one even without a GPU; a CPU-only build has none,
and no Python call registers one. This builds PyTorch's own `FakeGuardImpl<CUDA>` (what a test
build of torch uses for a device it has no driver for) into a small shared library with the
machine's C++ compiler, once per worker process, in a folder of its own, and loads it: its
static initializer registers the guard. A CUDA build with no GPU visible has a guard, CUDA's,
which asks the CUDA runtime: where autograd records a `cuda` fake tensor (torch.export of a
model whose parameters need gradients) it asks for the current stream, the runtime finds no
device and the process aborts. There the fake guard replaces CUDA's for the worker's life. No autograd ever runs on these tensors (the graphs
Inductor gets are already differentiated), so no CUDA hooks are needed.

Without a C++ compiler nothing is registered and `ensure()` says why; torch.compile jobs still
work for graphs whose ops need no guard (most pointwise, reduction and template kernels).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = r"""
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/FakeGuardImpl.h>
namespace {
struct Register {
  Register() {
    auto& slot = c10::impl::device_guard_impl_registry[static_cast<size_t>(c10::DeviceType::CUDA)];
    if (slot.load() == nullptr || GUARD_REPLACES_CUDA) {
      static c10::impl::FakeGuardImpl<c10::DeviceType::CUDA> impl;
      slot.store(&impl);
    }
  }
} registered;
}
"""

_state: dict = {}


def _gpus() -> int:
    """GPUs the CUDA runtime sees, asked below torch.cuda (which the target view answers)."""
    import torch
    try:
        return int(torch._C._cuda_getDeviceCount())
    except (AttributeError, RuntimeError):
        return 0


def ensure(for_autograd: bool = False) -> str:
    """Registers the guard where torch has none, and with `for_autograd` (torch.export) in place
    of a CUDA build's where no GPU is visible; "" when there is one (now or already), else why
    there is none (no compiler, a failed build)."""
    import torch
    replace = torch.backends.cuda.is_built()
    if replace and (not for_autograd or _gpus() > 0):
        return ""                          # CUDA's own: what Inductor's fake tensors need (a GPU: the right one)
    if "why" in _state:
        return _state["why"]
    compiler = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if compiler is None:
        _state["why"] = "no C++ compiler (g++) to build a CUDA device guard " + ("for torch.export on this CUDA build with no GPU" if replace else "for this CPU-only torch")
        return _state["why"]
    root = Path(torch.__file__).parent
    folder = Path(tempfile.mkdtemp(prefix="tlens-cuda-guard-"))
    try:
        (folder / "guard.cpp").write_text(f"#define GUARD_REPLACES_CUDA {int(replace)}\n" + SOURCE)
        library = folder / "guard.so"
        for std in ("c++17", "c++20"):         # torch 2.14's headers need C++20
            made = subprocess.run(
                [compiler, "-O1", "-shared", "-fPIC", f"-std={std}", f"-I{root / 'include'}", str(folder / "guard.cpp"),
                 f"-L{root / 'lib'}", "-lc10", f"-Wl,-rpath,{root / 'lib'}", "-o", str(library)],
                capture_output=True, text=True, timeout=180)
            if made.returncode == 0:
                break
        if made.returncode != 0:
            _state["why"] = f"building a CUDA device guard failed: {made.stderr.strip()[-500:]}"
            return _state["why"]
        ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
        _state["why"] = ""
        return ""
    except (OSError, subprocess.SubprocessError) as e:
        _state["why"] = f"building a CUDA device guard failed: {e}"
        return _state["why"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
