"""What a compile job returns: plain frozen dataclasses that round-trip through JSON
(the worker and the CLI speak JSON; the app keeps these in its cache)."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields

from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.launches import StoredLaunches


@dataclass(frozen=True)
class ArgSpec:
    """How the JIT specialized one argument of one launch.

    `type` is Triton's signature type (`*fp32`, `i32`, `constexpr`); `divisible_by_16`
    is the `tt.divisibility = 16` attribute (16-byte aligned pointer, or an int divisible
    by 16); `value` is set for constexprs, including ints the JIT turned into 1.
    """
    name: str
    type: str
    divisible_by_16: bool = False
    value: str | None = None

    def describe(self) -> str:
        if self.value is not None:
            return f"{self.name} = {self.value}"
        tag = ""
        if self.divisible_by_16:
            tag = " (16-byte aligned)" if self.type.startswith("*") else " (divisible by 16)"
        return f"{self.name}: {self.type}{tag}"


@dataclass(frozen=True)
class PassStep:
    """One pass, and the IR after it."""
    index: int
    name: str            # TritonGPUCoalesce, InstCombinePass, Register Coalescer; "input" for the first MLIR dump
    flag: str            # tritongpu-coalesce, register-coalescer; "" for LLVM IR passes
    level: str           # mlir | llvm | mir
    stage: str           # which IR it rewrote: ttir | ttgir | llvm-dialect | llir | mir
    scope: str           # builtin.module, tt.func @add_kernel, [module], add_kernel
    changed: bool | None  # None: nothing of its level before it, or its result was not dumped
    ir: str              # the IR after it; "" when unchanged (then it is the previous step's) or not dumped
    lines: int = 0       # lines of the IR after it

    @property
    def label(self) -> str:
        return f"{self.name} ({self.flag})" if self.flag and self.flag != self.name else self.name


@dataclass(frozen=True)
class KernelResult:
    name: str
    target: str
    options: dict
    args: tuple[ArgSpec, ...]
    stages: dict                 # stage name -> text, keys from inspectors.base.stages
    launch: int = 0              # which launch of example() produced it (0-based)
    label: str = ""              # e.g. "add_kernel · launch 2" or the autotune config
    compile_seconds: float = 0.0
    metadata: dict = field(default_factory=dict)   # shared bytes, num_warps, ... from Triton
    cubin: str = ""              # base64 of the cubin (CUDA targets): SASS on demand, resources
    passes: tuple = ()           # PassStep per pass, when the request asked for pass_dump
    error: CompileError | None = None   # a stage failed: `stages` holds those made before it
    analysis: dict = field(default_factory=dict)   # the worker's insight.Insight, as codec.to_plain made it
    source_path: str = ""        # where the kernel is written when not in the user's file (a library,
                                 # a module beside it), as its line info spells it; stages["source"] is that file
    diagnostics: str = ""        # the compiler's remarks and warnings for this compile (MLIR diagnostics, as printed)
    origin: dict = field(default_factory=dict)   # a kernel torch.compile generated: Inductor's kernel name, its
                                 # graph, the FX nodes and ATen ops it fuses, the user's lines (inspectors.compile.torch_compile_target)
    line_twin: dict = field(default_factory=dict)   # compiled without line info: its stages' twins with it,
                                 # which maps them (inspectors/read/line_twin.py), or {"differs": stage}
    workload: dict = field(default_factory=dict)    # what one launch of it does: grid, bytes, FLOPs, registers
                                 # (inspectors/explain/estimate.workload_of; kept in its header)

    def home(self, filename: str) -> str:
        """The file the kernel's line info maps to: its own file, else the user's `filename`."""
        return self.source_path or filename

    @property
    def partial(self) -> bool:
        return self.error is not None

    def stage_names(self) -> tuple[str, ...]:
        """Stages this kernel has or can produce (SASS is disassembled when first asked for)."""
        return tuple(self.stages) + (("sass",) if self.cubin and "sass" not in self.stages else ())

    def to_json(self) -> dict:
        """As asdict would make it, without deep-copying the stages and the analysis (a
        megabyte of nested dicts for a big kernel: docs/09-benchmark-results.md#figures-behind-design-choices)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(args=[asdict(a) for a in self.args], passes=[asdict(p) for p in self.passes],
                 error=self.error.to_json() if self.error else None, options=dict(self.options),
                 stages=dict(self.stages), metadata=dict(self.metadata))
        return d

    @classmethod
    def from_json(cls, d: dict) -> "KernelResult":
        d = dict(d)
        d["args"] = tuple(ArgSpec(**a) for a in d.get("args", ()))
        if "passes" in d:
            d["passes"] = tuple(p if isinstance(p, PassStep) else PassStep(**p) for p in d["passes"])
        if isinstance(d.get("error"), dict):
            d["error"] = CompileError.from_json(d["error"])
        return cls(**d)


