"""The stage panel: a Streamlit custom component (components v2; plain JS and CSS files, no
build step: panel.css here, its module app/static/stage_panel.js, served as a static file) that
draws one compiler stage, only the lines in view.

    stage_panel(payload.encode(payload.build("ptx", text, "add_kernel.ptx", py_lines)),
                key="panel-ptx-0", on_follow=lambda py: ...)
    page_state(follow=27, present=False)      # once per page, before or after the panels

The payload is sent once: a rerun that passes the same bytes leaves the panel as it is (the
browser gets a cached-message reference, the panel's code is not run again). Search, the
"only matching lines" filter, wrap, font size and download happen in the browser; a click on a
line follows its Python line in every panel at once, then calls `on_follow(python_line)`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import streamlit as st
from pygments.formatters import HtmlFormatter

from app.components.static_module import loader

HERE = Path(__file__).resolve().parent
# pygments' colours for its token classes, then ours (ours win where both set a rule)
_CSS = HtmlFormatter(style="default").get_style_defs(".tp-scroll") + "\n" + (HERE / "panel.css").read_text()

_PANEL = st.components.v2.component("tlens_stage_panel", css=_CSS, js=loader("stage_panel.js", "The panel"),
                                     isolate_styles=True)     # its module: app/static/stage_panel.js
_PAGE = st.components.v2.component("tlens_page_state", js=(HERE / "page.js").read_text(), isolate_styles=False)
_VIEWPORT = st.components.v2.component("tlens_viewport", js=(HERE / "viewport.js").read_text(), isolate_styles=False)
VIEWPORT = "_tlens_viewport_width"      # session key: the browser window's width in px (None until reported)
NARROW = 1500                           # below this width two panels open, not three


def stage_panel(payload: bytes, key: str, on_follow: Callable[[int], None] | None = None) -> None:
    """One panel. `payload`: `payload.encode(payload.build(...))`, best cached by the caller."""
    def _followed():
        value = (st.session_state.get(key) or {}).get("follow")     # [line, the click's time in ms]
        line = value[0] if isinstance(value, list) and value else value
        if isinstance(line, (int, float)) and line and on_follow is not None:
            on_follow(int(line))

    _PANEL(key=key, data=payload, on_follow_change=_followed, height="content")


def page_state(follow: int | None, present: bool, key: str = "tlens-page-state") -> None:
    """The followed Python line and presentation mode, for every panel on the page (small:
    changing it re-sends neither panel)."""
    _PAGE(key=key, data={"follow": follow, "present": bool(present)}, height=0)


def viewport_width(key: str = "tlens-viewport") -> int | None:
    """The browser window's width in CSS px as last reported (None before the first report,
    which starts one rerun when the page loads; a resize by 50 px or more reports again)."""
    def _reported():
        value = (st.session_state.get(key) or {}).get("width")
        if isinstance(value, (int, float)) and value > 0:
            st.session_state[VIEWPORT] = int(value)

    _VIEWPORT(key=key, data={"width": st.session_state.get(VIEWPORT)}, on_width_change=_reported, height=0)
    return st.session_state.get(VIEWPORT)


def panels_for_width(width: int | None, present: bool) -> int:
    """How many panels open by default: two when presenting or narrower than NARROW (at
    1280 px three panels are ~310 px each and cut most lines), else three; an unknown width
    (not reported yet) counts as wide."""
    return 2 if present or (width is not None and width < NARROW) else 3
