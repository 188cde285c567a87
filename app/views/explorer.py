"""The explorer page: compile a Triton kernel without a GPU and see every stage side by side.

Top to bottom: sidebar (kernel, target, options, Compile; the workspace file's actions),
the editor (folded to one line after a kernel's first compile, so that the panels are on
the first screen at 1280×720), one bar (launch, stages, followed line, compare, export,
history), two or three stage panels down to the bottom of the screen, and what they mean
(memory operations, programs and threads, registers and occupancy). Presentation mode
(app/present.py, `?present=1`) folds the sidebar and the editor into one bar and gives two
panels the screen. The page state lives in the URL (see app/urlstate.py), so a link
reproduces it.

Kernels are files: workspace files (`ws:NAME.py`) are saved as they are edited and
compiled; editing a library kernel saves a copy in the workspace (the library file is
never written) and that copy is what the library entry shows for the rest of the session.
"""
from __future__ import annotations

import dataclasses
import time

import streamlit as st

from app import panels, present, profile_view, services, session, urlstate
from app.components import code_editor
from app.components import stage_panel
from inspectors.explain import diff
from inspectors.store import export
from inspectors.base import settings as settings_mod
from inspectors.base import stages
from inspectors.base import targets
from inspectors.base.result import CompileRequest
from inspectors.store.workspace import WorkspaceError
import kernels

settings = settings_mod.load()
engine = services.engine()          # starts the warm worker on first load
ws = session.workspace()

NEW_KERNEL = "my_kernel"            # picker entry that creates a workspace file (the old "✎ My kernel")
WS = "ws:"                          # picker entries of workspace files: "ws:my_kernel.py"
NEW_KERNEL_TEXT = (kernels.get("vector_add").source())
WARPS = [None, 1, 2, 4, 8, 16, 32]
STAGE_COUNTS = [None, 1, 2, 3, 4, 5]


# ---- kernels as files -------------------------------------------------------------------------
def _copies() -> dict:
    """Library slug -> the workspace file holding this session's edits of it."""
    return st.session_state.setdefault("copies", {})


def _file_of(entry: str | None) -> str | None:
    """The workspace file behind a picker entry, if it has one."""
    if not entry:
        return None
    if entry.startswith(WS):
        return entry[len(WS):]
    return _copies().get(entry)


def _text_of(entry: str) -> str:
    name = _file_of(entry)
    if name and ws.exists(name):
        return ws.read(name)
    return kernels.get(entry).source() if not entry.startswith(WS) else ""


def _filename() -> str:
    """The file name the compiler sees (and the source map looks for)."""
    entry = st.session_state["picker"]
    return entry[len(WS):] if entry.startswith(WS) else f"{entry}.py"


def _label(entry: str) -> str:
    if entry == NEW_KERNEL:
        return "＋ New kernel (in the workspace)"
    if entry.startswith(WS):
        return f"📄 {entry[len(WS):]}"
    return kernels.get(entry).title         # stable: a label must not depend on session state


def _say(message: str, kind: str = "info") -> None:
    st.session_state["ws_message"] = (kind, message)


def _save_current() -> None:
    """The editor's text to its file. A library kernel is never written: its first edit
    becomes a workspace copy."""
    code_editor.flush("source")        # keystrokes that arrived with this run, into the file they belong to
    entry, text = st.session_state.get("editing"), st.session_state.get("source")
    if not entry or text is None or entry == NEW_KERNEL:
        return
    try:
        name = _file_of(entry)
        if name:
            if not ws.exists(name) or ws.read(name) != text:
                ws.save(name, text)
        elif text != kernels.get(entry).source():
            name = ws.create(entry, text)
            _copies()[entry] = name
            _say(f"Your edits are saved as **{name}** in the workspace; the library kernel is unchanged.")
    except (WorkspaceError, OSError) as e:
        _say(f"Not saved: {e}", "error")


