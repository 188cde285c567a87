"""A kernel file's project: the files its imports may need, sent with the compile so that
sibling imports (`from _math import rotate_half`) and package-relative ones
(`from .utils import calculate_settings`) work in the worker and its sandbox.

    files, package = project_of(Path("src/mypkg/ops/norm.py"))
    # files: {"mypkg/__init__.py": ..., "mypkg/ops/utils.py": ..., ...}; package: "mypkg.ops"

The root is the folder above the file's outermost package (a folder with `__init__.py`),
and its Python files are taken down to a few levels, skipping hidden folders, virtual
environments and caches; a file outside a package takes the Python files beside it. Within
the worker's limits (a file's size on disk counted before it is read: one that would take the
project past MAX_BYTES ends the gathering unread), and only names the worker accepts
(PROJECT_FILE_RE).
"""
from __future__ import annotations

from pathlib import Path

from inspectors.base.result import MAX_PROJECT_BYTES, MAX_PROJECT_FILES, PROJECT_FILE_RE

MAX_FILES = MAX_PROJECT_FILES - 100      # under what the worker takes (500 files, 16 MB)
MAX_BYTES = MAX_PROJECT_BYTES - (4 << 20)
MAX_DEPTH = 6
_SKIP = {"__pycache__", "node_modules", "site-packages", "build", "dist"}


def package_root(path: Path) -> tuple[Path, str]:
    """(the folder to import from, the file's package: "" outside one)."""
    folder = path.resolve().parent
    parts: list[str] = []
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def project_of(path: Path) -> tuple[dict[str, str], str]:
    """The project's files (relative path -> text) and the file's package."""
    root, package = package_root(path)
    depth_limit = MAX_DEPTH if package else 0      # outside a package: the files beside it only
    files: dict[str, str] = {}
    total = 0
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in _SKIP or entry.is_symlink():
                continue
            if entry.is_dir():
                if depth < depth_limit and not (entry / "pyvenv.cfg").exists():
                    stack.append((entry, depth + 1))
            elif name.endswith(".py") and entry.is_file():
                try:
                    size = entry.stat().st_size
                    if len(files) >= MAX_FILES or total + size > MAX_BYTES:
                        return files, package      # before reading it: the bytes bound the characters
                    text = entry.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                total += max(size, len(text))      # a file that grew since its stat counts as read
                rel = entry.relative_to(root).as_posix()
                if PROJECT_FILE_RE.match(rel):       # a name the worker would refuse is left out
                    files[rel] = text
    return files, package
