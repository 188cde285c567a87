"""Benchmarks: each kernel's bytes/flops model, the GB/s and TFLOP/s maths, the per-GPU lock,
the ceilings cache, and the runner that `inspectors.bench_worker` executes.

A library kernel describes its benchmark with module-level names (the file stays a plain,
standalone Triton file; nothing here is imported by it):

    BENCH_SIZES = (4096, 16384, ...)   # the sweep, smallest first; the last is "the largest size"
    BENCH_SIZE = 16777216              # the size timed when no sweep is asked for
    BENCH_SIZE_NAME = "n (fp32 elements)"
    BENCH_BOUND = "memory"             # or "compute": which measured ceiling a figure is % of
    BENCH_TOL = (1e-5, 1e-5)           # optional (atol, rtol) for torch.testing.assert_close
    def bench_inputs(size): ...        # tensors on torch's default device (cuda in the worker)
    bench_kernel = add                 # the Triton launcher timed: bench_kernel(*inputs)
    def bench_bytes(*inputs): ...      # fewest bytes the operation must move (each input read
    def bench_flops(*inputs): ...      #   once, each output written once) and its flops
    def bench_reference(*inputs): ...  # optional; the module's reference() otherwise
    def bench_baselines(): ...         # optional {"name": fn}: more torch baselines (literal keys)

Timing: after the checks, 200 ms of memset bring the GPU's clocks up; then every provider gets
`rounds` do_bench runs (forward, then reverse provider order) and its figure is the median of
their medians. Every provider of a row (Triton, torch eager = the reference, torch.compile of the reference,
the kernel's own baselines) is scored with the same model: GB/s = bench_bytes / time, the
"effective bandwidth" convention of Triton's tutorials, so a provider that makes three passes
over memory shows a third of the GB/s rather than more bytes.

The pure half (dataclasses, maths, `static_info`, `gpu_lock`, the ceilings cache) imports
neither torch nor triton and is safe in the Streamlit server. The runner (`run`) imports them
inside its functions and runs only in the worker process: timings never happen in the server.
Without a GPU the runner checks correctness on the Triton interpreter and times nothing.
"""
from __future__ import annotations

import ast
import errno
import fcntl
import json
import os
import re
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

# -- configuration (documented in the README) ---------------------------------------------------
#   TLENS_BENCH_DIR      ~/.cache/triton-lens/bench   lock files and the ceilings cache
#   TLENS_BENCH_TIMEOUT  900                          seconds one benchmark run may take
#   TLENS_BENCH_LOCK_WAIT 600                         seconds a run waits for a busy GPU


def bench_dir() -> Path:
    path = Path(os.environ.get("TLENS_BENCH_DIR") or Path.home() / ".cache" / "triton-lens" / "bench").expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_timeout_s() -> float:
    return float(os.environ.get("TLENS_BENCH_TIMEOUT", "900"))


def default_lock_wait_s() -> float:
    return float(os.environ.get("TLENS_BENCH_LOCK_WAIT", "600"))


# The providers every kernel gets; a kernel's bench_baselines() adds its own.
TRITON = "Triton"
EAGER = "torch eager"
COMPILED = "torch.compile"
STANDARD_PROVIDERS = (TRITON, EAGER, COMPILED)

ERROR_KINDS = ("usage", "mismatch", "fault", "busy", "timeout", "crash", "runtime")

TIMING_NEEDS_GPU = ("Timing needs a GPU: no CUDA GPU is visible to this server, so nothing was "
                    "timed. Correctness was checked on the Triton interpreter (TRITON_INTERPRET=1).")


# -- the maths ------------------------------------------------------------------------------------

def gbps(nbytes: int, ms: float) -> float:
    """Bytes moved per second, in GB/s (10^9): 3 * 2^24 fp32 = 201,326,592 bytes in 0.1 ms
    is 2013.27 GB/s."""
    return nbytes / (ms * 1e-3) / 1e9


def tflops(flops: int, ms: float) -> float:
    """Floating-point operations per second, in TFLOP/s (10^12): 2 * 4096^3 in 0.25 ms is
    549.76 TFLOP/s."""
    return flops / (ms * 1e-3) / 1e12


def percent(value: float, ceiling: float | None) -> float | None:
    return None if not ceiling else 100.0 * value / ceiling


