"""The target GPU, as the user's code sees it on a machine without one.

Libraries ask about the GPU before they pick a kernel: `torch.cuda.is_available()`, the SM
count from `torch.cuda.get_device_properties(x.device)`, `x.device.type == "cuda"`, Triton's
`driver.active.utils.get_device_properties(0)`. On a laptop without a GPU they would take
their no-GPU paths and the kernels shown would not be the ones the target compiles (Liger's
RMSNorm backward read 1 SM and passed `rows_per_program = 4` where an H100 gets 1, a
specialized constant: another PTX). While `TargetView(target)` is entered:

- `torch.cuda`'s device queries answer as the target's GPU (inspectors.target.gpus);
- tensors the code makes or receives report `device == cuda:0` (`is_cuda`); their memory stays
  the CPU's (data_ptr alignment as allocated: what the JIT's 16-byte specialization reads), and
  a `device="cuda"` argument, a bare ordinal (`device=torch.cuda.current_device()`, `.to(0)`),
  `.cuda()` or `.to("cuda")` is served on the CPU;
- `torch.version.hip` is set for AMD targets, `torch.version.cuda` for NVIDIA ones (Triton's and
  libraries' checks: SGLang picks its tiles by the CUDA version);
- a training step runs: a custom autograd Function's backward (Liger's) runs from the autograd
  engine, where no mode is active, so the view is entered again around each one; a leaf made
  with `requires_grad` stays a leaf (its `.grad` is filled); `module.cuda()` gives parameters on
  the target;
- the small probes libraries make are answered: `torch.cuda.device(i).idx`, the RNG state,
  streams and events (`torch.cuda.Stream()`, `torch.cuda.stream(s)`, `Event.record()`; an
  event's `elapsed_time` is refused by name: timing needs a GPU),
  `torch._C._cuda_getCurrentRawStream`, `x.get_device()`, `torch.Generator(device="cuda")`, `is_current_stream_capturing` (an
  optimizer's step), FlagGems' vendor (`GEMS_VENDOR`, where it would run nvidia-smi);
- `torch.autocast("cuda", dtype=...)` casts the view's tensors by CUDA autocast's policy
  (inspectors/target/autocast.py): a mixed-precision step's kernels get bf16 where the
  GPU's do;
- a library that registers its kernels as ATen's CUDA implementations (FlagGems' `use_gems()`)
  has them run for the view's tensors (the CPU key gets the same kernels while the view lasts);
- torch.compile is served by inspectors/compile/torch_compile_target.py, which leaves the view for the
  tracing (`plain()`) and hands results back (`on_target()`).

On a machine with a GPU nothing is changed: the real GPU answers (`TargetView.needed`).
"""
from __future__ import annotations

import contextlib
import os
import weakref

from inspectors.base.targets import Target
from inspectors.target import attention, autocast, cuda_dtypes, cuda_probes, gpus, jagged, library_ops


def needed(target: Target) -> bool:
    import torch
    return not torch.cuda.is_available() and gpus.for_target(target.key) is not None


WRAPPED_VIEW = "_tlens_wrapped_view"     # on a tensor of the view: whether the tensor it was put there from is a view
ON_TARGET = "_tlens_on_target"          # on a wrapper subclass made in the view (torchao's quantized weights)


def _deepcopy(t, memo: dict, on_target):
    """`copy.deepcopy` of a tensor of the view: torch's default copies a subclass only where its
    new_empty gives that subclass (the view's mode is off while it runs: a plain tensor). The
    copy is made of the plain tensor, with the same memo (two tensors of one storage keep
    sharing one), and put on the target; its gradient and attributes are copied too."""
    import copy

    import torch
    if id(t) in memo:
        return memo[id(t)]
    plain = torch.Tensor._make_subclass(torch.Tensor, t, t.requires_grad) if t.is_leaf else t.as_subclass(torch.Tensor)
    memo.setdefault(id(memo), []).append(plain)        # kept alive while the memo is (copy's own rule)
    made = on_target(copy.deepcopy(plain, memo))
    memo[id(t)] = made
    def copied(value):          # (the mode is off here: the view's tensors are copied by this function)
        return _deepcopy(value, memo, on_target) if isinstance(value, type(t)) else copy.deepcopy(value, memo)
    if t.grad is not None:
        made.grad = copied(t.grad)
    for name, value in vars(t).items():
        if name != WRAPPED_VIEW:
            setattr(made, name, copied(value))
    return made


