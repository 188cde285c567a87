"""The one module that touches Triton's internals. It runs only inside the worker
process (never in the Streamlit server), and is tested with triton 3.9.0 (this
machine) and triton 3.6.0 (the GPU machine).

How a launch is compiled without a GPU, exactly as the JIT would specialize it:
`kernel[grid](args)` goes through `JITFunction.run`, which asks `driver.active` for
the device and target, computes the specialization of the *real* arguments
(pointer alignment and int divisibility by 16, ints equal to 1, constexprs) and
calls `knobs.runtime.jit_cache_hook` before compiling. We install

* a compile-only driver answering with the chosen target (so no CUDA driver is
  needed, and a GPU machine can compile for another architecture), and
* a jit_cache_hook that records the specialization and returns True, which makes
  the JIT skip compile and launch (triton 3.6 and 3.9: `_do_compile` returns None).

Each recorded launch is then compiled with `triton.compile(ASTSource(...))` using
the signature, constexprs, attributes and options the JIT computed itself.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.backends import backends
from triton.compiler import ASTSource, make_backend
from triton.runtime import autotuner
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction

from inspectors.base.result import ArgSpec
from inspectors.base.targets import Target


@dataclass
class Launch:
    """One specialization recorded from a launch."""
    fn: object                    # the JITFunction
    signature: dict               # {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    constants: dict               # {(4,): 1024}
    attrs: dict                   # {(0,): [["tt.divisibility", 16]], ...}
    options: dict                 # backend options as the JIT parsed them
    label: str = ""


def gpu_target(t: Target) -> GPUTarget:
    return GPUTarget(t.backend, t.arch, t.warp_size)


class CompileOnlyDriver:
    """Stands in for `driver.active` in the worker: it names the target, never a GPU."""

    def __init__(self, target: GPUTarget):
        self.target = target

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

    def get_benchmarker(self):
        raise RuntimeError("timing needs a GPU; the compile worker never launches kernels")


class LaunchRecorder:
    """Installs the compile-only driver and the hook; `launches` fills as the user's
    code launches kernels. Deduplicated by the JIT's own cache key."""

    def __init__(self, target: GPUTarget):
        self.target = target
        self.launches: list[Launch] = []
        self._keys: set[str] = set()
        self._label_prefix = ""

    def __enter__(self):
        self._saved_driver = driver._active
        self._saved_hook = knobs.runtime.jit_cache_hook
        driver.set_active(CompileOnlyDriver(self.target))
        knobs.runtime.jit_cache_hook = self._hook
        self._saved_autotune = _patch_autotuner(self)
        return self

    def __exit__(self, *exc):
        driver._active = self._saved_driver
        knobs.runtime.jit_cache_hook = self._saved_hook
        _unpatch_autotuner(self._saved_autotune)
        return False

    def _hook(self, *, key, repr, fn, compile, is_manual_warmup, already_compiled):
        data = json.loads(compile["specialization_data"])
        dedup = json.dumps([fn.name, str(key)])
        if dedup not in self._keys:
            self._keys.add(dedup)
            self.launches.append(Launch(
                fn=fn.jit_function,
                signature=dict(compile["signature"]),
                constants=dict(compile["constants"]),
                attrs=dict(compile["configs"][0]),
                options=data["options"],
                label=self._label_prefix,
            ))
        return True   # skip the JIT's compile and launch


def _patch_autotuner(recorder: LaunchRecorder):
    """`@triton.autotune` would time every config on a GPU. Instead, launch each
    config once so every candidate is compiled and can be inspected."""
    original = autotuner.Autotuner.run

    def run_every_config(self, *args, **kwargs):
        configs = self.prune_configs(kwargs) if hasattr(self, "prune_configs") else self.configs
        for i, config in enumerate(configs):
            recorder._label_prefix = f"autotune config {i + 1}/{len(configs)}: {config}"
            merged = {**kwargs, **config.all_kwargs()}
            self.fn.run(*args, **merged)
        recorder._label_prefix = ""
    autotuner.Autotuner.run = run_every_config
    return original


def _unpatch_autotuner(original) -> None:
    autotuner.Autotuner.run = original