def combine_timings(samples: list["Timing"]) -> "Timing":
    """Several do_bench runs of one provider as one figure: the median of their medians (the
    mean, for two), the lowest 20th and the highest 80th percentile."""
    import statistics
    return Timing(statistics.median(t.median_ms for t in samples), min(t.p20_ms for t in samples),
                  max(t.p80_ms for t in samples))


def round_orders(items: list, rounds: int) -> list[list]:
    """The provider order of each round: forward, reverse, forward... A GPU's clocks drift with
    load (an H100 ran one fp16 matmul 6.5 % slower in a second back-to-back do_bench), so no
    provider is always timed first."""
    return [list(items) if r % 2 == 0 else list(reversed(items)) for r in range(rounds)]


def format_size(size: int) -> str:
    """16777216 -> '16,777,216 (2^24)'; 3000 -> '3,000'."""
    if size > 0 and size & (size - 1) == 0 and size >= 1024:
        return f"{size:,} (2^{size.bit_length() - 1})"
    return f"{size:,}"


# -- results (plain frozen dataclasses that round-trip through JSON) ------------------------------

@dataclass(frozen=True)
class Timing:
    """triton.testing.do_bench with quantiles=[0.5, 0.2, 0.8], in milliseconds."""
    median_ms: float
    p20_ms: float
    p80_ms: float


@dataclass(frozen=True)
class Ceilings:
    """What this GPU really does: a device-to-device copy (bytes read + written) and a large
    fp16 torch.matmul. Measured once per GPU (by uuid and driver) and cached on disk."""
    copy_gbps: float
    matmul_tflops: float
    copy_bytes: int
    matmul_n: int
    gpu_key: str
    driver: str
    measured_at: str
    cached: bool = False

    def for_bound(self, bound: str) -> float:
        return self.matmul_tflops if bound == "compute" else self.copy_gbps

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict | None) -> "Ceilings | None":
        return None if not d else cls(**d)


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    uuid: str
    capability: str      # "9.0"
    sms: int
    memory_gib: float
    driver: str          # NVIDIA driver, e.g. "580.159.04" ("" if unknown)
    cuda: str            # torch.version.cuda
    torch: str
    triton: str

    @property
    def key(self) -> str:
        """Names the lock and the ceilings cache: the same physical GPU whatever
        CUDA_VISIBLE_DEVICES says."""
        return re.sub(r"[^A-Za-z0-9_.-]", "_", self.uuid or f"index-{self.index}")

    def describe(self) -> str:
        driver = f", driver {self.driver}" if self.driver else ""
        return (f"{self.name} (sm_{self.capability.replace('.', '')}, {self.sms} SMs, "
                f"{self.memory_gib:.0f} GiB{driver}); torch {self.torch} (CUDA {self.cuda}), triton {self.triton}")


@dataclass(frozen=True)
class Row:
    """One provider timed at one size, scored with the kernel's bytes/flops model."""
    size: int
    provider: str
    ms: float
    ms_p20: float
    ms_p80: float
    bytes: int
    flops: int
    gbps: float
    tflops: float
    pct_of_ceiling: float | None     # of copy GB/s (memory-bound) or matmul TFLOP/s (compute)

    @classmethod
    def scored(cls, size: int, provider: str, timing: Timing, nbytes: int, flops: int,
               ceilings: Ceilings | None, bound: str) -> "Row":
        g, t = gbps(nbytes, timing.median_ms), tflops(flops, timing.median_ms)
        ceiling = ceilings.for_bound(bound) if ceilings else None
        return cls(size, provider, timing.median_ms, timing.p20_ms, timing.p80_ms, nbytes, flops,
                   g, t, percent(t if bound == "compute" else g, ceiling))


@dataclass(frozen=True)
class Check:
    """torch.testing.assert_close of one provider against the reference at one size."""
    size: int
    provider: str
    ok: bool
    message: str = ""


