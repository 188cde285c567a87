"""What Nsight Compute runs when a launch is profiled: the kernel file's example(), for real,
on the GPU. `python -m inspectors.bench.profile_run FILE`, from FILE's folder (the profiler
starts it there): `-m` puts that folder first on sys.path, so the file imports its neighbours
as a script of that folder would.

The file is compiled under its bare name from its own folder, as the compile worker does, so
the line info of the code that runs names the same file as the stages the app shows. With
TLENS_LAUNCH_LOG=PATH it writes every launch of the file's kernels there, in order, as JSON:
[{"kernel", "hash" (the compiled kernel's), "ints" (its integer arguments by name)}], which
tells the profiler which launch to give ncu and with which sizes the code ran."""
from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path
from inspectors.base import settings as settings_mod
from inspectors.compile import default_device


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m inspectors.bench.profile_run FILE", file=sys.stderr)
        return 2
    path = Path(argv[0]).resolve()
    import torch
    if not torch.cuda.is_available():
        print("profile_run: no CUDA GPU visible", file=sys.stderr)
        return 2
    with default_device.gpu_if_any():     # as the compile worker runs the file
        text = path.read_text(encoding="utf-8")
        os.chdir(path.parent)
        module = types.ModuleType("tlens_profiled")
        module.__file__ = path.name
        sys.modules[module.__name__] = module
        exec(compile(text, path.name, "exec"), module.__dict__)
        example = getattr(module, "example", None)
        if example is None:
            print(f"profile_run: {path.name} has no example() to run", file=sys.stderr)
            return 2
        log: list[dict] = []
        record_launches(module, log)
        try:
            example()
            torch.cuda.synchronize()
        finally:
            if settings_mod.load().launch_log:
                Path(settings_mod.load().launch_log).write_text(json.dumps(log))
        return 0


def record_launches(module, log: list) -> None:
    """Wrap each @triton.jit kernel of the module so every launch is logged (kernel name,
    the compiled kernel's hash, the integer arguments by name)."""
    from inspectors.compile.triton_shim import jit_functions

    for fn in jit_functions(module).values():
        def run(*args, _orig=fn.run, _fn=fn, **kwargs):
            kernel = _orig(*args, **kwargs)
            names = list(_fn.arg_names)
            bound = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if k in names}}
            ints = {k: v for k, v in bound.items() if isinstance(v, int) and not isinstance(v, bool)}
            log.append({"kernel": _fn.fn.__name__, "hash": str(getattr(kernel, "hash", "")), "ints": ints})
            return kernel
        fn.run = run


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