def _open(entry: str, set_picker: bool = True) -> None:
    if set_picker:            # not once the picker widget exists in this run
        st.session_state["picker"] = entry
    st.session_state["editing"] = entry
    try:
        code_editor.set_text("source", _text_of(entry))
    except (WorkspaceError, OSError) as e:
        _say(str(e), "error")
        code_editor.set_text("source", "")
    for key in ("result", "current_record", "compile_request"):
        st.session_state.pop(key, None)


def _on_pick():
    """Switching kernels keeps every draft: each is a file (or the library's text)."""
    entry = st.session_state["picker"]
    if entry == st.session_state.get("editing"):
        return        # not a switch: Streamlit re-reports the value when coming back from another page
    _save_current()
    if entry == NEW_KERNEL:
        try:
            entry = WS + ws.create("my_kernel", NEW_KERNEL_TEXT)
        except (WorkspaceError, OSError) as e:
            _say(f"Could not create a file: {e}", "error")
            entry = st.session_state.get("editing") or kernels.LIBRARY[0].slug
    _open(entry)


def _on_edit():
    _save_current()


def _rename(old: str):
    try:
        new = ws.rename(old, st.session_state.get(f"ws-name-{old}", old))
    except (WorkspaceError, OSError) as e:
        _say(f"Not renamed: {e}", "error")
        return
    entry = st.session_state["picker"]
    if entry.startswith(WS):
        st.session_state["picker"] = st.session_state["editing"] = WS + new
    else:
        _copies()[entry] = new
    _say(f"Renamed to **{new}**.")


def _duplicate(name: str):
    _save_current()
    try:
        _open(WS + ws.duplicate(name))
        _say(f"Opened the copy **{st.session_state['picker'][len(WS):]}**.")
    except (WorkspaceError, OSError) as e:
        _say(f"Not duplicated: {e}", "error")


def _delete(name: str):
    _save_current()
    entry = st.session_state["picker"]
    try:
        token = ws.delete(name)
    except (WorkspaceError, OSError) as e:
        _say(f"Not deleted: {e}", "error")
        return
    st.session_state["undo"] = (token, name)
    if entry.startswith(WS):
        _open(kernels.LIBRARY[0].slug)
    else:
        _copies().pop(entry, None)
        _open(entry)
    _say(f"Deleted **{name}**.", "warning")


def _undo():
    token, name = st.session_state.pop("undo", (None, None))
    try:
        _open(WS + ws.restore(token))
        _say(f"Restored **{st.session_state['picker'][len(WS):]}**.")
    except (WorkspaceError, OSError) as e:
        _say(f"Could not undo: {e}", "error")


# ---- widget values survive a visit to another page ------------------------------------------
# Streamlit drops the state of widgets that are not on the page shown; the explorer keeps a
# copy (written at the end of every run) and puts it back before its widgets exist.
KEPT = ("picker", "source", "target", "triton", "num_warps", "num_stages", "constexprs", "signature", "timeout",
        "launch", "follow")
for _key, _value in st.session_state.get("_kept", {}).items():
    if _key not in st.session_state:
        st.session_state[_key] = _value
if "timeout" not in st.session_state:
    st.session_state["timeout"] = int(settings.compile_timeout_s)


# ---- the URL: applied once per session, before the widgets exist ------------------------------
entries = [k.slug for k in kernels.LIBRARY] + [WS + n for n in ws.names()] + [NEW_KERNEL]
if "_url_applied" not in st.session_state:
    st.session_state["_url_applied"] = True
    url = urlstate.parse(st.query_params.to_dict(), [e for e in entries if e != NEW_KERNEL], list(targets.KNOWN),
                         WARPS, STAGE_COUNTS)
    if url.kernel:
        _open(url.kernel)
    if url.present:
        present.set_on(True)
    for key in ("target", "num_warps", "num_stages", "constexprs", "signature"):
        if getattr(url, key) is not None:
            st.session_state[key] = getattr(url, key)
    st.session_state["_url_pending"] = url
    if url.ignored:
        st.warning("Ignored from the link: " + ", ".join(url.ignored))
