"""What a session keeps beyond its widgets: the workspace of kernel files, and the
compile history (this session's records in memory, every record also saved in the
workspace's `.history/` so comparisons survive a restart)."""
from __future__ import annotations

import secrets
from pathlib import Path

import streamlit as st

from app import services
from inspectors.explain import diff
from inspectors.store import history
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.store.workspace import Workspace, user_folder

SESSION_KEEP = 30        # records of this session kept in memory


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
    if "tlens_user" in st.session_state:
        return st.session_state["tlens_user"]
    name = ""
    if s.user_header:
        name = (st.context.headers.get(s.user_header) or "").strip()
        name = f"user:{name}" if name else ""
    if not name:
        token = st.context.cookies.get(TOKEN_COOKIE) or ""
        if not (len(token) == 43 and token.replace("-", "").replace("_", "").isalnum()):
            token = secrets.token_urlsafe(32)
            _set_cookie(TOKEN_COOKIE, token)
        name = f"browser:{token}"
    st.session_state["tlens_user"] = name
    return name


# A components-v2 element runs its script in the app's own page (no iframe), so
# `document.cookie` is the app's cookie. The value travels as data, never as markup or code.
_COOKIE_JS = """export default function ({ data }) {
  if (!data || !/^[A-Za-z0-9_]+$/.test(data.name) || !/^[A-Za-z0-9_-]+$/.test(data.value)) return;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `${data.name}=${data.value}; path=/; max-age=31536000; SameSite=Strict${secure}`;
}"""
_COOKIE = st.components.v2.component("tlens_set_cookie", js=_COOKIE_JS, isolate_styles=False)


def _set_cookie(name: str, value: str) -> None:
    """Set a cookie for the app's pages from the browser (Streamlit gives a script no way to
    set a response header)."""
    _COOKIE(key=f"tlens-cookie-{name}", data={"name": name, "value": value}, height=0)


def workspace_root() -> Path:
    """Read from the settings on every run: tests point TLENS_WORKSPACE_DIR elsewhere."""
    root = settings_mod.load().workspace_dir
    who = user()
    return user_folder(root, who) if who else root


def workspace() -> Workspace:
    return Workspace(workspace_root())


def history_store() -> history.HistoryStore:
    return history.HistoryStore(workspace_root() / ".history")


def _records() -> dict:
    return st.session_state.setdefault("records", {})


def figures_of(result: CompileResult, filename: str, launch: int = 0) -> diff.Figures:
    """Summary figures of one launch (the insight is cached per kernel)."""
    k = result.kernels[launch]
    return diff.figures(k, services.insight(k, list(k.stages), filename))


def record(kernel_label: str, request: CompileRequest, result: CompileResult) -> history.RecordInfo | None:
    """Keep a successful compile; the same request twice in a row is kept once."""
    if not result.ok or not result.kernels:
        return None
    order = st.session_state.setdefault("history", [])
    records = _records()
    if order and records[order[-1]].request == request:
        return records[order[-1]].info
    rec = history.new_record(kernel_label, request, result, figures_of(result, request.filename).to_json())
    records[rec.info.id] = rec
    order.append(rec.info.id)
    for old in order[:-SESSION_KEEP]:
        records.pop(old, None)
    del order[:-SESSION_KEEP]
    try:
        history_store().add(rec)
    except OSError as e:   # a read-only workspace: history still works for this session
        st.toast(f"History not saved to disk: {e}")
    return rec.info


def session_ids() -> list[str]:
    """This session's records, oldest first."""
    return list(st.session_state.get("history", []))


def all_infos() -> list[history.RecordInfo]:
    """This session's records and the saved ones, oldest first, each once."""
    infos = {i.id: i for i in history_store().list()}
    infos.update({rid: rec.info for rid, rec in _records().items()})
    return [infos[k] for k in sorted(infos)]


def load(rid: str) -> history.CompileRecord | None:
    rec = _records().get(rid)
    return rec if rec is not None else history_store().load(rid)


def previous_of(rid: str) -> str | None:
    """The compile before `rid`: the previous one of this session, else the newest saved
    one before it."""
    ids = session_ids()
    if rid in ids and ids.index(rid) > 0:
        return ids[ids.index(rid) - 1]
    older = [i.id for i in all_infos() if i.id < rid]
    return older[-1] if older else None
