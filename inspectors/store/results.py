"""The compile-result cache shared by every session of a server: the same kernel text with the
same options and Triton compiles once for a whole class.

Two levels, both bounded: the newest results in memory (by count), and every result as a
gzipped JSON file on disk (by total bytes, oldest read first out). A result is keyed by the
SHA-256 of the request and the Triton version (`request_key`: the project's files hashed as they
are, never copied into one JSON string). Concurrent askers of one key share one
computation: the first computes, the others wait for it, in this process (a thread event) and
across the server processes that share the folder (an exclusive `flock` on
`.locks/<key>.lock`: the process holding it computes; one that gets it next finds the result
on disk). A result that is shared but not kept (a timeout: the same kernel hangs for everyone)
is left for the processes waiting on that key in `.shared/`, for a few minutes.

    cache = ResultCache(Path("~/.cache/triton-lens/results"), max_items=64, max_bytes=256 * 2**20,
                        encode=CompileResult.to_json, decode=CompileResult.from_json)
    result, hit = cache.get_or_compute(request_key(request, "3.9.0"), lambda: compile(...), keep)

The memory level holds the values as they are (objects: every session showing a result shares
one), `encode` makes a value's JSON only when it is written to disk, `decode` reads it back (a
file that does not decode is a miss). Without them the values are JSON-able dicts.

Thread-safe and process-safe; the memory level is each process's own, the disk level (and
one computation per key) is shared by the processes that use the same folder on one machine
(or a file system with working `flock`, e.g. NFSv4).
"""
from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from inspectors.base.files import atomic_write
from inspectors.base.result import CompileRequest


def key_of(request_json: str, triton_version: str) -> str:
    return hashlib.sha256(f"{triton_version}\n{request_json}".encode()).hexdigest()


_CHUNK = 1 << 16          # characters of a file's text encoded at a time


