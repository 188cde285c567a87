"""The benchmark runner: what the benchmark worker process (`inspectors.bench.worker`) executes.
Imports torch and triton, so it never runs in the Streamlit server. Without a GPU it checks
correctness on the Triton interpreter and times nothing; the model it fills in is
`inspectors.bench.model`."""
from __future__ import annotations

import datetime
import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Callable

import torch
import triton
from triton.testing import do_bench

from inspectors.bench.model import (
    BenchError, BenchRequest, BenchResult, BenchUsageError, COMPILED, Ceilings, Check, EAGER,
    GpuInfo, Row, TIMING_NEEDS_GPU, TRITON, Timing, _REQUIRED,
    combine_timings, default_lock_wait_s, format_size, gbps, round_orders, tflops)
from inspectors.bench.lock import GpuBusy, cached_ceilings, gpu_lock, store_ceilings

Emit = Callable[[dict], None]


@dataclass
class KernelBench:
    """A kernel module's BENCH_* names, resolved (worker side)."""
    module: object
    sizes: tuple[int, ...]
    size: int
    size_name: str
    bound: str
    tol: dict
    inputs: Callable
    kernel: Callable
    nbytes: Callable
    flops: Callable
    reference: Callable
    baselines: Callable = field(default=lambda: {})

    @classmethod
    def from_module(cls, module, filename: str) -> "KernelBench":
        missing = [n for n in _REQUIRED if not hasattr(module, n)]
        if missing:
            raise BenchUsageError(f"{filename} declares no benchmark: it needs {', '.join(missing)} "
                                  "(see kernels/vector_add.py for the pattern)")
        reference = getattr(module, "bench_reference", None) or getattr(module, "reference", None)
        if reference is None:
            raise BenchUsageError(f"{filename} has no reference() (or bench_reference) to check against")
        sizes = tuple(module.BENCH_SIZES)
        tol = getattr(module, "BENCH_TOL", None)
        return cls(module, sizes, int(getattr(module, "BENCH_SIZE", sizes[len(sizes) // 2])),
                   str(getattr(module, "BENCH_SIZE_NAME", "size")), getattr(module, "BENCH_BOUND", "memory"),
                   {"atol": tol[0], "rtol": tol[1]} if tol else {},
                   module.bench_inputs, module.bench_kernel, module.bench_bytes, module.bench_flops,
                   reference, getattr(module, "bench_baselines", lambda: {}))


def load_module(request: BenchRequest, scratch: Path):
    """The library module itself, or a draft's text written to `scratch` and imported from
    there (TorchScript and torch.compile read the source from the file)."""
    if request.source is None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", request.slug):
            raise BenchUsageError(f"not a library kernel: {request.slug!r}")
        return importlib.import_module(f"kernels.{request.slug}")
    path = scratch / f"{re.sub(r'[^A-Za-z0-9_]', '_', request.slug) or 'kernel'}.py"
    path.write_text(request.source, encoding="utf-8")
    name = f"tlens_bench_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def do_bench_timer(warmup_ms: int, rep_ms: int) -> Callable[[Callable], Timing]:
    """triton.testing.do_bench: CUDA events, the L2 flushed before every repetition; the
    median and the 20th/80th percentiles of the repetitions."""

    def timer(fn: Callable) -> Timing:
        median, p20, p80 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
        return Timing(float(median), float(p20), float(p80))
    return timer


def nvidia_driver_version(index: int = 0) -> str:
    """'580.159.04' from nvidia-smi, else from /proc/driver/nvidia/version, else ''."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader", "-i", str(index)],
                                 capture_output=True, text=True, timeout=20).stdout.strip()
            if out:
                return out.splitlines()[0].strip()
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue ..."
        m = re.search(r"Kernel Module\s+([\d.]+)", Path("/proc/driver/nvidia/version").read_text())
        return m.group(1) if m else ""
    except OSError:
        return ""


def gpu_info(index: int) -> GpuInfo:
    props = torch.cuda.get_device_properties(index)
    uuid = str(getattr(props, "uuid", "") or "")
    return GpuInfo(index=index, name=props.name, uuid=uuid, capability=f"{props.major}.{props.minor}",
                   sms=props.multi_processor_count, memory_gib=props.total_memory / 2**30,
                   driver=nvidia_driver_version(index), cuda=str(torch.version.cuda), torch=torch.__version__,
                   triton=triton.__version__)


def measure_ceilings(gpu: GpuInfo, timer: Callable[[Callable], Timing]) -> Ceilings:
    """A 1 GiB device-to-device copy (2 GiB moved) and an 8192^3 fp16 torch.matmul, on random
    data (zeros can run faster than real data), each the do_bench median. Smaller on small GPUs."""
    n = 2**28
    while n * 4 * 2 > gpu.memory_gib * 2**30 / 4:
        n //= 2
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    copy = timer(partial(dst.copy_, src))
    copy_bytes = 2 * n * 4
    del src, dst
    m = 8192
    a = torch.randn(m, m, device="cuda", dtype=torch.float16)
    b = torch.randn(m, m, device="cuda", dtype=torch.float16)
    mm = timer(partial(torch.matmul, a, b))
    del a, b
    torch.cuda.empty_cache()
    return Ceilings(copy_gbps=gbps(copy_bytes, copy.median_ms), matmul_tflops=tflops(2 * m**3, mm.median_ms),
                    copy_bytes=copy_bytes, matmul_n=m, gpu_key=gpu.key, driver=gpu.driver,
                    measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


def warm_gpu(ms: float = 200.0) -> None:
    """Keeps the GPU busy for `ms` before timing. The checks before it (torch.compile compiling
    for seconds) leave the GPU idle, an idle GPU lowers its clocks, and a kernel of a few
    microseconds timed right after then reads slow (docs/09-benchmark-results.md#figures-behind-design-choices)."""
    buf = torch.empty(2**26, device="cuda")            # 256 MiB of zero_() per step
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < ms / 1000:
        for _ in range(8):
            buf.zero_()
        torch.cuda.synchronize()
    del buf


_FAULT_RE = re.compile(r"illegal memory access|illegal instruction|misaligned address|unspecified launch failure"
                       r"|device-side assert|CUDA error|cudaError|CUDA_ERROR|Triton Error \[CUDA\]", re.I)


def _short(exc: BaseException, limit: int = 1200) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= limit else text[:limit] + " …"


def _clone(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def providers_for(spec: KernelBench, wanted: tuple[str, ...] | None) -> list[tuple[str, Callable]]:
    """(name, fn) in display order: Triton, torch eager, torch.compile, the kernel's baselines."""
    chosen = lambda name: name == TRITON or wanted is None or name in wanted  # noqa: E731
    out: list[tuple[str, Callable]] = [(TRITON, spec.kernel)]
    if chosen(EAGER):
        out.append((EAGER, spec.reference))
    if chosen(COMPILED):
        out.append((COMPILED, torch.compile(spec.reference)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # torch.jit.script is deprecated in torch >= 2.10
        for name, fn in spec.baselines().items():
            if chosen(name):
                out.append((name, fn))
    return out


def run(request: BenchRequest, emit: Emit, scratch: Path) -> BenchResult:
    """The worker's whole job. Never raises: errors come back as values. The result names the
    Triton version that ran it."""
    return replace(_run(request, emit, scratch), triton_version=triton.__version__)


def _run(request: BenchRequest, emit: Emit, scratch: Path) -> BenchResult:
    started = time.perf_counter()
    filename = f"{request.slug}.py"
    try:
        module = load_module(request, scratch)
        if not torch.cuda.is_available():
            return replace(run_interpreter(request, module, filename, emit), seconds=time.perf_counter() - started)
        spec = KernelBench.from_module(module, filename)
    except BenchUsageError as e:
        return BenchResult(request.slug, "none", error=BenchError("usage", str(e)))
    except BaseException as e:  # noqa: BLE001 - the user's file may raise anything
        return BenchResult(request.slug, "none", error=BenchError("runtime", f"loading {filename}: {_short(e)}",
                                                                  traceback.format_exc()))
    result = run_gpu(request, spec, emit, do_bench_timer(request.warmup_ms, request.rep_ms))
    return replace(result, seconds=time.perf_counter() - started)


def run_interpreter(request: BenchRequest, module, filename: str, emit: Emit) -> BenchResult:
    """No GPU: the file's check() (or the benchmark's smallest size) on the Triton interpreter.
    Nothing is timed: a CPU-emulated figure would say nothing about a GPU."""
    size_name, bound = "size", "memory"
    emit({"event": "progress", "fraction": 0.1, "message": "No GPU: checking on the Triton interpreter…"})
    try:
        if callable(getattr(module, "check", None)):
            what = f"{filename}: check() passed (the kernel against its torch reference, on the interpreter's small inputs)"
            module.check()
            try:
                spec = KernelBench.from_module(module, filename)
                size_name, bound = spec.size_name, spec.bound
            except BenchUsageError:
                pass
            checks = (Check(0, TRITON, True, what),)
        else:
            spec = KernelBench.from_module(module, filename)
            size_name, bound = spec.size_name, spec.bound
            size = spec.sizes[0]
            inputs = spec.inputs(size)
            torch.testing.assert_close(spec.kernel(*_clone(inputs)), spec.reference(*inputs), **spec.tol)
            what = f"{filename}: matches its reference at {spec.size_name} = {format_size(size)}, on the interpreter"
            checks = (Check(size, TRITON, True, what),)
    except BenchUsageError as e:
        return BenchResult(request.slug, "none", error=BenchError("usage", f"nothing to check: {e}"))
    except AssertionError as e:
        return BenchResult(request.slug, "interpreter", bound, size_name,
                           checks=(Check(0, TRITON, False, _short(e, 4000)),),
                           error=BenchError("mismatch", "the kernel does not match its torch reference "
                                            "(on the Triton interpreter)", traceback.format_exc()),
                           note=TIMING_NEEDS_GPU)
    except BaseException as e:  # noqa: BLE001
        return BenchResult(request.slug, "interpreter", bound, size_name,
                           error=BenchError("runtime", f"the check raised {_short(e)}", traceback.format_exc()),
                           note=TIMING_NEEDS_GPU)
    emit({"event": "progress", "fraction": 1.0, "message": "Checked on the interpreter; nothing timed"})
    return BenchResult(request.slug, "interpreter", bound, size_name, checks=checks, note=TIMING_NEEDS_GPU)


def run_gpu(request: BenchRequest, spec: KernelBench, emit: Emit, timer: Callable[[Callable], Timing],
            info: GpuInfo | None = None, device_type: str = "cuda") -> BenchResult:
    """Check, then time, every provider at every size, holding the GPU's lock throughout.
    (One function on purpose: the measurement protocol reads top to bottom in the order it runs.)
    A fault (illegal address, ...) ends the run with the rows timed so far; the worker process
    exits after it, so the broken CUDA context dies with it. (`device_type="cpu"` with a
    stand-in timer exists for the CPU tests of this bookkeeping; the worker never uses it.)"""
    on_gpu = device_type == "cuda"
    if on_gpu:
        torch.cuda.set_device(request.device)
    info = info or gpu_info(request.device)
    sizes = spec.sizes if request.sweep else (request.size or spec.size,)
    base = BenchResult(request.slug, "gpu", spec.bound, spec.size_name, gpu=info)
    rows: list[Row] = []
    checks: list[Check] = []
    wait_s = default_lock_wait_s() if request.lock_wait_s is None else request.lock_wait_s
    on_wait = lambda msg: emit({"event": "progress", "fraction": 0.0, "message": msg})  # noqa: E731
    t_start = t_end = 0.0
    lock_wait = 0.0
    try:
        with gpu_lock(info.key, f"{request.slug} on GPU {request.device}", wait_s, on_wait) as lock_wait:
            t_start = time.time()
            ceilings = None if request.remeasure_ceilings else cached_ceilings(info)
            if ceilings is None:
                warm_gpu()
                emit({"event": "progress", "fraction": 0.01,
                      "message": "Measuring this GPU's ceilings (copy bandwidth, fp16 matmul), once per GPU…"})
                ceilings = measure_ceilings(info, timer)
                store_ceilings(ceilings)
            base = replace(base, ceilings=ceilings)
            providers = providers_for(spec, request.providers)
            rounds = max(1, request.rounds)
            total, done = len(sizes) * len(providers) * rounds, 0
            for size in sizes:
                emit({"event": "progress", "fraction": done / total,
                      "message": f"{spec.size_name} = {format_size(size)}: checking against the reference"})
                with torch.device(device_type, request.device if on_gpu else None):   # scoped: not while timing
                    inputs = spec.inputs(size)
                nbytes, flops = int(spec.nbytes(*inputs)), int(spec.flops(*inputs))
                expected = spec.reference(*_clone(inputs))
                passed: set[str] = set()
                for name, fn in providers:
                    try:
                        torch.testing.assert_close(fn(*_clone(inputs)), expected, **spec.tol)
                        checks.append(Check(size, name, True))
                        passed.add(name)
                    except AssertionError as e:
                        checks.append(Check(size, name, False, _short(e, 2000)))
                        if name == TRITON:
                            raise _Mismatch(size, e) from None
                    except Exception as e:  # noqa: BLE001 - a baseline that fails to build or run
                        if name == TRITON or _FAULT_RE.search(str(e)):
                            raise
                        checks.append(Check(size, name, False, _short(e, 2000)))
                    if on_gpu:
                        torch.cuda.synchronize()   # an asynchronous fault surfaces here, at its provider
                del expected
                if on_gpu:
                    warm_gpu()
                timed = [(name, fn) for name, fn in providers if name in passed]
                done += (len(providers) - len(timed)) * rounds
                samples: dict[str, list[Timing]] = {name: [] for name, _ in timed}
                for order in round_orders(timed, rounds):
                    for name, fn in order:
                        emit({"event": "progress", "fraction": done / total,
                              "message": f"{spec.size_name} = {format_size(size)}: timing {name}"})
                        samples[name].append(timer(partial(fn, *inputs)))
                        done += 1
                for name, _ in timed:
                    row = Row.scored(size, name, combine_timings(samples[name]), nbytes, flops, ceilings, spec.bound)
                    rows.append(row)
                    emit({"event": "row", "row": asdict(row)})
                del inputs
                if on_gpu:
                    torch.cuda.empty_cache()
            t_end = time.time()
    except GpuBusy as e:
        return replace(base, error=BenchError("busy", str(e)))
    except _Mismatch as e:
        return replace(base, rows=tuple(rows), checks=tuple(checks), lock_wait_s=lock_wait,
                       error=BenchError("mismatch", f"Triton does not match the reference at {spec.size_name} = "
                                        f"{format_size(e.size)}: nothing was timed at this size", _short(e.error, 4000)))
    except BaseException as e:  # noqa: BLE001
        kind = "fault" if _FAULT_RE.search(str(e)) else "runtime"
        message = (f"the kernel faulted on the GPU ({_short(e, 300)}); the worker process that ran it is "
                   "discarded with its CUDA context, the app is unaffected" if kind == "fault" else _short(e))
        return replace(base, rows=tuple(rows), checks=tuple(checks), lock_wait_s=lock_wait,
                       error=BenchError(kind, message, traceback.format_exc()))
    return replace(base, rows=tuple(rows), checks=tuple(checks), lock_wait_s=lock_wait,
                   started_at=t_start, finished_at=t_end)


class _Mismatch(Exception):
    def __init__(self, size: int, error: AssertionError):
        self.size, self.error = size, error
