"""The compile worker: a separate process that runs the user's kernel file.

Protocol (one JSON object per line): the engine writes a request on stdin, the
worker answers on a private copy of its original stdout. The user's code never
sees those descriptors: fd 0 reads /dev/null and fds 1/2 go to the job's
`output.txt`, so `print`, `input()` or a C library writing to fd 1 cannot corrupt
the protocol.

    -> {"op": "compile", "job_dir": "/tmp/tlens-x/job-3", "request": {...CompileRequest}}
    <- {"kernels": [...], "error": null, "output": "...", ...}      (CompileResult JSON)
    -> {"op": "ping"}   <- {"pong": true}

Started by `inspectors.compile.engine`; run `python -m inspectors.compile.worker_main` only through it.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from contextlib import nullcontext
from pathlib import Path

from inspectors.process import proclimits
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult, KernelResult, bounded
from inspectors.base.targets import TargetError, parse as parse_target
from inspectors.compile import default_device, journal, launch_compile, loading, torch_state
from inspectors.target import tensor_view
from inspectors.compile.torch_compile_target import CompiledOnTarget
from inspectors.base import settings as settings_mod

def _tail(path: Path, limit: int) -> str:
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if size > limit:
                f.seek(size - limit)
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    if size > limit:
        text = f"[{size - limit} earlier bytes of output dropped]\n" + text
    return text


class _Captured:
    """Points fds 1 and 2 at `path` for the duration of a job."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        sys.stdout.flush(), sys.stderr.flush()
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.saved = os.dup(1), os.dup(2)
        os.dup2(self.fd, 1), os.dup2(self.fd, 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(self.saved[0], 1), os.dup2(self.saved[1], 2)
        for fd in (*self.saved, self.fd):
            os.close(fd)
        return False


def run_job(req: CompileRequest, job_dir: Path) -> tuple[CompileResult, bool]:
    """The job's result, and whether its launches are in their answer files only (`stored`:
    the result holds each launch's header; the engine adopts the files)."""
    import torch
    import triton
    from inspectors.compile import triton_shim as shim

    started, cpu0 = time.perf_counter(), _cpu_now()
    job_dir.mkdir(parents=True, exist_ok=True)
    output_path = job_dir / "output.txt"
    filename = Path(req.filename).name or "kernel.py"
    path = (job_dir / filename).resolve()
    path.write_text(req.source, encoding="utf-8")
    modname = f"tlens_user_{job_dir.name.replace('-', '_')}"
    # Triton's cache key covers the kernel's source but not its file name, and the stages
    # name the file (loc("vector_add.py":27:9), .file 1 "vector_add.py"): one cache folder
    # per file name, so a kernel saved under another name never shows the first one's name.
    saved_env = dict(os.environ)     # what the file sets (TRITON_DISABLE_LINE_INFO at import) ends with its job
    base = settings_mod.load().triton_cache_base
    if base:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", filename)[:100]
        os.environ["TRITON_CACHE_DIR"] = os.path.join(base, "by-file", safe)
    saved_cwd, saved_modules, saved_path = os.getcwd(), set(sys.modules), list(sys.path)
    saved_device = torch.get_default_device()
    kernels: list[KernelResult] = []
    outside: tuple = ()
    error = None
    try:
        os.chdir(job_dir)
        loading.write_project(job_dir, {rel: text for rel, text in req.files.items() if job_dir / rel != path})
        sys.path.insert(0, str(job_dir))       # the user's project (req.files): their imports
        try:
            target = parse_target(req.target)
        except TargetError as e:
            raise loading.JobError(CompileError("usage", str(e))) from None
        backend_name = {"cuda": "nvidia", "hip": "amd"}[target.backend]
        if target.backend not in shim.supported_backends():
            raise loading.JobError(CompileError("usage", f"unsupported target {req.target}: this Triton "
                                         f"({triton.__version__}) has no {backend_name} backend"))
        gtarget = shim.gpu_target(target)
        with _Captured(output_path), default_device.gpu_if_any():
            # the target GPU as the code sees it, while it is imported and example() runs
            with tensor_view.TargetView(target) if tensor_view.needed(target) else nullcontext() as view, \
                    CompiledOnTarget(view, job_dir, shim.record) as on_target:
                # Triton's driver names the target while the file and its libraries are imported
                # too (fla sizes its autotune spaces by the device it finds at import)
                with shim.target_driver(gtarget, tensor_view.driver_properties(target)):
                    module = loading.load_module(path, req.source, modname, req.package)
                jitted = shim.jit_functions(module)
                if not jitted and (req.signature or not callable(getattr(module, "example", None))):
                    raise loading.JobError(CompileError("usage", f"no @triton.jit kernel found in {filename}",
                                                        filename, None))
                launches, raised = _launches(module, jitted, req, gtarget, path, tensor_view.driver_properties(target),
                                             lambda: on_target.outside, on_target.not_compiled)
                outside = tuple(on_target.calls_outside())     # what the graphs and eager modules run outside Triton
            if req.kernel:
                launches = [l for l in launches if l.fn.__name__ == req.kernel]
                if not launches:
                    raise loading.JobError(CompileError("usage", f"no launch of kernel {req.kernel!r}; kernels in the file: "
                                                 f"{', '.join(sorted(jitted))}", filename))
            launches = [shim.apply_overrides(l, req.num_warps, req.num_stages, req.constexprs) for l in launches]
            journal.listed(job_dir, [l.label or l.fn.__name__ for l in launches], time.perf_counter() - started)
            kernels = launch_compile.compile_launches(shim, launches, gtarget, target, req, path, output_path)
            # a later stage failed in some launch: every launch is returned with what it made,
            # and the first failure is the result's error too (so `ok` is False)
            error = next((k.error for k in kernels if k.error is not None), raised)
    except loading.JobError as e:
        error = e.error
    except BaseException as e:  # noqa: BLE001 - anything else is reported, the worker lives on
        error = CompileError("runtime", f"{type(e).__name__}: {e}", filename,
                             loading.user_line_from_tb(e.__traceback__, path.name), traceback.format_exc())
    finally:
        if os.environ != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        torch.set_default_device(saved_device)
        try:
            loading.forget_project(set(sys.modules) - saved_modules, job_dir, modname)
        except Exception as e:  # noqa: BLE001 - said with the result: a worker never dies in silence
            error = error or CompileError("runtime", f"the job's modules could not be dropped after it "
                                          f"({type(e).__name__}: {e})", filename, None, traceback.format_exc())
    compiled = time.perf_counter()
    stored = False
    if kernels:
        inline = req.inline_bytes if req.inline_bytes >= 0 else settings_mod.load().inline_mb << 20
        whole = launch_compile.whole_answers(job_dir, kernels, inline)
        if whole is None:
            stored = True            # the engine reads each launch from its answer file
        else:
            kernels = whole
    done = time.perf_counter()
    timings = {"compile_s": round(compiled - started, 4), "analysis_s": round(done - compiled, 4),
               "cpu_s": round(_cpu_now() - cpu0, 4)}
    # bounded here as the server bounds it (base.result.bounded): an exception's 200 MB message
    # makes a small answer, not one the server refuses with the kernels in it
    result = bounded(CompileResult(tuple(kernels), error, _tail(output_path, req.max_output_bytes),
                                   triton.__version__, done - started, timings=timings, outside=outside))
    return result, stored


def _said(e: BaseException) -> str:
    """str(e) of the user's exception, whose __str__ may raise too."""
    try:
        return str(e)
    except Exception as inner:  # noqa: BLE001 - the user's code
        return f"(its message could not be read: {type(inner).__name__})"


def _cpu_now() -> float:
    """CPU seconds of this process (all its threads) and of its finished children (ptxas, nvdisasm)."""
    import resource
    tools = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + tools.ru_utime + tools.ru_stime


def _launches(module, jitted, req: CompileRequest, gtarget, path: Path, properties: dict,
              outside=lambda: (), not_compiled=lambda: "") -> tuple[list, CompileError | None]:
    """The launches to compile, and the error example() raised after making some (None when it
    returned). `outside()`: what torch.compile's graphs call outside Triton so far (no launches
    and some of those: the step is those calls, not an error); `not_compiled()`: why
    torch.compile, called, compiled no graph ("" where it did)."""
    from inspectors.compile import triton_shim as shim
    filename = path.name
    if req.signature:
        if req.kernel and req.kernel not in jitted:
            raise loading.JobError(CompileError("usage", f"no kernel {req.kernel!r} in {filename}; found: {', '.join(sorted(jitted))}"))
        if not req.kernel and len(jitted) > 1:
            raise loading.JobError(CompileError("usage", f"{filename} has several kernels ({', '.join(sorted(jitted))}): "
                                         "name one to compile from a signature"))
        fn = jitted[req.kernel] if req.kernel else next(iter(jitted.values()))
        try:
            return [shim.launch_from_signature(fn, req.signature, gtarget, req.num_warps, req.num_stages)], None
        except ValueError as e:
            raise loading.JobError(CompileError("usage", f"bad signature: {e}", filename)) from None
    example = getattr(module, "example", None)
    if not callable(example):
        raise loading.JobError(CompileError("usage", f"{filename} has no example() function to launch its kernels; "
                                     "add one, or compile from an explicit signature "
                                     "(e.g. --signature '*fp32:16, *fp32:16, i32, 1024')", filename))
    with shim.LaunchRecorder(gtarget, properties) as recorder, loading.CallsOf(example) as called:
        try:
            example()
        except BaseException as e:  # noqa: BLE001
            line = loading.user_line_from_tb(e.__traceback__, path.name)
            if type(e).__name__ == "CompilationError":
                line = loading.compilation_error_line(e, path.read_text()) or line
                raise loading.JobError(CompileError("compile", loading.first_line(e), filename, line, loading.detail_of(e))) from None
            message = f"example() raised {type(e).__name__}: {_said(e)}"
            if isinstance(e, MemoryError):
                message += f"(over the worker's memory limit, {settings_mod.load().worker_memory_mb} MB)"
            if not recorder.launches:
                raise loading.JobError(CompileError("runtime", message, filename, line, traceback.format_exc())) from None
            # the launches made before it are compiled and shown, the error with them
            n = len(recorder.launches)
            message += f" (after {n} launch{'es' if n > 1 else ''}, shown)"
            return recorder.launches, CompileError("runtime", message, filename, line, traceback.format_exc())
    if not recorder.launches:
        if outside():        # a compiled graph of attention or matmuls alone: its step is those calls
            return [], None
        own = "" if jitted else f"; {filename} has no @triton.jit kernel of its own"
        what = f": it called {', '.join(called.names)}" if called.names else ""
        if why := not_compiled():          # torch.compile called, no graph: Dynamo skipped the code
            own = f"; {why}"
        raise loading.JobError(CompileError("usage", f"example() ran but launched no Triton kernel{what}{own}",
                                            filename))
    return recorder.launches, None


def _prewarm() -> None:
    """Pay Triton's one-off costs (LLVM/MLIR start-up) before the first real job."""
    import triton
    import triton.language as tl
    from inspectors.compile import triton_shim as shim

    @triton.jit
    def _warm(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr) + 1)
    try:
        shim.compile_launch(shim.Launch(_warm, {"x_ptr": "*fp32"}, {}, {}, {}), shim.gpu_target(parse_target("cuda:90")))
    except Exception:  # noqa: BLE001 - warming is best effort
        pass