@dataclass(frozen=True)
class BenchError:
    kind: str            # one of ERROR_KINDS
    message: str
    detail: str = ""     # traceback or the worker's stderr, shown folded

    def headline(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class BenchRequest:
    slug: str                         # library kernel, or the file's stem for a draft
    source: str | None = None         # a draft's text; None = the library file as it is
    size: int | None = None           # None = the kernel's BENCH_SIZE
    sweep: bool = False               # every BENCH_SIZES entry instead of one size
    providers: tuple[str, ...] | None = None   # None = all; Triton is always timed
    device: int = 0
    warmup_ms: int = 100              # do_bench's warm-up (its default is 25 ms): clocks settle
    rep_ms: int = 100                 # do_bench's default
    rounds: int = 2                   # do_bench runs per provider, in forward then reverse order
    lock_wait_s: float | None = None  # None = TLENS_BENCH_LOCK_WAIT
    remeasure_ceilings: bool = False

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "BenchRequest":
        d = dict(d)
        if d.get("providers") is not None:
            d["providers"] = tuple(d["providers"])
        return cls(**d)


@dataclass(frozen=True)
class BenchResult:
    slug: str
    mode: str                          # "gpu" (timed), "interpreter" (checked, not timed), "none"
    bound: str = "memory"
    size_name: str = "size"
    gpu: GpuInfo | None = None
    ceilings: Ceilings | None = None
    rows: tuple[Row, ...] = ()
    checks: tuple[Check, ...] = ()
    error: BenchError | None = None
    note: str = ""
    lock_wait_s: float = 0.0
    started_at: float = 0.0            # wall clock (time.time()) while the GPU lock was held
    finished_at: float = 0.0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def timed(self) -> bool:
        return self.mode == "gpu" and bool(self.rows)

    def providers(self) -> list[str]:
        seen: list[str] = []
        for r in self.rows:
            if r.provider not in seen:
                seen.append(r.provider)
        return seen

    def row(self, size: int, provider: str) -> Row | None:
        return next((r for r in self.rows if r.size == size and r.provider == provider), None)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "BenchResult":
        d = dict(d)
        d["gpu"] = GpuInfo(**d["gpu"]) if d.get("gpu") else None
        d["ceilings"] = Ceilings.from_json(d.get("ceilings"))
        d["rows"] = tuple(Row(**r) for r in d.get("rows", ()))
        d["checks"] = tuple(Check(**c) for c in d.get("checks", ()))
        d["error"] = BenchError(**d["error"]) if d.get("error") else None
        return cls(**d)


CSV_COLUMNS = ("size", "provider", "ms", "ms_p20", "ms_p80", "bytes", "flops", "gbps", "tflops",
               "pct_of_ceiling")


def to_csv(result: BenchResult) -> str:
    """The rows as CSV, with a comment line naming the GPU and the ceilings."""
    lines = []
    if result.gpu:
        lines.append(f"# {result.slug} on {result.gpu.describe()}")
    if result.ceilings:
        lines.append(f"# ceilings: copy {result.ceilings.copy_gbps:.1f} GB/s, fp16 matmul "
                     f"{result.ceilings.matmul_tflops:.1f} TFLOP/s; pct_of_ceiling is of the "
                     f"{'matmul' if result.bound == 'compute' else 'copy'} ceiling")
    lines.append(",".join(CSV_COLUMNS))
    for r in result.rows:
        values = asdict(r)
        lines.append(",".join("" if values[c] is None else (f"{values[c]:.6g}" if isinstance(values[c], float)
                                                            else str(values[c])) for c in CSV_COLUMNS))
    return "\n".join(lines) + "\n"


# -- what a kernel file declares, read without running it ------------------------------------------

@dataclass(frozen=True)
class StaticInfo:
    """The BENCH_* names of a kernel file, read with `ast` (the server never imports kernels)."""
    sizes: tuple[int, ...]
    size: int
    size_name: str
    bound: str
    baselines: tuple[str, ...] | None    # None: bench_baselines() exists but its keys are not literal
    has_check: bool

    def providers(self) -> tuple[str, ...]:
        return STANDARD_PROVIDERS + (self.baselines or ())


_REQUIRED = ("BENCH_SIZES", "bench_inputs", "bench_kernel", "bench_bytes", "bench_flops")


class BenchUsageError(ValueError):
    """The file does not declare a benchmark (a missing BENCH_* name), said in one sentence."""


def _const(node: ast.AST):
    """Evaluates the few constant expressions sizes are written with: 2**24, 16384 * 4, 1 << 20."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
        return node.value
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_const(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_const(node.operand)
    if isinstance(node, ast.BinOp):
        ops = {ast.Pow: lambda a, b: a ** b, ast.Mult: lambda a, b: a * b, ast.Add: lambda a, b: a + b,
               ast.Sub: lambda a, b: a - b, ast.LShift: lambda a, b: a << b, ast.FloorDiv: lambda a, b: a // b}
        op = ops.get(type(node.op))
        if op:
            a, b = _const(node.left), _const(node.right)
            if isinstance(a, int) and isinstance(b, int) and abs(b) < 64:
                return op(a, b)
    raise ValueError(f"not a constant: {ast.unparse(node)}")


def static_info(source: str, filename: str = "kernel.py") -> StaticInfo:
    """Reads BENCH_SIZES, BENCH_SIZE, BENCH_SIZE_NAME, BENCH_BOUND and the names of
    bench_baselines()'s dict; raises BenchUsageError naming what a benchmark still needs."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise BenchUsageError(f"{filename} does not parse (line {e.lineno}): {e.msg}") from None
    values, defined, baselines = {}, set(), ()
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            targets = [node.target.id]
        elif isinstance(node, ast.FunctionDef):
            defined.add(node.name)
            if node.name == "bench_baselines":
                baselines = _literal_keys(node)
        for name in targets:
            defined.add(name)
            if name.startswith("BENCH_"):
                try:
                    values[name] = _const(node.value)
                except ValueError as e:
                    raise BenchUsageError(f"{filename}: {name} must be a constant ({e})") from None
    missing = [n for n in _REQUIRED if n not in defined]
    if missing:
        raise BenchUsageError(f"{filename} declares no benchmark: it needs {', '.join(missing)} "
                              "(see kernels/vector_add.py for the pattern)")
    sizes = values["BENCH_SIZES"]
    if not (isinstance(sizes, tuple) and sizes and all(isinstance(s, int) and s > 0 for s in sizes)):
        raise BenchUsageError(f"{filename}: BENCH_SIZES must be a tuple of positive ints")
    size = values.get("BENCH_SIZE", sizes[len(sizes) // 2])
    bound = values.get("BENCH_BOUND", "memory")
    if bound not in ("memory", "compute"):
        raise BenchUsageError(f"{filename}: BENCH_BOUND must be 'memory' or 'compute', not {bound!r}")
    return StaticInfo(tuple(sizes), int(size), str(values.get("BENCH_SIZE_NAME", "size")), bound,
                      baselines, "check" in defined)


def _literal_keys(fn: ast.FunctionDef) -> tuple[str, ...] | None:
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            keys = node.value.keys
            if all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys):
                return tuple(k.value for k in keys)
    return None


# -- one benchmark at a time per GPU ----------------------------------------------------------------

class GpuBusy(Exception):
    pass


def _lock_path(key: str, directory: Path | None = None) -> Path:
    return (directory or bench_dir()) / f"gpu-{key}.lock"


def lock_holder(key: str, directory: Path | None = None) -> dict:
    """What the current holder wrote into the lock file: {"pid", "what", "since"} (may be stale)."""
    try:
        return json.loads(_lock_path(key, directory).read_text() or "{}")
    except (OSError, ValueError):
        return {}


@contextmanager
def gpu_lock(key: str, what: str, wait_s: float, on_wait: Callable[[str], None] | None = None,
             directory: Path | None = None, poll_s: float = 0.25):
    """Holds an exclusive flock on <bench dir>/gpu-<key>.lock: one timing at a time per GPU
    across processes (two tabs, two users). The kernel drops it when the holder exits, however
    it exits (a faulting kernel included), so a crash never leaves the GPU locked. Yields the
    seconds spent waiting; raises GpuBusy after `wait_s`."""
    path = _lock_path(key, directory)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    started = time.monotonic()
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            holder = lock_holder(key, directory)
            waited = time.monotonic() - started
            busy = ("another benchmark is timing on this GPU"
                    + (f" ({holder.get('what')}, pid {holder.get('pid')})" if holder else ""))
            if waited >= wait_s:
                raise GpuBusy(f"{busy}; gave up after waiting {waited:.0f} s")
            if on_wait:
                on_wait(f"Waiting for the GPU: {busy}")
            time.sleep(poll_s)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "what": what, "since": time.time()}).encode(), 0)
        yield time.monotonic() - started
    finally:
        os.close(fd)     # releases the flock


