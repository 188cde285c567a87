"""Presentation mode, for a projector: the sidebar and the editor give way to one line,
panels take the whole width in large type. Any page uses it the same way:

    present.init(st.query_params)        # once, before the page's widgets: ?present=1 turns it on
    present.toggle(st.sidebar)           # the switch (keeps its value across pages)
    present.apply(large_text=True)       # the page's styles; large_text: every text, not only panels
    present.apply(large_text=True, when=st.session_state["big"])   # a page's own switch (the lessons')
    st.query_params.from_dict({..., **present.url_params()})

Stage panels read the mode from `page_state(follow, present.on())` (app/components/stage_panel)
and size their type so that 64 columns fill a panel's width.
"""
from __future__ import annotations

import streamlit as st

from app.state import keep, keys

WIDGET = keys.PRESENT             # the toggle; its value is kept across pages (app/state/keep.py)

# Streamlit's chrome out of the way; a thin page margin; the editor box (its key
# "tlens-editor", see views/explorer.py) hidden: the bar above the panels names the file.
_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stHeader"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding: 6px 12px 16px 12px !important; max-width: 100% !important; }
[data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.45rem; }
.st-key-tlens-editor { display: none !important; }
[data-testid="stPopoverBody"] { max-width: min(1240px, 96vw) !important; }
[data-testid="stPopoverBody"] table, [data-testid="stPopoverBody"] p, [data-testid="stPopoverBody"] li,
[data-testid="stPopoverBody"] code { font-size: 17px !important; }
</style>"""



def init(query_params) -> None:
    """The first page a session opens decides from its URL; later pages keep the value."""
    if keep.kept(WIDGET) is None:
        keep.put(WIDGET, query_params.get("present") == "1", widget=False)


def on() -> bool:
    return bool(keep.kept(WIDGET, False))


def set_on(value: bool) -> None:
    """For callbacks and buttons ("Exit presentation")."""
    keep.put(WIDGET, bool(value))


def _from_widget() -> None:
    keep.save([WIDGET])


def toggle(where=None, label: str = "Presentation mode") -> bool:
    """The switch. Its widget state is dropped on pages that do not draw it, so its value is
    kept (app/state/keep.py) and put back into the widget before it is drawn."""
    st.session_state[WIDGET] = on()
    (where or st).toggle(label, key=WIDGET, on_change=_from_widget,
                         help="For a projector: the sidebar and the editor fold into one line, the panels take "
                              "the screen in large type. A link with ?present=1 opens in this mode.")
    return on()


def apply(large_text: bool = False, when: bool | None = None) -> None:
    """The page's styles for presentation mode (nothing when it is off). `when`: this page's
    own switch instead of the session's mode."""
    if on() if when is None else when:
        css = _CSS
        if large_text:
            from app.render import classroom      # the lessons' large type (it imports graphviz: only when asked)
            css += classroom.BIG_TYPE_CSS
        st.html(css)


def url_params() -> dict[str, str]:
    return {"present": "1"} if on() else {}
