"""The one module that touches Triton's internals, only inside the worker process; tested with
triton 3.9.0 (here), 3.6.0 (the GPU machine, and CI's second virtualenv), 3.7.1 and 3.8.0.

How a launch is compiled without a GPU, exactly as the JIT would specialize it:
`kernel[grid](args)` goes through `JITFunction.run`, which asks `driver.active` for the device
and target, computes the specialization of the *real* arguments (pointer alignment and int
divisibility by 16, ints equal to 1, constexprs) and calls `knobs.runtime.jit_cache_hook`
before compiling. We install a compile-only driver answering with the chosen target (no CUDA
driver needed; a GPU machine can compile for another architecture), and a jit_cache_hook that
records the specialization and returns True, which makes the JIT skip compile and launch
(triton 3.6-3.9: `_do_compile` returns None).

Each recorded launch is then compiled with `triton.compile(ASTSource(...))` using the
signature, constexprs, attributes and options the JIT computed itself, with a stage recorder
on `knobs.runtime.add_stages_inspection_hook`: every stage's output is kept as it is made, so
when a later stage fails (ptxas crashes, an LLVM error) the stages before it are still
returned (`StageFailure`), and, with a journal folder, written to disk as they are made, so
they outlive a crash of the process. ptxas's own `-v` log is kept too (`dump_ptxas_log`).

Supported: Triton 3.6 to 3.9 (`inspectors.base.triton_support`, which also holds the facts the pure
layers need: which ptxas, which flags, small-tensor layouts). Version differences met here:

* the stage hook: 3.6 calls it only from the backend's `add_stages(stages, options,
  language, capability)`; 3.9 also calls it with no arguments from `compile()` and the
  JIT, for a cache key (we answer "": the pipeline is unchanged, so is the key).
* ptxas for sm_90: 3.6-3.8 run the wheel's CUDA 12.8/12.9 `ptxas`, 3.9 the CUDA 13.4
  `ptxas-blackwell`. CUDA 12.8/12.9 ptxas segfaults on some large kernels that CUDA 13
  compiles (benchmarks/results/ptxas_crash.txt): a failed SASS stage, up to PTX shown.
* the interpreter (bench worker, no GPU): 3.6 needs `fix_interpreter()` with numpy >= 2.4.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import os
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import triton
from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.backends import backends
from triton.compiler import ASTSource, make_backend
from triton.runtime import autotuner
from triton.runtime.jit import JITFunction

from inspectors.compile import triton_shim_record
from inspectors.compile.triton_shim_driver import target_driver

# the module (`triton.runtime.jit` as an attribute is the decorator)
jit_module = importlib.import_module("triton.runtime.jit")

from inspectors.base import triton_support
from inspectors.base.result import ArgSpec
from inspectors.base.targets import Target
from inspectors.compile import journal, triton_shim_env
from inspectors.read.toolfail import PtxasFailure, parse_ptxas_error


@dataclass
class Launch:
    """One specialization recorded from a launch."""
    fn: object                    # the JITFunction
    signature: dict               # {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    constants: dict               # {(4,): 1024}
    attrs: dict                   # {(0,): [["tt.divisibility", 16]], ...}
    options: dict                 # backend options as the JIT parsed them
    label: str = ""
    origin: dict = field(default_factory=dict)   # a generated kernel's (inspectors.compile.torch_compile_target)
    call: dict = field(default_factory=dict)     # its grid and arguments' sizes (inspectors.compile.launch_call)
    env: dict = field(default_factory=triton_shim_env.now)   # triton_shim_env.COMPILE_ENV when it was launched


def gpu_target(t: Target) -> GPUTarget:
    return GPUTarget(t.backend, t.arch, t.warp_size)


def _lenient(serialize):
    """The JIT's serialize_specialization_data while recording: a hook makes the JIT serialize
    the specialization to JSON, and a constexpr JSON cannot hold (a Gluon layout passed from the
    host) fails there, where a launch without the hook does not. Such a value is written as its
    repr (the recorder reads only the options back; the constants it keeps are the objects)."""
    def jsonable(value):
        try:
            json.dumps(value)
            return value
        except (TypeError, ValueError):
            return repr(value)

    def lenient(name, signature, constants, *rest):
        try:
            return serialize(name, signature, constants, *rest)
        except (TypeError, ValueError):
            return serialize(name, signature, {k: jsonable(v) for k, v in constants.items()}, *rest)
    return lenient


_recording: list = []      # the LaunchRecorders entered, innermost last
_skipped: set = set()      # kernels whose JIT launches are not recorded now (not_recorded)


@contextlib.contextmanager
def not_recorded(names: set[str]):
    """While entered, JIT launches of the kernels named are skipped, not recorded (a compiled
    graph run on the CPU: Inductor's compile of a user's kernel in it is recorded already)."""
    added = names - _skipped
    _skipped.update(added)
    try:
        yield
    finally:
        _skipped.difference_update(added)


def record(launch: Launch) -> None:
    """A launch made elsewhere than the JIT's (Inductor's kernels: inspectors.compile.torch_compile_target),
    recorded by the recorder in use."""
    if _recording:
        _recording[-1].launches.append(launch)


class LaunchRecorder:
    """Installs the compile-only driver and the hook; `launches` fills as the user's
    code launches kernels. Deduplicated by the JIT's own cache key."""

    def __init__(self, target: GPUTarget, properties: dict | None = None):
        self.target, self.properties = target, properties
        self.launches: list[Launch] = []
        self._keys: dict[str, Launch] = {}
        self.hit: Launch | None = None       # the launch the JIT's last call was (triton_shim_record counts its calls)
        self._label_prefix = ""

    def __enter__(self):
        self._saved_serialize = jit_module.serialize_specialization_data
        jit_module.serialize_specialization_data = _lenient(self._saved_serialize)
        self._driver = target_driver(self.target, self.properties)
        self._driver.__enter__()
        self._saved_hook = knobs.runtime.jit_cache_hook
        knobs.runtime.jit_cache_hook = self._hook
        self._undo_entry_points = triton_shim_record.patch_entry_points(self)
        _recording.append(self)
        return self

    def __exit__(self, *exc):
        _recording.remove(self)
        jit_module.serialize_specialization_data = self._saved_serialize
        self._driver.__exit__(None, None, None)
        knobs.runtime.jit_cache_hook = self._saved_hook
        self._undo_entry_points()
        return False

    def _hook(self, *, key, repr, fn, compile, is_manual_warmup, already_compiled):
        data = json.loads(compile["specialization_data"])
        dedup = json.dumps([fn.name, str(key)])
        self.hit = self._keys.get(dedup)
        if dedup not in self._keys and fn.name not in _skipped:
            self._keys[dedup] = self.hit = Launch(
                fn=fn.jit_function,
                signature=dict(compile["signature"]),
                constants=dict(compile["constants"]),
                attrs=dict(compile["configs"][0]),
                options=data["options"],
                label=self._label_prefix,
            )
            self.launches.append(self.hit)
        # skip the JIT's compile and launch; a warmup (`kernel.warmup(...)`, which returns the
        # compiled kernel to read n_regs from) is compiled, its later launches do nothing
        return not is_manual_warmup