def request_key(request: CompileRequest, triton_version: str) -> str:
    """The key of `request`'s result: the SHA-256 of the Triton version, the request's JSON
    without its files (keys sorted), then each project file by name, its name and length before
    its text. The files are fed to the hash as they are, a slice at a time: no JSON string of a
    project (up to MAX_PROJECT_BYTES of text) is made to key it. Equal requests get equal keys;
    requests that differ in any field or file do not."""
    h = hashlib.sha256(f"{triton_version}\n".encode())
    h.update(json.dumps(replace(request, files={}).to_json(), sort_keys=True).encode())
    for name in sorted(request.files, key=str):
        text, kind = request.files[name], "s"
        if not isinstance(text, str):            # not a text (the worker refuses it): keyed as its JSON
            text, kind = json.dumps(text, sort_keys=True, default=str), "j"
        h.update(f"\n{len(str(name))}:{name}\n{kind}{len(text)}:".encode("utf-8", "surrogatepass"))
        for i in range(0, len(text), _CHUNK):
            h.update(text[i:i + _CHUNK].encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _gzip_json(value: dict) -> bytes:
    """A result as the disk levels store it: its JSON, gzipped (level 1: the disk is a cache)."""
    return gzip.compress(json.dumps(value).encode("utf-8"), compresslevel=1, mtime=0)


def _same(value):
    return value


@dataclass(frozen=True)
class CacheSize:
    memory_items: int
    disk_items: int
    disk_bytes: int

    def describe(self) -> str:
        return (f"{self.memory_items} results in memory, {self.disk_items} on disk "
                f"({self.disk_bytes / 2**20:.1f} MiB)")


_RECENT_GZ = 16         # the newest written files' bytes kept for `gzipped` (a history record reuses them)
SHARED_S = 600          # how long a shared-but-not-kept result waits in .shared/ for other processes


class _InFlight:
    """A computation under way: set `done` when it ends; `value` is what it returned (None if
    it raised)."""

    def __init__(self):
        self.done = threading.Event()
        self.value: Any = None


SHARE = 8          # one owner's results (a student's) hold at most 1/SHARE of the disk level


class ResultCache:
    def __init__(self, folder: Path | None, max_items: int = 64, max_bytes: int = 256 * 2**20,
                 encode: Callable[[Any], dict] = _same, decode: Callable[[dict], Any] = _same):
        self.folder = Path(folder).expanduser() if folder else None
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._owned: dict[str, OrderedDict[str, int]] = {}     # owner -> the files they put here (bytes)
        self.encode, self.decode = encode, decode
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._pending: dict[str, _InFlight] = {}
        self._written = max_bytes          # bytes put since the disk was last trimmed (the first put trims)
        self._recent_gz: OrderedDict[str, bytes] = OrderedDict()   # the newest files' bytes (gzipped)

    def owned_bytes(self, owner: str) -> int:
        """What `owner`'s results hold of the disk level (their share is max_bytes / SHARE)."""
        with self._lock:
            return sum(self._owned.get(owner, {}).values())

    # -- the two levels -------------------------------------------------------------------------

    def get(self, key: str) -> Any:
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                return self._memory[key]
        value = self._read_disk(key)
        if value is not None:
            self._remember(key, value)
        return value

    def put(self, key: str, value: Any, owner: str = "") -> None:
        """`owner` (who compiled it): past their share of the disk level (max_bytes / SHARE),
        their own oldest files go, not the class's."""
        self._remember(key, value)
        self._write_disk(key, value, owner)

    def gzipped(self, key: str) -> bytes | None:
        """The result's JSON, gzipped, as the disk level holds it (written by this process a
        moment ago, or read from its file): a history record of the same result takes these
        bytes as they are instead of serializing and compressing the result again."""
        with self._lock:
            data = self._recent_gz.get(key)
        if data is None and (path := self._path(key)) is not None:
            try:
                data = path.read_bytes()
            except OSError:
                return None
        return data if data[:2] == b"\x1f\x8b" else None

    def _remember(self, key: str, value: Any) -> None:
        with self._lock:
            self._memory[key] = value
            self._memory.move_to_end(key)
            while len(self._memory) > self.max_items:
                self._memory.popitem(last=False)

    def _path(self, key: str) -> Path | None:
        return self.folder / f"{key}.json.gz" if self.folder else None

    def _load(self, path: Path) -> Any:
        """The value in a file of either disk level, decoded; None if it is missing or unreadable
        (the folder is the server's, but a file cut short or of another format is a miss)."""
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return self.decode(json.load(f))
        except (OSError, ValueError, EOFError, TypeError, KeyError, AttributeError):
            return None

    def _read_disk(self, key: str) -> Any:
        path = self._path(key)
        if path is None:
            return None
        value = self._load(path)
        if value is not None:
            with contextlib.suppress(OSError):
                os.utime(path)            # read = recently used
        return value

    def _write_disk(self, key: str, value: Any, owner: str = "") -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = _gzip_json(self.encode(value))
            with self._lock:
                self._recent_gz[key] = data
                while len(self._recent_gz) > _RECENT_GZ:
                    self._recent_gz.popitem(last=False)
            atomic_write(path, data)
            if owner:
                self._charge(owner, key, len(data))
            self._written += len(data)
            if self._written >= self.max_bytes // 20:    # trimmed once per 5 % of the budget written: a
                self._written = 0                        # stat of every file per put cost every click
                self._trim_disk()
        except OSError:
            pass                      # a full or read-only disk: the memory level still works

    def _charge(self, owner: str, key: str, size: int) -> None:
        """`owner`'s files, the newest `key`; their oldest removed while they hold more than their share."""
        with self._lock:
            mine = self._owned.setdefault(owner, OrderedDict())
            mine[key] = size
            mine.move_to_end(key)
            held, gone = sum(mine.values()), []
            while held > self.max_bytes // SHARE and len(mine) > 1:
                old, n = mine.popitem(last=False)
                held -= n
                gone.append(old)
                self._recent_gz.pop(old, None)
            if len(self._owned) > 10_000:         # owners of long ago: their accounts forgotten
                self._owned = {owner: mine}
        for old in gone:
            with contextlib.suppress(OSError):
                os.unlink(self._path(old))

    def _disk_files(self) -> list[os.DirEntry]:
        if self.folder is None or not self.folder.is_dir():
            return []
        with os.scandir(self.folder) as it:
            return [e for e in it if e.name.endswith(".json.gz") and e.is_file()]

    def _trim_disk(self) -> None:
        files = sorted(self._disk_files(), key=lambda e: e.stat().st_mtime)
        total = sum(e.stat().st_size for e in files)
        while files and total > self.max_bytes:
            e = files.pop(0)
            total -= e.stat().st_size
            try:
                os.unlink(e.path)
            except OSError:
                pass

    # -- one computation per key ----------------------------------------------------------------

    def get_or_compute(self, key: str, compute: Callable[[], Any],
                       keep: Callable[[Any], bool] = lambda v: True,
                       share: Callable[[Any], bool] = lambda v: True,
                       while_waiting: Callable[[], None] | None = None, owner: str = "") -> tuple[Any, bool]:
        """(value, came from the cache). Results `keep` rejects (a timeout, a crash: they say
        nothing about the source) are returned but not stored. One computation per key at a
        time: who asks while it runs waits for it, and gets its value even when it is not kept,
        if `share` allows (the same source and options hung or crashed for them too: three
        students with one hanging kernel wait one time limit, not three in a row); else
        computes its own (e.g. a refusal that was about the first asker only). `while_waiting()`
        is called about five times a second while this caller waits for another's computation
        (the page of a rerun shows the first run's progress). `owner`: who computes it (put's)."""
        asked = time.time()
        while True:
            value = self.get(key)
            if value is not None:
                return value, True
            with self._lock:
                flight = self._pending.get(key)
                mine = flight is None
                if mine:
                    flight = self._pending[key] = _InFlight()
            if not mine:
                while not flight.done.wait(0.2 if while_waiting else None):
                    while_waiting()
                value = self.get(key)
                if value is not None:
                    return value, True
                if flight.value is not None and share(flight.value):
                    return flight.value, False
                continue                  # ours to compute (or another waiter's)
            try:
                with self._key_lock(key):          # the other processes' computation of this key
                    value = self._read_disk(key)
                    if value is not None:           # they made it while this one waited
                        self._remember(key, value)
                        flight.value = value
                        return value, True
                    value = self._read_shared(key, since=asked)
                    if value is None or not share(value):
                        value = compute()
                        if keep(value):
                            self.put(key, value, owner)
                        elif share(value):
                            self._write_shared(key, value)
                    flight.value = value
                    return value, False
            finally:
                with self._lock:
                    self._pending.pop(key, None)
                flight.done.set()

    # -- across processes -----------------------------------------------------------------------

    @contextlib.contextmanager
    def _key_lock(self, key: str):
        """Held by one process at a time per key (no folder: this process only, and the
        thread-level flight above already makes it one)."""
        if self.folder is None:
            yield
            return
        try:
            locks = self.folder / ".locks"
            locks.mkdir(parents=True, exist_ok=True)
            fd = os.open(locks / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield                     # a read-only disk: compute without the other processes
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)              # releases the lock

    def _shared_path(self, key: str) -> Path:
        return self.folder / ".shared" / f"{key}.json.gz"

    def _read_shared(self, key: str, since: float) -> Any:
        """A shared-but-not-kept result another process made after `since` (while this one
        was waiting for it)."""
        if self.folder is None:
            return None
        path = self._shared_path(key)
        try:
            if path.stat().st_mtime < since:
                return None
        except OSError:
            return None
        return self._load(path)

    def _write_shared(self, key: str, value: Any) -> None:
        if self.folder is None:
            return
        path = self._shared_path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, _gzip_json(self.encode(value)))
            with os.scandir(path.parent) as it:      # the ones nobody waits for any more
                for e in it:
                    if e.stat().st_mtime < time.time() - SHARED_S:
                        os.unlink(e.path)
        except OSError:
            pass

    # -- for the UI -----------------------------------------------------------------------------

    def size(self) -> CacheSize:
        files = self._disk_files()
        with self._lock:
            n = len(self._memory)
        return CacheSize(n, len(files), sum(e.stat().st_size for e in files))

    def clear(self) -> None:
        """This process's memory level and the shared disk level (another process's memory
        level keeps its newest results until they age out)."""
        with self._lock:
            self._memory.clear()
        for e in self._disk_files():
            try:
                os.unlink(e.path)
            except OSError:
                pass
