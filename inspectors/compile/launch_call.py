"""What one launch asks of the GPU, read where it is recorded (in the worker): its grid, the
tensors it is passed (shape, dtype, bytes) and its integer arguments, for a JIT launch from
the real arguments; for an Inductor kernel from Inductor's own estimate of the bytes it moves
and the FLOPs it does, and its grid from its config and sizes. `workload` then adds what the
compile tells (registers, occupancy, which arguments are loaded and stored, a dot's FLOPs from
the TTIR: inspectors/read/ttir_work.py). The numbers are the launch's `KernelResult.workload`,
kept in its header, which the step's time estimates read (inspectors/explain/estimate.py).
"""
from __future__ import annotations

import math

MAX_TENSORS = 64          # a launch's tensors listed (a grouped GEMM's pointer arrays: the bytes count them all)


def _tensor(value):
    """A torch tensor, or the tensor under a TMA descriptor; None for anything else."""
    base = getattr(value, "base", None)
    for t in (value, base):
        if t is not None and hasattr(t, "data_ptr") and hasattr(t, "element_size") and hasattr(t, "numel"):
            return t
    return None


def of_jit(fn, args: tuple, kwargs: dict, grid) -> dict:
    """A JIT launch `fn[grid](*args, **kwargs)`: its grid and arguments, as Triton binds them."""
    try:
        params = fn.signature.parameters
    except AttributeError:
        return {}
    bound = dict(zip(params, args))
    bound.update({k: v for k, v in kwargs.items() if k in params})
    for name, p in params.items():
        if name not in bound and p.default is not p.empty:
            bound[name] = p.default
    tensors, ints = [], {}
    for name, value in bound.items():
        items = list(enumerate(value)) if isinstance(value, (tuple, list)) else [(None, value)]
        for i, item in items:
            label = name if i is None else f"{name}[{i}]"
            t = _tensor(item)
            if t is not None:
                tensors.append({"arg": label, "shape": [int(s) for s in t.shape],
                                "dtype": str(t.dtype).removeprefix("torch."), "bytes": int(t.numel()) * int(t.element_size())})
            elif isinstance(item, int) and not isinstance(item, bool) and i is None:
                ints[name] = int(item)
    out = {"tensors": tensors[:MAX_TENSORS], "ints": dict(list(ints.items())[:MAX_TENSORS]), "from": "arguments"}
    try:
        g = grid(bound) if callable(grid) else grid
        g = tuple(int(x) for x in (g if isinstance(g, (tuple, list)) else (g,)))[:3]
        out["grid"] = list(g) + [1] * (3 - len(g))
    except Exception:  # noqa: BLE001 - a grid function that needs what only the run has: no grid
        pass
    return out


def of_inductor(kernel, sizevars) -> dict:
    """An Inductor kernel as its scheduler sees it (`kernel`: a TritonKernel, a template's, or a
    combo kernel of several: the optimizer's foreach), when it is defined: the bytes it moves and
    FLOPs it does, by Inductor's own estimates (what `benchmark_kernel` prints), and its sizes
    (xnumel, r0_numel; a combo's xnumel_0, xnumel_1, ...) for its grid."""
    out: dict = {"from": "Inductor"}
    parts = list(getattr(kernel, "sub_kernels", ()) or ())
    try:
        out["bytes"] = int(sum(k.estimate_kernel_num_bytes() for k in parts) if parts
                           else kernel.estimate_kernel_num_bytes())
    except Exception:  # noqa: BLE001 - an estimate Inductor cannot make for this kernel: left out
        pass
    try:
        flops = kernel.estimate_flops() if not parts else 0
        if flops:
            out["flops"] = int(flops)
    except Exception:  # noqa: BLE001
        pass
    hint = getattr(sizevars, "optimization_hint", None) or sizevars.size_hint     # torch 2.13, 2.11
    numels = {}
    for i, part in enumerate(parts or [kernel]):
        for prefix, expr in getattr(part, "numels", {}).items():
            try:
                numels[f"{prefix}numel" + (f"_{i}" if parts else "")] = int(hint(expr, fallback=8192))
            except Exception:  # noqa: BLE001 - an unbacked size
                pass
    out["numels"] = numels
    return out


def inductor_grid(inductor_meta: dict, cfg, numels: dict) -> list[int] | None:
    """The grid Inductor's launcher computes for `cfg` at these sizes (its GridExpr)."""
    try:
        from torch._inductor.runtime.triton_heuristics import GridExpr
        meta = {**numels, **cfg.kwargs}
        return [int(x) for x in GridExpr.from_meta(inductor_meta, cfg).eval_slow(meta)]
    except Exception:  # noqa: BLE001 - a template's fixed grid (its call's arguments), a combo kernel
        return None


def programs(call: dict) -> int | None:
    grid = call.get("grid")
    return math.prod(grid) if isinstance(grid, list) and grid else None
