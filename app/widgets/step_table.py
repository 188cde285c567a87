"""The step at a glance, above a result of more than one launch: every launch in one table (its
graph, kernel and config, warps, stages, grid, registers, bytes, FLOPs, its time estimated on a
GPU of the target's and its share of the step, the lines of the file it computes, the ATen ops
it fuses: inspectors/explain/step.py), read from the launches' headers, so a step of 500
launches draws as fast as one of five. A row picked opens that launch in the panels below (the launch
picker is set to it once per pick; the picker stays the user's afterwards). A file's few own
specializations (vector add's four) are left to the picker: the first screen stays the panels'.
"""
from __future__ import annotations

import streamlit as st

from app.state import keys
from inspectors.base.result import CompileResult
from inspectors.explain import estimate, step

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
    headers = result.headers
    if len(headers) < 2 or not (len(headers) >= 6 or any(str(h.label) not in ("", h.name) or h.origin for h in headers)):
        return
    choices = step.gpus(headers)
    names = [g.name for g in choices]
    if ss.get(keys.STEP_GPU) not in names:
        ss.pop(keys.STEP_GPU, None)
    found = step.rows(headers, filename, next((g for g in choices if g.name == ss.get(keys.STEP_GPU)), None),
                      result.outside)
    by_graph = step.graphs(found[:len(headers)])
    externs = len(found) - len(headers)
    counted = step.counted(found)
    total = sum(r.step_us for r in counted)
    title = (f"The step: {len(headers)} launches" + (" · " + ", ".join(f"{n} {g}" for g, n in by_graph.items())
                                                      if by_graph else "")
             + (f" · {externs} calls outside Triton" if externs else "")
             + (f" · ≈ {total:,.0f} µs on {counted[0].gpu} (estimated)" if counted else ""))
    share = step.shares(found)
    rows = [{"#": r.launch or None, "graph": r.graph, "kernel": r.kernel, "est. µs": r.estimate_us,
             "% of step": None if s is None else round(100 * s, 1), "calls": r.calls, "bound": r.bound,
             "grid": step.grid_text(r.grid), "warps": r.warps, "stages": r.stages, "regs": r.registers,
             "MB": None if r.bytes is None else round(r.bytes / 1e6, 3),
             "GFLOP": round(r.flops / 1e9, 3) if r.flops else None,
             "lines": ", ".join(map(str, r.lines)), "fuses (ATen)": ", ".join(r.aten_ops), "config": r.config,
             "stopped at": r.failed, "how (estimate)": r.how + (" · an autotune alternative: not counted in the step"
                                                                 if r.alternative else "")}
            for r, s in zip(found, share)]
    optional = ("graph", "lines", "fuses (ATen)", "stopped at", "GFLOP", "regs", "grid", "est. µs", "% of step",
                "bound", "how (estimate)")
    empty = [c for c in optional if not any(row[c] not in (None, "") for row in rows)]
    rows = [{c: v for c, v in row.items() if c not in empty} for row in rows]      # a file's own launches: no graphs
    with st.expander(title, expanded=True, icon=":material/table_rows:"):
        if len(names) > 1:
            st.segmented_control("Estimate the time on", names, default=names[0], key=keys.STEP_GPU,
                                 help="Each GPU's bandwidth, peak FLOP/s and SMs are from its data sheet "
                                      "(inspectors/base/gpu_specs.py)")
        event = st.dataframe(rows, hide_index=True, width="stretch", height=min(38 + 35 * len(found), 320),
                             on_select="rerun", selection_mode="single-row", key=keys.STEP_TABLE,
                             column_config=_COLUMNS)
        st.caption(_caption(counted, choices))
    picked = opened(getattr(getattr(event, "selection", None), "rows", None), ss.get(keys.STEP_OPENED), len(headers))
    if picked is not None:
        ss[keys.STEP_OPENED] = picked
        ss[keys.LAUNCH] = picked


_COLUMNS = {
    "MB": st.column_config.NumberColumn("MB", help="bytes it reads and writes in global memory, each once "
                                        "(L2 reuse assumed): Inductor's count, or the tensors it loads and stores"),
    "GFLOP": st.column_config.NumberColumn("GFLOP", help="its dots' FLOPs: 2·M·N·K of each tt.dot, times its "
                                           "loops' trip counts and the grid"),
    "est. µs": st.column_config.NumberColumn("est. µs", format="%.1f", help="one call's time on the chosen GPU, "
                                             "estimated without one: hover a row's 'how' for the figures"),
    "% of step": st.column_config.NumberColumn("% of step", format="%.1f", help="its calls' share of the "
                                               "step's estimated time (autotune alternatives not counted)"),
    "how (estimate)": st.column_config.TextColumn("how (estimate)", width="large"),
}


def _caption(counted, choices) -> str:
    if not counted:
        why = "no GPU figures for this target" if not choices else "no sizes were recorded for these launches"
        return (f"Pick a row to open its launch below. No time estimates: {why}.")
    return (f"Pick a row to open its launch below; click a header to sort. Times are estimated on "
            f"{counted[0].gpu} without a GPU: bytes ÷ {estimate.MEMORY_EFFICIENCY:g} of its bandwidth, dots' FLOPs ÷ "
            f"{estimate.DOT_EFFICIENCY:g} of its peak, the grid's share of its SMs, + {estimate.FLOOR_US:g} µs a "
            "launch (checked against an H200's profiler: docs/09). Rows without a # run outside Triton, as the GPU "
            "would run them (cuBLAS matmuls, attention kernels): their shapes and FLOPs are the graph's; "
            "the Benchmark page measures on a GPU.")
