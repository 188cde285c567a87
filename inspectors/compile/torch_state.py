"""torch's process-wide settings, put back after a job in a worker that serves the next one.

A kernel file may set them at import or in example(): Inductor's, Dynamo's and AOTAutograd's
configs (`torch._inductor.config.freezing = True`, `coordinate_descent_tuning`,
`torch._dynamo.config.capture_scalar_outputs`), attention's backends
(`torch.backends.cuda.enable_flash_sdp(False)`), the default dtype, float32 matmul precision,
deterministic algorithms, grad mode. In a worker of its own (the laptop's, one per version) the
next file would compile under them: another answer than the same file alone gives. A student's
sandbox forks a child per job (zygote.py) and needs none of this.

    with torch_state.kept():
        run_job(...)

A config module first imported during the job (torch.compile imports Dynamo's and Inductor's)
has no value from before it: each of its settings goes back to its default (the environment's
where a variable set it at import).
"""
from __future__ import annotations

import contextlib
import sys
import warnings

CONFIGS = ("torch._inductor.config", "torch._dynamo.config", "torch._functorch.config")


def _default(entry):
    """A config entry's value before any code set it: forced by the environment, else the
    environment's default, else the module's."""
    from torch.utils._config_module import _UNSET_SENTINEL
    for value in (entry.env_value_force, entry.env_value_default):
        if value is not _UNSET_SENTINEL:
            return value
    return entry.default


def _flags() -> tuple:
    import torch
    cuda = torch.backends.cuda
    return (cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(),
            cuda.cudnn_sdp_enabled(), torch.get_default_dtype(), torch.get_float32_matmul_precision(),
            torch.are_deterministic_algorithms_enabled(), torch.is_grad_enabled(),
            cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)


def _set_flags(saved: tuple) -> None:
    import torch
    cuda = torch.backends.cuda
    flash, efficient, math, cudnn, dtype, precision, deterministic, grad, tf32, cudnn_tf32 = saved
    cuda.enable_flash_sdp(flash)
    cuda.enable_mem_efficient_sdp(efficient)
    cuda.enable_math_sdp(math)
    cuda.enable_cudnn_sdp(cudnn)
    torch.set_default_dtype(dtype)
    torch.set_float32_matmul_precision(precision)
    torch.use_deterministic_algorithms(deterministic)
    torch.set_grad_enabled(grad)
    cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = cudnn_tf32


@contextlib.contextmanager
def kept():
    """torch's settings as they were before the block (see the module's docstring)."""
    saved = {name: sys.modules[name].get_config_copy() for name in CONFIGS if name in sys.modules}
    flags = _flags()
    try:
        yield
    finally:
        _set_flags(flags)
        for name in CONFIGS:
            module = sys.modules.get(name)
            if module is None:
                continue
            with warnings.catch_warnings():       # each deprecated setting put back warns that it is
                warnings.simplefilter("ignore", FutureWarning)
                module.load_config(saved[name] if name in saved else
                                   {key: _default(entry) for key, entry in module._config.items() if entry.alias is None})
