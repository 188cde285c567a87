"""Whose workspace a session opens (the user, from a proxy's header or a browser's cookie) and
the workspace of kernel files itself; the compile history's folder lies in it (history.py)."""
from __future__ import annotations

import secrets
from pathlib import Path

import streamlit as st

from app.state import keys
from inspectors.session import records as history
from inspectors.base import settings as settings_mod
from inspectors.session.files import Workspace, user_folder

TOKEN_COOKIE = "tlens_token"


def user() -> str:
    """Whose workspace this session opens, on a server for a class (TLENS_CLASS=1 or
    TLENS_USER_HEADER set); "" on a one-user server (the workspace folder itself).

    The authenticating proxy's header names the user when TLENS_USER_HEADER is set (a request
    without it gets no workspace of anyone's: a per-browser one). Otherwise each browser gets a
    random token in a cookie, so a refresh or a restart of the server opens the same files and
    no other browser can name them."""
    s = settings_mod.load()
    if not s.per_user_workspaces:
        return ""
    if keys.USER in st.session_state:
        return st.session_state[keys.USER]
    name = ""
    if s.user_header:
        name = (st.context.headers.get(s.user_header) or "").strip()
        name = f"user:{name}" if name else ""
    if not name:
        token = st.context.cookies.get(TOKEN_COOKIE) or ""
        if not (len(token) == 43 and token.replace("-", "").replace("_", "").isalnum()):
            token = secrets.token_urlsafe(32)
            st.session_state[keys.NEW_TOKEN] = token     # set by draw_cookie, on every run of the session
        name = f"browser:{token}"
    st.session_state[keys.USER] = name
    return name


# A components-v2 element runs its script in the app's own page (no iframe), so
# `document.cookie` is the app's cookie. The value travels as data, never as markup or code.
_COOKIE_JS = """export default function ({ data }) {
  if (!data || !/^[A-Za-z0-9_]+$/.test(data.name) || !/^[A-Za-z0-9_-]+$/.test(data.value)) return;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `${data.name}=${data.value}; path=/; max-age=31536000; SameSite=Strict${secure}`;
}"""
_COOKIE = st.components.v2.component("tlens_set_cookie", js=_COOKIE_JS, isolate_styles=False)


def draw_cookie() -> None:
    """The element that sets this session's new token as a cookie in the browser (Streamlit gives a
    script no way to set a response header). Drawn at the same place on every run of the session
    that made the token, not only the first: an element there on one run and gone on the next
    shifted the page, and the browser drew the sidebar's selectboxes afresh at their first option
    (a class's link opened on sm_80 with its num_warps lost)."""
    token = st.session_state.get(keys.NEW_TOKEN)
    if token:
        _COOKIE(key=f"tlens-cookie-{TOKEN_COOKIE}", data={"name": TOKEN_COOKIE, "value": token}, height=0)


def workspace_root() -> Path:
    """Read from the settings on every run: tests point TLENS_WORKSPACE_DIR elsewhere."""
    root = settings_mod.load().workspace_dir
    who = user()
    return user_folder(root, who) if who else root


def workspace() -> Workspace:
    return Workspace(workspace_root())


def history_store() -> history.HistoryStore:
    return history.history_store(workspace_root())