def arg_specs(launch: Launch) -> tuple[ArgSpec, ...]:
    specs = []
    for i, (name, ty) in enumerate(launch.signature.items()):
        if ty == "constexpr":
            value = launch.constants.get((i,))
            specs.append(ArgSpec(name, ty, value=_show(value)))
        else:
            attrs = launch.attrs.get((i,), [])
            div16 = any(a[0] == "tt.divisibility" and a[1] == 16 for a in attrs)
            specs.append(ArgSpec(name, str(ty), divisible_by_16=div16))
    return tuple(specs)


def _show(value) -> str:
    value = getattr(value, "value", value)
    if isinstance(value, triton.runtime.jit.JITFunction):
        return value.fn.__name__
    return str(value)


def apply_overrides(launch: Launch, num_warps, num_stages, constexprs: dict) -> Launch:
    """UI/CLI overrides, applied to what the JIT computed."""
    options = dict(launch.options)
    if num_warps is not None:
        options["num_warps"] = int(num_warps)
    if num_stages is not None:
        options["num_stages"] = int(num_stages)
    constants = dict(launch.constants)
    names = list(launch.signature)
    for name, value in constexprs.items():
        if name in names and launch.signature[name] == "constexpr":
            constants[(names.index(name),)] = value
    return dataclasses.replace(launch, constants=constants, options=options)


class StageFailure(Exception):
    """A compile that failed in `stage` (Triton's name: ttir, ttgir, llir, ptx, cubin,
    amdgcn, hsaco) after making the stages in `made` ({name: text, or bytes for a
    binary}). `command` reproduces the failing step by hand where Triton runs a tool
    (ptxas), with the input saved under the repro folder; `cause` is Triton's exception."""

    def __init__(self, stage: str, made: dict, message: str, command: str = "", cause: BaseException | None = None):
        super().__init__(message)
        self.stage, self.made, self.message, self.command, self.cause = stage, made, message, command, cause


