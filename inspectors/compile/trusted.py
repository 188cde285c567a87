"""The sandboxed engine's shared Triton cache: kernels compiled from the library's own, unedited
files (our code, on a worker that ran nothing else) are copied in by the server (`harvest`), and
every new sandbox sees them read-only, as links in its private cache (`link_trusted`).

    trusted = settings.triton_cache_dir / TRUSTED
    link_trusted(trusted, worker_folder / "triton")          # before the worker starts
    if digest(request.source) in library_digests(): harvest(worker_folder / "triton", trusted)
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]


def digest(text: str) -> str:
    import hashlib
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def library_digests() -> frozenset[str]:
    """The library's kernel files: code of ours, whose compiles may fill the trusted cache."""
    out = set()
    for f in (_REPO_ROOT / "kernels").glob("*.py"):
        try:
            out.add(digest(f.read_text(encoding="utf-8")))
        except OSError:
            pass
    return frozenset(out)


# The sandboxed engine's shared Triton cache, in the settings' cache folder: only the server
# writes it, with what sandboxes compiled from the library's own files. Not the folder itself,
# which unsandboxed workers (a one-user server, the CLI) write as they run users' code.
TRUSTED = "sandbox-trusted"

# A Triton cache folder name: by-file/<file name>/<hash> (the worker's layout, one folder per file name)
_CACHE_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def link_trusted(trusted: Path, private: Path, limit: int = 20_000) -> None:
    """The trusted cache's kernels in a sandboxed worker's private cache, as links to the
    read-only copy (Triton only reads a cache folder it finds; what it writes stays private)."""
    root = trusted / "by-file"
    n = 0
    try:
        names = list(os.scandir(root))
    except OSError:
        return
    for name in names:
        if not name.is_dir(follow_symlinks=False) or not _CACHE_NAME_RE.match(name.name):
            continue
        mine = private / "by-file" / name.name
        mine.mkdir(parents=True, exist_ok=True)
        try:
            entries = list(os.scandir(name.path))
        except OSError:
            continue
        for e in entries:
            # another server process may be harvesting into this folder as we read it: its
            # `.tmp-` folder is renamed away at any moment (a class of 300 on 16 cores once
            # failed a student's compile on a FileNotFoundError here)
            if e.name.startswith(".") or n >= limit or not _CACHE_NAME_RE.match(e.name):
                continue
            try:
                if e.is_dir(follow_symlinks=False) and any(f.startswith("__grp__") for f in os.listdir(e.path)):
                    os.symlink(e.path, mine / e.name)
                    n += 1
            except OSError:
                continue


def harvest(private: Path, trusted: Path, max_bytes: int = 64 << 20) -> int:
    """Copy the kernels a trusted job compiled (real folders of regular files, not links) from
    its private cache into the trusted one; returns how many."""
    added = 0
    root = private / "by-file"
    if root.is_symlink() or not root.is_dir():
        return 0
    for name in root.iterdir():
        if name.is_symlink() or not name.is_dir() or not _CACHE_NAME_RE.match(name.name):
            continue
        for entry in name.iterdir():
            dest = trusted / "by-file" / name.name / entry.name
            if entry.is_symlink() or not entry.is_dir() or not _CACHE_NAME_RE.match(entry.name) or dest.exists():
                continue
            files = list(entry.iterdir())
            if not any(f.name.startswith("__grp__") for f in files):
                continue        # an incomplete entry (ptxas crashed): Triton would write into it
            if any(f.is_symlink() or not f.is_file() or not _CACHE_NAME_RE.match(f.name) for f in files):
                continue
            if sum(f.stat().st_size for f in files) > max_bytes:
                continue
            tmp = dest.parent / f".tmp-{os.getpid()}-{entry.name}"
            try:
                tmp.mkdir(parents=True)
                for f in files:
                    if f.name.startswith("__grp__") and f.suffix == ".json":
                        (tmp / f.name).write_text(regroup(f, dest))
                    else:
                        shutil.copyfile(f, tmp / f.name)
                os.rename(tmp, dest)
                added += 1
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
    return added


def regroup(group_file: Path, dest: Path) -> str:
    """A Triton cache group file (`__grp__add_kernel.json`: {"child_paths": {"add_kernel.ptx":
    "/abs/path/add_kernel.ptx", ...}}) with its paths pointing into `dest`: Triton counts a
    kernel as cached only where the files it names exist."""
    data = json.loads(group_file.read_text())
    children = data.get("child_paths") or {}
    data["child_paths"] = {name: str(dest / Path(path).name) for name, path in children.items()
                           if isinstance(path, str) and (group_file.parent / Path(path).name).is_file()}
    return json.dumps(data)
