"""The explorer page: compile a Triton kernel without a GPU and see every stage side by side.

Top to bottom: sidebar (kernel, target, options; the workspace file's actions), Compile
beside the editor's box (folded to one line after a kernel's first compile, so that the panels
are on the first screen at 1280×720), one bar (launch, stages, followed line, compare, export,
history), two or three stage panels down to the bottom of the screen, and what they mean
(why, memory operations, programs and threads, registers and occupancy: one at a time). Presentation mode
(app/widgets/present.py, `?present=1`) folds the sidebar and the editor into one bar and gives two
panels the screen. The page state lives in the URL (see app/state/urlstate.py), so a link
reproduces it.

Kernels are files (app/state/kernel_files.py): workspace files are saved as they are edited
and compiled, an edited library kernel is a workspace copy.

One run, top to bottom (`explorer()` at the end of the file): widget values back
(`restore_widgets`), the link applied once (`apply_link`), the sidebar (`sidebar`), then the
main area (`main_area`, a fragment: Compile, a keystroke and the results' widgets rerun it
alone): the Compile button and the editor's box (`editor_box`), the compile
(`compile_if_asked`), the editor, the results (`show_results`), the URL and the kept values
written (`finish_run`); a file opened from disk (`tlens app FILE.py`) is then watched
(`watch_disk`, a fragment that recompiles it when it is saved).
"""
from __future__ import annotations

import dataclasses
import time

import streamlit as st

from app.backend import presence, services
from app.components import code_editor
from app.components import stage_panel
from app.state import keep, keys, records, urlstate, workspace
from app.state import kernel_files as files
from app.state.kernel_files import NEW_KERNEL, WS
from app.widgets import (compile_options, model_lines, panels, present, profile_view, step_table, streaming, tables,
                         workspace_box)
from app.render.text import code_span, plain
from inspectors.explain import diff
from inspectors.session import files as session_files
from inspectors.base import settings as settings_mod
from inspectors.base import stages
from inspectors.base import targets
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult, KernelResult
import kernels

ss = st.session_state


def restore_widgets(settings) -> None:
    """Streamlit drops the state of widgets that are not on the page shown: their kept values
    (app/state/keep.py, written by `finish_run`) come back before the widgets exist."""
    keep.restore(keys.EXPLORER_KEPT)
    keep.resend_early((keys.PICKER, keys.TARGET, keys.TRITON, keys.NUM_WARPS, keys.NUM_STAGES))
    if keys.TIMEOUT not in ss:
        ss[keys.TIMEOUT] = int(settings.compile_timeout_s)


def apply_link(entries: list[str]) -> urlstate.UrlState | None:
    """The URL, applied once per session before the widgets exist. Its launch, panels and line
    wait (keys.URL_PENDING) until a run gets to the end: a rerun that stops this one early (the
    browser reporting its width as the page loads, a keystroke) must not drop them."""
    if keys.URL_APPLIED not in ss:
        ss[keys.URL_APPLIED] = True
        url = urlstate.parse(st.query_params.to_dict(), [e for e in entries if e != NEW_KERNEL], list(targets.KNOWN),
                             compile_options.WARPS, compile_options.STAGE_COUNTS)
        if url.kernel:
            files.open_entry(url.kernel)
        if url.present:
            present.set_on(True)
        for key in (keys.TARGET, keys.NUM_WARPS, keys.NUM_STAGES, keys.CONSTEXPRS, keys.SIGNATURE):
            if getattr(url, key) is not None:
                ss[key] = getattr(url, key)
        ss[keys.URL_PENDING] = url
        ss[keys.URL_IGNORED] = url.ignored
    if ss.get(keys.URL_IGNORED):        # every run: the page's first reruns (the browser's width, the cookie) follow at once
        st.warning("Ignored from the link: " + ", ".join(code_span(v) for v in ss[keys.URL_IGNORED]))
    pending = ss.get(keys.URL_PENDING)
    if ss.get(keys.PICKER) not in entries and keys.PICKER in ss:
        files.say(f"{files.file_of(ss[keys.PICKER]) or ss[keys.PICKER]} is no longer in the workspace.", "warning")
        files.open_entry(kernels.LIBRARY[0].slug)
    return pending