# Kept until a run gets to the end: a rerun that stops this one early (the browser reporting its
# width as the page loads, a keystroke) must not drop the link's launch, panels and line.
pending: urlstate.UrlState | None = st.session_state.get("_url_pending")

if st.session_state.get("picker") not in entries and "picker" in st.session_state:
    _say(f"{_file_of(st.session_state['picker']) or st.session_state['picker']} is no longer in the workspace.",
         "warning")
    _open(kernels.LIBRARY[0].slug)


# ---- sidebar: what to compile and how -------------------------------------------------------
with st.sidebar:
    st.title("Triton Lens")
    st.caption("See what the Triton compiler does with a kernel — no GPU needed to compile.")
    present.toggle()
    st.selectbox("Kernel", entries, key="picker", format_func=_label, on_change=_on_pick)
    if "source" not in st.session_state:
        _open(st.session_state["picker"], set_picker=False)
    target_keys = list(targets.KNOWN)
    if "target" not in st.session_state:
        st.session_state["target"] = (settings.default_target if settings.default_target in target_keys
                                      else target_keys[0])
    versions = services.triton_versions()
    if len(versions) > 1:      # extra versions set up (README, "Several Triton versions"): side by side,
        t_col, v_col = st.columns([3, 2], gap="small")    # so that Compile stays on the first screen
        t_col.selectbox("Target GPU", target_keys, key="target", format_func=lambda k: targets.parse(k).label)
        if st.session_state.get("triton") not in versions:
            st.session_state["triton"] = engine.triton_version or versions[-1]
        v_col.selectbox("Triton", versions, key="triton",
                        help=f"Which Triton version compiles the kernel, each in its own compile worker; "
                             f"{engine.triton_version} is this server's own.")
    else:
        st.selectbox("Target GPU", target_keys, key="target", format_func=lambda k: targets.parse(k).label)
    # side by side and the rare options folded: Compile stays on the first screen at 1280×720
    w_col, s_col = st.columns(2, gap="small")
    w_col.selectbox("num_warps", WARPS, key="num_warps", help="default: as the launcher says",
                    format_func=lambda v: "default" if v is None else str(v))
    s_col.selectbox("num_stages", STAGE_COUNTS, key="num_stages", help="default: as the launcher says",
                    format_func=lambda v: "default" if v is None else str(v))
    st.text_input("constexpr overrides", key="constexprs", placeholder="BLOCK_SIZE=512, ACTIVATION=relu",
                  help="Replace constexpr values of every launch, e.g. BLOCK_SIZE=512.")
    with st.expander("Signature, time limit", expanded=bool(st.session_state.get("signature"))):
        st.text_input("signature (files without example())", key="signature",
                      placeholder="*fp32:16, *fp32:16, *fp32:16, i32:16, 1024",
                      help="Positional types as in Triton's AOT compiler: ':16' marks divisible by 16 / "
                           "16-byte aligned, a number is a constexpr value. Leave empty to run example().")
        if settings.class_mode:   # the server's limit (the engine holds every job to it)
            st.session_state["timeout"] = int(settings.compile_timeout_s)
        st.number_input("time limit (s)", min_value=5, max_value=600, key="timeout", disabled=settings.class_mode,
                        help="Set by the class server (TLENS_COMPILE_TIMEOUT)" if settings.class_mode else None)
    compile_clicked = st.button("Compile", type="primary", key="compile", width="stretch")

    current_file = _file_of(st.session_state["picker"])
    if current_file and not st.session_state["picker"].startswith(WS):
        st.caption(f"Showing your copy **{current_file}** (workspace); the library kernel is unchanged.")
    with st.expander("Workspace", expanded=bool(current_file and st.session_state.get("ws_message"))):
        files = ws.list()
        st.caption(f"{len(files)} file(s) in `{ws.root}`. Files are saved as you edit and compile.")
        if current_file:
            st.text_input("File name", value=current_file, key=f"ws-name-{current_file}")
            c1, c2, c3 = st.columns(3)
            c1.button("Rename", key="ws-rename", on_click=_rename, args=(current_file,))
            c2.button("Duplicate", key="ws-duplicate", on_click=_duplicate, args=(current_file,))
            c3.button("Delete", key="ws-delete", on_click=_delete, args=(current_file,))
        else:
            st.caption("A library kernel: edit it and your copy is saved here.")
        if files:
            st.table([{"file": f.name, "bytes": f.size,
                       "modified": time.strftime("%m-%d %H:%M", time.localtime(f.modified))} for f in files])
    if st.session_state.get("undo"):
        st.button(f"↶ Undo delete of {st.session_state['undo'][1]}", key="ws-undo", on_click=_undo)
    if kernels.LIBRARY and not st.session_state["picker"].startswith(WS):
        with st.expander("About this kernel", expanded=False):
            st.markdown(kernels.get(st.session_state["picker"]).note)
    viewport = stage_panel.viewport_width()        # how many panels open by default

