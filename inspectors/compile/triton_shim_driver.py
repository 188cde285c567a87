"""Triton's `driver.active` in the compile worker: a driver that names the target and never a
GPU (no CUDA driver needed; a GPU machine can compile for another architecture). With
triton_shim, which installs it while a job runs, the only modules that touch Triton's internals."""
from __future__ import annotations

import contextlib
from types import SimpleNamespace

from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver

NO_TIMING = ("timing needs a GPU, and the compile worker never launches kernels; time the kernel on a GPU "
             "machine (the Benchmark page)")


class CompileOnlyDriver:
    """Stands in for `driver.active` in the worker: it names the target, never a GPU."""

    def __init__(self, target: GPUTarget, properties: dict | None = None):
        self.target = target     # utils: what libraries ask Triton of the GPU (gpu_view.driver_properties)
        self.utils = SimpleNamespace(get_device_properties=lambda device=0: dict(properties or {}))

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
    """`driver.active` as the target (CompileOnlyDriver): also for import-time probes (fla's)."""
    saved = driver._active
    driver.set_active(CompileOnlyDriver(target, properties))
    try:
        yield
    finally:
        driver._active = saved
