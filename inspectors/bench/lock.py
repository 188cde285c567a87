"""One benchmark at a time per GPU (a file lock that says who holds it), and the cache of each
GPU's measured ceilings (copy GB/s, matmul TFLOP/s). Pure Python: safe in the server."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Callable

from inspectors.base.files import atomic_write
from inspectors.bench.model import Ceilings, GpuInfo, bench_dir


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
    atomic_write(_ceilings_path(c.gpu_key), json.dumps(replace(c, cached=False).to_json(), indent=1))