present.apply()
_arch = targets.parse(st.session_state["target"]).label.split(" · ")[0]          # "sm_90"
present_bar = panels.present_bar(f"**{_filename()}** · {_arch}") if present.on() else None
compile_clicked = compile_clicked or bool(present_bar and present_bar.compile)

# The message's slot is always there: an element that comes and goes above the editor would
# move it, and a moved component is mounted afresh (the editor lost its cursor and scroll when
# the first edit of a library kernel made the workspace copy and said so).
message_slot = st.empty()
message = st.session_state.pop("ws_message", None)
if message:
    getattr(message_slot, message[0])(message[1])

from_editor = code_editor.compile_requested("source")     # Ctrl/Cmd-Enter

# The editor's box: an expander (one line when folded) that presentation mode hides. It folds
# on the first compile of each kernel (by Compile or a link; a first compile by Ctrl-Enter,
# typed in the editor, leaves it open for good) and opens again if that compile fails; after that it
# stays as the user leaves it. The editor itself is drawn into it after the compile below, so
# that it marks the line of this compile's error.
if st.session_state.pop("_editor_reopen", False):
    st.session_state["tlens-editor"] = True
elif (compile_clicked or from_editor or (pending is not None and pending.run)) and \
        st.session_state.get("_editor_folded_for") != st.session_state["picker"]:
    st.session_state["_editor_folded_for"] = st.session_state["picker"]
    if not from_editor:          # Ctrl-Enter: the user is typing there; it stays open from now on
        st.session_state["tlens-editor"] = False
compile_clicked = compile_clicked or from_editor
st.session_state.setdefault("tlens-editor", True)
_editor_box = st.expander(f"✎ Kernel file · {_filename()}", key="tlens-editor", on_change="rerun")
with _editor_box:
    editor_box = st.container()


# ---- compile ----------------------------------------------------------------------------------
def _request() -> CompileRequest | None:
    try:
        constexprs = panels.parse_overrides(st.session_state["constexprs"])
    except ValueError as e:
        st.error(f"constexpr overrides: {e}")
        return None
    return CompileRequest(
        source=st.session_state["source"],
        filename=_filename(),
        target=st.session_state["target"],
        num_warps=st.session_state["num_warps"],
        num_stages=st.session_state["num_stages"],
        constexprs=constexprs,
        signature=st.session_state["signature"].strip() or None,
        max_output_bytes=settings.max_output_bytes,
        sass=False,          # disassembled when a SASS panel is opened (~0.35 s per kernel)
        triton_version=st.session_state.get("triton", "") if len(services.triton_versions()) > 1 else "",
    )


if compile_clicked or (pending is not None and pending.run):
    _save_current()
    st.session_state["compile_request"] = _request()
    if pending is not None and pending.run:      # the link's compile is asked for once: the request
        pending = dataclasses.replace(pending, run=False)     # itself waits in the session (below),
        st.session_state["_url_pending"] = pending             # and a failed one (st.rerun to show the
                                                               # error) must not compile again
