"""Triton's `driver.active` in the compile worker: a driver that names the target and never a
GPU (no CUDA driver needed; a GPU machine can compile for another architecture). With
triton_shim, which installs it while a job runs, the only modules that touch Triton's internals."""
from __future__ import annotations

import contextlib
import sys

from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver

from inspectors.read import resources

NO_TIMING = ("timing needs a GPU, and the compile worker never launches kernels; time the kernel on a GPU "
             "machine (the Benchmark page)")


class _Utils:
    """`driver.active.utils`: what libraries ask Triton of the GPU (inspectors.target.tensor_view.driver_properties)."""

    def __init__(self, properties: dict | None):
        self.properties = dict(properties or {})

    def get_device_properties(self, device=0) -> dict:
        return dict(self.properties)

    def load_binary(self, name: str, kernel: bytes, shared: int, device):
        """`CompiledKernel._init_handles()` on a warmed-up kernel (Triton's fused-softmax tutorial
        reads `n_regs` to size its grid): no module is loaded; the registers and spills (local
        bytes / 4, as the CUDA driver counts them) are the cubin's, from the wheel's cuobjdump.
        The most threads a block may have is left at 1024."""
        if kernel[:4] != b"\x7fELF" or int.from_bytes(kernel[18:20], "little") != 190:     # EM_CUDA
            raise RuntimeError(f"{name}: n_regs of a warmed-up kernel is read from a CUDA cubin here; "
                               "an AMD kernel's needs its GPU")
        usage = resources.resource_usage(kernel, dynamic_shared=shared, kernel=name)
        return None, None, usage.registers, usage.local_bytes // 4, 1024


class _NoLaunch:
    """`driver.active.launcher_cls`: a warmed-up kernel launched later does nothing (as every
    launch in the worker: it is recorded, never run)."""

    def __init__(self, src, metadata):
        pass

    def __call__(self, *args, **kwargs):
        return None


class CompileOnlyDriver:
    """Stands in for `driver.active` in the worker: it names the target, never a GPU."""
    launcher_cls = _NoLaunch

    def __init__(self, target: GPUTarget, properties: dict | None = None):
        self.target = target
        self.utils = _Utils(properties)

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        # device_caches is keyed by this: one cache per target.
        return f"{self.target.backend}:{self.target.arch}"

    def get_current_stream(self, device=None):
        return 0

    def get_active_torch_device(self):
        import torch
        return torch.get_default_device()

    def get_benchmarker(self):           # Inductor's
        raise RuntimeError(NO_TIMING)

    def get_device_interface(self):      # triton.testing.do_bench: it runs the function once first
        import torch
        return torch.cuda

    def get_empty_cache_for_benchmark(self):    # do_bench, before it times
        raise RuntimeError(f"triton.testing.do_bench: {NO_TIMING}")


@contextlib.contextmanager
def target_driver(target: GPUTarget, properties: dict | None = None):
    """`driver.active` as the target (CompileOnlyDriver): also for import-time probes (fla's).
    Triton's profiler starts no session meanwhile (_no_profiler)."""
    saved = driver._active
    driver.set_active(CompileOnlyDriver(target, properties))
    undo = _no_profiler()
    try:
        yield
    finally:
        driver._active = saved
        undo()


def _no_profiler():
    """`proton.start(...)` (Triton's profiler; its persistent-matmul tutorial profiles every
    launch) says on stderr that it starts nothing: CUPTI needs a GPU, and no kernel runs here.
    Without a session proton's other calls do nothing. Returns the undo."""
    try:
        import triton.profiler  # noqa: F401 - its `start` is replaced where the user's code calls it
    except Exception:  # noqa: BLE001 - a Triton without its profiler: nothing to replace
        return lambda: None

    def start(name=None, **kwargs):
        sys.stderr.write(f"proton.start({name!r}): profiling needs a GPU, and no kernel runs here; no profile "
                         "is written (the kernels are compiled as usual)\n")
    saved = [(m, m.start) for m in (sys.modules.get("triton.profiler"), sys.modules.get("triton.profiler.profile"))
             if m is not None and callable(getattr(m, "start", None))]
    for m, _ in saved:
        m.start = start
    return lambda: [setattr(m, "start", f) for m, f in saved]
