"""Kernels are files: the explorer's picker entries and the workspace files behind them.

Workspace files (`ws:NAME.py`) are saved as they are edited and compiled; editing a library
kernel saves a copy in the workspace (the library file is never written) and that copy is what
the library entry shows for the rest of the session (keys.COPIES). The functions here are the
picker's and the workspace box's callbacks; what they have to say waits under keys.WS_MESSAGE.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.components import code_editor
from app.state import keys
from app.state.workspace import workspace
from inspectors.base import settings as settings_mod
from inspectors.base.files import atomic_write
from inspectors.base.result import MAX_PROJECT_BYTES, MAX_PROJECT_FILES
from inspectors.session import files as session_files
from inspectors.session.files import WorkspaceError
import kernels

NEW_KERNEL = "my_kernel"            # picker entry that creates a workspace file (the old "✎ My kernel")
WS = "ws:"                          # picker entries of workspace files: "ws:my_kernel.py"
DISK = "disk:"                      # the file `tlens app FILE.py` opened: "disk:/abs/path/FILE.py"
NEW_KERNEL_TEXT = (kernels.get("vector_add").source())


def opened() -> Path | None:
    """The file `tlens app FILE.py` opened from disk (TLENS_OPEN); never on a class server."""
    s = settings_mod.load()
    return Path(s.open_file) if s.open_file and not s.class_mode else None


def entries() -> list[str]:
    """The picker's entries: the file opened from disk, the library, the workspace's files, and
    "new kernel"."""
    disk = [DISK + str(opened())] if opened() else []
    return disk + [k.slug for k in kernels.LIBRARY] + [WS + n for n in workspace().names()] + [NEW_KERNEL]


def on_disk(entry: str | None) -> Path | None:
    return Path(entry[len(DISK):]) if entry and entry.startswith(DISK) else None


def copies() -> dict:
    """Library slug -> the workspace file holding this session's edits of it."""
    return st.session_state.setdefault(keys.COPIES, {})


def file_of(entry: str | None) -> str | None:
    """The workspace file behind a picker entry, if it has one."""
    if not entry:
        return None
    if entry.startswith(WS):
        return entry[len(WS):]
    return copies().get(entry)


def text_of(entry: str) -> str:
    if on_disk(entry):
        return on_disk(entry).read_text(encoding="utf-8", errors="replace")
    name, ws = file_of(entry), workspace()
    if name and ws.exists(name):
        return ws.read(name)
    return kernels.get(entry).source() if not entry.startswith(WS) else ""


def filename() -> str:
    """The file name the compiler sees (and the source map looks for)."""
    entry = st.session_state[keys.PICKER]
    if on_disk(entry):
        return on_disk(entry).name
    return entry[len(WS):] if entry.startswith(WS) else f"{entry}.py"


class ProjectTooLarge(WorkspaceError):
    """The workspace's other files are over what a compile takes (MAX_PROJECT_FILES files,
    MAX_PROJECT_BYTES bytes): the message says so, for the user; no file was read."""


def project() -> tuple[dict[str, str], str]:
    """The files sent with a compile so that imports work, and the file's package: for a file
    opened from disk its project (inspectors.store.project), else the workspace's other files
    (`from _helpers import block`): this user's workspace only, never another's. Raises
    ProjectTooLarge (project_files)."""
    disk = on_disk(st.session_state.get(keys.PICKER))
    if disk:
        return session_files.project_of(disk)
    return project_files(), ""


def changed_on_disk() -> bool:
    """Whether the opened disk file, or a file of its project, was saved since last looked at
    (the first look only remembers)."""
    disk = on_disk(st.session_state.get(keys.PICKER))
    if not disk:
        return False
    root, _ = session_files.package_root(disk)
    try:
        seen = {str(p): p.stat().st_mtime_ns for p in [disk, *root.glob("*.py"), *root.glob("*/*.py")]}
    except OSError:
        return False
    before = st.session_state.get(keys.DISK_SEEN)
    st.session_state[keys.DISK_SEEN] = seen
    return before is not None and before != seen


def project_files() -> dict[str, str]:
    """The workspace's other files (their names and texts), read once, for one compile.

    Counted and sized from stat before any is read: over MAX_PROJECT_FILES files or
    MAX_PROJECT_BYTES bytes, ProjectTooLarge and nothing is read. A file over a workspace
    file's bound (workspace.MAX_BYTES: one put there by hand) is left out unread; one that grew
    since its stat past what is left of MAX_PROJECT_BYTES refuses the compile as well."""
    ws, own = workspace(), filename()
    entries = [e for e in ws.list() if e.name != own and e.size <= session_files.MAX_FILE_BYTES]
    too_large(len(entries), sum(e.size for e in entries))
    out, total = {}, 0
    for e in entries:
        try:
            text = ws.read(e.name)
        except WorkspaceError:
            continue
        total += len(text)
        too_large(len(entries), total)
        out[e.name] = text
    return out