# The request waits in the session until its result is stored: a keystroke in the editor starts
# a new run and stops this one at its next st call, and a Compile click is not replayed.
request = st.session_state.get("compile_request")
if request is not None:
    # a spinner, gone when done: the panels take its place (a failure says so below)
    with st.spinner(f"Compiling for {targets.parse(request.target).label}…"):
        try:
            result = services.compile_kernel(request, float(st.session_state["timeout"]))
        except Exception:
            st.session_state.pop("compile_request", None)
            raise

    def _store(request=request, result=result):
        st.session_state["result"] = result
        st.session_state["result_request"] = request
        info = session.record(_file_of(st.session_state["picker"]) or _filename(), request, result)
        st.session_state["current_record"] = info.id if info else None
    services.finish_once("compile_request", request, _store)
    if not result.ok and not result.partial and not st.session_state.get("tlens-editor") and not present.on():
        st.session_state["_editor_reopen"] = True          # show the editor with the error
        st.rerun()

with editor_box:
    failed = st.session_state.get("result")
    error = failed.error if failed is not None and not failed.ok else None
    code_editor.code_editor("source", label="Python: @triton.jit kernels, a launcher and example()",
                            error_line=error.line if error else None,
                            error_message=error.headline() if error else None, height_px=340, on_change=_on_edit)


# ---- results ----------------------------------------------------------------------------------
# an edited library kernel is its workspace copy in the URL: a refresh reopens the edits
copy = _file_of(st.session_state["picker"])
url_state = {"kernel": WS + copy if copy else st.session_state["picker"], "target": st.session_state["target"],
             "num_warps": st.session_state["num_warps"], "num_stages": st.session_state["num_stages"],
             "constexprs": st.session_state["constexprs"].strip(), "signature": st.session_state["signature"].strip()}
result = st.session_state.get("result")
if result is None:
    st.info("Pick a kernel and press **Compile**. Every launch that `example()` makes is compiled "
            "for the chosen GPU exactly as Triton's JIT specializes those arguments.")
elif not result.ok and not result.partial:
    panels.render_error(result.error, st.session_state["source"])
    panels.render_output(result.output)
