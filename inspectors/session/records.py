"""The compile history as every caller makes and reads it: a record is a successful compile with
its request (project files kept as digests: `kept`), and the figures of its first launch (from
the one insight policy) for the history's one-line headlines.

    store = history_store(workspace_root)
    rec = make("vector_add", request, result)       # figures computed here
    store.add(rec, lens.gzipped(result.key))        # the result's bytes as the cache stored them
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from inspectors.base.result import CompileRequest, CompileResult
from inspectors.explain.delta import Figures, headline as figures_headline
from inspectors.session.compare import launch_figures
from inspectors.store.history import (  # noqa: F401 - the history's types, for the callers
    CompileRecord, HistoryStore, RecordInfo, describe_options, new_record)


def history_store(workspace_root: Path) -> HistoryStore:
    """The history of one workspace (its `.history/` folder)."""
    return HistoryStore(Path(workspace_root) / ".history")


def kept(request: CompileRequest) -> CompileRequest:
    """`request` as a record keeps it: each project file's text replaced by its SHA-256
    ("sha256:<hex>"), so that a record holds the file names and tells changed files apart
    without a copy of the project (a history record is never compiled again)."""
    if not request.files:
        return request
    return dataclasses.replace(request, files={
        name: "sha256:" + hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()
        for name, text in request.files.items()})


def figures_of(result: CompileResult, filename: str, launch: int = 0) -> Figures:
    """Summary figures of one launch (its insight is cached per kernel)."""
    return launch_figures(result.kernels[launch], filename, with_sass=False)


def make(label: str, request: CompileRequest, result: CompileResult, with_figures: bool = True) -> CompileRecord:
    """A record of `result` (request `kept`); `with_figures=False` for a pair that is only
    compared on the page (the Compare page's A and B), never listed."""
    figures = figures_of(result, request.filename).to_json() if with_figures and result.kernels else {}
    return new_record(label, kept(request), result, figures)


def headline(a: RecordInfo | None, b: RecordInfo | None) -> str:
    """What changed from record `a` to `b` in their first launch, most telling first
    ("loads v1 → v4, registers 40 → 56"); "" when nothing did or a record is missing."""
    if a is None or b is None or not a.figures or not b.figures:
        return ""
    return figures_headline(Figures.from_json(a.figures), Figures.from_json(b.figures))
