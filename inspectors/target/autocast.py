"""`torch.autocast("cuda")` on the target view: the casts the GPU's autocast makes, made for the
view's tensors (CPU memory), in eager code and in what torch.compile traces.

Mixed-precision training wraps its forward in `torch.autocast("cuda", dtype=torch.bfloat16)`:
on a GPU, a `Linear` then runs in bf16 and hands bf16 to the next kernel (a Liger op, an
Inductor fusion), while `softmax`, `layer_norm`, the losses run in fp32. The view's tensors are
CPU tensors, which CUDA autocast leaves alone, so every kernel after would see fp32: another
signature, another PTX. Once `install()` has run (the view does, on entering):

- entering `torch.autocast("cuda", ...)` (the class, the decorator, `torch.cuda.amp.autocast`,
  and the `_enter_autocast` Dynamo puts in a graph) also turns on CPU autocast with its dtype;
- CPU autocast follows CUDA's policy, not the CPU's: a kernel of ours at the `AutocastCPU` key
  for every op CUDA autocast handles (lower precision, fp32, fp32 by the op's `dtype`
  argument, promote to the widest, `binary_cross_entropy` refused), read from the lists of the
  installed torch's own `ATen/autocast_mode.h` (`AT_FORALL_LOWER_PRECISION_FP`, ...), and a
  fallthrough for the ops only the CPU casts (`cross_entropy_loss`, `cat`, ...): they decompose,
  as on the GPU, into ops the policy casts.

Autocast's cast cache (a weight cast once per region, in eager code) is left out: it changes how
often a cast runs, not a kernel Triton compiles (make_fx turns the cache off when it traces).
"""
from __future__ import annotations

import os
import re
import warnings
from functools import lru_cache

POLICIES = {"AT_FORALL_LOWER_PRECISION_FP": "lower", "AT_FORALL_FP32": "fp32",
            "AT_FORALL_FP32_SET_OPT_DTYPE": "fp32_dtype", "AT_FORALL_PROMOTE": "promote"}
_APPEND_DTYPE = {"norm.Scalar": "norm.ScalarOpt_dtype", "norm.ScalarOpt_dim": "norm.ScalarOpt_dim_dtype"}
_BANNED = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast: on the target "
           "GPU, autocast raises here. Use torch.nn.functional.binary_cross_entropy_with_logits or BCEWithLogitsLoss")


@lru_cache(1)
def cuda_policy() -> dict[str, str]:
    """`{"softmax.int": "fp32_dtype", "linear": "lower", ...}`: CUDA autocast's policy of each op,
    from the installed torch's header (empty where the wheel has no headers)."""
    import torch
    path = os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "autocast_mode.h")
    try:
        text = open(path).read()
    except OSError:
        return {}
    policy = {}
    for macro, kind in POLICIES.items():
        body = re.search(r"#define %s\(_\)(.*?)(?:\n\s*\n|\n#)" % macro, text, re.S)
        for name, overload in re.findall(r"_\((\w+)(?:,\s*(\w+))?\)", body.group(1) if body else ""):
            policy[f"{name}.{overload}" if overload else name] = kind
    if policy:
        policy.update({op: "fp32_append" for op in _APPEND_DTYPE})
        policy["binary_cross_entropy"] = "banned"
    return policy


def _eligible(t) -> bool:
    import torch
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64


def _cast(value, dtype):
    import torch
    if _eligible(value) and value.dtype != dtype:
        return value.to(dtype)
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _tensors(args, kwargs):
    import torch
    for value in [*args, *kwargs.values()]:
        for v in (value if isinstance(value, (list, tuple)) else (value,)):
            if isinstance(v, torch.Tensor):
                yield v


def _kernel(op, kind: str, fallback_op=None):
    """The AutocastCPU kernel of `op` under CUDA's policy `kind`."""
    import torch
    dtype_at = next((i for i, a in enumerate(op._schema.arguments) if a.name == "dtype"), None)
    exclude = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)

    def kernel(*args, **kwargs):
        low = torch.get_autocast_dtype("cpu")
        first = next(_tensors(args, kwargs), None)
        call = op
        if kind == "banned":
            raise RuntimeError(_BANNED)
        if kind in ("lower", "fp32"):
            to = low if kind == "lower" else torch.float32
            args, kwargs = [_cast(a, to) for a in args], {k: _cast(v, to) for k, v in kwargs.items()}
        elif kind == "promote":
            to = low
            for t in _tensors(args, kwargs):
                if _eligible(t):
                    to = torch.promote_types(to, t.dtype)
            args, kwargs = [_cast(a, to) for a in args], {k: _cast(v, to) for k, v in kwargs.items()}
        elif kind == "fp32_dtype" and _eligible(first):
            given = kwargs.get("dtype") if dtype_at is None or len(args) <= dtype_at else args[dtype_at]
            if given is None:
                args = list(args)
                if dtype_at is not None and len(args) > dtype_at:
                    args[dtype_at] = torch.float32
                else:
                    kwargs = {**kwargs, "dtype": torch.float32}
        elif kind == "fp32_append":
            call = fallback_op
            args = [*args, torch.float32 if _eligible(first) else first.dtype]
        with torch._C._ExcludeDispatchKeyGuard(exclude):
            return call(*args, **kwargs)
    return kernel


def _registered(torch) -> list:
    """CUDA's policy at the `AutocastCPU` key, registered once per process (a job), on the first
    `autocast("cuda")` (a cost a job that never enters one does not pay:
    docs/09-benchmark-results.md#figures-behind-design-choices); kept for good."""
    if _library:
        return _library
    lib = torch.library.Library("aten", "IMPL")
    policy = cuda_policy()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Oo]verrid.*")   # the CPU's own kernels, replaced
        for name, kind in policy.items():
            base, _, overload = name.partition(".")
            op = getattr(getattr(torch.ops.aten, base), overload or "default")
            other = None
            if kind == "fp32_append":
                b, _, o = _APPEND_DTYPE[name].partition(".")
                other = getattr(getattr(torch.ops.aten, b), o)
            lib.impl(name, _kernel(op, kind, other), "AutocastCPU")
        for full in torch._C._dispatch_get_all_op_names():
            name = full.removeprefix("aten::")
            if (full.startswith("aten::") and name not in policy
                    and torch._C._dispatch_has_kernel_for_dispatch_key(full, "AutocastCPU")):
                lib.impl(name, torch.library.fallthrough_kernel, "AutocastCPU")
    _library.append(lib)
    return _library


_library: list = []


def install() -> None:
    """`autocast("cuda")` turns CPU autocast on and off with it, with its dtype, under CUDA's
    policy (once per process; nothing where the wheel has no headers to read the policy from)."""
    import torch
    cls = torch.amp.autocast_mode.autocast
    if getattr(cls, "_tlens_target", False) or not cuda_policy():
        return
    enter, leave = cls.__enter__, cls.__exit__

    def __enter__(self):
        out = enter(self)
        if self.device == "cuda":
            _registered(torch)
            self._tlens_cpu = (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
            torch.set_autocast_enabled("cpu", self._enabled)
            torch.set_autocast_dtype("cpu", self.fast_dtype)
        return out

    def __exit__(self, *exc):
        saved = self.__dict__.pop("_tlens_cpu", None)
        if saved is not None:
            torch.set_autocast_enabled("cpu", saved[0])
            torch.set_autocast_dtype("cpu", saved[1])
        return leave(self, *exc)
    cls.__enter__, cls.__exit__, cls._tlens_target = __enter__, __exit__, True