@dataclass
class _StageRecorder:
    """Wraps each stage function Triton's backend registered, keeping its output (and
    writing it to the `journal` folder, if any, as it is made).

    Installed as `knobs.runtime.add_stages_inspection_hook` for one `triton.compile`:
    3.6-3.9 call it as `hook(backend, stages, options, language, capability)` at the end
    of `add_stages`; 3.9 also calls `hook()` from `compile()` for a cache-key suffix, which
    is "" here because the stages' outputs are unchanged."""
    journal: Path | None = None
    made: dict = field(default_factory=dict)
    running: str | None = None

    def __call__(self, *args):
        if not args:                        # triton 3.9: compile() asks for (key, hash)
            return "", ""
        stages = args[1]
        for name in list(stages):
            stages[name] = self._wrap(name, stages[name])
        return None

    def _wrap(self, name, fn):
        def run(src, metadata):
            self.running = name
            if self.journal is not None:
                journal.running(self.journal, name)
            out = fn(src, metadata)
            self.made[name] = out if isinstance(out, bytes) else str(out)
            if self.journal is not None:
                journal.made(self.journal, name, self.made[name])
            self.running = None
            return out
        return run


def compile_launch(launch: Launch, target: GPUTarget, journal_dir: Path | None = None,
                   repro_dir: Path | None = None):
    """The same call `JITFunction._do_compile` makes. Returns Triton's CompiledKernel; raises
    StageFailure when a stage after the Python front end fails (with the stages made before it),
    the front end's own errors (CompilationError) as they are. `journal_dir`: each stage written
    there as it is made, the one in progress named (inspectors.compile.journal)."""
    # the JIT's own source class: a @gluon.jit function's is GluonASTSource
    src = getattr(launch.fn, "ASTSource", ASTSource)(launch.fn, launch.signature, launch.constants, launch.attrs)
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in launch.options.items()}
    recorder = _StageRecorder(journal_dir)
    saved, saved_log = knobs.runtime.add_stages_inspection_hook, knobs.nvidia.dump_ptxas_log
    knobs.runtime.add_stages_inspection_hook = recorder
    knobs.nvidia.dump_ptxas_log = True     # ptxas -v's log, printed: the spills without running it again
    try:
        with contextlib.redirect_stdout(log := io.StringIO()), triton_shim_env.launched(launch.env):
            compiled = triton.compile(src, target=target, options=options)
        compiled.tlens_ptxas_log = log.getvalue()[-65536:] if "Compiling entry function" in log.getvalue() else ""
        return compiled
    except Exception as e:  # noqa: BLE001 - any stage may raise anything
        if recorder.running is None:
            raise                       # the front end (or a cache problem): no stage was running
        message, command = _describe_failure(recorder.running, e, recorder.made, repro_dir)
        raise StageFailure(recorder.running, dict(recorder.made), message, command, e) from e
    finally:
        knobs.runtime.add_stages_inspection_hook, knobs.nvidia.dump_ptxas_log = saved, saved_log
        if journal_dir is not None:
            journal.running(journal_dir, None)


def line_info_off(launch: Launch) -> bool:
    """Whether Triton compiled `launch` without line info (TRITON_DISABLE_LINE_INFO, as unsloth sets it)."""
    with triton_shim_env.launched(launch.env):
        return bool(knobs.compilation.disable_line_info)


def compile_line_twin(launch: Launch, target: GPUTarget):
    """`launch` compiled again with line info on: its `.loc` lines map the real compile's instructions
    (inspectors/read/line_twin.py checks they are the same); its own Triton cache entry."""
    src = getattr(launch.fn, "ASTSource", ASTSource)(launch.fn, launch.signature, launch.constants, launch.attrs)
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in launch.options.items()}
    with triton_shim_env.launched({**launch.env, "TRITON_DISABLE_LINE_INFO": "0"}), knobs.compilation.scope(), contextlib.redirect_stdout(io.StringIO()):
        knobs.compilation.disable_line_info = False
        return triton.compile(src, target=target, options=options)


def _describe_failure(stage: str, exc: BaseException, made: dict, repro_dir: Path | None) -> tuple[str, str]:
    """A message and the command that reproduces it (or "")."""
    text = str(exc).strip()
    failure = parse_ptxas_error(text) if stage == "cubin" else None
    if failure is None:
        return f"{type(exc).__name__} while making {stage}: {text[:2000]}", ""
    return failure.message(), _repro_command(failure, made.get("ptx"), repro_dir)


