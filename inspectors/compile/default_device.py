"""The default device a user's file is imported and run under: the GPU where there is one (a
kernel's example tensors made with no device are the GPU's), else the CPU (the target view answers
as a GPU). Used wherever user code runs: the compile worker, the step timer, the profiler and
benchmarks/gpu_drivers.py's GPU side."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def gpu_if_any():
    """The GPU as the default device while the file is imported and example() runs (a kernel's
    example tensors made with no device are the GPU's; the target view answers as a GPU; the caller
    puts its own default back). On a GPU, activation offloading's host buffers stay on
    the host: `save_on_cpu(pin_memory=True)` makes them with `torch.empty` and no device, which under
    a default `cuda` device is a GPU tensor torch refuses to pin ("Only dense CPU tensors can be
    pinned"); the view's own offloading keeps the tensors in place."""
    import torch
    torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        yield
        return
    cls = torch.autograd.graph.save_on_cpu
    saved = cls.__init__

    def init(hooks, *args, **kwargs):
        saved(hooks, *args, **kwargs)
        pack = hooks.pack_hook

        def on_host(tensor):
            with torch.device("cpu"):
                return pack(tensor)
        hooks.pack_hook = on_host
    cls.__init__ = init
    try:
        yield
    finally:
        cls.__init__ = saved
