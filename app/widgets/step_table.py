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

from app.render import step_picture
from app.state import keys
from inspectors.base.result import CompileResult
from inspectors.explain import estimate, step
from inspectors.session import bench

ss = st.session_state


def opened(selected_rows, last: int | None, launches: int) -> int | None:
    """The launch a table selection opens: a row picked that was not the one applied last, within
    the launches; None when the selection asks nothing new."""
    rows = [r for r in (selected_rows or ()) if isinstance(r, int) and 0 <= r < launches]
    if not rows or rows[0] == last:
        return None
    return rows[0]


def lit_rows(found: list, line: int | None) -> list[int]:
    """The rows (indices) that compute `line` of the model: its kernels and calls outside Triton."""
    return [i for i, r in enumerate(found) if line is not None and line in r.lines]


def lit_text(found: list, lit: list[int]) -> str:
    """`launches 2, 5 (triton_poi_fused_gelu_1, …) · aten.mm (cuBLAS) × 2`: what a lit line runs."""
    launches = [found[i] for i in lit if not found[i].outside]
    outside: dict[str, int] = {}
    for i in lit:
        if found[i].outside:
            outside[found[i].kernel] = outside.get(found[i].kernel, 0) + 1
    parts = []
    if launches:
        names = list(dict.fromkeys(r.kernel for r in launches))
        parts.append("launch" + ("es " if len(launches) > 1 else " ") + ", ".join(str(r.launch) for r in launches)
                     + f" ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
    parts += [f"{k} × {n}" if n > 1 else k for k, n in outside.items()]
    return " · ".join(parts)


def outside_text(row) -> str:
    """What a row outside Triton is, for a click on it (it has no stages to open)."""
    where = f" (line {', '.join(map(str, row.lines))})" if row.lines else ""
    return (f"**{row.kernel}**{where} runs outside Triton, as the GPU runs it: {row.config or 'its shapes unknown'}"
            f"{f', {row.flops / 1e9:.3g} GFLOP' if row.flops else ''}. It has no Triton stages to show; its estimate "
            f"is {row.how or 'not made'}.")


def _lit(rows: list[dict], lit: list[int]):
    """The rows as a frame, the lit ones' cells filled and empty cells blank, not "None" (an
    autotune alternative's share, a call outside Triton's grid): a pandas Styler, which
    st.dataframe draws."""
    import pandas as pd
    frame = pd.DataFrame(rows)
    marked = set(lit)
    return (frame.style.apply(lambda row: ["background-color: #fff1b8" if row.name in marked else "" for _ in row], axis=1)
            .format(lambda v: "" if v is None or v != v else f"{v:g}" if isinstance(v, float) else v))


def _measure(result: CompileResult, filename: str, source: str, files: dict | None) -> None:
    """The button that times the step on this machine's GPU (example() for real, in a benchmark
    worker: inspectors/bench/step_times.py); on a machine without one it says so."""
    if not source or not st.button("Measure on this machine's GPU", key=keys.STEP_MEASURE, type="tertiary",
                                   icon=":material/timer:", help="Runs example() for real, twice to warm up, then 5 "
                                   "times under torch.profiler: each Triton kernel's median call beside its estimate"):
        return
    from app.widgets import bench_view          # the Benchmark page's probe (and its altair): only on a click
    if not bench_view.gpu_probe().get("gpus"):
        st.info("No GPU on this machine: the times above are estimates from each GPU's data sheet. On a machine "
                "with an NVIDIA GPU this button puts the measured times beside them.")
        return
    with st.spinner("Running example() on the GPU…"):
        got = bench.measure_source(source, filename, files)
    if "error" in got:
        st.error(f"The step could not be measured: {got['error']}")
        return
    ss[keys.STEP_MEASURED] = ((result.key, source), bench.per_call(got.get("times", {})))
    st.rerun()


def table_rows(found: list) -> list[dict]:
    """The step's rows as the table shows them (the Explorer's, a lesson's): columns no row fills
    left out (a file's own launches have no graph, lines or ATen ops)."""
    share = step.shares(found)
    rows = [{"#": r.launch or None, "graph": r.graph, "kernel": r.kernel, "est. µs": r.estimate_us,
             "measured µs": r.measured_us,
             # numbers, so that a click on the header sorts them; an empty cell is drawn blank (placeholder)
             "% of step": None if r.alternative or s is None else round(100 * s, 1),
             "calls": r.calls, "bound": r.bound,
             "grid": step.grid_text(r.grid), "warps": r.warps, "stages": r.stages, "regs": r.registers,
             "MB": None if r.bytes is None else round(r.bytes / 1e6, 3),
             "GFLOP": float(f"{r.flops / 1e9:.3g}") if r.flops else None,
             "lines": ", ".join(map(str, r.lines)), "fuses (ATen)": ", ".join(r.aten_ops), "config": r.config,
             "stopped at": r.failed, "how (estimate)": r.how + (" · an autotune alternative: not counted in the step"
                                                                 if r.alternative else "")}
            for r, s in zip(found, share)]
    optional = ("graph", "lines", "fuses (ATen)", "stopped at", "GFLOP", "regs", "grid", "est. µs", "% of step", "measured µs",
                "bound", "how (estimate)")
    empty = [c for c in optional if not any(row[c] not in (None, "") for row in rows)]
    rows = [{c: v for c, v in row.items() if c not in empty} for row in rows]      # a file's own launches: no graphs
    return rows


def render(result: CompileResult, filename: str, request=None) -> None:
    """The table, in an expander, drawn before the launch picker (it may set it) for a step: a
    torch.compile'd step, an autotuner's configs, or six launches or more; or a step of no Triton
    launch, only calls outside Triton. A file's few own specializations (vector add's four) keep
    the first screen to the panels: the picker lists them. `request`: the compile's (its source
    and files are what the Measure button runs)."""
    source, files = (request.source, request.files) if request is not None else ("", None)
    target = request.target if request is not None else ""
    headers = result.headers
    if headers and (len(headers) < 2 or not (len(headers) >= 6 or any(str(h.label) not in ("", h.name) or h.origin
                                                                       for h in headers))):
        return
    if not headers and not result.outside:
        return
    if not headers:
        st.info("torch.compile made no Triton kernel of this step: Inductor's graphs call only the kernels below, "
                "outside Triton, as the GPU runs them (cuBLAS matmuls, attention kernels, ATen ops such as complex "
                "arithmetic). There are no stages to show; the table estimates their time.", icon=":material/info:")
    choices = step.gpus(headers, target)
    names = [g.name for g in choices]
    if ss.get(keys.STEP_GPU) not in names:
        ss.pop(keys.STEP_GPU, None)
    kept = ss.get(keys.STEP_MEASURED)
    measured = kept[1] if isinstance(kept, tuple) and kept[0] == (result.key, source) else None
    found = step.rows(headers, filename, next((g for g in choices if g.name == ss.get(keys.STEP_GPU)), None),
                      result.outside, measured, target)
    by_graph = step.graphs(found[:len(headers)])
    externs = len(found) - len(headers)
    counted = step.counted(found)
    total = sum(r.step_us for r in counted)
    title = ((f"The step: {len(headers)} launches" if headers else "The step: no Triton launch")
             + (" · " + ", ".join(f"{n} {g}" for g, n in by_graph.items()) if by_graph else "")
             + (f" · {externs} call{'' if externs == 1 else 's'} outside Triton" if externs else "")
             + (f" · ≈ {total:,.{1 if total < 1000 else 0}f} µs on {counted[0].gpu} (estimated)" if counted else ""))
    rows = table_rows(found)
    with st.expander(title, expanded=True, icon=":material/table_rows:"):
        if len(names) > 1:
            st.segmented_control("Estimate the time on", names, default=names[0], key=keys.STEP_GPU,
                                 help="Each GPU's bandwidth, peak FLOP/s and SMs are from its data sheet "
                                      "(inspectors/base/gpu_specs.py)")
        line = ss.get(keys.STEP_LINE)
        lit = lit_rows(found, line)
        data = _lit(rows, lit)
        event = st.dataframe(data, hide_index=True, width="stretch", height=min(38 + 35 * len(found), 320),
                             on_select="rerun", selection_mode="single-row", key=keys.STEP_TABLE,
                             column_config=_COLUMNS,
                             placeholder="")     # a call outside Triton has no #, warps or registers: blank, not "None"
        if lit:
            st.caption(f"Line {line} of {filename} (clicked in Your model) is computed by the lit rows: "
                       + lit_text(found, lit))
        chosen = [r for r in (getattr(getattr(event, "selection", None), "rows", None) or ())
                  if isinstance(r, int) and len(headers) <= r < len(found)]
        if chosen:                   # a call outside Triton: nothing to open below, what it is said here
            st.info(outside_text(found[chosen[0]]), icon=":material/info:")
        st.caption(_caption(counted, choices, bool(headers)))
        _measure(result, filename, source, files)
        if st.toggle("The step as a picture: your lines → the kernels they were fused into", key=keys.STEP_PICTURE):
            st.graphviz_chart(step_picture.picture(found, source, filename), width="stretch")
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
                                               "step's estimated time (an autotune alternative's is blank: not counted)"),
    "bound": st.column_config.TextColumn("bound", help="the estimate's largest term: memory (bytes ÷ bandwidth), "
                                         "dots (FLOPs ÷ peak), issue (SASS instructions ÷ 4 a clock an SM), latency "
                                         "(waits on loads × rounds of programs), launch (the floor)"),
    "how (estimate)": st.column_config.TextColumn("how (estimate)", width="large"),
}


def _caption(counted, choices, launches: bool = True) -> str:
    pick = "Pick a row to open its launch below" if launches else "A row picked says what runs it"
    if not counted:
        why = "no GPU figures for this target" if not choices else "no sizes were recorded for these launches"
        return (f"{pick}. No time estimates: {why}.")
    return (f"{pick}; click a header to sort. Times are estimated on "
            f"{counted[0].gpu} without a GPU: bytes ÷ {estimate.MEMORY_EFFICIENCY:g} of its bandwidth, dots' FLOPs ÷ "
            f"{estimate.DOT_EFFICIENCY:g} of its peak, SASS instructions ÷ 4 a clock an SM, or waits on loads × "
            f"{estimate.LOAD_WAIT_US:g} µs, the grid's share of its SMs, + {estimate.FLOOR_US:g} µs a "
            "launch (checked against an H200's profiler: docs/09-benchmark-results.md). Rows without a # run outside Triton, as the GPU "
            "would run them (cuBLAS matmuls, attention kernels): their shapes and FLOPs are the graph's, or for "
            "the graphs eager and eager backward, those your modules' forwards and the backward ran eagerly with; "
            "the Benchmark page measures on a GPU.")