@dataclass(frozen=True)
class CompileResult:
    """`error` set and `kernels` empty: nothing was compiled. `error` set and `kernels` not
    empty: a later stage failed in some launch (`error` is the first such kernel's error,
    with its `stage`); every launch is there, each with the stages it made."""
    kernels: tuple[KernelResult, ...] = ()   # or StoredLaunches: a big result's launches, each read from disk
    error: CompileError | None = None
    output: str = ""             # what the user's code printed (tail, capped)
    triton_version: str = ""
    seconds: float = 0.0
    key: str = ""                # the result cache's key for it, once the app has cached it
    # where one compile's time went, in seconds (TIMINGS; absent: not measured): the job's
    # wait in the queue and for its worker to start (the engine's), its compile and analysis
    # and the CPU it used, its own and its tools' (the worker's); in a student's own sandbox
    # also the job's whole CPU there (job_cpu_s: its fork, answer, exit and the sweep after it);
    # the server's CPU to parse its answer (server_parse_s, measured where the engine reads it)
    timings: dict = field(default_factory=dict)
    # what its compiled graphs run outside Triton (cuBLAS matmuls, attention kernels), each a dict
    # (inspectors/compile/outside_calls.py): op, kind, shapes, dtype, bytes, flops, graph, lines; calls
    # where its graph ran more than once
    outside: tuple = ()

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def headers(self) -> tuple[KernelResult, ...]:
        """Each launch as a list of them needs it (name, label, args, options, origin, error):
        for a stored result without reading any launch's file; else the launches themselves."""
        return self.kernels.headers if isinstance(self.kernels, StoredLaunches) else tuple(self.kernels)

    @property
    def partial(self) -> bool:
        """Stages were made, but not all: show them, with the error in the failing stage."""
        return self.error is not None and bool(self.kernels)

    def to_json(self) -> dict:
        return {
            **(self.kernels.to_json() if isinstance(self.kernels, StoredLaunches) else
               {"kernels": [k.to_json() for k in self.kernels]}),
            "error": self.error.to_json() if self.error else None,
            "output": self.output,
            "triton_version": self.triton_version,
            "seconds": self.seconds,
            **({"key": self.key} if self.key else {}),
            **({"timings": dict(self.timings)} if self.timings else {}),
            **({"outside": list(self.outside)} if self.outside else {}),
        }

    @classmethod
    def from_json(cls, d: dict) -> "CompileResult":
        kernels = tuple(KernelResult.from_json(k) for k in d.get("kernels", ()))
        return cls(
            kernels=StoredLaunches(d["stored"], kernels) if "stored" in d else kernels,
            error=CompileError.from_json(d["error"]) if d.get("error") else None,
            output=d.get("output", ""),
            triton_version=d.get("triton_version", ""),
            seconds=d.get("seconds", 0.0),
            key=d.get("key", ""),
            timings=timings_of(d.get("timings")),
            outside=bounded_outside(d.get("outside")),
        )


TIMINGS = ("queue_s", "start_s", "compile_s", "analysis_s", "cpu_s", "job_cpu_s", "server_parse_s")


def timings_of(value) -> dict:
    """The known, finite, non-negative numbers of a `timings` mapping (a worker's answer)."""
    if not isinstance(value, dict):
        return {}
    return {k: float(v) for k, v in value.items() if k in TIMINGS and isinstance(v, (int, float))
            and not isinstance(v, bool) and 0 <= v < 1e7}


