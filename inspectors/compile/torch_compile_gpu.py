"""torch.compile mode: run Inductor on a small PyTorch function and say which Triton
kernels it generated, and which of the function's ops each one fuses.

A function file is plain Python: `fn(...)` and `example_inputs()` returning a tuple of
tensors made **without** an explicit device (the runner makes `cuda` the default)::

    import torch

    def fn(x, bias):
        return torch.relu(x + bias)

    def example_inputs():
        return torch.randn(8192, 1024), torch.randn(1024)

Running needs a GPU and happens in a subprocess of its own (user code never runs in the
server): `python -m inspectors.compile.torch_compile_gpu FILE --out DIR` points `TORCHINDUCTOR_CACHE_DIR` at
`DIR/inductor` and `TRITON_CACHE_DIR` at `DIR/inductor/triton/0` (Inductor's own default
layout, `/tmp/torchinductor_<user>/triton/0`), compiles, checks the result against eager,
and prints one JSON object (`InductorRun`). Without a GPU it exits 3 with an error of kind
`no_gpu`, and does nothing else.

What Inductor leaves behind, and what this module reads (torch 2.11 and 2.13):

* the wrapper module (`DIR/inductor/<xx>/c<hash>.py`, the one with `def call(args)`)
  defines each kernel with a comment block naming the kernel file and the ops it fused::

      # kernel path: /tmp/torchinductor_root/ab/cabc123.py
      # Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
      # Source node to ATen node mapping:
      #   add => add
      triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''

* the kernel file itself (`kernel path` above) holds the `@triton.jit` source under a
  decorator with `inductor_meta={... 'kernel_name': 'triton_poi_fused_add_relu_0',
  'num_load': 2, 'num_reduction': 0, ...}` (no op origins there: those are in the wrapper);
* the Triton cache: one folder per compiled config (`inspectors.store.cache`), whose TTIR names
  the kernel file: `#loc = loc("/tmp/torchinductor_root/ab/cabc123.py":18:0)`.
"""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import time
import traceback
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from inspectors.process import sandbox
from inspectors.read.inductor import (  # noqa: F401 - re-exported: inductor.parse_wrapper(...)
    InductorKernel, parse_inductor_meta, parse_wrapper, split_name)
from inspectors.store import cache

if TYPE_CHECKING:
    import subprocess       # imported where it runs (run_file)

# ------------------------------------------------------------------------------ examples

# The seeds' examples (CUDA Mode "Fusing kernels" talk: bias-add + ReLU and LoRA's
# mul-add-ReLU; the GELU of a profiling lecture; the fused-softmax of the Triton 1.0 post).
EXAMPLES: dict[str, str] = {
    "bias_add_relu": '''import torch


def fn(x, bias):
    """bias-add + ReLU: Inductor fuses both into one pointwise kernel."""
    return torch.relu(x + bias)


def example_inputs():
    return torch.randn(8192, 1024), torch.randn(1024)
''',
    "lora_mul_add_relu": '''import torch


def fn(dense, lora, bias):
    """LoRA's epilogue: dense + 0.5 * lora + bias, then ReLU -- one kernel, not four."""
    return torch.relu(dense + 0.5 * lora + bias)


def example_inputs():
    return torch.randn(4096, 2048), torch.randn(4096, 2048), torch.randn(2048)
''',
    "gelu_tanh": '''import torch


def fn(x):
    """GELU (tanh approximation) written out by hand: eight ops, one kernel."""
    return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x * x * x)))


def example_inputs():
    return (torch.randn(1 << 24),)
''',
    "softmax": '''import torch


def fn(x):
    """Row softmax written out by hand: max, subtract, exp, sum, divide."""
    x_max = x.max(dim=1)[0]
    z = x - x_max[:, None]
    numerator = torch.exp(z)
    denominator = numerator.sum(dim=1)
    return numerator / denominator[:, None]


def example_inputs():
    return (torch.randn(4096, 1024),)
''',
}


# ------------------------------------------------------------------------------ results

