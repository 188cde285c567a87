"""Writing a file whole or not at all: `atomic_write` writes a temporary file in the target's own
folder (the same filesystem, so the rename is atomic) and renames it over the target. A reader
sees the old file or the new one, never half of one; a crash or an error leaves the target as it
was and removes the temporary file (named `.tmp-*`, which the stores' listings skip)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, data: bytes | str, *, suffix: str = "", fsync: bool = False) -> Path:
    """Replace `path` with `data` (str is written as UTF-8) atomically; returns the path.

    The temporary file is made by `mkstemp` (mode 0600) in `path`'s folder, which must exist;
    `suffix` ends its name (`.py`: a workspace's half-written kernel still looks like one).
    `fsync=True` flushes it to the disk before the rename, for a file that must survive a power
    cut, not just a crash of this process (none of the stores asks for it: they are caches, or
    re-saved at the next edit)."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
