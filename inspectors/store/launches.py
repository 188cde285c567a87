"""The server's launch store: the launches of big results (base/launches.py), one gzipped file
each, in a folder per result named by a random token, the whole store bounded in bytes.

    store = LaunchStore.of(settings)                       # base.launches.root(), TLENS_LAUNCH_STORE_MB
    kernels = store.adopt(headers, read)                   # read(i) -> launch i's answer (bytes)
    result = dataclasses.replace(result, kernels=kernels)  # a StoredLaunches

Adopting copies each answer as it is (gzipped; it is parsed and bounded when a page reads it,
one launch at a time), never parsing the step whole. Past the store's bytes the results least
recently read go first (a folder's mtime is its last read: StoredLaunches touches it); the
one just adopted never. Several server processes may share the folder: each trims it.
"""
from __future__ import annotations

import gzip
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Callable

from inspectors.base import launches as launches_mod
from inspectors.base.launches import StoredLaunches

SIZE = "size"               # a folder's bytes, written once it is whole (a folder without it is being made)
OWNER = "owner"             # who compiled it (the fair queue's session), for their share
SHARE = 8                   # one owner's results hold at most 1/SHARE of the store: theirs go first past it


class LaunchStore:
    def __init__(self, root: Path, max_bytes: int):
        self.root, self.max_bytes = root, max_bytes

    @classmethod
    def of(cls, settings) -> "LaunchStore":
        """The server's: beside its Triton cache (base.launches.root), TLENS_LAUNCH_STORE_MB."""
        return cls(launches_mod.root(settings), settings.launch_store_mb << 20)

    def adopt(self, headers: tuple, read: Callable[[int], bytes], owner: str = "") -> StoredLaunches:
        """A result's launches as files of a new folder: launch i is `read(i)` (its answer, the
        worker's JSON), gzipped; one that cannot be read is left out (its header says why when
        it is asked for). `owner`: who compiled it; past their share their own oldest go first."""
        token = secrets.token_hex(16)
        folder = self.root / token
        folder.mkdir(parents=True, mode=0o700)
        total = 0
        for i in range(len(headers)):
            try:
                data = read(i)
            except OSError:
                continue
            path = folder / launches_mod.file_name(i)
            with open(path, "wb") as f:
                f.write(gzip.compress(data, compresslevel=1, mtime=0))
                total += f.tell()
        (folder / OWNER).write_text(owner[:500])
        (folder / SIZE).write_text(str(total))
        self.trim(keep=token, owner=owner or None)      # "" (no one named): the store's bound only
        return StoredLaunches(token, headers, folder)

    def folders(self) -> list[tuple[float, int, Path]]:
        """(last read, bytes, folder) of each whole result, oldest read first."""
        found = []
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return []
        for e in entries:
            if not launches_mod.TOKEN_RE.match(e.name):
                continue
            try:
                size = int((Path(e.path) / SIZE).read_text()[:20])
                found.append((e.stat().st_mtime, size, Path(e.path)))
            except (OSError, ValueError):
                try:                       # being made (no size yet), or left half-made by a process that died
                    if time.time() - e.stat().st_mtime > 3600:
                        shutil.rmtree(e.path, ignore_errors=True)
                except OSError:
                    pass
        return sorted(found)

    def used(self) -> int:
        return sum(size for _, size, _ in self.folders())

    def owned_bytes(self, owner: str) -> int:
        """What `owner`'s stored results hold (their share is max_bytes / SHARE)."""
        return sum(size for _, size, f in self.folders() if owner and _owner(f) == owner)

    def trim(self, keep: str = "", owner: str | None = None) -> None:
        """`owner`'s least recently read results removed while theirs are over their share
        (max_bytes / SHARE: one student cannot push the class's results out), then anyone's
        until the store is within its bytes; never `keep`, the result just adopted."""
        folders = self.folders()
        if owner is not None:
            mine = [(size, f) for _, size, f in folders if _owner(f) == owner]
            held = sum(size for size, _ in mine)
            for size, folder in mine:
                if held <= self.max_bytes // SHARE:
                    break
                if folder.name != keep:
                    shutil.rmtree(folder, ignore_errors=True)
                    held -= size
            folders = [x for x in folders if x[2].exists()]
        total = sum(size for _, size, _ in folders)
        for _, size, folder in folders:
            if total <= self.max_bytes:
                break
            if folder.name != keep:
                shutil.rmtree(folder, ignore_errors=True)
                total -= size


def _owner(folder: Path) -> str:
    try:
        return (folder / OWNER).read_text()[:500]
    except OSError:
        return ""