# A project file's name as a request may carry it (CompileRequest.files): a relative path of
# plain parts, e.g. "mypkg/ops/utils.py"; the worker refuses any other (inspectors.compile.loading).
PROJECT_FILE_RE = re.compile(r"^(?:[A-Za-z0-9_.-]+/){0,16}[A-Za-z0-9_.-]+\.(?:py|json|yaml|yml|txt)$")

# The most a request's `files` may hold: this many files, this many characters of text in all. The
# worker refuses a request over either (inspectors.compile.loading); whoever gathers the files
# checks them first, by size on disk, before reading any (app/state/kernel_files.py,
# inspectors.store.project): a file's UTF-8 bytes are never fewer than its characters.
MAX_PROJECT_FILES = 500
MAX_PROJECT_BYTES = 16 << 20


@dataclass(frozen=True)
class CompileRequest:
    """One job for the worker. `signature` compiles a file without `example()`:
    positional types as in Triton's AOT tool, e.g. `"*fp32:16, *fp32:16, i32, 1024"`
    (`:16` = divisible by 16, a bare number = constexpr value)."""
    source: str
    filename: str = "kernel.py"
    target: str = "cuda:90"
    kernel: str | None = None          # only kernels with this name
    num_warps: int | None = None       # None: what the launcher asked for
    num_stages: int | None = None
    constexprs: dict = field(default_factory=dict)   # name -> value overrides
    signature: str | None = None
    max_output_bytes: int = 65536
    sass: bool = True                  # disassemble in the worker (the app asks lazily instead)
    pass_dump: bool = False            # also return the IR after every MLIR/LLVM pass (KernelResult.passes)
    files: dict = field(default_factory=dict)   # the project's other files: relative path -> text (importable)
    package: str = ""                  # the file's package, for its relative imports ("mypkg.ops")
    analysis_s: float = 0.0            # > 0: the worker analyses each kernel (KernelResult.analysis), for at most this long
    triton_version: str = ""           # which configured Triton compiles it ("": the server's own; inspectors.base.triton_installs)
    inline_bytes: int = -1             # launches past this many bytes in all stay files (base/launches.py); -1: TLENS_INLINE_MB

    def to_json(self) -> dict:
        return asdict(self)


# -- a job's text is untrusted: bounded before anything parses it -------------------------------

# A stage's text past this many characters is cut (the largest real stage seen, a flash-attention
# SASS of 20,000 lines, is ~2 MB); a line past MAX_LINE_CHARS too (real compiler lines are under
# 2 KB; a `tl.inline_asm_elementwise` string goes into the PTX verbatim, however long).
MAX_STAGE_CHARS = 16 << 20
MAX_LINE_CHARS = 16 << 10
MAX_MESSAGE_CHARS = 64 << 10
# A cubin past this many bytes is dropped before the server holds it (its SASS stage says so):
# real Triton cubins are a few hundred KB (a flash-attention kernel's, under 0.5 MB).
MAX_CUBIN_BYTES = 8 << 20
CUBIN_TOO_LARGE = "// SASS: the cubin is too large to disassemble here"


def cubin_bytes(cubin_b64: str) -> int:
    """The size of a base64 cubin, decoded (without decoding it)."""
    return len(cubin_b64) * 3 // 4 - cubin_b64[-2:].count("=")


def cubin_too_large(cubin_b64: str) -> str:
    """Why the cubin is not disassembled here (CUBIN_TOO_LARGE, its size, the limit), or ""."""
    n = cubin_bytes(cubin_b64)
    if n <= MAX_CUBIN_BYTES:
        return ""
    return f"{CUBIN_TOO_LARGE} ({n / 2**20:.1f} MB; the limit is {MAX_CUBIN_BYTES / 2**20:g} MB)"


