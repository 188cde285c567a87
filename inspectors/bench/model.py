"""Benchmarks: each kernel's bytes/flops model, the GB/s and TFLOP/s maths, the per-GPU lock
and the ceilings cache. The runner that times them is `inspectors.bench.runner`.

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

This module (dataclasses, maths, `static_info`, `gpu_lock`, the ceilings cache) imports
neither torch nor triton and is safe in the Streamlit server. The runner runs only in the
benchmark worker process: timings never happen in the server.
"""
from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from inspectors.base import settings as settings_mod

# -- configuration (documented in the README) ---------------------------------------------------
#   TLENS_BENCH_DIR      ~/.cache/triton-lens/bench   lock files and the ceilings cache
#   TLENS_BENCH_TIMEOUT  900                          seconds one benchmark run may take
#   TLENS_BENCH_LOCK_WAIT 600                         seconds a run waits for a busy GPU


def bench_dir() -> Path:
    path = settings_mod.load().bench_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_timeout_s() -> float:
    return settings_mod.load().bench_timeout_s


def default_lock_wait_s() -> float:
    return settings_mod.load().bench_lock_wait_s


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
    load (a second back-to-back do_bench of the same matmul read slower on an H100:
    docs/09-benchmark-results.md#figures-behind-design-choices), so no provider is always timed first."""
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
    triton_version: str = ""           # the Triton the worker ran (two-version timing: inspectors.bench.compare_versions)

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
