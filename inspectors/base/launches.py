"""A result's launches kept on disk, one file each, instead of in one answer: a training step of
hundreds of launches (each with every stage, a cubin, an analysis: about a megabyte) is never
one object in the worker's, the engine's or the page's memory.

    stored = StoredLaunches("3f…e1", headers)      # what CompileResult.kernels holds then
    n = len(stored); head = stored.header(i)       # cheap: the launch without its stages
    stored[i].stages["ptx"]                        # launch i read from its file (a few kept)

A stored result's folder is named by a random token under the server's launch store (`root()`;
inspectors.store.launches adopts a job's answers into it and bounds it in bytes). A name from a
result's JSON is used only if it is such a token: a record cannot point the server at a path.
A launch whose file is gone (the store dropped the oldest results to stay in its bytes) comes
back as its header with an error that says so.
"""
from __future__ import annotations

import gzip
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from inspectors.base.errors import CompileError

TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")
MAX_LAUNCH_BYTES = 64 << 20   # one launch's answer, read at most (as journal.MAX_FILE_BYTES)
KEPT = 4                 # launches of one result kept in memory once read (the one on the page, its neighbours)


def root(settings=None) -> Path:
    """The server's launch store: beside the Triton cache (TLENS_TRITON_CACHE_DIR's parent)."""
    if settings is None:
        from inspectors.base import settings as settings_mod
        settings = settings_mod.load()
    return Path(settings.triton_cache_dir).parent / "launches"


def file_name(i: int) -> str:
    return f"launch-{i}.json.gz"


def header_of(kernel):
    """A launch as the step lists it: everything but its texts (stages, cubin, passes, the
    compiler's diagnostics, line twin) and analysis."""
    from dataclasses import replace
    return replace(kernel, stages={}, cubin="", passes=(), analysis={}, line_twin={}, diagnostics="")


class StoredLaunches(Sequence):
    """The launches of one result, read from `root()/token/launch-N.json.gz` when asked for.
    `headers`: each launch without its stages (KernelResult, as header_of makes them)."""

    def __init__(self, token: str, headers: tuple, folder: Path | None = None):
        if not TOKEN_RE.match(str(token)):
            raise ValueError(f"not a launch store token: {str(token)[:80]!r}")
        self.token, self.headers = token, tuple(headers)
        self.folder = folder if folder is not None else root() / token
        self._kept: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.headers)

    def header(self, i: int):
        return self.headers[i]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        i = range(len(self))[i]                   # negative indices; IndexError past the end
        with self._lock:
            if i in self._kept:
                self._kept.move_to_end(i)
                return self._kept[i]
        kernel = self._read(i)
        with self._lock:
            self._kept[i] = kernel
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return kernel

    def _read(self, i: int):
        from dataclasses import replace
        from inspectors.base.result import KernelResult, bounded_kernel, loads_bounded
        path = self.folder / file_name(i)
        try:
            with gzip.open(path, "rb") as f:
                data = loads_bounded(f.read(MAX_LAUNCH_BYTES))     # the worker's answer: {"kernel": ...}
            kernel = bounded_kernel(KernelResult.from_json(data["kernel"]))
            os.utime(self.folder)              # read: the store drops it last
            return kernel
        except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError) as e:
            why = ("the server's launch store dropped it to stay within its size (compile again to see it)"
                   if isinstance(e, FileNotFoundError) else f"its file could not be read ({type(e).__name__})")
            head = self.headers[i]
            return replace(head, error=head.error or CompileError("crash", f"launch {i + 1}'s stages are gone: {why}"))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __eq__(self, other) -> bool:
        if isinstance(other, StoredLaunches):
            return self.token == other.token and self.headers == other.headers
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.token)

    def __repr__(self) -> str:
        return f"StoredLaunches({self.token!r}, {len(self)} launches)"

    def to_json(self) -> dict:
        return {"stored": self.token, "kernels": [h.to_json() for h in self.headers]}
