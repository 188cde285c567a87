"""What a step runs eagerly outside Triton: the ATen ops of its nn.Modules' forwards (an eager
Linear's cuBLAS matmul beside a library's Triton kernels, a LayerNorm, a residual add) and of its
eager autograd backward, on the target's tensors (the GPU's, on a machine with one). Each runs a
CUDA kernel of torch's own on the GPU. The ops example() runs outside any module (its inputs'
`torch.randn`, a check against a reference) are the file's set-up, not the step: not listed.
Neither are ops that launch nothing (a view, an allocation, a detach) nor anything torch.compile's
graphs run (their kernels and calls are listed from the graphs: outside_calls).

    with EagerCalls(job_dir, view) as eager:      # around example(), inside CompiledOnTarget
        ...
        with eager.paused():                       # a compiled graph traced or run
            ...
    eager.calls()          # outside_calls' dicts, graph "eager" or "eager backward", with `calls`

One dict per op, sizes, dtype and line, with how many times the step called it; MAX_KINDS of
them at most (the rest counted in `dropped`).
"""
from __future__ import annotations

import contextlib

from inspectors.compile import outside_calls
from inspectors.compile.kernel_origins import call_site

MAX_KINDS = 256
# ops that launch no kernel on a GPU: an allocation, the autograd bookkeeping, a host-side read
_NO_KERNEL = {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided", "detach", "alias",
              "lift_fresh", "lift_fresh_copy", "_local_scalar_dense", "resize_", "set_", "record_stream",
              "is_nonzero", "_copy_from_and_resize", "_unsafe_view", "_reshape_alias", "_has_compatible_shallow_copy_type"}
# ops that write their output and read no input's data (a fill of its size): its bytes are the output's
_WRITES_ONLY = {"zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full", "zero_", "fill_",
                "zeros", "ones", "full", "rand_like", "randn_like", "randint_like", "uniform_", "normal_"}


