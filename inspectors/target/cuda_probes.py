"""The small CUDA probes libraries make before they run, answered for the target GPU on a
machine without one (inspectors.target.tensor_view puts them in `torch.cuda` while the view is
entered): streams and events (`torch.cuda.Stream()`, `Event.record()`; the time between two events
is refused by name: timing needs a GPU), `torch.cuda.device(i)`, `torch.Generator(device="cuda")`,
the device-properties object, and the CUDA version the target's torch reports."""
from __future__ import annotations

from types import SimpleNamespace


def on_cpu(value):
    """A device argument for the target GPU, as the CPU. A bare ordinal (`device=0`,
    `device=torch.cuda.current_device()`, `.to(0)`) is the current accelerator's: the GPU's there,
    an error on a torch with none ("Cannot access accelerator device")."""
    import torch
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("cpu")
    if isinstance(value, str) and value.split(":")[0] == "cuda":
        return "cpu"
    if type(value) is int:
        return "cpu"
    return value


def parse_to(original):
    """`torch._C._nn._parse_to` (Module.to's parser) taking a bare ordinal as the GPU's (`model.to(0)`)."""
    def parse(*args, **kwargs):
        if args and type(args[0]) is int:
            args = (f"cuda:{args[0]}", *args[1:])
        if type(kwargs.get("device")) is int:
            kwargs["device"] = f"cuda:{kwargs['device']}"
        return original(*args, **kwargs)
    return parse


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


class CUDAGraph:
    """`torch.cuda.CUDAGraph()`: a capture runs the captured code once, as on a GPU (its kernels
    compiled then, and shown); a replay launches nothing more here."""

    def __init__(self, *args, **kwargs):
        pass

    def capture_begin(self, *args, **kwargs):
        return None

    def capture_end(self):
        return None

    def replay(self):
        return None

    def reset(self):
        return None

    def pool(self):
        return (0, 0)

    def enable_debug_mode(self):
        return None


class GraphCapture:
    """`with torch.cuda.graph(g):` a capture of `g` (CUDAGraph above) around the code it runs."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        self.cuda_graph = cuda_graph

    def __enter__(self):
        self.cuda_graph.capture_begin()

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        return False


def runtime_stand_ins() -> dict:
    """The CUDA runtime calls a model's code makes around its work, for `torch.cuda` while the
    view is entered (a CPU-only torch refuses them; a CUDA one looks for a driver): memory
    statistics reset, seeds read, `torch.cuda.init()`, `device_of(t)` (nn.LSTM's and GRU's weight
    flattening, on a CUDA build), CUDA graphs and their pools."""
    import torch
    none = lambda *args, **kwargs: None         # noqa: E731 - a stand-in that does nothing, as named
    return {
        "device_of": lambda obj: DeviceContext(0),
        "reset_peak_memory_stats": none, "reset_max_memory_allocated": none,
        "reset_max_memory_cached": none, "reset_accumulated_memory_stats": none,
        "initial_seed": lambda: torch.initial_seed(), "seed": none, "seed_all": none,
        "init": none,
        "CUDAGraph": CUDAGraph, "graph": GraphCapture, "graph_pool_handle": lambda: (0, 0),
    }


# NVTX ranges (torch.cuda.nvtx; a CPU-only torch has no NVTX): marks for a profiler the target lacks
NVTX_STAND_INS = {"range_push": lambda msg: 0, "range_pop": lambda: 0, "range_start": lambda msg: 0,
                  "range_end": lambda range_id: None, "mark": lambda msg: None}


def accelerator_stand_ins() -> dict:
    """`torch.accelerator` (the device-neutral API newer code and PyTorch's tutorials ask:
    `torch.accelerator.current_accelerator()`, `.is_available()`, `.synchronize()`) as a GPU
    answers it, while the view is entered: the CPU wheel has no accelerator (None, 0 devices),
    the CUDA wheel with no GPU raises at the device index. `torch._C._get_accelerator` is what
    torch's own Python asks where the code names no device (`torch.get_device_module()`, FSDP2's
    default mesh): the same answer. The memory figures are torch.cuda's in the view; the current
    stream is left to torch (Dynamo reads its device: inspectors.compile.torch_compile_target)."""
    import torch
    none = lambda *args, **kwargs: None         # noqa: E731 - a stand-in that does nothing, as named
    cuda = lambda *args, **kwargs: torch.device("cuda")    # noqa: E731
    return {
        "current_accelerator": cuda, "is_available": lambda: True, "device_count": lambda: 1,
        "current_device_index": lambda: 0, "current_device_idx": lambda: 0,
        "set_device_index": none, "set_device_idx": none, "device_index": lambda device, /: DeviceContext(device),
        "synchronize": none,
        "empty_cache": none, "empty_host_cache": none, "reset_peak_memory_stats": none,
        "reset_accumulated_memory_stats": none,
        **{name: (lambda name: lambda device_index=None, /: getattr(torch.cuda, name)())(name)
           for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                        "memory_stats")},
        "get_memory_info": lambda device_index=None, /: torch.cuda.mem_get_info(),
    }