def too_large(count: int, size: int) -> None:
    """ProjectTooLarge, naming both figures and both limits, when `count` files of `size`
    bytes in all are more than a compile takes."""
    if count > MAX_PROJECT_FILES or size > MAX_PROJECT_BYTES:
        raise ProjectTooLarge(
            f"This workspace's other files are {count} file{'s' if count != 1 else ''} and "
            f"{size / 2**20:.1f} MB; a compile takes at most {MAX_PROJECT_FILES} files and "
            f"{MAX_PROJECT_BYTES >> 20} MB of them. Delete or move some files (Workspace box).")


def label(entry: str) -> str:
    if on_disk(entry):
        return f"{on_disk(entry).name} · on disk"
    if entry == NEW_KERNEL:
        return "＋ New kernel (in the workspace)"
    if entry.startswith(WS):
        return f"📄 {entry[len(WS):]}"
    return kernels.get(entry).title         # stable: a label must not depend on session state


def say(message: str, kind: str = "info") -> None:
    st.session_state[keys.WS_MESSAGE] = (kind, message)


def save_current() -> None:
    """The editor's text to its file. A library kernel is never written: its first edit
    becomes a workspace copy."""
    code_editor.flush(keys.SOURCE)        # keystrokes that arrived with this run, into the file they belong to
    entry, text = st.session_state.get(keys.EDITING), st.session_state.get(keys.SOURCE)
    if not entry or text is None or entry == NEW_KERNEL:
        return
    disk = on_disk(entry)
    if disk:            # the user's own file: saved where it is
        try:
            if text != disk.read_text(encoding="utf-8", errors="replace"):
                mode = disk.stat().st_mode & 0o7777
                atomic_write(disk, text)
                disk.chmod(mode)         # atomic_write's temporary file is 0600: the file keeps its own
                changed_on_disk()        # our own save is not a change to recompile for
        except OSError as e:
            say(f"Not saved: {e}", "error")
        return
    ws = workspace()
    try:
        name = file_of(entry)
        if name:
            if not ws.exists(name) or ws.read(name) != text:
                ws.save(name, text)
        elif text != kernels.get(entry).source():
            name = ws.create(entry, text)
            copies()[entry] = name
            say(f"Your edits are saved as **{name}** in the workspace; the library kernel is unchanged.")
    except (WorkspaceError, OSError) as e:
        say(f"Not saved: {e}", "error")


def open_entry(entry: str, set_picker: bool = True) -> None:
    """The editor shows `entry`'s text; the shown result goes."""
    if set_picker:            # not once the picker widget exists in this run
        st.session_state[keys.PICKER] = entry
    st.session_state[keys.EDITING] = entry
    try:
        code_editor.set_text(keys.SOURCE, text_of(entry))
    except (WorkspaceError, OSError) as e:
        say(str(e), "error")
        code_editor.set_text(keys.SOURCE, "")
    for key in (keys.RESULT, keys.CURRENT_RECORD, keys.COMPILE_REQUEST):
        st.session_state.pop(key, None)
    if on_disk(entry):          # opened from disk: compiled at once, and watched from here on
        st.session_state[keys.DISK_COMPILE] = True
        changed_on_disk()


def on_pick():
    """Switching kernels keeps every draft: each is a file (or the library's text)."""
    entry = st.session_state[keys.PICKER]
    if entry == st.session_state.get(keys.EDITING):
        return        # not a switch: Streamlit re-reports the value when coming back from another page
    save_current()
    if entry == NEW_KERNEL:
        try:
            entry = WS + workspace().create("my_kernel", NEW_KERNEL_TEXT)
        except (WorkspaceError, OSError) as e:
            say(f"Could not create a file: {e}", "error")
            entry = st.session_state.get(keys.EDITING) or kernels.LIBRARY[0].slug
    open_entry(entry)


def on_edit():
    save_current()


def rename(old: str):
    try:
        new = workspace().rename(old, st.session_state.get(keys.ws_name(old), old))
    except (WorkspaceError, OSError) as e:
        say(f"Not renamed: {e}", "error")
        return
    entry = st.session_state[keys.PICKER]
    if entry.startswith(WS):
        st.session_state[keys.PICKER] = st.session_state[keys.EDITING] = WS + new
    else:
        copies()[entry] = new
    say(f"Renamed to **{new}**.")


def duplicate(name: str):
    save_current()
    try:
        open_entry(WS + workspace().duplicate(name))
        say(f"Opened the copy **{st.session_state[keys.PICKER][len(WS):]}**.")
    except (WorkspaceError, OSError) as e:
        say(f"Not duplicated: {e}", "error")


def delete(name: str):
    save_current()
    entry = st.session_state[keys.PICKER]
    try:
        token = workspace().delete(name)
    except (WorkspaceError, OSError) as e:
        say(f"Not deleted: {e}", "error")
        return
    st.session_state[keys.UNDO] = (token, name)
    if entry.startswith(WS):
        open_entry(kernels.LIBRARY[0].slug)
    else:
        copies().pop(entry, None)
        open_entry(entry)
    say(f"Deleted **{name}**.", "warning")


def undo():
    token, name = st.session_state.pop(keys.UNDO, (None, None))
    try:
        open_entry(WS + workspace().restore(token))
        say(f"Restored **{st.session_state[keys.PICKER][len(WS):]}**.")
    except (WorkspaceError, OSError) as e:
        say(f"Could not undo: {e}", "error")