# A worker's JSON may not make more Python objects than its bytes allow: at most this many values
# plus one per JSON_BYTES_PER_VALUE bytes (12 million empty dicts in 48 MB were ~0.9 GB parsed; a
# real answer has one value per ~60 bytes, its stage texts being long strings).
JSON_VALUES = 100_000
JSON_BYTES_PER_VALUE = 16
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_STRING_B = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def loads_bounded(text: str | bytes):
    """json.loads of a worker's answer, refused (ValueError, saying why) when it holds more
    values than JSON_VALUES + its length / JSON_BYTES_PER_VALUE: its commas, colons and brackets
    counted outside its strings (first all of them, a C-speed count; the strings taken out only
    when that is over)."""
    limit = JSON_VALUES + len(text) // JSON_BYTES_PER_VALUE
    marks = (",", ":", "[", "{") if isinstance(text, str) else (b",", b":", b"[", b"{")
    if sum(map(text.count, marks)) > limit:
        bare = (_JSON_STRING if isinstance(text, str) else _JSON_STRING_B).sub("" if isinstance(text, str) else b"", text)
        if (n := sum(map(bare.count, marks))) > limit:
            raise ValueError(f"the answer holds about {n:,} JSON values in {len(text):,} bytes, more than the "
                             f"{limit:,} it may (parsed, it would take far more memory than its size)")
    return json.loads(text)


def bound_text(text: str, limit: int = MAX_STAGE_CHARS, line_limit: int = MAX_LINE_CHARS) -> str:
    """`text` with every line longer than `line_limit` cut (line numbers are kept: the source
    map still points where it did) and the whole cut after `limit` characters; each cut says so.
    Linear in the text; the text is returned as it is when nothing is over."""
    if not isinstance(text, str):
        text = str(text)
    if len(text) <= line_limit or max(map(len, text.split("\n"))) <= line_limit:
        lines = None
    else:
        lines = [ln if len(ln) <= line_limit else
                 f"{ln[:line_limit]} … [Triton Lens: this line was {len(ln):,} characters, cut at {line_limit:,}]"
                 for ln in text.split("\n")]
        text = "\n".join(lines)
    if len(text) > limit:
        cut = text.rfind("\n", 0, limit)
        text = (text[:cut if cut > 0 else limit] +
                f"\n[Triton Lens: this text was {len(text):,} characters; cut at {limit:,} before any analysis]\n")
    return text


def bounded_origin(origin) -> dict:
    """A kernel's origin as the server keeps it: plain strings and line numbers, 64 kB at most."""
    if not isinstance(origin, dict):
        return {}
    try:
        text = json.dumps(origin)
    except (TypeError, ValueError):
        return {}
    if len(text) > 64_000:
        return {k: v for k, v in origin.items() if k in ("kernel", "graph", "category") and isinstance(v, str)}
    return json.loads(text)


_WORKLOAD_INTS = ("bytes", "flops", "registers", "shared_bytes", "spills", "blocks_per_sm", "calls", "warps",
                  "issued")
_WORKLOAD_TEXTS = ("from", "dot_dtype", "flops_unknown")


def _small_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63


def bounded_workload(w) -> dict:
    """A launch's workload as the server keeps it (a worker's, so anything): its known keys,
    plain ints and short strings, 64 tensors and integers at most."""
    if not isinstance(w, dict):
        return {}
    out = {k: w[k] for k in _WORKLOAD_INTS if _small_int(w.get(k))}
    out.update({k: w[k][:200] for k in _WORKLOAD_TEXTS if isinstance(w.get(k), str)})
    for k in ("reductions", "waits"):
        if isinstance(w.get(k), (int, float)) and not isinstance(w[k], bool) and 0 <= w[k] < 1e12:
            out[k] = float(w[k])
    if isinstance(w.get("grid"), list) and len(w["grid"]) <= 3 and all(map(_small_int, w["grid"])):
        out["grid"] = list(w["grid"])
    for k in ("reads", "writes"):
        if isinstance(w.get(k), list):
            out[k] = [str(a)[:200] for a in w[k][:64]]
    if isinstance(w.get("ints"), dict):
        out["ints"] = {str(k)[:200]: v for k, v in list(w["ints"].items())[:64] if _small_int(v)}
    if isinstance(w.get("tensors"), list):
        out["tensors"] = [{"arg": str(t.get("arg"))[:200], "dtype": str(t.get("dtype"))[:40],
                           "bytes": t["bytes"] if _small_int(t.get("bytes")) else 0,
                           "shape": [d for d in t.get("shape", ())[:8] if _small_int(d)]
                           if isinstance(t.get("shape"), list) else []}
                          for t in w["tensors"][:64] if isinstance(t, dict)]
    return out


