"""The compile engine: keeps one warm worker process (torch and triton imported)
and sends it jobs. A job past its time limit, or a worker that dies, gets the
worker killed (its whole process group) and a fresh one started at once, so the
next compile finds a warm worker again. If it died mid-compile (LLVM aborted), the stages it
had made are read back from the job folder (`journal`) and returned with the crash.

    engine = Engine()
    result = engine.compile(CompileRequest(source=text, target="cuda:90"))

The engine never imports torch or triton: it is safe to use from the Streamlit server.
"""
from __future__ import annotations

import dataclasses
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
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.compile import journal

_REPO_ROOT = Path(__file__).resolve().parents[2]


class _Worker:
    def __init__(self, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "inspectors.compile.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=str(_REPO_ROOT), env=env, text=True, encoding="utf-8", start_new_session=True,
        )
        self.lines: queue.Queue = queue.Queue()
        self.ready = threading.Event()
        self.info: dict = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            if msg.get("ready"):
                self.info = msg
                self.ready.set()
            else:
                self.lines.put(msg)
        self.lines.put(None)   # EOF: the worker died
        self.ready.set()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()


class Engine:
    def __init__(self, settings: settings_mod.Settings | None = None, env: dict | None = None):
        """`env`: variables added to the worker's environment (every worker this engine starts)."""
        self.settings = settings or settings_mod.load()
        self.extra_env = dict(env or {})
        self.scratch = Path(tempfile.mkdtemp(prefix="tlens-"))
        self._lock = threading.Lock()
        self._jobs = 0
        self._worker = self._spawn()

    def _spawn(self) -> _Worker:
        env = {**os.environ, **self.extra_env}
        env["TRITON_CACHE_DIR"] = str(self.settings.triton_cache_dir)
        env["TLENS_TRITON_CACHE_BASE"] = str(self.settings.triton_cache_dir)
        env["TLENS_WORKER_MEMORY_MB"] = str(self.settings.worker_memory_mb)
        env["TLENS_REPRO_DIR"] = str(self.settings.repro_dir)
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # triton 3.9 warns when unset; 1 is its default
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        self.settings.triton_cache_dir.mkdir(parents=True, exist_ok=True)
        return _Worker(env)

    @property
    def triton_version(self) -> str:
        self._worker.ready.wait(300)
        return self._worker.info.get("triton_version", "")

    @property
    def memory_limit_mb(self) -> int:
        """The worker's address-space limit in MB; 0 where it sets none (a GPU machine)."""
        self._worker.ready.wait(300)
        return int(self._worker.info.get("memory_limit_mb", 0))

    def wait_ready(self, timeout: float = 300) -> bool:
        return self._worker.ready.wait(timeout) and self._worker.alive()

    def compile(self, request: CompileRequest, timeout: float | None = None) -> CompileResult:
        timeout = self.settings.compile_timeout_s if timeout is None else timeout
        with self._lock:
            return self._run(request, timeout)

    def _run(self, request: CompileRequest, timeout: float) -> CompileResult:
        # Start-up time (imports) is not the job's: wait for the worker to be ready first.
        if not self.wait_ready():
            self._replace()
            if not self.wait_ready():
                return CompileResult(error=CompileError("crash", "the compile worker failed to start"))
        self._jobs += 1
        job_dir = self.scratch / f"job-{self._jobs}"
        msg = {"op": "compile", "job_dir": str(job_dir), "request": request.to_json()}
        started = time.perf_counter()
        try:
            self._worker.proc.stdin.write(json.dumps(msg) + "\n")
            self._worker.proc.stdin.flush()
            reply = self._worker.lines.get(timeout=timeout)
        except queue.Empty:
            self._replace()
            return CompileResult(error=CompileError(
                "timeout", f"compile took longer than {timeout:g} s and was stopped (the worker was replaced); "
                f"does example() loop forever?", request.filename, None, _output_tail(job_dir)),
                seconds=time.perf_counter() - started)
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:
            try:   # stdout closes a moment before the process is reaped
                code = self._worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            self._replace()
            kernels, stage = journal.recover(job_dir)
            label = stage_table.BY_NAME[stage].label if stage in stage_table.BY_NAME else stage
            where = f" while making {label}" if stage else " while running the file"
            error = CompileError("crash", f"the compile worker died ({_describe_exit(code)}){where}; it was restarted",
                                 request.filename, None, _output_tail(job_dir), stage=stage)
            if kernels and stage:      # the stages made before the crash, the last launch's error in place
                kernels = kernels[:-1] + (dataclasses.replace(kernels[-1], error=error),)
            shutil.rmtree(job_dir, ignore_errors=True)
            return CompileResult(kernels=kernels if stage else (), error=error, triton_version=self.triton_version,
                                 seconds=time.perf_counter() - started)
        shutil.rmtree(job_dir, ignore_errors=True)
        return CompileResult.from_json(reply)

    def _replace(self):
        self._worker.kill()
        self._worker = self._spawn()

    def close(self):
        self._worker.kill()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _describe_exit(code) -> str:
    if code is None:
        return "no answer"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _output_tail(job_dir: Path, limit: int = 8000) -> str:
    path = job_dir / "output.txt"
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""
