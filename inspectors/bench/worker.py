"""The benchmark worker: one process per benchmark run, JSON lines over a pipe.

Timing takes seconds to minutes and a faulting kernel leaves its CUDA context unusable, so
each run gets a fresh process (no warm worker as for compiles): a fault, a hang or a crash
ends that process only, and the caller reports it and carries on.

    -> one line on stdin: BenchRequest JSON
    <- {"event": "progress", "fraction": 0.4, "message": "n = 16,777,216 (2^24): timing Triton"}
    <- {"event": "row", "row": {...Row}}                 (each timed row, as it is timed)
    <- {"event": "result", "result": {...BenchResult}}   (last)

    python -m inspectors.bench.worker --probe    # prints {"gpus": [...], "torch", "triton"}

The worker writes the protocol to a private copy of its stdout; fd 1 points at stderr, so a
print() in the kernel file (or in torch.compile's workers) cannot corrupt it. Without a GPU it
sets TRITON_INTERPRET=1 before Triton is imported and only checks correctness.

`run_benchmark()` and `probe()` are the caller's side: they never import torch, so the
Streamlit server can use them.
"""
from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from inspectors.process import proclimits, sandbox
from inspectors.bench import model as bench
from inspectors.bench.model import BenchError, BenchRequest, BenchResult, Row
from inspectors.base import settings as settings_mod

_REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_LINE = 64 << 20      # one protocol line from a worker, at most


# -- the caller's side -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Progress:
    fraction: float
    message: str