def sidebar(settings, engine, ws, entries: list[str]) -> None:
    """What to compile and how (Compile is beside the editor's box: main_area)."""
    with st.sidebar:
        st.title("Triton Lens")
        st.caption("See what the Triton compiler does with a kernel — no GPU needed to compile.")
        present.toggle()
        st.selectbox("Kernel", entries, key=keys.PICKER, format_func=files.label, on_change=files.on_pick)
        if keys.SOURCE not in ss:
            files.open_entry(ss[keys.PICKER], set_picker=False)
        compile_options.draw(settings, engine)
        workspace_box.draw(ws)
        if kernels.LIBRARY and not ss[keys.PICKER].startswith(WS) and not files.on_disk(ss[keys.PICKER]):
            about = st.expander("About this kernel", on_change="rerun")     # drawn when open
            if about.open:
                about.markdown(kernels.get(ss[keys.PICKER]).note)
        stage_panel.viewport_width()        # the browser's width: how many panels open by default


def editor_box(row, asked: bool, from_editor: bool, pending) -> st.delta_generator.DeltaGenerator:
    """The editor's box: an expander (one line when folded) that presentation mode hides. It
    folds on the first compile of each kernel (by Compile or a link; a first compile by
    Ctrl-Enter, typed in the editor, leaves it open for good) and opens again if that compile
    fails; after that it stays as the user leaves it. The editor is drawn into the returned
    container after the compile, so that it marks the line of this compile's error."""
    if ss.pop(keys.EDITOR_REOPEN, False):
        ss[keys.EDITOR_BOX] = True
    elif (asked or from_editor or (pending is not None and pending.run)) and \
            ss.get(keys.EDITOR_FOLDED_FOR) != ss[keys.PICKER]:
        ss[keys.EDITOR_FOLDED_FOR] = ss[keys.PICKER]
        if not from_editor:          # Ctrl-Enter: the user is typing there; it stays open from now on
            ss[keys.EDITOR_BOX] = False
    ss.setdefault(keys.EDITOR_BOX, True)
    with row.expander(f"✎ Kernel file · {files.filename()}", key=keys.EDITOR_BOX, on_change="rerun"):
        return st.container()


def compile_request(settings) -> CompileRequest | None:
    """The widgets' values as a request (None, and an error shown, for bad constexpr overrides)."""
    try:
        constexprs = panels.parse_overrides(ss[keys.CONSTEXPRS])
    except ValueError as e:
        st.error(f"constexpr overrides: {plain(e)}")
        return None
    project, package = files.project()       # what the file's imports need: importable in the job
    return CompileRequest(
        source=ss[keys.SOURCE],
        filename=files.filename(),
        target=ss[keys.TARGET],
        num_warps=compile_options.chosen(ss[keys.NUM_WARPS]),
        num_stages=compile_options.chosen(ss[keys.NUM_STAGES]),
        constexprs=constexprs,
        signature=ss[keys.SIGNATURE].strip() or None,
        max_output_bytes=settings.max_output_bytes,
        sass=False,          # disassembled when a SASS panel is opened (nvdisasm's cost: docs/09-benchmark-results.md)
        files=project, package=package,
        triton_version=ss.get(keys.TRITON, "") if len(services.lens().versions()) > 1 else "",
    )