def _our_code() -> dict:
    """What each name of the inspectors package's loaded modules is bound to: a file that
    replaced one (`insight.to_plain = ...`) would change what this worker does for every later
    job (_replaced)."""
    return {name: dict(vars(m)) for name, m in list(sys.modules.items())
            if name.startswith("inspectors") and m is not None}


def _replaced(before: dict) -> bool:
    """Whether a name of `before` is now bound to something else, or its module is gone
    (a lazy import adds names; it replaces none)."""
    missing = object()
    for name, names in before.items():
        now = vars(sys.modules[name]) if sys.modules.get(name) is not None else {}
        if any(now.get(k, missing) is not v for k, v in names.items()):
            return True
    return False


def _forked_job(msg: dict) -> dict:
    """One job in a child of a student's own sandbox (zygote.py)."""
    return answer(*run_job(CompileRequest(**msg["request"]), Path(msg["job_dir"])))


def answer(result: CompileResult, stored: bool) -> dict:
    """run_job's result as the worker's one-line answer; `_stored`: its launches are in the job
    folder's answer files, each whole (the engine reads them one at a time)."""
    return {**result.to_json(), **({"_stored": len(result.kernels)} if stored else {})}


def main() -> None:
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    import torch  # noqa: F401 - the point of a warm worker
    import triton  # noqa: F401
    if not torch.cuda.is_available():        # a CUDA build's libraries' mappings come on top
        proclimits.limit_memory(above_mapped=torch.version.cuda is not None)
    proclimits.limit_processes()
    if settings_mod.load().worker_prewarm:
        _prewarm()
    proto_out.write(json.dumps({"ready": True, "pid": os.getpid(), "triton_version": triton.__version__,
                                "memory_limit_mb": proclimits.memory_limit_mb()}) + "\n")
    proto_out.flush()
    if settings_mod.load().worker_fork:       # a student's own sandbox: a child per job
        from inspectors.compile import zygote
        zygote.serve(proto_in, proto_out, _forked_job)
        return
    for line in proto_in:
        msg = json.loads(line)
        if msg.get("op") == "ping":
            reply = {"pong": True}
        else:
            req = CompileRequest(**msg["request"])
            before = _our_code()
            with torch_state.kept():          # torch's settings the file changed: not the next job's
                reply = answer(*run_job(req, Path(msg["job_dir"])))
            reply["_cpu_s"] = round(time.process_time(), 2)     # the engine retires a worker near RLIMIT_CPU
            if _replaced(before):
                reply["_tainted"] = True     # the file replaced some of our code: the engine replaces this worker
        proto_out.write(json.dumps(reply) + "\n")
        proto_out.flush()


if __name__ == "__main__":
    main()
