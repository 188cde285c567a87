"""The explorer's results, below the editor: nothing yet, the error, a step of no Triton kernel
(its calls outside Triton), or the step's table, the bar (launch, stages, followed line, compare,
export, history), the stage panels and what they mean.

    shown = results.show_results(result, pending, present_bar, viewport)   # what goes into the URL
"""
from __future__ import annotations

import time

import streamlit as st

from app.backend import services
from app.components import stage_panel
from app.state import keys, records
from app.state import kernel_files as files
from app.widgets import model_lines, panels, profile_view, step_table, tables
from inspectors.base import stages, targets
from inspectors.base.result import CompileResult, KernelResult
from inspectors.explain import diff
from inspectors.session import files as session_files

ss = st.session_state


def result_bar(result: CompileResult) -> tuple[KernelResult, object, object]:
    """Launch picker, launch card, Compare / Zip / History. (The kernel shown, the stages'
    column, the followed line's column.)"""
    multi = len(result.kernels) > 1
    bar = st.columns([2.0, 2.6, 2.4] if multi else [2.6, 2.4], vertical_alignment="bottom")
    kernel = panels.pick_launch(result.kernels, bar[0] if multi else None)
    stage_col, follow_col = bar[-2:]
    card, a1, a2, a3 = st.columns([6.2, 1.15, 0.8, 1.0], vertical_alignment="center", gap="small")
    current = ss.get(keys.CURRENT_RECORD)
    previous = records.previous_of(current) if current else None
    infos = records.all_infos()            # the history, listed once for this run (headline, popover)
    with card:
        panels.render_launch_card(kernel, result)
        if kernel.origin:
            st.caption(model_lines.caption(kernel, files.filename()))
        since = records.headline(previous, current, infos) if previous else ""
        if since:
            st.caption(f"Since the previous compile: **{since}**")
    if a1.button("Compare", icon=":material/compare_arrows:", key=keys.COMPARE_PREVIOUS, disabled=previous is None,
                 width="stretch", help="Compare with previous: open the Compare page on this compile "
                                       "against the one before it"):
        ss[keys.COMPARE_PICK] = (previous, current)
        st.switch_page("views/diff.py")
    request_now = ss.get(keys.RESULT_REQUEST)
    if request_now is not None:
        fname = files.filename()
        a2.download_button("Zip", icon=":material/download:", key=keys.EXPORT, on_click="ignore", width="stretch",
                           help="Zip: every stage of every launch + a report.md",
                           data=lambda r=request_now, res=result, f=fname: session_files.export(r, res, f),
                           file_name=f"{fname[:-3]}-{kernel.target.replace(':', '_')}.zip",
                           mime="application/zip")
    n_compiles = len(records.session_ids())
    history = a3.popover(f"History {n_compiles}", help=f"{n_compiles} compile{'' if n_compiles == 1 else 's'} "
                         "this session", width="stretch", on_change="rerun")      # drawn when open
    if history.open:
        with history:
            st.table(tables.arrow([{"when": time.strftime("%H:%M:%S", time.localtime(i.when)), "kernel": i.kernel,
                                    "target": i.target, "options": i.options,
                                    "launch 1": diff.Figures.from_json(i.figures).short() if i.figures else ""}
                                   for i in reversed(infos[-15:])]), hide_index=True)
            st.caption("Pick any two on the Compare page.")
    return kernel, stage_col, follow_col


def _stages_pick(kernel: KernelResult, where, pending, present_bar, viewport) -> list[str]:
    """The stages side by side: Python, TTGIR and the first machine-level stage (PTX, or AMDGCN
    for AMD); two (Python and the machine stage, the pair the lessons use) when presenting or on
    a screen narrower than ~1500 px, where three are ~310 px each; the multiselect adds a third."""
    backend = targets.parse(kernel.target).backend
    failed = kernel.error.stage if kernel.error is not None else None
    available = [s for s in stages.stages_for(backend) if s.name in kernel.stage_names() or s.name == failed]
    machine = stages.machine_stage(s.name for s in available) or available[-1].name
    stage_key = keys.stages_pick(backend, bool(present_bar))
    n_default = stage_panel.panels_for_width(viewport, bool(present_bar))
    default = [n for n in (("source", machine) if n_default == 2 else ("source", "ttgir", machine))
               if n in kernel.stages]
    if failed in [s.name for s in available] and failed not in default:
        default = default[-(n_default - 1):] + [failed]
    auto_key = keys.auto_stages(stage_key)          # the default last put there: a width report may change it
    if pending is not None and pending.panels:
        ss[stage_key] = [n for n in pending.panels if n in [s.name for s in available]][:2 if present_bar else 3]
        ss.pop(auto_key, None)
    if stage_key not in ss or (ss.get(auto_key) == ss[stage_key] and default != ss[stage_key]):
        ss[stage_key], ss[auto_key] = list(default), list(default)
    return where.multiselect(
        "Stages side by side", [s.name for s in available], key=stage_key, format_func=lambda n: stages.get(n).label,
        max_selections=2 if present_bar else 3, label_visibility="collapsed" if present_bar else "visible")