def arg_specs(launch: Launch) -> tuple[ArgSpec, ...]:
    specs = []
    for i, (name, ty) in enumerate(launch.signature.items()):
        if ty == "constexpr":
            value = launch.constants.get((i,))
            specs.append(ArgSpec(name, ty, value=_show(value)))
        else:
            attrs = launch.attrs.get((i,), [])
            div16 = any(a[0] == "tt.divisibility" and a[1] == 16 for a in attrs)
            specs.append(ArgSpec(name, str(ty), divisible_by_16=div16))
    return tuple(specs)


def _show(value) -> str:
    value = getattr(value, "value", value)
    if isinstance(value, triton.runtime.jit.JITFunction):
        return value.fn.__name__
    return str(value)


def apply_overrides(launch: Launch, num_warps, num_stages, constexprs: dict) -> Launch:
    """UI/CLI overrides, applied to what the JIT computed."""
    options = dict(launch.options)
    if num_warps is not None:
        options["num_warps"] = int(num_warps)
    if num_stages is not None:
        options["num_stages"] = int(num_stages)
    constants = dict(launch.constants)
    names = list(launch.signature)
    for name, value in constexprs.items():
        if name in names and launch.signature[name] == "constexpr":
            constants[(names.index(name),)] = value
    return Launch(launch.fn, launch.signature, constants, launch.attrs, options, launch.label)


def compile_launch(launch: Launch, target: GPUTarget):
    """The same call `JITFunction._do_compile` makes. Returns Triton's CompiledKernel."""
    src = ASTSource(launch.fn, launch.signature, launch.constants, launch.attrs)
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in launch.options.items()}
    return triton.compile(src, target=target, options=options)


def launch_from_signature(fn, signature: str, target: GPUTarget, num_warps=None, num_stages=None) -> Launch:
    """A file without example(): `"*fp32:16, *fp32, i32:16, 1024"` -> one Launch.
    Types follow Triton's AOT tool (`triton/tools/compile.py`)."""
    names = list(fn.arg_names)
    parts = [p.strip() for p in signature.split(",") if p.strip()]
    if len(parts) != len(names):
        raise ValueError(f"signature has {len(parts)} entries but {fn.__name__} takes {len(names)} "
                         f"arguments ({', '.join(names)})")
    sig, constants, attrs = {}, {}, {}
    for i, (name, part) in enumerate(zip(names, parts)):
        ty, _, hint = part.partition(":")
        if _is_number(ty):
            sig[name] = "constexpr"
            constants[(i,)] = int(ty) if ty.lstrip("-").isdigit() else float(ty)
            continue
        if ty != "constexpr" and not (ty.startswith("*") or ty in _SCALAR_TYPES):
            raise ValueError(f"argument {name}: unknown type {ty!r} (e.g. *fp32, *fp16, i32, i64, fp32)")
        sig[name] = ty
        attrs[(i,)] = [["tt.divisibility", 16]] if hint == "16" else []
    opts = {}
    if num_warps is not None:
        opts["num_warps"] = num_warps
    if num_stages is not None:
        opts["num_stages"] = num_stages
    options = make_backend(target).parse_options(opts).__dict__
    return Launch(fn, sig, constants, attrs, dict(options), "from signature")


_SCALAR_TYPES = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
                 "fp16", "bf16", "fp32", "fp64"}


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def compiled_metadata(kernel) -> dict:
    md = kernel.metadata
    keep = ("num_warps", "num_stages", "num_ctas", "shared", "name", "tmem_size", "global_scratch_size")
    out = {}
    for k in keep:
        v = getattr(md, k, None)
        if isinstance(v, (int, str, float)):
            out[k] = v
    return out


def supported_backends() -> tuple[str, ...]:
    names = set(backends)
    return tuple(b for b, n in (("cuda", "nvidia"), ("hip", "amd")) if n in names)


def jit_functions(module) -> dict:
    """The @triton.jit kernels a user module defines (seen through @autotune/@heuristics
    wrappers), by name. Kernels imported from elsewhere are left out."""
    found = {}
    for name, obj in vars(module).items():
        inner = obj
        while isinstance(inner, (autotuner.Autotuner, autotuner.Heuristics)):
            inner = inner.fn
        if isinstance(inner, JITFunction) and inner.fn.__module__ == module.__name__:
            found[name] = inner
    return found