# -- ceilings cache -------------------------------------------------------------------------------

def _ceilings_path(key: str) -> Path:
    return bench_dir() / f"ceilings-{key}.json"


def cached_ceilings(gpu: GpuInfo) -> Ceilings | None:
    """The ceilings measured earlier on this GPU under this driver, or None."""
    try:
        c = Ceilings.from_json(json.loads(_ceilings_path(gpu.key).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if c is None or c.gpu_key != gpu.key or c.driver != gpu.driver:
        return None
    return replace(c, cached=True)


def store_ceilings(c: Ceilings) -> None:
    path = _ceilings_path(c.gpu_key)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(replace(c, cached=False).to_json(), indent=1))
    os.replace(tmp, path)


# ==================================================================================================
# The runner: executed by inspectors.bench_worker only (imports torch and triton).
# ==================================================================================================

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
    import importlib
    import importlib.util
    import sys
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
    from triton.testing import do_bench

    def timer(fn: Callable) -> Timing:
        median, p20, p80 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
        return Timing(float(median), float(p20), float(p80))
    return timer


def nvidia_driver_version(index: int = 0) -> str:
    """'580.159.04' from nvidia-smi, else from /proc/driver/nvidia/version, else ''."""
    import shutil
    import subprocess
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
    import torch
    import triton
    props = torch.cuda.get_device_properties(index)
    uuid = str(getattr(props, "uuid", "") or "")
    return GpuInfo(index=index, name=props.name, uuid=uuid, capability=f"{props.major}.{props.minor}",
                   sms=props.multi_processor_count, memory_gib=props.total_memory / 2**30,
                   driver=nvidia_driver_version(index), cuda=str(torch.version.cuda), torch=torch.__version__,
                   triton=triton.__version__)


def measure_ceilings(gpu: GpuInfo, timer: Callable[[Callable], Timing]) -> Ceilings:
    """A 1 GiB device-to-device copy (2 GiB moved) and an 8192^3 fp16 torch.matmul, on random
    data (zeros can run faster than real data), each the do_bench median. Smaller on small GPUs."""
    import datetime
    import torch
    n = 2**28
    while n * 4 * 2 > gpu.memory_gib * 2**30 / 4:
        n //= 2
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    copy = timer(lambda: dst.copy_(src))
    copy_bytes = 2 * n * 4
    del src, dst
    m = 8192
    a = torch.randn(m, m, device="cuda", dtype=torch.float16)
    b = torch.randn(m, m, device="cuda", dtype=torch.float16)
    mm = timer(lambda: torch.matmul(a, b))
    del a, b
    torch.cuda.empty_cache()
    return Ceilings(copy_gbps=gbps(copy_bytes, copy.median_ms), matmul_tflops=tflops(2 * m**3, mm.median_ms),
                    copy_bytes=copy_bytes, matmul_n=m, gpu_key=gpu.key, driver=gpu.driver,
                    measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


def warm_gpu(ms: float = 200.0) -> None:
    """Keeps the GPU busy for `ms` before timing. The checks before it (torch.compile compiling
    for seconds) leave the GPU idle, an idle GPU lowers its clocks, and a kernel of a few
    microseconds timed right after then reads ~6 % slow (seen on an H100: GELU at 2^20)."""
    import torch
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
    import torch
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def providers_for(spec: KernelBench, wanted: tuple[str, ...] | None) -> list[tuple[str, Callable]]:
    """(name, fn) in display order: Triton, torch eager, torch.compile, the kernel's baselines."""
    import warnings
    import torch
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
    """The worker's whole job. Never raises: errors come back as values."""
    import torch
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
        import traceback
        return BenchResult(request.slug, "none", error=BenchError("runtime", f"loading {filename}: {_short(e)}",
                                                                  traceback.format_exc()))
    result = run_gpu(request, spec, emit, do_bench_timer(request.warmup_ms, request.rep_ms))
    return replace(result, seconds=time.perf_counter() - started)


def run_interpreter(request: BenchRequest, module, filename: str, emit: Emit) -> BenchResult:
    """No GPU: the file's check() (or the benchmark's smallest size) on the Triton interpreter.
    Nothing is timed: a CPU-emulated figure would say nothing about a GPU."""
    import traceback
    import torch
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
    A fault (illegal address, ...) ends the run with the rows timed so far; the worker process
    exits after it, so the broken CUDA context dies with it. (`device_type="cpu"` with a
    stand-in timer exists for the CPU tests of this bookkeeping; the worker never uses it.)"""
    import traceback
    import torch
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
                        samples[name].append(timer(lambda: fn(*inputs)))
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
