"""The one way a widget keeps its value across pages.

Streamlit drops the state of a widget that is not drawn on the page shown. A page that wants
its widgets' values back keeps a copy under keys.KEPT:

    keep.restore(keys.EXPLORER_KEPT)      # before the widgets exist: a value not there comes back
    ... the widgets ...
    keep.save(keys.EXPLORER_KEPT)         # at the end of the run: the copy

A widget whose value other pages read (the presentation toggle) saves on change too, and any page
reads the kept value with `keep.value(key)`, whether or not that widget is on the page shown.
"""
from __future__ import annotations

from typing import Any, Iterable

import streamlit as st

from app.state import keys


def _kept() -> dict:
    return st.session_state.setdefault(keys.KEPT, {})


def restore(names: Iterable[str]) -> None:
    """Put back the kept values of widgets not in the session (before they are drawn)."""
    kept = _kept()
    for name in names:
        if name not in st.session_state and name in kept:
            st.session_state[name] = kept[name]


def resend_early(names: Iterable[str], runs: int = 3) -> None:
    """Values a run sets before their widgets exist (a link's, a default) reach the browser only
    with the run that set them; a browser that first draws the widget from a later run (the first
    run's drawing replaced before it was shown: a busy class's first visit) draws its first option
    (a class's link opened on sm_80 with its num_warps lost, and Compile sent that). Set again on
    a session's first `runs` runs, so whichever run the browser draws first carries them."""
    n = st.session_state[keys.RUNS] = st.session_state.get(keys.RUNS, 0) + 1
    if n <= runs:
        for name in names:
            if name in st.session_state:
                st.session_state[name] = st.session_state[name]


def save(names: Iterable[str]) -> None:
    """Copy the widgets' values (those in the session) to the kept ones."""
    kept = _kept()
    kept.update({name: st.session_state[name] for name in names if name in st.session_state})


def value(name: str, default: Any = None) -> Any:
    """A widget's value on any page: the widget's own if it is in the session, else the kept one."""
    if name in st.session_state:
        return st.session_state[name]
    return _kept().get(name, default)


def kept(name: str, default: Any = None) -> Any:
    """The kept value only (the last saved), not the widget's: what another page last left there."""
    return _kept().get(name, default)


def put(name: str, v: Any, widget: bool = True) -> None:
    """Set a widget's value and its kept copy (a callback, a link, "Exit presentation");
    widget=False: the kept copy only (a page without the widget, before any widget exists)."""
    if widget:
        st.session_state[name] = v
    _kept()[name] = v
