"""What Nsight Compute runs when a launch is profiled: the kernel file's example(), for real,
on the GPU. `python -m inspectors.bench.profile_run FILE`

The file is compiled under its bare name from its own folder, as the compile worker does, so
the line info of the code that runs names the same file as the stages the app shows."""
from __future__ import annotations

import os
import sys
import types
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m inspectors.bench.profile_run FILE", file=sys.stderr)
        return 2
    path = Path(argv[0]).resolve()
    import torch
    if not torch.cuda.is_available():
        print("profile_run: no CUDA GPU visible", file=sys.stderr)
        return 2
    torch.set_default_device("cuda")
    text = path.read_text(encoding="utf-8")
    os.chdir(path.parent)
    sys.path.insert(0, str(path.parent))
    module = types.ModuleType("tlens_profiled")
    module.__file__ = path.name
    sys.modules[module.__name__] = module
    exec(compile(text, path.name, "exec"), module.__dict__)
    example = getattr(module, "example", None)
    if example is None:
        print(f"profile_run: {path.name} has no example() to run", file=sys.stderr)
        return 2
    example()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