@dataclass(frozen=True)
class InductorRun:
    """What one torch.compile of a function file produced."""
    function: str = ""                     # the file name
    kernels: tuple[InductorKernel, ...] = ()
    error: dict | None = None              # {"kind": no_gpu | syntax | runtime | usage, "message", "detail"}
    gpu: str = ""
    torch_version: str = ""
    triton_version: str = ""
    max_abs_diff: float | None = None      # compiled vs eager
    eager_ms: float | None = None          # GPU time medians over rounds (torch_compile_timing.measure)
    compiled_ms: float | None = None
    timing: dict | None = None             # torch_compile_timing.CompileTiming.to_json(): spread, checks, notes
    seconds: float = 0.0
    inductor_dir: str = ""
    triton_cache_dir: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "InductorRun":
        d = dict(d)
        d["kernels"] = tuple(InductorKernel(**{**k, "source_nodes": tuple(k.get("source_nodes", ())),
                                               "aten_ops": tuple(k.get("aten_ops", ())),
                                               "cache_entries": tuple(k.get("cache_entries", ()))})
                             for k in d.get("kernels", ()))
        return cls(**d)


# ------------------------------------------------------------------------------ collecting

def find_kernel_file(path: str, roots: list[Path]) -> Path | None:
    """The generated kernel file `path` names, on this machine: the path itself, or the
    same file under a copied Inductor cache (Inductor writes `c<hash>.py` to
    `<cache>/<hash[0:2]>/`, i.e. the name's characters 1..2)."""
    p = Path(path)
    if p.is_file():
        return p
    name = p.name
    for root in roots:
        for candidate in (root / name[1:3] / name, root / name):
            if candidate.is_file():
                return candidate
    return None


def collect(inductor_dir: Path, triton_dir: Path | None = None, only: set[str] | None = None
            ) -> tuple[InductorKernel, ...]:
    """Every Triton kernel of the wrapper modules under `inductor_dir`, each linked to the
    Triton cache folders compiled from its file (matched by the TTIR's file location).
    `only`: wrapper files to read (a run's own), else all."""
    inductor_dir = Path(inductor_dir)
    triton_dir = Path(triton_dir) if triton_dir else inductor_dir / "triton" / "0"
    by_file: dict[str, list[str]] = {}
    if triton_dir.is_dir():
        for entry in cache.scan(triton_dir).entries:
            loc = cache.ttir_file(Path(entry.path))
            if loc:
                by_file.setdefault(Path(loc).name, []).append(entry.path)
    kernels = []
    seen = set()
    for wrapper in sorted(inductor_dir.glob("*/*.py")):
        if only is not None and str(wrapper) not in only:
            continue
        try:
            text = wrapper.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "async_compile.triton(" not in text:
            continue
        for k in parse_wrapper(text):
            key = (k.name, Path(k.kernel_path).name)
            if key in seen:
                continue
            seen.add(key)
            meta = {}
            local = find_kernel_file(k.kernel_path, [inductor_dir]) if k.kernel_path else None
            if local:
                meta = parse_inductor_meta(local.read_text(encoding="utf-8", errors="replace"))
            entries = tuple(sorted(by_file.get(Path(k.kernel_path).name, ()))) if k.kernel_path else ()
            kernels.append(InductorKernel(k.name, k.category, k.fused, k.source_nodes, k.aten_ops,
                                          k.kernel_path, entries, meta))
    return tuple(kernels)


# ------------------------------------------------------------------------------ running (needs a GPU)

def gpu_probe() -> str:
    """Cheap check, without importing torch, that this machine has an NVIDIA GPU: the
    device node the driver creates. '' when there is none."""
    if Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia/version").exists():
        return "nvidia"
    return ""


_NO_GPU = ("torch.compile mode needs an NVIDIA GPU: Inductor generates Triton kernels only for GPU tensors "
           "(on the CPU it writes C++). Open a cache copied from a GPU machine instead.")


def _err(kind: str, message: str, detail: str = "") -> dict:
    return {"kind": kind, "message": message, "detail": detail}


