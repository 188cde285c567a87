"""The Triton versions this server can compile with: its own, plus the extra ones set up beside it.

An extra version is one of
* a folder holding only that triton (`pip install --no-deps --target DIR triton==X`, what
  `make setup-versions TRITON_VERSIONS="3.6.0 3.9.0"` makes under `.triton-versions/X`): its
  worker runs the server's own Python (torch and the rest shared) with DIR first on PYTHONPATH;
* a Python interpreter of another virtualenv with its own triton (e.g. `.venv-oldest/bin/python`).

Where they come from, first match wins per version:
1. `TLENS_TRITON_VERSIONS`: entries separated by spaces or commas, each `VERSION=PATH` or a bare
   PATH (the version is then read from the triton `*.dist-info` there), PATH a folder or an
   interpreter;
2. every folder of `TLENS_TRITON_VERSIONS_DIR` (default `.triton-versions` in the repository)
   that holds a `triton-*.dist-info`.

The version is read from package metadata, never by importing triton (the server never imports
it). A wrong entry is an error naming it: `VersionError`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from inspectors.base import triton_support
from inspectors.base import settings as settings_mod

REPO_ROOT = Path(__file__).resolve().parents[2]


class VersionError(ValueError):
    pass


@dataclass(frozen=True)
class TritonEnv:
    """Where one Triton version's compile worker gets its triton."""
    version: str                 # "3.6.0"
    path: str = ""               # a folder prepended to the worker's PYTHONPATH ("": none)
    python: str = ""             # the worker's interpreter ("": the server's own)

    @property
    def own(self) -> bool:
        """The server's own Triton (no folder, no other interpreter)."""
        return not self.path and not self.python

    def describe(self) -> str:
        return self.path or self.python or "the server's own environment"


def _dist_version(folder: Path) -> str:
    """The version of the `triton-X.dist-info` directly in `folder`, or ""."""
    found = sorted(folder.glob("triton-*.dist-info"))
    if not found:
        return ""
    m = re.match(r"triton-(.+)\.dist-info$", found[-1].name)
    return m.group(1) if m else ""


def _python_version(python: Path) -> str:
    """The triton version of the virtualenv `python` belongs to (its site-packages), or ""."""
    venv = python.parent.parent if python.parent.name == "bin" else python.parent   # not resolved: a venv's
    for site in sorted(venv.glob("lib/python*/site-packages")):
        v = _dist_version(site)
        if v:
            return v
    return ""


def parse_entry(entry: str, base: Path = REPO_ROOT) -> TritonEnv:
    """`"3.6.0=.triton-versions/3.6.0"`, `".venv-oldest/bin/python"` -> TritonEnv."""
    version, sep, where = entry.partition("=")
    if not sep:
        version, where = "", entry
    path = Path(where).expanduser()
    if not path.is_absolute():
        path = base / path
    if path.is_dir():
        found = _dist_version(path)
        env = TritonEnv(version or found, path=str(path))
    elif path.is_file() and os.access(path, os.X_OK):
        found = _python_version(path)
        env = TritonEnv(version or found, python=str(path))
    else:
        raise VersionError(f"TLENS_TRITON_VERSIONS entry {entry!r}: {path} is neither a folder holding "
                           "triton nor a Python interpreter")
    if not env.version:
        raise VersionError(f"TLENS_TRITON_VERSIONS entry {entry!r}: no triton-*.dist-info found in {path}; "
                           "write it as VERSION=PATH")
    if found and version and found != version:
        raise VersionError(f"TLENS_TRITON_VERSIONS entry {entry!r}: {path} holds triton {found}, not {version}")
    try:
        triton_support.parse(env.version)
    except ValueError as e:
        raise VersionError(f"TLENS_TRITON_VERSIONS entry {entry!r}: {e}") from None
    return env


def configured(spec: str | None = None, folder: str | Path | None = None) -> dict[str, TritonEnv]:
    """Every version this server can compile with, oldest first: the server's own (if triton is
    installed) and the extra ones (module docstring). `spec`/`folder` default to the settings'
    `TLENS_TRITON_VERSIONS` / `TLENS_TRITON_VERSIONS_DIR`."""
    settings = settings_mod.load()
    spec = settings.triton_versions if spec is None else spec
    folder = (settings.triton_versions_dir or REPO_ROOT / ".triton-versions") if folder is None else Path(folder)
    found: dict[str, TritonEnv] = {}
    own = triton_support.installed()
    if own:
        found[own] = TritonEnv(own)
    for entry in re.split(r"[\s,]+", spec.strip()):
        if entry:
            env = parse_entry(entry)
            found.setdefault(env.version, env)
    if folder.is_dir():
        for sub in sorted(folder.iterdir()):
            version = _dist_version(sub) if sub.is_dir() and not sub.name.endswith(".tmp") else ""
            if version:
                found.setdefault(version, TritonEnv(version, path=str(sub)))
    return dict(sorted(found.items(), key=lambda kv: _sort_key(kv[0])))


def _sort_key(version: str) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in re.findall(r"\d+", version)[:3])
