"""The user's kernels: plain `.py` files in one folder (`TLENS_WORKSPACE_DIR`), so they
survive a browser refresh, a server restart, and can be opened in any editor.

    ws = Workspace(settings.workspace_dir)
    name = ws.create("vector_add", text)        # 'vector_add.py' (or 'vector_add-2.py')
    ws.save(name, edited); ws.read(name)
    ws.rename(name, "faster add")               # 'faster_add.py'
    token = ws.delete(name); ws.restore(token)  # delete goes to .trash/, undo brings it back

Every name that reaches the disk goes through `safe_name`: a name is one file in the
folder, never a path. Hostile names are refused (`../x`, `a/b`, `.hidden`, empty,
reserved device names like `CON`, longer than 64 characters); odd characters
(spaces, `:*?"<>|`, accents, emoji) become `_`. Nothing here follows symlinks out of
the folder: files are listed and opened only when they are regular files inside it.
"""
from __future__ import annotations

import hashlib
import os
import re
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from inspectors.base.files import atomic_write

MAX_STEM = 64                 # characters of a name before `.py`
MAX_BYTES = 1_000_000         # a kernel file larger than this is refused (not a kernel)
KEEP_TRASH = 50               # deleted files kept for undo

# Windows device names (refused on every OS, so a workspace can be copied anywhere) and
# names with a meaning to Python.
_RESERVED = ({"con", "prn", "aux", "nul", "clock$", "__init__", "__main__"}
             | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)})
_ODD_RE = re.compile(r"[^A-Za-z0-9_-]+")       # anything else becomes one `_`
_TRASH_RE = re.compile(r"^\d{8}-\d{6}-\d{4}-(?P<name>[A-Za-z0-9_-]+\.py)$")   # 20250101-120000-0001-k.py


class WorkspaceError(ValueError):
    """A name refused, a file missing or too large: the message says which, for the user."""


@dataclass(frozen=True)
class Entry:
    name: str          # `vector_add.py`
    size: int          # bytes
    modified: float    # POSIX time


def safe_name(raw: str) -> str:
    """`raw` as a file name of the workspace, or WorkspaceError saying why not:

        safe_name("my kernel")     -> "my_kernel.py"
        safe_name("añadir.py")     -> "a_adir.py"
        safe_name("../x")          -> WorkspaceError (a name, not a path)
        safe_name("CON")           -> WorkspaceError (reserved)
    """
    name = unicodedata.normalize("NFKC", raw or "").strip()
    if name.lower().endswith(".py"):
        name = name[:-3].rstrip()
    if not name:
        raise WorkspaceError("a file needs a name")
    if "/" in name or "\\" in name or "\x00" in name or name.startswith("."):
        raise WorkspaceError(f"{_show(raw)} is not a plain file name (no '/', '\\' or leading '.')")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise WorkspaceError(f"{_show(raw)} contains control characters")
    stem = _ODD_RE.sub("_", name).strip("_-")
    if not stem:
        raise WorkspaceError(f"{_show(raw)} has no letters or digits to make a name of")
    if len(stem) > MAX_STEM:
        raise WorkspaceError(f"a name is at most {MAX_STEM} characters (this one has {len(stem)})")
    if stem.lower() in _RESERVED or stem.lower().split(".")[0] in _RESERVED:
        raise WorkspaceError(f"{stem!r} is a reserved name")
    return stem + ".py"


def _show(raw: str) -> str:
    return repr(raw[:40] + ("…" if len(raw) > 40 else ""))