def compile_if_asked(asked: bool, pending, settings) -> CompileResult | None:
    """The Compile click (or Ctrl-Enter, or a link's `run=1`): the file saved, the request made
    and compiled, the result stored with its history record. The request waits in the session
    (keys.COMPILE_REQUEST) until its result is stored: a keystroke in the editor starts a new run
    and stops this one at its next st call, and a Compile click is not replayed. The result of a
    compile made in this run, else None. A workspace whose other files are over what a compile
    takes is refused before they are read (files.ProjectTooLarge): the refusal is shown as the
    compile's error, and nothing is compiled or kept in the history."""
    if asked or (pending is not None and pending.run):
        files.save_current()
        if pending is not None and pending.run:      # the link's compile is asked for once: a failed
            ss[keys.URL_PENDING] = dataclasses.replace(pending, run=False)   # one (st.rerun to show the
                                                                             # error) must not compile again
        try:
            ss[keys.COMPILE_REQUEST] = compile_request(settings)
        except files.ProjectTooLarge as e:
            for key in (keys.COMPILE_REQUEST, keys.RESULT_REQUEST, keys.CURRENT_RECORD):
                ss.pop(key, None)
            ss[keys.RESULT] = CompileResult(error=CompileError("usage", str(e), files.filename(), None))
            return ss[keys.RESULT]
    request = ss.get(keys.COMPILE_REQUEST)
    if request is None:
        return None
    # a spinner, gone when done: the panels take its place (a failure says so below); below
    # it, the launches as they are compiled and the first one's stages (a library op's fifty)
    preview = streaming.Preview(files.filename())
    with st.spinner(f"Compiling for {targets.parse(request.target).label}…"):
        try:
            result = services.compile_kernel(request, float(ss[keys.TIMEOUT]), on_progress=preview)
        except Exception:
            ss.pop(keys.COMPILE_REQUEST, None)
            raise
    preview.done()

    def _store(request=request, result=result):
        ss[keys.RESULT] = result
        ss[keys.RESULT_REQUEST] = request
        info = records.record(files.file_of(ss[keys.PICKER]) or files.filename(), request, result,
                              services.result_gzipped())
        ss[keys.CURRENT_RECORD] = info.id if info else None
    services.finish_once(keys.COMPILE_REQUEST, request, _store)
    if not result.ok and not result.partial and not ss.get(keys.EDITOR_BOX) and not present.on():
        ss[keys.EDITOR_REOPEN] = True          # show the editor with the error
        st.rerun()
    return result


def draw_editor(box) -> None:
    with box:
        failed = ss.get(keys.RESULT)
        error = failed.error if failed is not None and not failed.ok else None
        code_editor.code_editor(keys.SOURCE, label="Python: @triton.jit kernels, a launcher and example()",
                                error_line=error.line if error else None,
                                error_message=error.headline() if error else None, height_px=340,
                                on_change=files.on_edit)


def _result_bar(result: CompileResult) -> tuple[KernelResult, object, object]:
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


def show_results(result: CompileResult | None, pending, present_bar, viewport) -> dict:
    """The shown result: nothing yet, the error, or the bar, the stage panels and what they
    mean. What of it goes into the URL (panels, launch, line, run)."""
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
        kernel, stage_col, follow_col = _result_bar(result)
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


def finish_run(shown: dict) -> None:
    """The page's state into the URL (an edited library kernel is its workspace copy there: a
    refresh reopens the edits), the link's pending part done, the widgets' values kept."""
    copy = files.file_of(ss[keys.PICKER])
    url_state = {"kernel": WS + copy if copy else ss[keys.PICKER], "target": ss[keys.TARGET],
                 "num_warps": compile_options.chosen(ss[keys.NUM_WARPS]),
                 "num_stages": compile_options.chosen(ss[keys.NUM_STAGES]),
                 "constexprs": ss[keys.CONSTEXPRS].strip(), "signature": ss[keys.SIGNATURE].strip(),
                 **shown, "present": present.on()}
    st.query_params.from_dict(urlstate.encode(url_state))
    ss.pop(keys.URL_PENDING, None)
    keep.save(keys.EXPLORER_KEPT)