def show_results(area, result: CompileResult | None, pending, present_bar, viewport) -> dict:
    """The shown result, drawn in `area` (an st.empty the compile's spinner and preview were
    drawn in: the results are at the same place in every run). A result of no stage panels (none
    yet, an error, a step of no Triton kernel) empties it first, so that the last result's panels
    go at once: Streamlit keeps the elements a run did not redraw until a run of the fragment
    ends with no other run begun after it (watch_disk's, every 1.5 s, may begin one; on CI a PTX
    panel stayed beside "no Triton kernel", stops 70 and 71)."""
    if result is None or not result.kernels or not (result.ok or result.partial):
        area.empty()
    with area.container():
        return _show_results(result, pending, present_bar, viewport)


def _show_results(result: CompileResult | None, pending, present_bar, viewport) -> dict:
    """Nothing yet, the error, or the bar, the stage panels and what they mean. What of it goes
    into the URL (panels, launch, line, run)."""
    if result is None:
        st.info("Pick a kernel and press **Compile**. Every launch that `example()` makes is compiled "
                "for the chosen GPU exactly as Triton's JIT specializes those arguments.")
        return {}
    if not result.ok and not result.partial:
        panels.render_error(result.error, ss[keys.SOURCE])
        panels.render_output(result.output)
        return {}
    if result.partial:       # a later stage failed: what was made is shown, the error in its panel
        panels.render_partial(result)
    if not result.kernels:   # torch.compile's graphs call only kernels outside Triton (cuBLAS, attention)
        step_table.render(result, files.filename(), ss.get(keys.RESULT_REQUEST))
        panels.render_output(result.output)
        return {}
    if pending is not None and pending.launch is not None and pending.launch < len(result.kernels):
        ss[keys.LAUNCH] = pending.launch
    if present_bar is not None:
        kernel = panels.pick_launch(result.kernels, present_bar.launch, compact=True)
        stage_col = follow_col = None
    else:
        step_table.render(result, files.filename(), ss.get(keys.RESULT_REQUEST))   # a row picked opens its launch
        kernel, stage_col, follow_col = result_bar(result)
    chosen = _stages_pick(kernel, present_bar.stages if present_bar else stage_col, pending, present_bar, viewport)
    filename = files.filename()
    insight = services.insight(kernel, filename, with_sass="sass" in chosen)
    smap = insight.source_map
    mapped = sorted(smap.python_to_stage())
    source_lines = kernel.stages["source"].splitlines()
    if pending is not None and pending.line in mapped:
        ss[keys.FOLLOW] = pending.line
    selected_py = (present_bar.follow if present_bar else follow_col).selectbox(
        "Follow a Python line (or click a line)", [None] + mapped, key=keys.FOLLOW,
        format_func=lambda n: "—" if n is None else f"{n}: {source_lines[n - 1].strip()[:90]}",
        label_visibility="collapsed" if present_bar else "visible")
    measured = profile_view.saved_profile(filename, kernel.launch)
    heat = None
    if measured is not None and not profile_view.same_source(measured, kernel.stages["source"]):
        st.caption("A saved profile of this launch exists, but the file changed since it was measured: no heat.")
    elif measured is not None and st.toggle("Measured heat", key=keys.HEAT, help=profile_view.label(measured)):
        heat = profile_view.heat_by_stage(measured, smap, mapped)
        profile_view.render_hottest(measured, kernel.stages["source"], kernel, smap)
    regs = _live_registers(kernel, filename, insight) if st.toggle(
        "Live registers", key=keys.REGS, help="Bars in the Python panel: the most registers live at each line's "
        "SASS instructions (nvdisasm's life ranges), and the lines that spill.") else None
    home = kernel.home(filename).rsplit("/", 1)[-1]
    marks: dict[int, str] = {}
    for r in insight.remarks:
        if r.line and r.file == home:
            marks[r.line] = (marks[r.line] + " · " if r.line in marks else "") + f"{r.kind}: {r.message}"
    panels.render_panels(kernel, chosen, smap, mapped, keys.FOLLOW, selected_py,
                         result.triton_version if len(services.lens().versions()) > 1 else "", heat, marks, regs)
    if kernel.origin:             # a torch.compile kernel: the model's lines it computes
        request_now = ss.get(keys.RESULT_REQUEST)
        model_lines.render(result, kernel, request_now.source if request_now is not None else "", filename)
    if present_bar is not None:
        panels.present_extras(present_bar, insight, source_lines)
    panels.render_insight(insight, kernel, source_lines, keys.FOLLOW, mapped)
    panels.render_output(result.output)
    return dict(panels=chosen, launch=ss.get(keys.LAUNCH) if len(result.kernels) > 1 else None,
                line=selected_py, run=True)


def _live_registers(kernel, filename: str, insight) -> dict[int, int] | None:
    """Live registers per Python line for the panel's bars, and the sentence that reads them."""
    p = services.register_pressure(kernel, filename)
    if isinstance(p, str):
        st.caption(f"Live registers unavailable: {p}")
        return None
    top = p.peak_line()
    allocated = insight.resources.registers if insight.resources else None
    text = (f"Line {top} holds the most live registers: **{p.by_line[top]}**" if top else "No line information")
    text += f" (ptxas allocated {allocated} a thread)." if allocated else "."
    if p.spill_stores or p.spill_loads:
        text += (f" Spills: stored on {', '.join(f'line {n}' for n in sorted(p.spill_stores))}"
                 f"{'; read back on ' + ', '.join(f'line {n}' for n in sorted(p.spill_loads)) if p.spill_loads else ''}.")
    st.caption(text)
    return p.by_line