class Workspace:
    def __init__(self, root: Path):
        self.root = Path(root).expanduser()

    # ---- reading
    def _dir(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root.resolve()

    def path(self, name: str) -> Path:
        """The file of `name` (checked with `safe_name`, and inside the folder)."""
        safe = safe_name(name)
        if safe != name:
            raise WorkspaceError(f"{_show(name)} is not a workspace file name (did you mean {safe!r}?)")
        root = self._dir()
        path = root / safe
        if path.is_symlink() or path.resolve().parent != root:
            raise WorkspaceError(f"{name!r} is not a regular file of the workspace")
        return path

    def list(self) -> tuple[Entry, ...]:
        """The kernel files, by name, with their sizes and times from stat (no file is read).
        Symlinks, folders and hidden files are not listed."""
        out = []
        for p in sorted(self._dir().glob("*.py")):
            if p.is_symlink() or not p.is_file() or p.name.startswith("."):
                continue
            try:
                if safe_name(p.name) != p.name:
                    continue       # put there by hand with a name we would not make
            except WorkspaceError:
                continue
            st = p.stat()
            out.append(Entry(p.name, st.st_size, st.st_mtime))
        return tuple(out)

    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.list())

    def exists(self, name: str) -> bool:
        try:
            return self.path(name).is_file()
        except WorkspaceError:
            return False

    def read(self, name: str) -> str:
        """The file's text; a file over MAX_BYTES is refused by its size before it is read, and
        one that grew past it since is refused after reading at most MAX_BYTES + 1 characters."""
        path = self.path(name)
        try:
            if path.stat().st_size > MAX_BYTES:
                raise WorkspaceError(f"{name} is larger than {MAX_BYTES:,} bytes")
            with path.open(encoding="utf-8", errors="replace") as f:
                text = f.read(MAX_BYTES + 1)
        except FileNotFoundError:
            raise WorkspaceError(f"{name} is not in the workspace (deleted or renamed?)") from None
        if len(text) > MAX_BYTES:
            raise WorkspaceError(f"{name} is larger than {MAX_BYTES:,} bytes")
        return text

    # ---- writing
    def save(self, name: str, text: str) -> Entry:
        """Write atomically (a temporary file renamed over the old one): a crash never
        leaves half a kernel."""
        data = text.encode("utf-8")
        if len(data) > MAX_BYTES:
            raise WorkspaceError(f"a kernel file is at most {MAX_BYTES:,} bytes")
        path = atomic_write(self.path(name), data, suffix=".py")
        st = path.stat()
        return Entry(path.name, st.st_size, st.st_mtime)

    def unique_name(self, hint: str) -> str:
        """`hint` made safe, with `-2`, `-3`, ... when taken: `vector_add.py`, `vector_add-2.py`."""
        try:
            base = safe_name(hint)[:-3]
        except WorkspaceError:
            base = "kernel"
        taken = {n.lower() for n in self.names()}
        for i in range(1, 10_000):
            stem = base if i == 1 else f"{base[:MAX_STEM - 6]}-{i}"
            if f"{stem}.py".lower() not in taken:
                return f"{stem}.py"
        raise WorkspaceError("too many files with this name")

    def create(self, hint: str, text: str) -> str:
        name = self.unique_name(hint)
        self.save(name, text)
        return name

    def rename(self, old: str, new: str) -> str:
        """Rename `old` to `safe_name(new)`; refuses to overwrite another file."""
        src = self.path(old)
        if not src.is_file():
            raise WorkspaceError(f"{old} is not in the workspace")
        target = safe_name(new)
        if target == old:
            return old
        if target.lower() in {n.lower() for n in self.names()} and target.lower() != old.lower():
            raise WorkspaceError(f"{target} already exists")
        os.replace(src, self.path(target))
        return target

    def duplicate(self, name: str) -> str:
        """A copy next to it: `k.py` -> `k-copy.py` (`k-copy-2.py`, ...)."""
        text = self.read(name)
        stem = name[:-3]
        return self.create(f"{stem[:MAX_STEM - 5]}-copy", text)

    # ---- delete with undo
    def _trash(self) -> Path:
        trash = self._dir() / ".trash"
        trash.mkdir(exist_ok=True)
        return trash

    def delete(self, name: str) -> str:
        """Move `name` to `.trash/`; returns the token `restore` takes to undo it."""
        src = self.path(name)
        if not src.is_file():
            raise WorkspaceError(f"{name} is not in the workspace")
        token = f"{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() // 1000 % 10000:04d}-{name}"
        os.replace(src, self._trash() / token)
        self._prune_trash()
        return token

    def restore(self, token: str) -> str:
        """Undo a delete: the file comes back under its name (or `name-2.py` if taken)."""
        m = _TRASH_RE.match(token or "")
        if not m:
            raise WorkspaceError("nothing to undo")
        src = self._trash() / token
        if not src.is_file() or src.is_symlink():
            raise WorkspaceError("that deleted file is no longer in the trash")
        name = self.unique_name(m["name"])
        os.replace(src, self.path(name))
        return name

    def _prune_trash(self) -> None:
        old = sorted(p for p in self._trash().iterdir() if _TRASH_RE.match(p.name))[:-KEEP_TRASH]
        for p in old:
            p.unlink(missing_ok=True)


# ------------------------------------------------------------------------------ one folder per user

_USER_SLUG_RE = re.compile(r"[^a-z0-9]+")


def user_folder(root: Path, user: str) -> Path:
    """The workspace of `user` (a name from the authenticating proxy, or a browser's token)
    under `root/users/`: a readable slug plus a hash of the exact name, so two names that slug
    alike ("Ann.Lee", "ann-lee") still get different folders, and no name is ever a path:

        user_folder(root, "alice")     -> root/users/alice-2bd806c97f0e
        user_folder(root, "../bob")    -> root/users/bob-<hash>        (inside users/, always)
    """
    if not user:
        raise WorkspaceError("no user: a per-user workspace needs a user name or token")
    slug = _USER_SLUG_RE.sub("-", unicodedata.normalize("NFKC", user).lower()).strip("-")[:32] or "user"
    digest = hashlib.sha256(user.encode("utf-8")).hexdigest()[:12]
    return Path(root) / "users" / f"{slug}-{digest}"
