"""The compile history: this session's records in memory (the newest SESSION_KEEP), every
record also saved in the workspace's `.history/` so comparisons survive a restart. A record
keeps its request without the project's file texts (`kept`): the session holds one full request,
the shown result's (keys.RESULT_REQUEST), not one per compile."""
from __future__ import annotations

import streamlit as st

from app.state import keys
from app.state.workspace import history_store
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.session import records as history

SESSION_KEEP = 30        # records of this session kept in memory


def _records() -> dict:
    return st.session_state.setdefault(keys.RECORDS, {})


def record(kernel_label: str, request: CompileRequest, result: CompileResult,
           result_gz: bytes | None = None) -> history.RecordInfo | None:
    """Keep a successful compile, its request as `kept`; the same request twice in a row is
    kept once. `result_gz`: the result as the result cache stored it (HistoryStore.add)."""
    if not result.ok or not result.kernels:
        return None
    order = st.session_state.setdefault(keys.HISTORY, [])
    records = _records()
    if order and records[order[-1]].request == history.kept(request):
        return records[order[-1]].info
    rec = history.make(kernel_label, request, result)
    records[rec.info.id] = rec
    order.append(rec.info.id)
    for old in order[:-SESSION_KEEP]:
        records.pop(old, None)
    del order[:-SESSION_KEEP]
    try:
        history_store().add(rec, result_gz)
    except OSError as e:   # a read-only workspace: history still works for this session
        st.toast(f"History not saved to disk: {e}")
    return rec.info


def session_ids() -> list[str]:
    """This session's records, oldest first."""
    return list(st.session_state.get(keys.HISTORY, []))


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


def headline(before: str, after: str, infos: list[history.RecordInfo]) -> str:
    """What changed from record `before` to `after` (both among `infos`, all_infos(): the caller
    lists the history once per run) in their first launch ("loads v1 → v4, registers 40 → 56")."""
    by_id = {i.id: i for i in infos}
    return history.headline(by_id.get(before), by_id.get(after))
