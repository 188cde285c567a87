"""The server's first question on every page run: may it run users' code at all? A class
server whose students' code could not be sandboxed (inspectors.session.lens.server_problem)
shows why and serves nothing; an explicitly unsandboxed one says so on every page."""
from __future__ import annotations

import streamlit as st

from inspectors.base import settings as settings_mod
from inspectors.session import lens


def refuse_unsafe_server() -> None:
    """A class server whose students' code could not be sandboxed shows why, and serves nothing."""
    problem = _server_problem()
    if problem:
        st.error(f"**Triton Lens will not run users' code on this server.** {problem}", icon=":material/gpp_bad:")
        st.stop()
    if settings_mod.load().class_mode and not settings_mod.load().sandbox:
        st.warning("UNSANDBOXED CLASS SERVER (TLENS_UNSANDBOXED_CLASS=1): every student's code runs with this "
                   "server's rights.", icon=":material/warning:")


@st.cache_resource(show_spinner=False)
def _server_problem() -> str | None:
    return lens.server_problem(settings_mod.load())