def run_source(source: str, filename: str, out_dir: Path, timing: bool = True, rounds: int = 3,
               graphs: bool = True, probe=None) -> InductorRun:
    """torch.compile `fn` of a function file, in this process. The caches must already point
    under `out_dir` (see `main`); returns the kernels this run's wrapper defines. `timing`:
    compiled vs eager by `torch_compile_timing.measure` (`rounds`; `graphs`: the GPU time by CUDA graph
    replay, the headline; without it do_bench's per call from Python).
    `probe(fn, compiled, inputs)`: called after the timing (benchmarks), its result is dropped."""
    started = time.perf_counter()
    import torch
    inductor_dir = Path(os.environ.get("TORCHINDUCTOR_CACHE_DIR", out_dir / "inductor"))
    triton_dir = Path(os.environ.get("TRITON_CACHE_DIR", inductor_dir / "triton" / "0"))
    base = dict(function=filename, torch_version=torch.__version__, inductor_dir=str(inductor_dir),
                triton_cache_dir=str(triton_dir))
    try:
        import triton
        base["triton_version"] = triton.__version__
    except ImportError:
        pass
    if not torch.cuda.is_available():
        return InductorRun(**base, error=_err("no_gpu", _NO_GPU))
    base["gpu"] = torch.cuda.get_device_name()
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as e:
        return InductorRun(**base, error=_err("syntax", f"line {e.lineno}: {e.msg}"))
    # A real module in sys.modules: Dynamo imports the function's module by name to trace its globals.
    import types
    module = types.ModuleType("tlens_torch_compile")
    module.__file__ = filename
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    before = set(inductor_dir.glob("*/*.py"))
    try:
        exec(code, namespace)
        fn, make_inputs = namespace.get("fn"), namespace.get("example_inputs")
        if not callable(fn) or not callable(make_inputs):
            return InductorRun(**base, error=_err("usage", f"{filename} needs a function fn(...) and "
                                                  "example_inputs() returning a tuple of tensors"))
        with torch.device("cuda"):          # inputs made without a device land on the GPU
            inputs = make_inputs()
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        torch._dynamo.reset()
        compiled = torch.compile(fn)
        got = compiled(*inputs)
        want = fn(*inputs)
        torch.cuda.synchronize()
        diff = _max_abs_diff(got, want)
        eager_ms = compiled_ms = timed = None
        if timing:           # as the Benchmark page times: L2 flushed, rounds in both orders, spread
            from inspectors.compile import torch_compile_timing
            timed = torch_compile_timing.measure(fn, compiled, inputs, rounds=rounds, rep_ms=50, graphs=graphs)
            eager_ms, compiled_ms = timed.headline("eager").median_ms, timed.headline("compiled").median_ms
        if probe is not None:
            probe(fn, compiled, inputs)
    except BaseException as e:  # noqa: BLE001 - user code may raise anything
        return InductorRun(**base, error=_err("runtime", f"{type(e).__name__}: {e}", traceback.format_exc()),
                           seconds=time.perf_counter() - started)
    finally:
        sys.modules.pop(module.__name__, None)
    new = {str(p) for p in set(inductor_dir.glob("*/*.py")) - before}
    kernels = collect(inductor_dir, triton_dir, only=new or None)
    return InductorRun(**base, kernels=kernels, max_abs_diff=diff, eager_ms=eager_ms, compiled_ms=compiled_ms,
                       timing=timed.to_json() if timed else None, seconds=time.perf_counter() - started)


def _max_abs_diff(a, b) -> float | None:
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return float((a.float() - b.float()).abs().max())
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        diffs = [_max_abs_diff(x, y) for x, y in zip(a, b)]
        diffs = [d for d in diffs if d is not None]
        return max(diffs) if diffs else None
    return None


def point_caches(out_dir: Path) -> tuple[Path, Path]:
    """Inductor's and Triton's caches under `out_dir`, in Inductor's default layout. Set
    before torch is imported."""
    inductor_dir = Path(out_dir).resolve() / "inductor"
    triton_dir = inductor_dir / "triton" / "0"
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(inductor_dir)
    os.environ["TRITON_CACHE_DIR"] = str(triton_dir)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")   # compile in this process: no pool start-up
    triton_dir.mkdir(parents=True, exist_ok=True)
    return inductor_dir, triton_dir


def run_file(file: Path, out_dir: Path, timeout: float) -> "subprocess.CompletedProcess":
    """`python -m inspectors.compile.torch_compile_gpu FILE --out OUT` in a process of its own: the
    user's function never runs in the caller. On a server that sandboxes users' code, in
    bubblewrap with the GPU's device files and `out_dir` (holding FILE) its only writable
    folder. stdout and stderr go to files of the caller's (not `out_dir`), each read back only
    to its last MAX_REPLY_BYTES. Raises subprocess.TimeoutExpired."""
    import subprocess
    import tempfile
    argv = [sys.executable, "-m", "inspectors.compile.torch_compile_gpu", str(file), "--out", str(out_dir)]
    root = Path(__file__).resolve().parents[2]
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="tlens-tc-io-") as io, \
            open(Path(io) / "stdout", "w+b") as out, open(Path(io) / "stderr", "w+b") as err:
        if not sandbox.enabled():
            code = subprocess.run(argv, cwd=root, stdout=out, stderr=err, timeout=timeout).returncode
        else:
            limits = sandbox.Limits(cpu_s=int(4 * timeout))
            jail = sandbox.Jail(writable=(out_dir,), env={"TRITON_DEFAULT_FP_FUSION": "1"},
                                gpu=bool(sandbox.gpu_devices()), limits=limits)
            etc = sandbox.write_passwd(Path(io) / "etc")       # the server's, outside what the job may write
            cgroup = sandbox.Cgroup.create(f"inductor-{out_dir.name}-{os.getpid()}", limits)
            try:
                code = subprocess.run(sandbox.wrap(argv, jail, etc), stdout=out, stderr=err, timeout=timeout,
                                      env=sandbox.BWRAP_ENV, preexec_fn=limits.preexec(cgroup, gpu=jail.gpu),
                                      start_new_session=True).returncode
            finally:
                if cgroup is not None:
                    cgroup.kill()
        return subprocess.CompletedProcess(argv, code, _tail(out), _tail(err))