else:
    if result.partial:       # a later stage failed: what was made is shown, the error in its panel
        panels.render_partial(result)
    if pending is not None and pending.launch is not None and pending.launch < len(result.kernels):
        st.session_state["launch"] = pending.launch
    if present_bar is not None:
        kernel = panels.pick_launch(result.kernels, present_bar.launch, compact=True)
    else:
        multi = len(result.kernels) > 1
        bar = st.columns([2.0, 2.6, 2.4] if multi else [2.6, 2.4], vertical_alignment="bottom")
        kernel = panels.pick_launch(result.kernels, bar[0] if multi else None)
        stage_col, follow_col = bar[-2:]
        card, a1, a2, a3 = st.columns([6.2, 1.15, 0.8, 1.0], vertical_alignment="center", gap="small")
        with card:
            panels.render_launch_card(kernel, result)
        current = st.session_state.get("current_record")
        previous = session.previous_of(current) if current else None
        if a1.button("Compare", icon=":material/compare_arrows:", key="compare-previous", disabled=previous is None,
                     width="stretch", help="Compare with previous: open the Compare page on this compile "
                                           "against the one before it"):
            st.session_state["compare_pick"] = (previous, current)
            st.switch_page("views/diff.py")
        request_now = st.session_state.get("result_request")
        if request_now is not None:
            fname = _filename()
            a2.download_button("Zip", icon=":material/download:", key="export", on_click="ignore", width="stretch",
                               help="Zip: every stage of every launch + a report.md",
                               data=lambda r=request_now, res=result, f=fname: export.bundle(r, res, f),
                               file_name=f"{fname[:-3]}-{kernel.target.replace(':', '_')}.zip",
                               mime="application/zip")
        n_compiles = len(session.session_ids())
        with a3.popover(f"History {n_compiles}", help=f"{n_compiles} compile{'' if n_compiles == 1 else 's'} "
                        "this session", width="stretch"):
            infos = session.all_infos()[-15:]
            st.table([{"when": time.strftime("%H:%M:%S", time.localtime(i.when)), "kernel": i.kernel,
                       "target": i.target, "options": i.options,
                       "launch 1": diff.Figures.from_json(i.figures).short() if i.figures else ""}
                      for i in reversed(infos)])
            st.caption("Pick any two on the Compare page.")

    backend = targets.parse(kernel.target).backend
    failed = kernel.error.stage if kernel.error is not None else None
    available = [s for s in stages.stages_for(backend) if s.name in kernel.stage_names() or s.name == failed]
    # Python, TTGIR and the first machine-level stage (PTX, or AMDGCN for AMD); two (Python and
    # the machine stage, the pair the lessons use) when presenting or on a screen narrower than
    # ~1500 px, where three are ~310 px each; the multiselect adds a third
    machine = next((s.name for s in available if s.name in ("ptx", "amdgcn")), available[-1].name)
    stage_key = f"{'present-' if present_bar else ''}stages-{backend}"
    n_default = stage_panel.panels_for_width(viewport, bool(present_bar))
    default = [n for n in (("source", machine) if n_default == 2 else ("source", "ttgir", machine))
               if n in kernel.stages]
    if failed in [s.name for s in available] and failed not in default:
        default = default[-(n_default - 1):] + [failed]
    auto_key = f"_auto-{stage_key}"          # the default last put there: a width report may change it
    if pending is not None and pending.panels:
        st.session_state[stage_key] = [n for n in pending.panels if n in [s.name for s in available]][
            :2 if present_bar else 3]
        st.session_state.pop(auto_key, None)
    if stage_key not in st.session_state or (st.session_state.get(auto_key) == st.session_state[stage_key]
                                             and default != st.session_state[stage_key]):
        st.session_state[stage_key], st.session_state[auto_key] = list(default), list(default)
    chosen = (present_bar.stages if present_bar else stage_col).multiselect(
        "Stages side by side", [s.name for s in available], key=stage_key, format_func=lambda n: stages.get(n).label,
        max_selections=2 if present_bar else 3, label_visibility="collapsed" if present_bar else "visible")
    filename = _filename()
    insight = services.insight(kernel, chosen, filename)
    smap = insight.source_map
    mapped = sorted(smap.python_to_stage())
    source_lines = kernel.stages["source"].splitlines()
    if pending is not None and pending.line in mapped:
        st.session_state["follow"] = pending.line
    selected_py = (present_bar.follow if present_bar else follow_col).selectbox(
        "Follow a Python line (or click a line)", [None] + mapped, key="follow",
        format_func=lambda n: "—" if n is None else f"{n}: {source_lines[n - 1].strip()[:90]}",
        label_visibility="collapsed" if present_bar else "visible")
    measured = profile_view.saved_profile(filename, kernel.launch)
    heat = None
    if measured is not None and not profile_view.same_source(measured, kernel.stages["source"]):
        st.caption("A saved profile of this launch exists, but the file changed since it was measured: no heat.")
    elif measured is not None and st.toggle("Measured heat", key="heat", help=profile_view.label(measured)):
        heat = profile_view.heat_by_stage(measured, smap, mapped)
        profile_view.render_hottest(measured, kernel.stages["source"], kernel, smap)
    panels.render_panels(kernel, chosen, smap, mapped, "follow", selected_py,
                         result.triton_version if len(services.triton_versions()) > 1 else "", heat)
    if present_bar is not None:
        panels.present_extras(present_bar, insight, source_lines)
    panels.render_insight(insight, kernel, source_lines)
    panels.render_output(result.output)
    url_state.update(panels=chosen, launch=st.session_state.get("launch") if len(result.kernels) > 1 else None,
                     line=selected_py, run=True)
url_state["present"] = present.on()

st.query_params.from_dict(urlstate.encode(url_state))
st.session_state.pop("_url_pending", None)
st.session_state["_kept"] = {k: st.session_state[k] for k in KEPT if k in st.session_state}
