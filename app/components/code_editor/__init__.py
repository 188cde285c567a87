"""The kernel-file editor: CodeMirror 6 (line numbers, Python colours, bracket matching, Tab /
Shift-Tab indent, undo, Ctrl-F search, the error line marked with its message, Ctrl/Cmd-Enter
compiles) as a Streamlit components-v2 element.

The text lives in `st.session_state[key]`, a plain session key, as a `st.text_area(key=...)`'s
value did: code opens a text with `set_text`, and the browser's edits arrive there before the
script runs (debounced 300 ms while typing, at once on blur and on Ctrl/Cmd-Enter). A text
assigned to the key directly counts as an edit, as if typed: the next draw sends it to the
browser and calls `on_change` (an AppTest test edits with `at.session_state["source"] = text`,
since AppTest cannot type into a custom component).

How the two sides stay in step without losing keystrokes: Python sends the document with a
revision id (`rev`); the browser replaces its text only when `rev` changes, i.e. when Python
put a different text in (another file was opened). Each report from the browser carries the
`rev` it was typed against, and a report against an older `rev` is dropped, so a late report
can never write one file's text into another.

The bundle (app/static/code_editor.js, a few hundred KB) is built from frontend/src/editor.js by
`make editor-bundle` (Node + esbuild) and committed, so running the app needs no Node. The
element carries only a small loader (`LOADER`, app/components/static_module.py) that imports
the bundle from Streamlit's static files: the browser fetches it once and caches it.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Callable

import streamlit as st

from app.components.static_module import STATIC, loader

BUNDLE = STATIC / "code_editor.js"
LOADER = loader(BUNDLE.name, "The editor")
NAME = "triton_lens.code_editor"
HINT = "Ctrl+Enter {action} · Ctrl+F search · Tab indent"


@dataclass(frozen=True)
class EditorEvent:
    """What one run of the editor reports: its text (also in st.session_state[key]), whether
    the user pressed Ctrl/Cmd-Enter, and whether the text changed in this run."""
    text: str
    compile_requested: bool = False
    changed: bool = False


@dataclass
class _Doc:
    """What Python last put in the browser's editor, and the last report it took from it."""
    rev: str
    sent: str                   # the text sent with `rev`
    browser: str                # the browser's text as last reported for `rev`
    taken: tuple | None = None  # (sid, seq) of the last report applied


_component = st.components.v2.component(NAME, js=LOADER)


def _doc_key(key: str) -> str:
    return f"_code_editor_{key}"


def _component_key(key: str) -> str:
    return f"{key}-editor"


def _new_doc(key: str, text: str) -> _Doc:
    doc = _Doc(rev=uuid.uuid4().hex[:12], sent=text, browser=text)
    st.session_state[_doc_key(key)] = doc
    return doc


def set_text(key: str, text: str) -> None:
    """Put `text` in the editor (opening a file): the browser's editor starts afresh with it
    (new undo history), and reports typed against the previous text are dropped."""
    st.session_state[key] = text
    _new_doc(key, text)


def _take(key: str, report: object) -> bool:
    """Apply a browser report {text, rev, sid, seq} to st.session_state[key] if it was typed
    against the current document and not applied before. True if the text changed."""
    doc: _Doc | None = st.session_state.get(_doc_key(key))
    if doc is None or not isinstance(report, dict) or report.get("rev") != doc.rev:
        return False
    stamp = (report.get("sid"), report.get("seq"))
    text = report.get("text")
    if stamp == doc.taken or not isinstance(text, str):
        return False
    doc.taken = stamp
    doc.browser = text
    if st.session_state.get(key) == text:
        return False
    st.session_state[key] = text
    return True


def _reports(key: str) -> tuple[object, object]:
    """The browser's last state report and this run's compile trigger (None if none)."""
    state = st.session_state.get(_component_key(key))
    if not state:
        return None, None
    return state.get("value"), state.get("compile")


def flush(key: str) -> bool:
    """Take the browser's newest text for the current document now: for callbacks of other
    widgets that run before the editor's own (switching files must save what was typed into
    the file it was typed into). True if the text changed."""
    value, compile_report = _reports(key)
    changed = _take(key, value)
    return _take(key, compile_report) or changed


def compile_requested(key: str) -> bool:
    """True if this run carries Ctrl/Cmd-Enter from the editor for its current document: for
    a page that compiles before it draws the editor (so that the editor marks the error)."""
    doc: _Doc | None = st.session_state.get(_doc_key(key))
    _, report = _reports(key)
    return doc is not None and isinstance(report, dict) and report.get("rev") == doc.rev


def code_editor(key: str, *, label: str = "", error_line: int | None = None, error_message: str | None = None,
                height_px: int = 360, wrap: bool = False, action: str = "compile",
                on_change: Callable[[], None] | None = None) -> EditorEvent:
    """Draw the editor for the text in st.session_state[key].

    error_line/error_message: a compile or syntax error of this text; its line gets a marker
    in the gutter, a tint and the message below it, and is scrolled into view.
    wrap: wrap long lines (for large type on a projector) instead of scrolling sideways.
    action: what Ctrl/Cmd-Enter does, for the hint in the editor's header ("compile", "check").
    on_change: called when typed text arrived (as a widget callback, before the script runs),
    or a text was assigned to the key directly (here).
    """
    text = st.session_state.get(key)
    if not isinstance(text, str):
        text = ""
        st.session_state[key] = text
    doc: _Doc | None = st.session_state.get(_doc_key(key))
    assigned = doc is not None and text != doc.browser      # set directly, not typed and not set_text
    if doc is None or assigned:
        doc = _new_doc(key, text)

    def _on_report() -> None:
        if flush(key) and on_change is not None:
            on_change()

    result = _component(
        key=_component_key(key),
        data={"id": key, "rev": doc.rev, "doc": doc.sent, "label": label, "hint": HINT.format(action=action),
              "height": height_px, "wrap": wrap, "errorLine": error_line, "errorMessage": error_message},
        height="content",
        on_value_change=_on_report,
        on_compile_change=_on_report,
    )
    changed = flush(key) or assigned      # or a report whose callback did not run (a page's first draw)
    if changed and on_change is not None:
        on_change()
    compile_report = getattr(result, "compile", None)
    return EditorEvent(text=st.session_state[key], changed=changed,
                       compile_requested=isinstance(compile_report, dict) and compile_report.get("rev") == doc.rev)
