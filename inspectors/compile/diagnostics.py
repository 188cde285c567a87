"""The compiler's remarks and warnings of one compile, heard and remembered (the worker's side
of inspectors.explain.remarks): `MLIR_ENABLE_DIAGNOSTICS=warnings,remarks` around the compile,
fd 2 into a file of the job's folder, and a copy beside the kernel in Triton's cache so that a
cached kernel (not compiled again, so silent) still has them."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def set_env(values: dict) -> None:
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


class StderrTo:
    """Around one compile: fd 2 (where libtriton's C++ prints) into `path` instead of the job's
    output, with `ENV` set (read by libtriton when it compiles, 3.6 and 3.9). On failure
    `failed_text()` goes to the output, where the compiler's error is looked for."""
    ENV: dict = {}
    LIMIT = 256 * 1024

    def __init__(self, path: Path, output_path: Path, extra_env: dict | None = None):
        self.path, self.output_path, self.env = path, output_path, {**self.ENV, **(extra_env or {})}

    def __enter__(self):
        self.saved_env = {k: os.environ.get(k) for k in self.env}
        set_env(self.env)
        sys.stderr.flush()
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.saved_fd = os.dup(2)
        os.dup2(self.fd, 2)
        return self

    def __exit__(self, exc_type, *exc):
        sys.stderr.flush()
        os.dup2(self.saved_fd, 2)
        os.close(self.saved_fd), os.close(self.fd)
        set_env(self.saved_env)
        if exc_type is not None:
            with open(self.output_path, "a", encoding="utf-8") as out:
                out.write(self.failed_text())
        return False

    def failed_text(self) -> str:
        return read_text(self.path, self.LIMIT)


class Diagnostics(StderrTo):
    """The compiler's remarks and warnings (MLIR diagnostics) of one compile, into `path`."""
    ENV = {"MLIR_ENABLE_DIAGNOSTICS": "warnings,remarks"}


def read_text(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


_SIDECAR = "tlens-diagnostics.txt"


def remembered(compiled, diag_path: Path, started: float, recompile) -> str:
    """The compiler's diagnostics for `compiled`. A kernel from Triton's cache was not compiled,
    so printed nothing: what its compile printed is kept beside it in the cache (`_SIDECAR`).
    A cache entry from before that (no sidecar) is compiled once more to hear it. `started`:
    time.time() when this compile began (a cache entry older than that was not made now)."""
    text = read_text(diag_path, Diagnostics.LIMIT)
    from inspectors.compile import triton_shim
    folder = triton_shim.cache_dir_of(compiled)
    if folder is None:             # no cache to remember in: what was printed now is all there is
        return text
    sidecar = folder / _SIDECAR
    if not text:
        if sidecar.exists():                # the same kernel (its hash) compiled before: what it printed then
            return read_text(sidecar, Diagnostics.LIMIT)
        made_now = any(p.stat().st_mtime >= started for p in folder.iterdir()) if folder.is_dir() else True
        if not made_now:                    # cached before remarks were kept: compile it once more to hear them
            try:
                with Diagnostics(diag_path, diag_path.with_suffix(".failed"), {"TRITON_ALWAYS_COMPILE": "1"}):
                    recompile()
            except Exception:  # noqa: BLE001 - the first compile stands; its diagnostics are unknown
                return ""
            text = read_text(diag_path, Diagnostics.LIMIT)
    try:
        sidecar.write_text(text, encoding="utf-8")
    except OSError:
        pass
    return text
