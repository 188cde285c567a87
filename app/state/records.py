"""The compile history: this session's records in memory (the newest SESSION_KEEP), every
record also saved in the workspace's `.history/` so comparisons survive a restart. A record
keeps its request without the project's file texts (`kept`): the session holds one full request,
the shown result's (keys.RESULT_REQUEST), not one per compile."""
from __future__ import annotations

import dataclasses
import hashlib

import streamlit as st

from app.backend import services
from app.state import keys
from app.state.workspace import history_store
from inspectors.explain import diff
from inspectors.store import history
from inspectors.base.result import CompileRequest, CompileResult

SESSION_KEEP = 30        # records of this session kept in memory


def _records() -> dict:
    return st.session_state.setdefault(keys.RECORDS, {})


def figures_of(result: CompileResult, filename: str, launch: int = 0) -> diff.Figures:
    """Summary figures of one launch (the insight is cached per kernel)."""
    k = result.kernels[launch]
    return diff.figures(k, services.insight(k, list(k.stages), filename))


def kept(request: CompileRequest) -> CompileRequest:
    """`request` as a record keeps it: each project file's text replaced by its SHA-256
    ("sha256:<hex>"), so that a record holds the file names and tells changed files apart
    without a copy of the project (a history record is never compiled again)."""
    if not request.files:
        return request
    return dataclasses.replace(request, files={
        name: "sha256:" + hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()
        for name, text in request.files.items()})


def record(kernel_label: str, request: CompileRequest, result: CompileResult,
           result_gz: bytes | None = None) -> history.RecordInfo | None:
    """Keep a successful compile, its request as `kept`; the same request twice in a row is
    kept once. `result_gz`: the result as the result cache stored it (HistoryStore.add)."""
    if not result.ok or not result.kernels:
        return None
    order = st.session_state.setdefault(keys.HISTORY, [])
    records = _records()
    request = kept(request)
    if order and records[order[-1]].request == request:
        return records[order[-1]].info
    rec = history.new_record(kernel_label, request, result, figures_of(result, request.filename).to_json())
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
    lists the history once per run) in their first launch, most telling first ("loads v1 → v4,
    registers 40 → 56"); "" when nothing did or a record is gone."""
    by_id = {i.id: i for i in infos}
    a, b = by_id.get(before), by_id.get(after)
    if a is None or b is None or not a.figures or not b.figures:
        return ""
    return diff.headline(diff.Figures.from_json(a.figures), diff.Figures.from_json(b.figures))