MAX_OUTSIDE = 512


def bounded_outside(calls) -> tuple:
    """What a result runs outside Triton as the server keeps it: 512 calls at most, each its
    known keys (a workload's bounds for the figures; lines as an origin's)."""
    if not isinstance(calls, (list, tuple)):
        return ()
    out = []
    for c in calls[:MAX_OUTSIDE]:
        if not isinstance(c, dict):
            continue
        keep = {k: str(c.get(k, ""))[:200] for k in ("graph", "op", "kind", "dtype")}
        keep.update({k: c[k] for k in ("bytes", "flops", "calls") if _small_int(c.get(k))})
        keep["shapes"] = [[d for d in s[:8] if _small_int(d)] for s in c.get("shapes", ())[:8] if isinstance(s, list)] \
            if isinstance(c.get("shapes"), list) else []
        lines = c.get("lines") if isinstance(c.get("lines"), dict) else {}
        keep["lines"] = {str(f)[:1000]: [n for n in v[:64] if _small_int(n)] for f, v in list(lines.items())[:8]
                         if isinstance(v, list)}
        out.append(keep)
    return tuple(out)


def bounded_error(e: CompileError | None) -> CompileError | None:
    if e is None:
        return None
    return CompileError(str(e.kind), bound_text(str(e.message), MAX_MESSAGE_CHARS),
                        None if e.file is None else str(e.file)[:1000],
                        e.line if isinstance(e.line, int) else None,
                        bound_text(str(e.detail or ""), MAX_MESSAGE_CHARS), e.stage, str(e.command or "")[:10000])


def bounded_kernel(k: KernelResult) -> KernelResult:
    """One launch bounded as `bounded` bounds a result's."""
    stages = {str(name): bound_text(text) for name, text in dict(k.stages).items()}
    cubin = k.cubin if isinstance(k.cubin, str) else ""
    if cubin_too_large(cubin):
        stages.setdefault("sass", cubin_too_large(cubin))
        cubin = ""
    passes = tuple(PassStep(p.index, p.name, p.flag, p.level, p.stage, p.scope, p.changed,
                            bound_text(p.ir), p.lines) for p in k.passes)
    return KernelResult(str(k.name)[:1000], str(k.target), dict(k.options), tuple(k.args), stages,
                        k.launch, bound_text(str(k.label), 1000), k.compile_seconds, dict(k.metadata),
                        cubin, passes, bounded_error(k.error),
                        k.analysis if isinstance(k.analysis, dict) else {}, str(k.source_path)[:4096],
                        bound_text(str(k.diagnostics), MAX_MESSAGE_CHARS * 4), bounded_origin(k.origin),
                        {str(s): bound_text(t) for s, t in dict(k.line_twin).items() if s in stage_table.BY_NAME or s == "differs"},
                        bounded_workload(k.workload))


def bounded(result: CompileResult) -> CompileResult:
    """`result` (a worker's answer: written by the user's code as much as by ours) with every
    stage, message and output bounded (bound_text) before the server parses any of it, and
    a cubin over MAX_CUBIN_BYTES dropped: its kernel's SASS stage, when it has none, says why."""
    kernels = result.kernels
    if isinstance(kernels, StoredLaunches):     # each launch bounded as it is read; the headers here
        kernels = StoredLaunches(kernels.token, tuple(map(bounded_kernel, kernels.headers)), kernels.folder)
    else:
        kernels = tuple(map(bounded_kernel, kernels))
    return CompileResult(kernels, bounded_error(result.error), bound_text(str(result.output), MAX_MESSAGE_CHARS * 4),
                         str(result.triton_version)[:100], result.seconds, timings=timings_of(result.timings),
                         outside=bounded_outside(result.outside))
