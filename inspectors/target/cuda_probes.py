"""The small CUDA probes libraries make before they run, answered for the target GPU on a
machine without one (inspectors.target.tensor_view puts them in `torch.cuda` while the view is
entered): streams and events (`torch.cuda.Stream()`, `Event.record()`; the time between two events
is refused by name: timing needs a GPU), `torch.cuda.device(i)`, `torch.Generator(device="cuda")`,
the device-properties object, and the CUDA version the target's torch reports."""
from __future__ import annotations

from types import SimpleNamespace


def on_cpu(value):
    """A device argument for the target GPU, as the CPU."""
    import torch
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("cpu")
    if isinstance(value, str) and value.split(":")[0] == "cuda":
        return "cpu"
    return value


def generator_class():
    import torch

    class TargetGenerator(torch.Generator):
        """`torch.Generator(device="cuda")`: the CPU's generator, on the target by its device."""
        def __new__(cls, device=None):
            return super().__new__(cls, on_cpu(device) if device is not None else "cpu")

        def __init__(self, device=None):
            self._cuda = on_cpu(device) != device

        @property
        def device(self):
            return torch.device("cuda", 0) if self._cuda else torch.device("cpu")
    return TargetGenerator


class Stream:
    """`torch.cuda.Stream()` (and the current stream): work on it runs where the code runs; the
    waits and queries a library makes between streams answer at once."""

    cuda_stream = 0
    device = None

    def __init__(self, device=None, priority=0, **kwargs):
        self.priority = priority

    def synchronize(self):
        return None

    def query(self):
        return True

    def wait_stream(self, stream):
        return None

    def wait_event(self, event):
        return None

    def record_event(self, event=None):
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return 0


class Event:
    """`torch.cuda.Event()`: recorded, waited on and queried at once; what only a GPU can give
    (a time between two events) is refused by name."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, **kwargs):
        self.enable_timing = enable_timing

    def record(self, stream=None):
        return None

    def wait(self, stream=None):
        return None

    def query(self):
        return True

    def synchronize(self):
        return None

    def elapsed_time(self, end_event):
        raise RuntimeError("torch.cuda.Event.elapsed_time: timing needs a GPU, and this compile runs without one "
                           "(the target is only described); time the kernel on a GPU machine (the Benchmark page)")


class DeviceContext:
    """`torch.cuda.device(i)`: a context that names its index (`.idx`), as unsloth reads it."""

    def __init__(self, device=None):
        self.idx = device.index if hasattr(device, "index") and device.index is not None else \
            (device if isinstance(device, int) else 0)

    def __enter__(self):
        return None              # as torch.cuda.device's

    def __exit__(self, *exc):
        return False


class TargetProperties(SimpleNamespace):
    """`torch.cuda.get_device_properties()` in the view: a type of its own, which Dynamo folds as a
    constant where the code it traces reads one, as it does a GPU's (inductor_choices.install_tracing)."""


CUDA_VERSION = "13.0"      # torch.version.cuda of the GPU machine's torch (2.11.0+cu130: benchmarks/results/gpu_suite.txt)
