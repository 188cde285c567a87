"""A library's own ops run inside the target view: custom ops (`torch.library.custom_op`,
`triton_op`: torchao's kernels) have their Python kernels called inside the view (the dispatcher
calls them with no mode active), and a library that registers its kernels as ATen's CUDA
implementations (FlagGems' `use_gems()`) gets the same kernels at the CPU key while the view lasts
(the dispatcher sees the view's tensors as the CPU's)."""
from __future__ import annotations

import contextlib


def custom_op(func):
    """The torch.library custom op (`@custom_op`, `@triton_op`: torchao's kernels) `func` calls."""
    name = func.name() if type(func).__name__ == "OpOverload" else None
    if not name or name.startswith("aten::"):
        return None
    from torch._library import custom_ops
    return custom_ops.OPDEFS.get(name)


def backends_in_view(opdef, mode, func, args, kwargs):
    """`func(*args, **kwargs)` with the custom op's Python kernels run inside the view (`mode`:
    the dispatcher calls them with none active; torchao's allocate on `x.device`)."""
    saved = opdef._backend_fns

    def in_view(fn):
        def kernel(*a, **k):
            with mode:
                return fn(*a, **k)
        return kernel
    opdef._backend_fns = {device: in_view(fn) for device, fn in saved.items()}
    try:
        return func(*args, **kwargs)
    finally:
        opdef._backend_fns = saved


def library_twins(mode):
    """Libraries that register their kernels as the GPU's implementations of ATen ops
    (`torch.library.Library.impl(op, fn, "CUDA")`: FlagGems' `use_gems()`): the dispatcher sees the
    view's tensors as the CPU's, so each such registration is made for the CPU key too, in a
    library of the view's own, gone with the library's (or when the view is left). The kernel runs
    inside the view (`mode`: the dispatcher calls it with none active). Returns the undo."""
    from torch import library
    impl, destroy = library.Library.impl, library.Library._destroy
    twins: dict = {}

    own: set = set()         # (library, op, key) the libraries registered themselves

    def impl_twice(lib, op_name, fn, dispatch_key="", *args, **kwargs):
        out = impl(lib, op_name, fn, dispatch_key, *args, **kwargs)
        own.add((id(lib), op_name, dispatch_key))
        twin = {"CUDA": "CPU", "AutogradCUDA": "AutogradCPU"}.get(dispatch_key)
        # (not where the library gave the CPU key a kernel of its own: torch's _inductor_test ops)
        if twin and getattr(lib, "kind", "") == "IMPL" and (id(lib), op_name, twin) not in own:
            if id(lib) not in twins:
                twins[id(lib)] = library.Library(lib.ns, "IMPL")
            def in_view(*a, **k):
                with mode:
                    return fn(*a, **k)
            with contextlib.suppress(Exception):       # a kernel the CPU key cannot take: the GPU's only
                impl(twins[id(lib)], op_name, in_view, twin, *args, **kwargs)
        return out

    def destroy_both(lib):
        shadow = twins.pop(id(lib), None)
        if shadow is not None:
            destroy(shadow)
        return destroy(lib)

    library.Library.impl, library.Library._destroy = impl_twice, destroy_both

    def undo():
        library.Library.impl, library.Library._destroy = impl, destroy
        for shadow in twins.values():
            destroy(shadow)
        twins.clear()
    return undo
