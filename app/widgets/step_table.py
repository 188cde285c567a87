"""The step at a glance, above a result of more than one launch: every launch in one table (its
graph, kernel and config, warps, stages, the lines of the file it computes, the ATen ops it
fuses: inspectors/explain/step.py), read from the launches' headers, so a step of 500 launches
draws as fast as one of five. A row picked opens that launch in the panels below (the launch
picker is set to it once per pick; the picker stays the user's afterwards). A file's few own
specializations (vector add's four) are left to the picker: the first screen stays the panels'.
"""
from __future__ import annotations

import streamlit as st

from app.state import keys
from inspectors.base.result import CompileResult
from inspectors.explain import step

ss = st.session_state


def opened(selected_rows, last: int | None, launches: int) -> int | None:
    """The launch a table selection opens: a row picked that was not the one applied last, within
    the launches; None when the selection asks nothing new."""
    rows = [r for r in (selected_rows or ()) if isinstance(r, int) and 0 <= r < launches]
    if not rows or rows[0] == last:
        return None
    return rows[0]


def render(result: CompileResult, filename: str) -> None:
    """The table, in an expander, drawn before the launch picker (it may set it) for a step: a
    torch.compile'd step, an autotuner's configs, or six launches or more. A file's few own
    specializations (vector add's four) keep the first screen to the panels: the picker lists them."""
    found = step.rows(result.headers, filename)
    if len(found) < 2 or not (len(found) >= 6 or any(str(h.label) not in ("", h.name) or h.origin for h in result.headers)):
        return
    by_graph = step.graphs(found)
    title = f"The step: {len(found)} launches" + (" · " + ", ".join(f"{n} {g}" for g, n in by_graph.items())
                                                   if by_graph else "")
    rows = [{"#": r.launch, "graph": r.graph, "kernel": r.kernel, "config": r.config, "warps": r.warps,
             "stages": r.stages, "lines": ", ".join(map(str, r.lines)), "fuses (ATen)": ", ".join(r.aten_ops),
             "stopped at": r.failed} for r in found]
    empty = [c for c in ("graph", "lines", "fuses (ATen)", "stopped at") if not any(row[c] for row in rows)]
    rows = [{c: v for c, v in row.items() if c not in empty} for row in rows]      # a file's own launches: no graphs
    with st.expander(title, expanded=True, icon=":material/table_rows:"):
        event = st.dataframe(rows, hide_index=True, width="stretch", height=min(38 + 35 * len(found), 320),
                             on_select="rerun", selection_mode="single-row", key=keys.STEP_TABLE)
        st.caption("Pick a row to open its launch below. Matmuls and attention that run outside Triton "
                   "(cuBLAS, flash kernels) are not launches here yet.")
    picked = opened(getattr(getattr(event, "selection", None), "rows", None), ss.get(keys.STEP_OPENED), len(found))
    if picked is not None:
        ss[keys.STEP_OPENED] = picked
        ss[keys.LAUNCH] = picked