def _env(triton_path: str = "") -> dict:
    from inspectors.base import settings as settings_mod
    env = dict(os.environ)
    settings = settings_mod.load()
    env["TRITON_CACHE_DIR"] = str(settings.triton_cache_dir)
    settings.triton_cache_dir.mkdir(parents=True, exist_ok=True)
    env.setdefault("TLENS_WORKER_MEMORY_MB", str(settings.worker_memory_mb))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # triton 3.9 warns when unset; 1 is its default
    env.pop("TRITON_INTERPRET", None)                 # the worker decides: only where there is no GPU
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (triton_path, str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _command(args: list[str], scratch: str, triton=None) -> tuple[list[str], dict | None, object]:
    """(argv, env, preexec_fn) of a benchmark worker (of `triton`, a TritonEnv: None for the
    server's own): in a sandbox of its own on a server that sandboxes users' code (the GPU's
    device files passed in), else a plain subprocess."""
    python = (triton.python if triton is not None else "") or sys.executable
    path = triton.path if triton is not None else ""
    argv = [python, "-m", "inspectors.bench.worker", *args]
    env = _env(path)
    if not sandbox.enabled():
        return argv, env, None
    keep = ("TRITON_DEFAULT_FP_FUSION", "TLENS_WORKER_MEMORY_MB", "PYTHONUNBUFFERED", "TLENS_BENCH_TIMEOUT")
    folder = Path(scratch)
    jail_env = {k: env[k] for k in keep if k in env}
    jail_env["TRITON_CACHE_DIR"] = str(folder / "triton")
    # Its own bench folder: the GPU's lock is the server's (run_benchmark), the ceilings measured
    # outside are copied in, and nothing it writes there is read back.
    private = folder / "bench"
    private.mkdir(parents=True, exist_ok=True)
    for f in bench.bench_dir().glob("ceilings-*.json"):
        if f.is_file() and not f.is_symlink():
            shutil.copyfile(f, private / f.name)
    jail_env["TLENS_BENCH_DIR"] = str(private)
    limits = sandbox.Limits(memory_mb=settings_mod.load().worker_memory_mb or 8192, cpu_s=1800)
    gpu = bool(sandbox.gpu_devices())
    if path:                 # an extra Triton version's folder, first on the path
        jail_env["PYTHONPATH"] = os.pathsep.join((path, str(_REPO_ROOT)))
    jail = sandbox.Jail(writable=(folder,), readable=(Path(path),) if path else (), env=jail_env, gpu=gpu,
                        limits=limits, python=python)
    cgroup = sandbox.Cgroup.create(f"bench-{folder.name}", limits)
    sandbox.write_passwd(folder / "etc")
    return sandbox.wrap(argv, jail, folder / "etc"), dict(sandbox.BWRAP_ENV), _Preexec(limits, cgroup, gpu)


class _Preexec:
    """Popen's preexec_fn for a sandboxed benchmark worker, holding its cgroup to be emptied."""

    def __init__(self, limits, cgroup, gpu):
        self.cgroup, self.apply = cgroup, limits.preexec(cgroup, gpu=gpu)

    def __call__(self):
        self.apply()


def _describe_exit(code) -> str:
    return sandbox.describe_exit(code)


def run_benchmark(request: BenchRequest, on_progress: Callable[[Progress], None] | None = None,
                  timeout: float | None = None, triton=None) -> BenchResult:
    """Runs one benchmark in a fresh worker process and returns its result; never raises.
    A worker that dies (a segfault, a fault that aborts) or runs past `timeout` is reported
    as an error, with the rows it had timed before. `triton` (an
    inspectors.base.triton_installs.TritonEnv): run it with that Triton instead of the server's own."""
    timeout = bench.default_timeout_s() if timeout is None else timeout
    if sandbox.enabled() and sandbox.gpu_devices():
        # The sandboxed worker's lock file is private: the server holds the GPU for it.
        from inspectors.bench.lock import GpuBusy, gpu_lock
        wait_s = bench.default_lock_wait_s() if request.lock_wait_s is None else request.lock_wait_s
        note = (lambda msg: on_progress(Progress(0.0, msg))) if on_progress else None
        try:
            with gpu_lock(f"sandbox-{request.device}", f"{request.slug} on GPU {request.device}", wait_s, note):
                return _run_benchmark(request, on_progress, timeout, triton)
        except GpuBusy as e:
            return BenchResult(request.slug, "none", error=BenchError("busy", str(e)))
    return _run_benchmark(request, on_progress, timeout, triton)


def _run_benchmark(request: BenchRequest, on_progress, timeout: float, triton=None) -> BenchResult:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tlens-bench-") as scratch, \
            open(Path(scratch) / "stderr.txt", "w+", encoding="utf-8", errors="replace") as stderr:
        argv, env, preexec = _command(["--scratch", scratch], scratch, triton)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=str(_REPO_ROOT),
                                env=env, text=True, encoding="utf-8", errors="replace", start_new_session=True,
                                preexec_fn=preexec)
        proc.cgroup = preexec.cgroup if preexec is not None else None
        lines: queue.Queue = queue.Queue()

        def read():   # at most MAX_LINE a line: what the worker writes is the user's code's to forge
            while True:
                line = proc.stdout.readline(MAX_LINE)
                if not line or not line.endswith("\n"):
                    break
                lines.put(line)
            lines.put(None)
        threading.Thread(target=read, daemon=True).start()
        try:
            try:
                proc.stdin.write(json.dumps(request.to_json()) + "\n")
                proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            rows: list[Row] = []
            result = None
            deadline = started + timeout
            while True:
                try:
                    line = lines.get(timeout=max(0.05, deadline - time.perf_counter()))
                except queue.Empty:
                    return BenchResult(request.slug, "none", rows=tuple(rows), seconds=time.perf_counter() - started,
                                       error=BenchError("timeout", f"the benchmark took longer than {timeout:g} s and "
                                                        "was stopped (its worker process was killed)", _tail(stderr)))
                if line is None:
                    break
                try:
                    msg = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(msg, dict):
                    continue
                event = msg.get("event")
                try:
                    if event == "progress" and on_progress:
                        progress = Progress(float(msg.get("fraction", 0.0)), str(msg.get("message", ""))[:500])
                        on_progress(progress)
                    elif event == "row" and len(rows) < MAX_ROWS:
                        rows.append(Row(**msg["row"]))
                    elif event == "result":
                        result = BenchResult.from_json(msg["result"])
                except (TypeError, ValueError, KeyError, AttributeError):
                    continue
            code = proc.wait()
            if result is None:
                return BenchResult(request.slug, "none", rows=tuple(rows), seconds=time.perf_counter() - started,
                                   error=BenchError("crash", f"the benchmark worker died ({_describe_exit(code)}) before "
                                                    "answering; a kernel that faults can take its process down. "
                                                    "Nothing else was affected.", _tail(stderr)))
            return result
        finally:
            _kill(proc)      # every return: a progress callback that raises (a page's rerun) too


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    cgroup = getattr(proc, "cgroup", None)
    if cgroup is not None:
        cgroup.kill()
    proc.wait()


def _tail(f, limit: int = 8000) -> str:
    """The end of a file the job writes (up to its RLIMIT_FSIZE): only its last bytes are read."""
    try:
        f.flush()
        fd = f.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, 4 * limit, max(0, size - 4 * limit))
    except (OSError, ValueError):
        return ""
    return data.decode("utf-8", "replace")[-limit:]


