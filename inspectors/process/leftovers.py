"""What a server's compile engine makes on the host must not outlive the server: each engine's
scratch folder (`/tmp/tlens-XXXX`), the tmpfs mounted on each sandbox's folder in it
(inspectors.process.scratch), and the sandboxes' cgroups (named after that folder). A server
stopped with SIGTERM, or killed, left them behind: a mount per sandbox, a day of test runs a
hundred of them.

An engine marks its folder with its process (`mark`: pid and start time, so a reused pid is not
taken for it); at its close it unmounts and removes everything under it (`release`); and every
engine, as it starts, sweeps the folders of engines whose process is gone (`sweep`): what a
killed server left is removed at the next start. A folder without a mark, or whose process
lives (another server on the same host, a replica), is never touched.

    leftovers.sweep()            # at an engine's start: the dead servers' folders, mounts, cgroups
    leftovers.mark(root)         # the engine's own folder
    leftovers.release(root)      # at its close
"""
from __future__ import annotations

import ctypes
import functools
import os
import shutil
import tempfile
from pathlib import Path

from inspectors.process import cgroups

OWNER = ".tlens-owner"        # "<pid> <start time>" of the engine's process
PREFIX = "tlens-"             # engines' folders: tempfile.mkdtemp(prefix="tlens-")
MNT_DETACH = 2


@functools.lru_cache(maxsize=1)
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat, field 22); None if
    there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def mark(root: Path) -> None:
    """`root` is this process's: its pid and start time written in it (no mark where the start
    time cannot be read: such a folder is never swept, only released at the close)."""
    started = _started(os.getpid())
    if started is not None:
        (root / OWNER).write_text(f"{os.getpid()} {started}\n")


def _owner_gone(root: Path) -> bool:
    """Whether `root` has a mark whose process is no longer running (False without a mark)."""
    try:
        pid, started = (root / OWNER).read_text().split()
        return _started(int(pid)) != started
    except (OSError, ValueError):
        return False


def mounts_under(root: Path) -> list[Path]:
    """Mount points at or under `root` (/proc/self/mountinfo), deepest first."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    prefix = str(root).rstrip("/") + "/"
    points = []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = fields[4].encode().decode("unicode_escape")      # octal escapes: \040 for a space
            if point == prefix[:-1] or point.startswith(prefix):
                points.append(Path(point))
    return sorted(points, key=lambda p: len(p.parts), reverse=True)


def release(root: Path) -> int:
    """Everything under `root` unmounted (lazily: a process still in it keeps its view) and
    removed, its cgroups too. Returns how many mounts were undone."""
    undone = sum(_libc().umount2(str(point).encode(), MNT_DETACH) == 0 for point in mounts_under(root))
    shutil.rmtree(root, ignore_errors=True)
    cgroups.remove_named(root.name + "-")
    return undone


def sweep(tmp: Path | None = None) -> dict:
    """The folders (with their mounts and cgroups) of engines whose process is gone, removed.
    Returns {"folders": n, "mounts": n}."""
    tmp = Path(tmp or tempfile.gettempdir())
    folders = mounts = 0
    try:
        candidates = [p for p in tmp.iterdir() if p.name.startswith(PREFIX) and p.is_dir() and not p.is_symlink()]
    except OSError:
        return {"folders": 0, "mounts": 0}
    for root in candidates:
        if _owner_gone(root):
            mounts += release(root)
            folders += 1
    return {"folders": folders, "mounts": mounts}
