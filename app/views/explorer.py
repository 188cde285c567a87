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
(`compile_if_asked`), the editor, the results (app/widgets/results.py), the URL and the kept values
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
from app.widgets import compile_options, panels, present, results, streaming, workspace_box
from app.render.text import code_span, plain
from inspectors.base import settings as settings_mod
from inspectors.base import targets
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
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
    area = st.empty()         # the compile's spinner and launches as they come, then the results: one place
    with area.container():
        compile_if_asked(clicked or from_editor, pending, settings)
    pending = ss.get(keys.URL_PENDING)
    draw_editor(box)
    shown = results.show_results(area, ss.get(keys.RESULT), pending, present_bar, ss.get(stage_panel.VIEWPORT))
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