MAX_ROWS = 100_000      # benchmark rows kept from one run (each line the job writes is one at most)


def probe(timeout: float = 120) -> dict:
    """What the worker sees: {"gpus": [{"index", "name"}], "torch", "triton", "cuda"}; or
    {"gpus": [], "error": "..."} when the probe fails. Imports torch in a subprocess (seconds)."""
    try:
        with tempfile.TemporaryDirectory(prefix="tlens-probe-") as scratch:
            argv, env, preexec = _command(["--probe"], scratch)
            proc = subprocess.run(argv, cwd=str(_REPO_ROOT), env=env, capture_output=True, text=True, timeout=timeout,
                                  preexec_fn=preexec)
            if preexec is not None and preexec.cgroup is not None:
                preexec.cgroup.kill()
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, OSError, ValueError, IndexError) as e:
        return {"gpus": [], "error": f"{type(e).__name__}: {e}"}


def measure_step(source: str, filename: str, files: dict | None = None, timeout: float = 600) -> dict:
    """A step's kernels timed on this server's GPU (bench/step_times.py): the file and its
    project's files written to a scratch folder, example() run there by a benchmark worker (in
    its sandbox on a server that sandboxes users' code). {"times": {kernel: [µs, ...]}} or
    {"error": "..."}."""
    with tempfile.TemporaryDirectory(prefix="tlens-steptimes-") as scratch:
        job = Path(scratch) / "job"
        job.mkdir()
        for name, text in {**(files or {}), filename: source}.items():
            target = (job / name).resolve()
            if job.resolve() in target.parents:          # a project's file, never a path out of it
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        argv, env, preexec = _command(["--step-times", str(job / filename)], scratch)
        try:
            proc = subprocess.run(argv, cwd=str(_REPO_ROOT), env=env, capture_output=True, text=True, timeout=timeout,
                                  preexec_fn=preexec)
        except subprocess.TimeoutExpired:
            return {"error": f"example() took longer than {timeout:g} s to measure"}
        finally:
            if preexec is not None and preexec.cgroup is not None:
                preexec.cgroup.kill()
        try:
            return json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"error": f"the measuring process ended (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}"}


# -- the worker's side -----------------------------------------------------------------------------

def _probe_main(out) -> None:
    import torch
    gpus = []
    if torch.cuda.is_available():
        gpus = [{"index": i, "name": torch.cuda.get_device_name(i)} for i in range(torch.cuda.device_count())]
    import triton
    out.write(json.dumps({"gpus": gpus, "torch": torch.__version__, "triton": triton.__version__,
                          "cuda": str(torch.version.cuda)}) + "\n")
    out.flush()


def main(argv: list[str]) -> None:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)            # user prints, torch.compile's chatter: to stderr, never the protocol
    if "--probe" in argv:
        _probe_main(proto)
        return
    if "--step-times" in argv:           # a step's kernels timed (bench/step_times.py): JSON, then leave
        from inspectors.bench import step_times
        try:
            proto.write(json.dumps({"times": step_times.run_here(Path(argv[argv.index("--step-times") + 1]))}) + "\n")
        except Exception as e:  # noqa: BLE001 - the user's example() raised: said, the worker leaves
            proto.write(json.dumps({"error": f"{type(e).__name__}: {e}"[:2000]}) + "\n")
        proto.flush()
        os._exit(0)
    scratch = Path(argv[argv.index("--scratch") + 1]) if "--scratch" in argv else Path(tempfile.mkdtemp())

    def emit(msg: dict) -> None:
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    import faulthandler
    faulthandler.enable()    # a segfault (an out-of-bounds store on the interpreter) leaves its traceback
    request = BenchRequest.from_json(json.loads(sys.stdin.readline()))
    import torch   # noqa: F401 - before triton: decides whether this run may time at all
    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"     # read by @triton.jit when the kernel file is imported
        proclimits.limit_memory(above_mapped=torch.version.cuda is not None)
        from inspectors.compile import triton_shim
        triton_shim.fix_interpreter()            # Triton 3.6 with numpy >= 2.4 (see the shim)
    # The process side only: torch and triton never load in the server, which imports this
    # module for run_benchmark().
    from inspectors.bench import runner
    result = runner.run(request, emit, scratch)
    emit({"event": "result", "result": result.to_json()})
    proto.close()
    # A faulted CUDA context can hang interpreter shutdown: leave at once.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
