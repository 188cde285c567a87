"""A sandbox's scratch folder with a size the kernel enforces: a tmpfs of `mb` MiB and `files`
inodes mounted on it, where the server may mount one (root with CAP_SYS_ADMIN, as a class
server that makes cgroups is). A job that fills it gets ENOSPC at once; a polled quota alone
let `posix_fallocate` put gigabytes on the host's disk between two checks. Its pages are
memory, counted against the sandbox's memory cgroup, and freed when the folder is unmounted
(`remove`). Where no tmpfs can be mounted the folder is a plain one on the host's disk, and
only the engine's checks bound it (`mounted` says which; docs/05-sandbox-and-threat-model.md says what that loses).

    mounted = scratch.make(folder, mb=1024, files=60_000)
    ...
    scratch.remove(folder)            # unmounted (lazily) and gone
"""
from __future__ import annotations

import ctypes
import functools
import os
import shutil
from pathlib import Path

MNT_DETACH = 2


@functools.lru_cache(maxsize=1)
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def make(folder: Path, mb: int, files: int) -> bool:
    """`folder` created; a tmpfs of `mb` MiB and `files` inodes on it if this process may mount
    one. True when mounted."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    options = f"size={int(mb)}m,nr_inodes={int(files)},mode=0700".encode()
    return _libc().mount(b"tmpfs", str(folder).encode(), b"tmpfs", 0, options) == 0


def is_mounted(folder: Path) -> bool:
    try:
        return os.path.ismount(folder)
    except OSError:
        return False


def usage(folder: Path) -> tuple[int, int] | None:
    """(bytes, files) in a mounted scratch folder, from its filesystem's own counts (statvfs):
    the same cost at 50,000 files as at one. None when `folder` is no mount (a plain folder:
    only a walk can count it)."""
    if not is_mounted(folder):
        return None
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return (st.f_blocks - st.f_bfree) * st.f_frsize, max(0, st.f_files - st.f_ffree - 1)


def remove(folder: Path) -> None:
    """Everything in `folder` removed, its tmpfs (if any) unmounted, the folder gone. Never
    follows a link a job put inside."""
    if is_mounted(folder):     # a tmpfs goes whole, whatever its files (a walk of 50,000 was the server's)
        _libc().umount2(str(folder).encode(), MNT_DETACH)
    shutil.rmtree(folder, ignore_errors=True)
    try:
        os.rmdir(folder)
    except OSError:
        pass
