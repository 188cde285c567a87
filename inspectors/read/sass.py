"""SASS from a cubin, with the disassembler shipped in the triton wheel, found without
importing triton (so a process without triton, the server's SASS job, can disassemble).

`nvdisasm -c -gi` prints `//## File "vector_add.py", line 27` before the instructions
of each source line (Triton passes -lineinfo to ptxas). nvdisasm is slow even for a tiny
cubin (docs/09-benchmark-results.md#figures-behind-design-choices), which is why the app asks
for SASS only when a SASS panel is open, and the worker starts one per kernel in the background.

A cubin comes out of a user's job, so nvdisasm's output is read bounded (`read_bounded`): past
MAX_SASS_BYTES, or past its time limit, nvdisasm is killed and the rest is never read.
"""
from __future__ import annotations

import base64
import importlib.util
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from inspectors.process import sandbox
from inspectors.base.result import MAX_STAGE_CHARS

MAX_SASS_BYTES = MAX_STAGE_CHARS     # nvdisasm's output past this is not read: the disassembly stops
SASS_TIMEOUT_S = 120.0               # nvdisasm's wall-clock limit
_STDERR_TAIL = 64 << 10              # what is kept of a tool's stderr (its last bytes)


@lru_cache(maxsize=None)
def nvidia_tool(name: str) -> Path | None:
    """`cuobjdump`, `nvdisasm`, `ptxas` from triton/backends/nvidia/bin, or None."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "bin" / name
    return path if path.exists() else None


class SassError(RuntimeError):
    """nvdisasm failed on a cubin, its output was too large, or it took too long. `command`
    reproduces it (a failing cubin is kept at the path it names). `transient`: the failure may
    not recur (a time limit on a busy machine), so it is not worth remembering."""

    def __init__(self, message: str, command: str, transient: bool = False):
        super().__init__(message)
        self.message, self.command, self.transient = message, command, transient

    def __reduce__(self):
        return type(self), (self.message, self.command, self.transient)


def megabytes(n: int) -> str:
    """`n` bytes in MB (2**20), as the too-large messages say it: "12.3", "16"."""
    return f"{n / 2**20:.1f}".removesuffix(".0")


class Overrun(Exception):
    """`read_bounded` stopped a process: `what` is "size" (its output passed the limit) or "time"."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL to `proc`'s process group (it was started with start_new_session=True), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def read_bounded(proc: subprocess.Popen, limit: int, timeout: float, data: bytes = b"") -> tuple[bytes, bytes]:
    """(stdout, stderr's last 64 KB) of `proc`, started with stdout and stderr pipes (stdin a
    pipe when `data` is to be written to it) and start_new_session=True, once it has ended.
    Raises Overrun, with the process's group killed, as soon as its stdout passes `limit` bytes
    ("size": the rest is never read) or `timeout` seconds have passed ("time")."""
    deadline = time.monotonic() + timeout
    out, err = bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    if proc.stdin is not None:
        if data:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    sent = 0
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise Overrun("time")
            for key, _ in sel.select(left):
                if key.fileobj is proc.stdin:
                    try:
                        sent += os.write(key.fd, data[sent:sent + (1 << 16)])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        sent = len(data)
                    if sent >= len(data):
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    out += chunk
                    if len(out) > limit:
                        raise Overrun("size")
                else:
                    err += chunk
                    del err[:-_STDERR_TAIL]
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        kill(proc)
        raise Overrun("time") from None
    except Overrun:
        kill(proc)
        raise
    finally:
        sel.close()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is not None:
                f.close()
    return bytes(out), bytes(err)


def _text(raw: bytes) -> str:
    """As a text-mode pipe would have read it (universal newlines)."""
    text = raw.decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class Disassembly:
    """Starts nvdisasm at once; `result()` waits for the text, or raises SassError."""

    def __init__(self, cubin: bytes, flags: tuple[str, ...] = ("-c", "-gi")):
        self.proc = None
        self.path = None
        tool = nvidia_tool("nvdisasm")
        if tool is None:
            self.missing = "// nvdisasm is not in this triton wheel: SASS unavailable"
            return
        self.missing = ""
        folder = Path(tempfile.mkdtemp(prefix="tlens-sass-"))
        self.path = str(folder / "kernel.cubin")
        Path(self.path).write_bytes(cubin)
        self.argv = [str(tool), *flags, self.path]
        self.proc = subprocess.Popen(sandbox.tool_argv(self.argv, folder), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sandbox.popen_env(),
                                     start_new_session=True)

    def result(self, timeout: float = SASS_TIMEOUT_S, limit: int | None = None) -> str:
        """nvdisasm's output; SassError past `limit` bytes of it (MAX_SASS_BYTES) or `timeout` seconds."""
        if self.proc is None:
            return self.missing
        limit = MAX_SASS_BYTES if limit is None else limit
        command = " ".join(self.argv)
        try:
            out, err = read_bounded(self.proc, limit, timeout)
        except Overrun as e:
            shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
            if e.what == "size":
                raise SassError(f"SASS too large to disassemble here (over {megabytes(limit)} MB of nvdisasm "
                                "output): it was stopped there", command) from None
            raise SassError(f"nvdisasm took longer than {timeout:g} s on the cubin", command, transient=True) from None
        if self.proc.returncode != 0:       # the cubin stays where the command names it
            rc = self.proc.returncode
            how = f"was killed by signal {-rc}" if rc < 0 else f"failed (exit status {rc})"
            raise SassError(f"nvdisasm {how} on the cubin: {_text(err).strip()[-2000:]}", command)
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        return _text(out)


def disassemble(cubin: bytes) -> str:
    return Disassembly(cubin).result()


def disassemble_b64(cubin_b64: str) -> str:
    return disassemble(base64.b64decode(cubin_b64))


def encodings_b64(cubin_b64: str) -> str:
    """`nvdisasm -c -hex`: each instruction with its encoding (inspectors.read.sasscontrol reads
    the scheduling controls out of it)."""
    return Disassembly(base64.b64decode(cubin_b64), ("-c", "-hex")).result()


def life_ranges_b64(cubin_b64: str) -> str:
    """`nvdisasm -c -plr -lrm count`: each instruction with the live registers after it, in a
    trailing `// | GPR | PRED | UGPR | UPRED |` column (inspectors.read.liveregs reads it)."""
    return Disassembly(base64.b64decode(cubin_b64), ("-c", "-plr", "-lrm", "count")).result()
