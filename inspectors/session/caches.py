"""Kernels the tool did not compile: Triton cache and dump folders read back, and torch.compile
jobs (Inductor's kernels) run in a process of their own and read back confined to their folder.

    found = scan("~/.triton/cache")                 # the folder's kernels (store.cache)
    opened = open_kernel(found.entries[0].path, roots=[...])
    run = torch_compile(source, timeout=300)        # the user's function, never in this process
    kernels = collect(Path(run.inductor_dir))       # each Inductor kernel, its configs' folders
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.compile import torch_compile_gpu
from inspectors.compile.torch_compile_gpu import (  # noqa: F401 - the types and examples, for the callers
    EXAMPLES, InductorKernel, InductorRun, gpu_probe, graph_fragments_in)
from inspectors.store import cache
from inspectors.store.cache import OpenedKernel, ScanResult, default_locations  # noqa: F401

RUNS_KEPT = 20       # torch.compile run folders kept on disk (the oldest is removed first)


def scan(root: str | Path) -> ScanResult:
    """The kernels in a Triton cache or dump folder (bounded: store.cache.scan)."""
    return cache.scan(str(root))


def open_kernel(path: str | Path, roots: list[Path] | tuple = (), confined: Path | None = None) -> OpenedKernel:
    """One kernel's folder read back, its stage files bounded; `roots`: where a bare source file
    name may be; `confined`: a job's folder that nothing read may leave."""
    return cache.load(Path(path), [Path(r) for r in roots], confined=confined)


def collect(inductor_dir: Path) -> tuple[InductorKernel, ...]:
    """Inductor's kernels in a run's folder, each with its configs' cache folders."""
    return tuple(torch_compile_gpu.collect(Path(inductor_dir)))


def torch_compile(source: str, timeout: float, settings: settings_mod.Settings | None = None) -> InductorRun:
    """`source` (a function and its example inputs) through torch.compile in a subprocess of its
    own (the user's function never runs in the caller), in a fresh folder of the server's:
    nothing of an earlier run, another session's or its own, is there for the job to replace,
    and what is read back afterwards is bounded (torch_compile_gpu.settle) and confined to it
    (torch_compile_gpu.confine). Errors come back as the run's `error`, never raised."""
    settings = settings or settings_mod.load()
    runs = settings.triton_cache_dir.parent / "torch_compile"
    runs.mkdir(parents=True, exist_ok=True)
    old = sorted((d for d in runs.iterdir() if d.is_dir() and not d.is_symlink()), key=lambda d: d.stat().st_mtime)
    for d in old[:max(0, len(old) - RUNS_KEPT + 1)]:
        shutil.rmtree(d, ignore_errors=True)
    out = Path(tempfile.mkdtemp(prefix="run-", dir=runs))
    (out / "fn.py").write_text(source, encoding="utf-8")
    try:
        proc = torch_compile_gpu.run_file(out / "fn.py", out, timeout)
    except subprocess.TimeoutExpired:
        shutil.rmtree(out, ignore_errors=True)
        return InductorRun(function="fn.py", error={"kind": "timeout", "message":
                           f"torch.compile took longer than {timeout:g} s and was stopped", "detail": ""})
    refused = torch_compile_gpu.settle(out)
    if refused:
        shutil.rmtree(out, ignore_errors=True)
        return InductorRun(function="fn.py", error={"kind": "limit", "message": refused, "detail": ""})
    try:
        return torch_compile_gpu.confine(InductorRun.from_json(json.loads(proc.stdout.strip().splitlines()[-1])), out)
    except (ValueError, IndexError, TypeError, KeyError, AttributeError):
        return InductorRun(function="fn.py", error={"kind": "crash", "message":
                           f"the torch.compile process ended with status {proc.returncode}",
                           "detail": proc.stderr[-8000:]})


def target_driver(source: str) -> str:
    """A function file (`fn(...)` and `example_inputs()`) as a kernel file the compile worker
    runs on any machine (the explorer's kind): `example()` calls `torch.compile(fn)` on the
    inputs moved to the target, so Inductor's kernels are compiled for it without a GPU
    (inspectors/compile/torch_compile_target.py). The file's own lines keep their numbers."""
    return source.rstrip("\n") + '''


def example():
    import torch as _torch
    inputs = example_inputs()
    _torch.compile(fn)(*(t.cuda() if isinstance(t, _torch.Tensor) else t for t in inputs))
'''
