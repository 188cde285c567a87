"""A step's kernels timed on this machine's GPU: the file's example() run for real, twice to
compile and warm up, then `reps` more under torch.profiler; each CUDA kernel's time per call,
by name (Triton kernels by their function's name; cuBLAS, flash attention and ATen's own
kernels by theirs). What the step view puts beside its estimates on a GPU machine
(`tlens compile FILE --summary --measure`), and benchmarks/time_estimates.py compares.

    python -m inspectors.bench.step_times FILE [REPS]   # from FILE's folder; JSON on stdout's last line
    times = measure(Path("block.py"))                    # the same, in a process of its own
"""
from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

from inspectors.compile import default_device

REPS = 5


class MeasureError(RuntimeError):
    pass


def run_here(path: Path, reps: int = REPS) -> dict[str, list[float]]:
    """In this process, with the GPU: {kernel name: [µs per call, ...]} over `reps` runs."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    if not torch.cuda.is_available():
        raise MeasureError("measuring a step needs an NVIDIA GPU (torch sees none)")
    sys.path[:0] = [str(path.parent)]
    module = types.ModuleType("tlens_measured")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)   # the JIT reads its lines
    example = getattr(module, "example", None)
    if example is None:
        raise MeasureError(f"{path.name} has no example() to run")
    # as the compile worker runs it: a library file's example() makes its tensors on the default
    # device (kernels/vector_add.py's torch.rand(n)), which is the GPU there
    with default_device.gpu_if_any():
        for _ in range(2):
            example()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                example()
            torch.cuda.synchronize()
    times: dict[str, list[float]] = {}
    for e in prof.events():
        if str(getattr(e, "device_type", "")).endswith("CUDA") and e.time_range.elapsed_us() > 0:
            times.setdefault(e.name, []).append(float(e.time_range.elapsed_us()))
    return times


def measure(path: Path, reps: int = REPS, timeout: float = 900.0, env: dict | None = None) -> dict[str, list[float]]:
    """run_here in a process of its own, from the file's folder (it imports its neighbours)."""
    path = Path(path).resolve()
    cmd = [sys.executable, "-m", "inspectors.bench.step_times", str(path), str(reps)]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(path.parent), env=env)
    except subprocess.TimeoutExpired:
        raise MeasureError(f"example() of {path.name} took longer than {timeout:g} s to measure") from None
    if run.returncode != 0 or not run.stdout.strip():
        raise MeasureError(f"example() of {path.name} did not run (exit {run.returncode}): "
                           f"{(run.stdout + run.stderr).strip()[-1500:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def per_call(times: dict[str, list[float]], reps: int = REPS) -> dict[str, dict]:
    """{name: {"median_us", "calls" (per run)}} from run_here's lists."""
    import statistics
    return {name: {"median_us": statistics.median(v), "calls": len(v) / reps} for name, v in times.items() if v}


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m inspectors.bench.step_times FILE [REPS]", file=sys.stderr)
        return 2
    try:
        times = run_here(Path(argv[0]).resolve(), int(argv[1]) if len(argv) > 1 else REPS)
    except MeasureError as e:
        print(f"step_times: {e}", file=sys.stderr)
        return 2
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