def explorer() -> None:
    settings = settings_mod.load()
    engine = services.lens().engine()        # starts the warm worker on first load
    ws = workspace.workspace()
    restore_widgets(settings)
    entries = files.entries()
    apply_link(entries)
    sidebar(settings, engine, ws, entries)
    present.apply()
    ss[keys.PAGE_SHOWS] = _outside_main()
    ss[keys.FULL_RUN] = True
    main_area()
    if files.on_disk(ss[keys.PICKER]):
        with st.sidebar:
            watch_disk()


def _outside_main() -> tuple:
    """What the page outside `main_area` shows: the picker's entry and entries, presentation mode."""
    return ss[keys.PICKER], files.entries(), present.on()


@st.fragment
def main_area() -> None:
    """The fragment (`_main_area`), its server CPU charged to its student (a full run's: once)."""
    with presence.accounted(services.who()):
        _main_area()


def _main_area() -> None:
    """Everything right of the sidebar, as a fragment: a Compile (its button is here, beside
    the editor's box), a keystroke, or a widget of the results reruns only this, not the
    sidebar (the server's CPU a Compile saves: docs/09-benchmark-results.md, page_cost.py). A run
    that changes what the page outside shows (a library kernel's first edit opens its workspace
    copy; presentation mode on or off) reruns the whole page once it is done (not before: a
    Ctrl-Enter that came with the edit is read by the editor drawn here)."""
    stale = False
    if not ss.pop(keys.FULL_RUN, False):         # a rerun of this alone: main.py did not run
        stale = ss.get(keys.PAGE_SHOWS) != _outside_main()
        ss[keys.RUN_STARTED] = time.perf_counter()
        services.prewarm_own(workspace.user())    # as main.py: a run counts as the student's activity
        keep.restore(keys.SIDEBAR_KEPT)       # as restore_widgets does (a client that sent only its click)
    settings = settings_mod.load()
    pending = ss.get(keys.URL_PENDING)
    arch = targets.parse(ss[keys.TARGET]).label.split(" · ")[0]          # "sm_90"
    present_bar = panels.present_bar(f"**{files.filename()}** · {arch}") if present.on() else None
    # The message's slot is always there: an element that comes and goes above the editor would
    # move it, and a moved component is mounted afresh (the editor lost its cursor and scroll when
    # the first edit of a library kernel made the workspace copy and said so).
    message_slot = st.empty()
    message = ss.get(keys.WS_MESSAGE) if stale else ss.pop(keys.WS_MESSAGE, None)   # stale: the next run's
    if message:
        getattr(message_slot, message[0])(message[1])
    row = st.container(horizontal=True, gap="small")
    # no tooltip: it would cover the page's top bar after every click (the editor's header
    # says Ctrl/Cmd-Enter compiles)
    clicked = present_bar.compile if present_bar else row.button("Compile", type="primary", key=keys.COMPILE)
    clicked = clicked or bool(ss.pop(keys.DISK_COMPILE, False))
    from_editor = code_editor.compile_requested(keys.SOURCE)     # Ctrl/Cmd-Enter
    box = editor_box(row, clicked, from_editor, pending)
    compile_if_asked(clicked or from_editor, pending, settings)
    pending = ss.get(keys.URL_PENDING)
    draw_editor(box)
    shown = show_results(ss.get(keys.RESULT), pending, present_bar, ss.get(stage_panel.VIEWPORT))
    finish_run(shown)
    if stale or ss.get(keys.PAGE_SHOWS) != _outside_main():
        st.rerun(scope="app")


@st.fragment(run_every=1.5)
def watch_disk() -> None:
    """A file opened from disk (`tlens app FILE.py`) is edited in the user's own editor: when it,
    or a file of its project, is saved, the editor takes its text and the page compiles it."""
    disk = files.on_disk(ss[keys.PICKER])
    if disk is None:
        return
    st.caption(f"Watching **{disk.name}** and its project: saving recompiles.")
    if files.changed_on_disk():
        code_editor.set_text(keys.SOURCE, files.text_of(ss[keys.PICKER]))
        ss[keys.DISK_COMPILE] = True
        st.rerun(scope="app")


explorer()