def _tensor_class():
    import torch

    base_device = torch._C.TensorBase.device.__get__

    class TargetTensor(torch.Tensor):
        """A CPU tensor that says it lives on the target GPU."""

        @property
        def device(self):
            # a CPU tensor is on the target; a meta copy (torch.export's fake tensors are made from
            # one) says meta, as FakeTensor requires
            real = base_device(self)
            return torch.device("cuda", 0) if real.type == "cpu" else real

        @property
        def is_cuda(self):
            return base_device(self).type == "cpu"

        def cuda(self, *args, **kwargs):
            return self

        def get_device(self):
            return 0

        def __coerce_same_metadata_as_tangent__(self, expected_metadata, expected_type=None):
            """A compiled graph's backward takes it as the plain tensor it traced (its output's
            gradient from an op run in the view: a Liger backward after a compiled MLP)."""
            return self.as_subclass(torch.Tensor) if expected_type in (None, torch.Tensor) else None

    # Operations on a TargetTensor go through the view's mode (which makes their results
    # TargetTensors); no __torch_function__ of its own, so tracers (Dynamo) see a plain tensor.
    TargetTensor.__torch_function__ = torch._C._disabled_torch_function_impl

    return TargetTensor


class TargetView:
    def __init__(self, target: Target):
        self.target = target
        self.device = gpus.for_target(target.key)

    def _props(self):
        d = self.device
        return cuda_probes.TargetProperties(
            name=d.name, major=d.major, minor=d.minor, multi_processor_count=d.multi_processor_count,
            total_memory=d.total_memory, regs_per_multiprocessor=d.regs_per_multiprocessor, warp_size=d.warp_size,
            L2_cache_size=d.l2_cache_size, shared_memory_per_block_optin=d.max_shared_mem,
            max_threads_per_multi_processor=2048 if d.warp_size == 32 else 2560, gcnArchName=d.gcn_arch_name,
            is_integrated=False, is_multi_gpu_board=False, uuid="00000000-0000-0000-0000-000000000000")

    def __enter__(self):
        import torch
        from torch.overrides import TorchFunctionMode

        TargetTensor = _tensor_class()
        d, props = self.device, self._props()
        stream = cuda_probes.Stream()

        fake_key = torch._C._TorchDispatchModeKey.FAKE
        made = self.made = []       # a weak reference to every TargetTensor (no callback: none runs in the user's code)

        def on_target(t):
            if t.layout is not torch.strided:      # a sparse gradient (Embedding(sparse=True)): no storage
                return t                           # to alias, nothing a Triton kernel reads: left as made
            was_view = t._is_view()
            t = torch.Tensor._make_subclass(TargetTensor, t, True) if t.is_leaf and t.requires_grad else \
                t.as_subclass(TargetTensor)                      # as_subclass would make a leaf a non-leaf
            setattr(t, WRAPPED_VIEW, was_view)
            made.append(weakref.ref(t))
            if len(made) >= 4096 and len(made) & (len(made) - 1) == 0:     # at each power of two: the dead ones dropped
                made[:] = [r for r in made if r() is not None]
            return t
        self._on_target_one = on_target

        class _OnTarget(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if torch._C._get_dispatch_mode(fake_key) is not None:      # a tracer's fake tensors (Helion's):
                    return func(*args, **(kwargs or {}))                  # their devices are theirs
                # pin_memory=True (a factory's: save_on_cpu's offloaded activations) pins nothing here
                kwargs = {k: (cuda_probes.on_cpu(v) if k == "device" else False if k == "pin_memory" else v)
                          for k, v in (kwargs or {}).items()}
                if func is torch.Tensor.cuda:
                    return args[0] if isinstance(args[0], TargetTensor) else on_target(args[0])
                if func is torch.device and len(args) == 1 and type(args[0]) is int:   # torch.device(0):
                    return torch.device("cuda", args[0])          # the accelerator's, as on the GPU
                if func in (torch.Tensor.pin_memory, torch._cudnn_rnn_flatten_weight):
                    # pinned host memory, cuDNN's one buffer of an RNN's weights (nn.LSTM on a CUDA
                    # build): what a GPU's runtime does, nothing to the kernels
                    return args[0] if func is torch.Tensor.pin_memory else None
                if func is torch.Tensor.to:
                    args = tuple(cuda_probes.on_cpu(a) for a in args)
                if getattr(func, "__self__", None) in (torch.Tensor.device, torch.Tensor.is_cuda) \
                        and getattr(args[0], ON_TARGET, False):          # a wrapper subclass made here
                    return torch.device("cuda", 0) if func.__self__ is torch.Tensor.device else True
                if (func is torch.Tensor._is_view or getattr(func, "__self__", None) is torch.Tensor._base) \
                        and isinstance(args[0], TargetTensor) and getattr(args[0], WRAPPED_VIEW, True) is False:
                    # putting a tensor that is no view on the target makes an alias of it (as_subclass):
                    # no view of the user's (torch.export walks `_base`: each wrap was a new view)
                    return False if func is torch.Tensor._is_view else None
                if func is torch.Tensor.__deepcopy__:           # copy.deepcopy(model): a copy on the target
                    return _deepcopy(args[0], args[1] if len(args) > 1 else kwargs.get("memo", {}), on_target)
                if (out := cuda_dtypes.eager(func, args, kwargs)) is not NotImplemented:
                    return on_target(out) if type(out) is torch.Tensor else out
                if (out := attention.eager(func, args, kwargs, d.major)) is not NotImplemented:
                    return on_target(out)
                opdef = library_ops.custom_op(func)
                out = library_ops.backends_in_view(opdef, self, func, args, kwargs) if opdef else func(*args, **kwargs)
                if type(out) is torch.Tensor:
                    return on_target(out)
                if type(out) is tuple and any(type(o) is torch.Tensor for o in out):
                    return tuple(on_target(o) if type(o) is torch.Tensor else o for o in out)
                return out

        patches = {
            "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
            "get_device_properties": lambda device=None: props,
            "get_device_capability": lambda device=None: (d.major, d.minor),
            "get_device_name": lambda device=None: d.name,
            "synchronize": lambda device=None: None, "set_device": lambda device: None,
            "device": cuda_probes.DeviceContext,
            "get_rng_state": lambda device="cuda": torch.get_rng_state(),
            "set_rng_state": lambda new_state, device="cuda": None,
            "current_stream": lambda device=None: stream, "default_stream": lambda device=None: stream,
            "mem_get_info": lambda device=None: (d.total_memory, d.total_memory),
            "is_current_stream_capturing": lambda: False,       # an optimizer's step asks (CUDA graphs)
            "Stream": cuda_probes.Stream, "Event": cuda_probes.Event, "stream": lambda stream=None: contextlib.nullcontext(stream),
            **cuda_probes.runtime_stand_ins(),
        }
        self._saved = {name: getattr(torch.cuda, name) for name in patches}
        for name, fn in patches.items():
            setattr(torch.cuda, name, fn)
        accelerator = cuda_probes.accelerator_stand_ins()
        self._saved_accelerator = {name: getattr(torch.accelerator, name) for name in accelerator
                                   if hasattr(torch.accelerator, name)}        # (torch 2.11 has fewer)
        for name in self._saved_accelerator:
            setattr(torch.accelerator, name, accelerator[name])
        self._saved_get_accelerator, torch._C._get_accelerator = torch._C._get_accelerator, accelerator["current_accelerator"]
        from torch.cuda import nvtx
        from torch.utils.data._utils import pin_memory
        self._saved_nvtx = {name: getattr(nvtx, name) for name in cuda_probes.NVTX_STAND_INS}
        for name, fn in cuda_probes.NVTX_STAND_INS.items():
            setattr(nvtx, name, fn)
        # a DataLoader's pin_memory=True pins each batch in a thread of its own (no mode there)
        self._saved_pin, pin_memory.pin_memory = pin_memory.pin_memory, lambda data, device=None: data
        # activation offloading (save_on_cpu): its hooks copy each saved tensor to host memory and back
        # inside the compiled graph's autograd Function and the backward's engine, where no mode of the
        # view runs (pinned buffers, `.to("cuda")`); on a GPU those are copies, no kernel: here the
        # tensors stay where they are, the kernels the same
        self._saved_offload = torch.autograd.graph.save_on_cpu.__init__
        torch.autograd.graph.save_on_cpu.__init__ = lambda hooks, pin_memory=False, device_type="cuda": \
            torch.autograd.graph.saved_tensors_hooks.__init__(hooks, lambda t: t, lambda t: t)
        # a stream's hold on a tensor's memory (its argument parsed before any mode: the class's)
        self._saved_record = vars(torch.Tensor).get("record_stream")      # None: TensorBase's
        torch.Tensor.record_stream = lambda tensor, stream: None
        import torch.cuda.graphs as cuda_graphs            # torch 2.11's optimizer asks it there
        self._saved_capturing = cuda_graphs.is_current_stream_capturing
        cuda_graphs.is_current_stream_capturing = patches["is_current_stream_capturing"]
        self._saved_versions = (torch.version.hip, torch.version.cuda)
        self._saved_generator, torch.Generator = torch.Generator, cuda_probes.generator_class()
        if self.target.backend == "hip":
            torch.version.hip = "6.3.0"
        else:
            torch.version.cuda = cuda_probes.CUDA_VERSION
        self._saved_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        torch._C._cuda_getCurrentRawStream = lambda device=0: 0
        # module.cuda(): a new Parameter of the converted tensor (a TargetTensor), not param.data = ...
        self._saved_overwrite = torch.__future__.get_overwrite_module_params_on_conversion()
        torch.__future__.set_overwrite_module_params_on_conversion(True)
        self._saved_apply, torch.nn.Module._apply = torch.nn.Module._apply, _tied_apply(torch.nn.Module._apply)
        self._saved_parse_to, torch._C._nn._parse_to = torch._C._nn._parse_to, cuda_probes.parse_to(torch._C._nn._parse_to)
        self._saved_vendor = os.environ.get("GEMS_VENDOR")
        if self._saved_vendor is None:    # FlagGems asks nvidia-smi for the vendor, else its variable
            os.environ["GEMS_VENDOR"] = "amd" if self.target.backend == "hip" else "nvidia"
        self._mode = mode = _OnTarget()
        self._plain = 0
        self._wrapper_made = wrappers_on_cpu(self)
        self._library = library_ops.library_twins(mode)
        self._attention = attention.answered_as_on_gpu(d.major)      # jagged attention: the GPU's kernels
        autocast.install()       # torch.autocast("cuda") casts as the GPU's autocast does
        self._mode.__enter__()
        # The autograd engine calls a custom Function's backward with no mode active (the mode
        # is popped while its handler runs Tensor.backward): the view again around each one.
        # (`apply_boxed` is torch 2.12's: 2.11 has `apply` only)
        from torch.autograd import function as autograd_function
        cls = autograd_function.BackwardCFunction
        self._saved_backward = {name: cls.__dict__[name] for name in ("apply", "apply_boxed") if name in cls.__dict__}

        def in_view(original):
            def apply(node, *args):
                with mode:
                    return original(node, *args)
            return apply
        for name, original in self._saved_backward.items():
            setattr(cls, name, in_view(original))
        return self

    @contextlib.contextmanager
    def plain(self):
        """The view left for a while (torch.compile's tracing: Dynamo sees CPU tensors, not
        a subclass): the mode popped and every TargetTensor a plain tensor, then back."""
        import torch
        from torch.overrides import _get_current_function_mode_stack, _pop_mode_temporarily
        flipped = [t for t in (r() for r in self.made) if t is not None and type(t) is not torch.Tensor]
        kinds = [type(t) for t in flipped]
        for t in flipped:
            t.__class__ = torch.Tensor
        stack = _get_current_function_mode_stack()
        popped = _pop_mode_temporarily() if stack and stack[-1] is self._mode else contextlib.nullcontext()
        self._plain += 1
        try:
            with popped:
                yield
        finally:
            self._plain -= 1
            for t, kind in zip(flipped, kinds):
                t.__class__ = kind

    def on_target(self, value):
        """Tensors in `value` (a tensor, or tuples, lists and dicts of them) as the target's."""
        import torch
        from torch.utils import _pytree
        return _pytree.tree_map(lambda v: self._on_target_one(v) if type(v) is torch.Tensor else v, value)

    def __exit__(self, *exc):
        import torch
        from torch.autograd import function as autograd_function
        self._mode.__exit__(*exc)
        self._wrapper_made()
        for name, original in self._saved_backward.items():
            setattr(autograd_function.BackwardCFunction, name, original)
        torch.__future__.set_overwrite_module_params_on_conversion(self._saved_overwrite)
        torch.nn.Module._apply = self._saved_apply
        torch._C._nn._parse_to = self._saved_parse_to
        self._library()
        self._attention()
        if self._saved_vendor is None:
            os.environ.pop("GEMS_VENDOR", None)
        for name, fn in self._saved.items():
            setattr(torch.cuda, name, fn)
        for name, fn in self._saved_accelerator.items():
            setattr(torch.accelerator, name, fn)
        torch._C._get_accelerator = self._saved_get_accelerator
        from torch.cuda import nvtx
        from torch.utils.data._utils import pin_memory
        for name, fn in self._saved_nvtx.items():
            setattr(nvtx, name, fn)
        pin_memory.pin_memory = self._saved_pin
        torch.autograd.graph.save_on_cpu.__init__ = self._saved_offload
        if self._saved_record is None:
            del torch.Tensor.record_stream
        else:
            torch.Tensor.record_stream = self._saved_record
        import torch.cuda.graphs as cuda_graphs
        cuda_graphs.is_current_stream_capturing = self._saved_capturing
        torch.version.hip, torch.version.cuda = self._saved_versions
        torch.Generator = self._saved_generator
        if self._saved_stream is None:
            del torch._C._cuda_getCurrentRawStream
        else:
            torch._C._cuda_getCurrentRawStream = self._saved_stream
        return False


# _make_wrapper_subclass(cls, size, strides, storage_offset, memory_format, dtype, layout, device, ...)
_DEVICE_AT = 6


def _tied_apply(original):
    """Module._apply (`.cuda()`, `.to(dtype)`) that keeps a Parameter shared by several modules
    one Parameter: a GPU converts it in place (`param.data = ...`), the view makes a new one per
    module that holds it (`set_overwrite_module_params_on_conversion`). Untied, GPT-2's embedding
    and output weights were two inputs of the compiled step, and its backward returned two
    gradients where the GPU's adds them into one (another graph: other kernels' order)."""
    depth = [0]

    def _apply(self, fn, recurse=True):
        if depth[0]:
            return original(self, fn, recurse)
        places: dict[int, list] = {}
        for module in self.modules() if recurse else (self,):
            for key, param in module._parameters.items():
                if param is not None:
                    places.setdefault(id(param), []).append((module, key))
        depth[0] += 1
        try:
            out = original(self, fn, recurse)
        finally:
            depth[0] -= 1
        for (first, key), *others in (group for group in places.values() if len(group) > 1):
            for module, name in others:
                module._parameters[name] = first._parameters[key]
        return out
    return _apply


def wrappers_on_cpu(view: TargetView):
    """A tensor subclass that wraps others (torchao's quantized weights, a float8 tensor) made in
    the view from the view's tensors asks for `cuda:0`: made on the CPU, where its inner tensors'
    memory is, and marked, so that it too says `cuda:0` (its ops unwrap to CPU tensors: a copy or
    detach of it is not refused for mixing devices). Made while torch.compile traces (`plain()`):
    a CPU tensor, as the others. Returns the way back."""
    import torch
    had = "_make_wrapper_subclass" in vars(torch.Tensor)
    real = torch.Tensor._make_wrapper_subclass

    def make(cls, *args, **kwargs):
        if view._plain:
            return real(cls, *args, **kwargs)
        if len(args) > _DEVICE_AT:          # passed by position (a jagged NestedTensor's)
            args = (*args[:_DEVICE_AT], cuda_probes.on_cpu(args[_DEVICE_AT]) or torch.device("cpu"),
                    *args[_DEVICE_AT + 1:])
        else:
            kwargs["device"] = cuda_probes.on_cpu(kwargs.get("device")) or torch.device("cpu")
        made = real(cls, *args, **kwargs)
        if torch._C.TensorBase.device.__get__(made).type == "cpu":
            setattr(made, ON_TARGET, True)
        return made
    torch.Tensor._make_wrapper_subclass = staticmethod(make)
    nested_back = jagged.in_view(WRAPPED_VIEW)

    def back():
        nested_back()
        if had:
            torch.Tensor._make_wrapper_subclass = real
        else:
            del torch.Tensor._make_wrapper_subclass
    return back


def driver_properties(target: Target) -> dict:
    """Triton's `driver.active.utils.get_device_properties(device)` for the target."""
    d = gpus.for_target(target.key)
    if d is None:
        return {}
    return {"max_shared_mem": d.max_shared_mem, "multiprocessor_count": d.multi_processor_count,
            "max_num_regs": d.regs_per_multiprocessor, "warpSize": d.warp_size, "sm_clock_rate": d.sm_clock_khz,
            "mem_clock_rate": d.mem_clock_khz, "mem_bus_width": d.mem_bus_width}