def _repro_command(failure: PtxasFailure, ptx: str | None, repro_dir: Path | None) -> str:
    """Triton's own repro command, with its temporary PTX file (left in /tmp by Triton
    3.6-3.9 when ptxas fails) moved to `repro_dir` under a name of its content."""
    cmd, tmp = failure.command, failure.ptx_path
    if not cmd or tmp is None or ptx is None or repro_dir is None:
        return cmd
    repro_dir.mkdir(parents=True, exist_ok=True)
    kept = repro_dir / f"{hashlib.sha256(ptx.encode()).hexdigest()[:16]}.ptx"
    kept.write_text(ptx)
    for leftover in (tmp, tmp + ".o"):
        try:
            os.unlink(leftover)
        except OSError:
            pass
    return cmd.replace(f"{tmp}.o", str(kept.with_suffix(".cubin"))).replace(tmp, str(kept))


def launch_from_signature(fn, signature: str, target: GPUTarget, num_warps=None, num_stages=None) -> Launch:
    """A file without example(): `"*fp32:16, *fp32, i32:16, 1024"` -> one Launch.
    Types follow Triton's AOT tool (`triton/tools/compile.py`)."""
    names = list(fn.arg_names)
    parts = [p.strip() for p in signature.split(",") if p.strip()]
    if len(parts) != len(names):
        raise ValueError(f"signature has {len(parts)} entries but {fn.__name__} takes {len(names)} "
                         f"arguments ({', '.join(names)})")
    sig, constants, attrs = {}, {}, {}
    for i, (name, part) in enumerate(zip(names, parts)):
        ty, _, hint = part.partition(":")
        if _is_number(ty):
            sig[name] = "constexpr"
            constants[(i,)] = int(ty) if ty.lstrip("-").isdigit() else float(ty)
            continue
        if ty != "constexpr" and not (ty.startswith("*") or ty in _SCALAR_TYPES):
            raise ValueError(f"argument {name}: unknown type {ty!r} (e.g. *fp32, *fp16, i32, i64, fp32)")
        sig[name] = ty
        attrs[(i,)] = [["tt.divisibility", 16]] if hint == "16" else []
    opts = {}
    if num_warps is not None:
        opts["num_warps"] = num_warps
    if num_stages is not None:
        opts["num_stages"] = num_stages
    options = make_backend(target).parse_options(opts).__dict__
    return Launch(fn, sig, constants, attrs, dict(options), "from signature")


_SCALAR_TYPES = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
                 "fp16", "bf16", "fp32", "fp64"}


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def compiled_metadata(kernel) -> dict:
    md = kernel.metadata
    keep = ("num_warps", "num_stages", "num_ctas", "shared", "name", "tmem_size", "global_scratch_size")
    out = {}
    for k in keep:
        v = getattr(md, k, None)
        if isinstance(v, (int, str, float)):
            out[k] = v
    return {**out, "ptxas_log": kernel.tlens_ptxas_log} if getattr(kernel, "tlens_ptxas_log", "") else out


def supported_backends() -> tuple[str, ...]:
    names = set(backends)
    return tuple(b for b, n in (("cuda", "nvidia"), ("hip", "amd")) if n in names)


def jit_functions(module) -> dict:
    """The @triton.jit kernels a user module defines (seen through @autotune/@heuristics
    wrappers), by name. Kernels imported from elsewhere are left out."""
    found = {}
    for name, obj in vars(module).items():
        inner = obj
        while isinstance(inner, (autotuner.Autotuner, autotuner.Heuristics)):
            inner = inner.fn
        if isinstance(inner, JITFunction) and inner.fn.__module__ == module.__name__:
            found[name] = inner
    return found


def fix_interpreter() -> bool:
    """Triton 3.6's interpreter with numpy >= 2.4: `range(n)` over a scalar tensor fails
    ("only 0-dimensional arrays can be converted to Python scalars") because its tensor
    `__index__` is `int(self.handle.data)` on a 1-element 1-D array. 3.7 and later use
    `int(self.handle.data.squeeze())`; this installs the same for 3.6, in the process that
    runs the interpreter (the bench worker, the kernels' interpreter check). Returns
    whether anything was changed."""
    if not triton_support.interpreter_index_needs_squeeze(triton.__version__):
        return False
    from triton.runtime import interpreter
    original = interpreter._patch_lang_tensor
    if getattr(original, "_tlens_squeeze", False):
        return True

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))
    patch_lang_tensor._tlens_squeeze = True
    interpreter._patch_lang_tensor = patch_lang_tensor
    return True


def cache_dir_of(compiled) -> Path | None:
    """The folder of Triton's cache that holds a compiled kernel (by its hash), or None."""
    try:
        from triton.runtime.cache import get_cache_manager
        return Path(get_cache_manager(compiled.hash).cache_dir)
    except Exception:  # noqa: BLE001 - an unusual cache manager: nothing to remember beside it
        return None