class EagerCalls:
    def __init__(self, job_dir, view=None):
        """`view`: the entered TargetView, or None on a machine with a GPU."""
        self.job_dir, self.view = str(job_dir), view
        self._by_key: dict[tuple, dict] = {}
        self._backward = 0       # backward() / grad() calls running now
        self._pushed: list[bool] = []     # per forward or backward running now: whether it pushed the mode
        self._paused = 0
        self.dropped = 0
        self._mode = self._hooks = None
        self._saved: dict = {}

    def _on_target(self, t) -> bool:
        """Whether the tensor is the GPU's: a CUDA tensor on a machine with one; in the view, any real
        tensor (its tensors are CPU tensors that say `cuda`, and those made inside a nested tensor's
        or a library's own code, where the view's mode is off, are plain ones; a file's default device
        there is the CPU where on the GPU machine it is the GPU: inspectors/compile/default_device.py)."""
        import torch
        from torch._subclasses.fake_tensor import FakeTensor
        if self.view is None:
            return torch._C.TensorBase.is_cuda.__get__(t)
        return not isinstance(t, FakeTensor) and torch._C.TensorBase.device.__get__(t).type == "cpu"

    def __enter__(self):
        """The recorder on: its dispatch mode pushed while an nn.Module's forward or a backward runs
        (not around the rest: a tensor subclass made by torch.Tensor's own constructor, as
        torch.nn.attention.bias.CausalBias is, cannot be made under a dispatch mode)."""
        import torch
        from torch.nn.modules import module as nn_module
        from torch.utils._python_dispatch import TorchDispatchMode
        recorder = self

        class _Eager(TorchDispatchMode):
            supports_higher_order_operators = True     # run as they are (FlexAttention's, cond's), their ops unlisted

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                if isinstance(func, torch._ops.OpOverload) and not recorder._paused:
                    recorder._seen(func, args, kwargs or {}, out)
                return out
        self._mode = _Eager()

        def pre(module, args):
            if not torch.compiler.is_compiling():        # traced by Dynamo: nothing
                self._on()

        def post(module, args, out):
            if not torch.compiler.is_compiling():
                self._off()
        self._hooks = [nn_module.register_module_forward_pre_hook(pre),
                       nn_module.register_module_forward_hook(post, always_call=True)]
        self._saved = {name: getattr(torch.autograd, name) for name in ("backward", "grad")}
        for name, real in self._saved.items():
            setattr(torch.autograd, name, self._around(real))
        return self

    def _around(self, real):
        import torch

        def run(*args, **kwargs):
            if torch.compiler.is_compiling():
                return real(*args, **kwargs)
            self._on()
            self._backward += 1           # its gradients' seeds (ones_like) too
            try:
                return real(*args, **kwargs)
            finally:
                self._backward -= 1
                self._off()
        return run

    def _on(self) -> None:
        """A forward or a backward begun: the mode pushed if it is not on and nothing is paused
        (a module's hooks run eagerly inside a compiled call that Dynamo broke: the mode there would
        make Dynamo run the rest uncompiled)."""
        push = not self._pushed.count(True) and not self._paused
        if push:
            self._mode.__enter__()
        self._pushed.append(push)

    def _off(self) -> None:
        if self._pushed and self._pushed.pop():
            self._mode.__exit__(None, None, None)

    def __exit__(self, *exc):
        import torch
        for h in self._hooks:
            h.remove()
        for name, real in self._saved.items():
            setattr(torch.autograd, name, real)
        while self._pushed:                   # example() raised inside a forward
            self._off()
        return False

    @contextlib.contextmanager
    def paused(self):
        """Nothing recorded meanwhile, and the mode off the stack while it is on top (Dynamo runs
        a frame eagerly, uncompiled, under a dispatch mode)."""
        from torch.utils._python_dispatch import _get_current_dispatch_mode, _pop_mode_temporarily
        self._paused += 1
        try:
            with _pop_mode_temporarily() if _get_current_dispatch_mode() is self._mode else contextlib.nullcontext():
                yield
        finally:
            self._paused -= 1

    def _seen(self, func, args, kwargs, out) -> None:
        import torch
        from torch.utils._python_dispatch import is_traceable_wrapper_subclass
        packet = getattr(func, "overloadpacket", None)
        name = getattr(packet, "__name__", "")
        outs = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
        ins = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        if not name or name in _NO_KERNEL or not outs or not any(map(self._on_target, ins + outs)):
            return
        if any(map(is_traceable_wrapper_subclass, ins + outs)):      # a nested tensor's, a DTensor's op: its
            return                                              # own ops on its inner tensors are seen
        if outside_calls.aliases(func) or all(t.numel() == 0 for t in outs) or _hands_back_an_input(func, ins, outs):
            return
        graph = "eager backward" if self._backward or torch._C._current_graph_task_id() != -1 else "eager"
        site = call_site(self.job_dir)
        lines = {site[0]: [site[1]]} if site else {}
        key = (graph, name, tuple(tuple(t.shape) for t in ins[:8]), str((ins or outs)[0].dtype), site)
        if key in self._by_key:
            self._by_key[key]["calls"] += 1
            return
        if len(self._by_key) >= MAX_KINDS:
            self.dropped += 1
            return
        with self.paused():
            call = outside_calls.entry(graph, name, (args, kwargs), out, lines, outside_calls.flops_of(packet, args, kwargs, out))
            if name in _WRITES_ONLY:
                call["bytes"] = sum(t.numel() * t.element_size() for t in outs)
        self._by_key[key] = {**call, "calls": 1}

    def calls(self) -> list[dict]:
        return list(self._by_key.values())


def _hands_back_an_input(func, ins, outs) -> bool:
    """Whether an op that writes none of its arguments returns an input's memory (a nested tensor's
    `_nested_get_offsets`, a view its schema does not declare): it launches nothing."""
    if getattr(getattr(func, "_schema", None), "is_mutable", True):
        return False
    held = {_storage(t) for t in ins} - {0}
    return any(_storage(t) in held for t in outs)


def _storage(t) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):       # a nested tensor's, a fake's: no storage of its own
        return 0

