"""AOTInductor in a job without a GPU: `torch._inductor.aoti_compile_and_package(ep)` and
`aoti_load_package(path)` as the target view runs them.

On a GPU, AOTInductor lowers the exported program with Inductor (the same lowering as
torch.compile's, for inference), compiles each Triton kernel, then builds a C++ wrapper and a
shared library with the CUDA toolchain into a .pt2 package. Without a GPU the toolchain's half
cannot be made, and the package could not run anyway; the Triton half can. So here the
exported program's module is compiled by torch.compile on the target (its kernels recorded as
every torch.compile kernel is, graph "inference") and run once with the program's example
inputs; the returned path names a small text file that says so, and loading it gives back the
compiled module, which the rest of example() calls as it would the package's runner.

    install(set_, compile_fn, job_dir)     # set_(obj, name, value): the view's undoable setattr
"""
from __future__ import annotations

import os

NOTE = ("AOTInductor package stand-in (Triton Lens): its Triton kernels were compiled for the target as "
        "torch.compile lowers the exported program; the C++ wrapper and shared library need the GPU's toolchain.\n")


def install(set_, compile_fn, job_dir: str) -> None:
    import torch
    import torch._inductor as inductor
    packages: dict[str, object] = {}

    def compile_and_package(exported, *args, package_path=None, inductor_configs=None, **kwargs):
        # the package's own settings (aot_inductor.*) are about the C++ half: torch.compile takes the rest
        options = {k: v for k, v in (inductor_configs or {}).items() if not str(k).startswith("aot_inductor.")}
        module = compile_fn(exported.module(), options=options)
        example_args, example_kwargs = getattr(exported, "example_inputs", None) or ((), {})
        with torch.no_grad():                    # AOTInductor compiles for inference
            module(*example_args, **(example_kwargs or {}))
        path = str(package_path or os.path.join(job_dir, f"aoti_{len(packages)}.pt2"))
        with open(path, "w", encoding="utf-8") as f:
            f.write(NOTE)
        def runner(*a, **k):                     # as the package's runner: inference, no recompile for grad
            with torch.no_grad():
                return module(*a, **k)
        packages[os.path.abspath(path)] = runner
        return path

    def load_package(path, *args, **kwargs):
        module = packages.get(os.path.abspath(str(path)))
        if module is None:
            raise FileNotFoundError(f"{path}: not a package this example() compiled (a package built elsewhere "
                                    "is a shared library for a GPU: it cannot be loaded without one)")
        return module

    set_(inductor, "aoti_compile_and_package", compile_and_package)
    set_(inductor, "aoti_load_package", load_package)
