"""The sidebar's Workspace box: the open workspace file's actions (rename, duplicate, delete,
undo) and the folder's files.

Its body is drawn only while it is open (opening it reruns the page): a Compile's run lists no
folder and sends none of its widgets (a class's clicks; benchmarks/page_cost.py).
"""
from __future__ import annotations

import time

import streamlit as st

from app.state import keys
from app.state import kernel_files as files
from app.state.kernel_files import WS


def draw(ws) -> None:
    ss = st.session_state
    current_file = files.file_of(ss[keys.PICKER])
    if current_file and not ss[keys.PICKER].startswith(WS):
        st.caption(f"Showing your copy **{current_file}** (workspace); the library kernel is unchanged.")
    box = st.expander("Workspace", key=keys.WS_BOX, on_change="rerun")
    if box.open:
        with box:
            _files(ws, current_file)
    if ss.get(keys.UNDO):
        st.button(f"↶ Undo delete of {ss[keys.UNDO][1]}", key=keys.WS_UNDO, on_click=files.undo)


def _files(ws, current_file: str | None) -> None:
    listed = ws.list()
    st.caption(f"{len(listed)} file(s) in `{ws.root}`. Files are saved as you edit and compile.")
    if current_file:
        st.text_input("File name", value=current_file, key=keys.ws_name(current_file))
        c1, c2, c3 = st.columns(3)
        c1.button("Rename", key=keys.WS_RENAME, on_click=files.rename, args=(current_file,))
        c2.button("Duplicate", key=keys.WS_DUPLICATE, on_click=files.duplicate, args=(current_file,))
        c3.button("Delete", key=keys.WS_DELETE, on_click=files.delete, args=(current_file,))
    else:
        st.caption("A library kernel: edit it and your copy is saved here.")
    if listed:     # markdown, not st.table: no DataFrame made on a run of the page
        st.markdown("| file | bytes | modified |\n|---|--:|---|\n" + "\n".join(
            f"| `{f.name}` | {f.size} | {time.strftime('%m-%d %H:%M', time.localtime(f.modified))} |"
            for f in listed))      # names are [A-Za-z0-9_-].py (inspectors/store/workspace.py)