MAX_REPLY_BYTES = 16 << 20


def _tail(f, limit: int = MAX_REPLY_BYTES) -> str:
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - limit))
    return f.read().decode("utf-8", "replace")


def settle(out_dir: Path, max_bytes: int = 2 << 30, max_files: int = 50_000) -> str | None:
    """After a sandboxed run has ended (its processes are gone: the folder no longer changes),
    remove from `out_dir` whatever the server must never follow or read: links, FIFOs, sockets,
    devices, files with other names (hard links). Returns why the folder is refused (over its
    size or file count), or None."""
    total = files = 0
    for dirpath, dirnames, filenames in os.walk(out_dir, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode):
                continue
            files += 1
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                os.unlink(path)
                continue
            total += st.st_size
        dirnames[:] = [d for d in dirnames if os.path.isdir(os.path.join(dirpath, d))
                       and not os.path.islink(os.path.join(dirpath, d))]
        if total > max_bytes or files > max_files:
            return f"the run wrote more than {max_bytes >> 20} MB or {max_files:,} files"
    return None


def confine(run: InductorRun, out_dir: Path) -> InductorRun:
    """`run` (read from the job's own output: untrusted) with every path it names checked to lie
    in `out_dir` (settled: no links): Inductor's folder is `out_dir/inductor`, whatever the
    job said, and a kernel's cache entries outside it are dropped."""
    out_dir = Path(out_dir).resolve()
    inductor_dir = out_dir / "inductor"

    def inside(path: str) -> bool:
        p = Path(path)
        return p.is_absolute() and ".." not in p.parts and p.resolve().is_relative_to(out_dir)
    kernels = tuple(replace(k, cache_entries=tuple(e for e in k.cache_entries if isinstance(e, str) and inside(e)))
                    for k in run.kernels)
    return replace(run, kernels=kernels, inductor_dir=str(inductor_dir), triton_cache_dir=str(inductor_dir / "triton"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m inspectors.compile.torch_compile_gpu",
                                description="torch.compile a function file; print the Triton kernels as JSON")
    p.add_argument("file", type=Path)
    p.add_argument("--out", type=Path, required=True, help="folder for Inductor's and Triton's caches")
    p.add_argument("--no-timing", action="store_true")
    args = p.parse_args(argv)
    if not gpu_probe():           # no driver at all: say so at once, without importing torch (2+ s)
        print(json.dumps(InductorRun(function=args.file.name, error=_err("no_gpu", _NO_GPU)).to_json()))
        return 3
    point_caches(args.out)
    try:
        source = args.file.read_text(encoding="utf-8")
    except OSError as e:
        print(json.dumps(InductorRun(function=args.file.name, error=_err("usage", str(e))).to_json()))
        return 1
    run = run_source(source, args.file.name, args.out, timing=not args.no_timing)
    print(json.dumps(run.to_json()))
    if run.error and run.error["kind"] == "no_gpu":
        return 3
    return 0 if run.ok else 1


if __name__ == "__main__":
    sys.exit(main())


def graph_fragments_in(inductor_dir: Path) -> dict:
    """{kernel name: FxGraph} of every wrapper module under `inductor_dir` (a run's folder or a
    copied cache such as tests/fixtures/inductor_cache): the eager ops each kernel fuses."""
    from inspectors.read.fxgraph import graph_fragments
    out = {}
    for wrapper in sorted(Path(inductor_dir).glob("*/*.py")):
        try:
            text = wrapper.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "# Graph fragment:" in text:
            for g in graph_fragments(text):
                out.setdefault(g.kernel, g)
    return out
