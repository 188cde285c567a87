"""The pass pipeline: compile a kernel with the compiler's dumps on and see the IR after
every MLIR and LLVM pass, which passes changed it, and what each one changed.

Top to bottom: the kernel and target, a summary by IR level, the list of passes, and the
diff between the IR before and after the pass picked.

One run, top to bottom (`pass_pipeline()` at the end of the file): the sidebar (`sidebar`), the
title and the editor's box, the compile (`compile_if_asked`), the editor (`draw_editor`), the
result or why there is none (`compiled`), the launch (`pick_launch`), the summary and the list of
passes (`pass_list`), the pass picked: its diff and its IR (`show_pass`).
"""
from __future__ import annotations


import streamlit as st

from app.backend import services
from app.components import code_editor
from inspectors.read import passes
from inspectors.base import settings as settings_mod
from inspectors.base import targets
from inspectors.base.result import CompileRequest, CompileResult, KernelResult
import kernels

from app.render import diff_html                     # the shared diff view (inspectors/explain/diff.py)
from app.render.text import plain
from inspectors.explain import diff as diff_mod
from inspectors.explain import passdiff

CHANGED_MARK = {True: "changed", False: "–", None: "?"}


def _on_kernel():
    code_editor.set_text("passes_source", kernels.get(st.session_state["passes_kernel"]).source())
    st.session_state.pop("passes_result", None)
    st.session_state.pop("passes_request", None)


@st.cache_data(show_spinner=False, max_entries=32)
def _diff_html(stage: str, before: str, after: str, ignore_noise: bool, a_label: str, b_label: str
               ) -> tuple[str, str]:
    d = diff_mod.diff_stage(stage, before, after, ignore_noise)
    return diff_html.legend_html(d), diff_html.render_diff_html(d, before, after, 3, a_label, b_label)


def sidebar(settings: settings_mod.Settings) -> bool:
    """What to compile: the kernel (its text into the editor), the target, and the button (clicked)."""
    with st.sidebar:
        st.title("Pass pipeline")
        slugs = [k.slug for k in kernels.LIBRARY]
        st.selectbox("Kernel", slugs, key="passes_kernel", format_func=lambda s: kernels.get(s).title,
                     on_change=_on_kernel)
        if "passes_source" not in st.session_state:
            _on_kernel()
        target_keys = list(targets.KNOWN)
        st.selectbox("Target GPU", target_keys, key="passes_target",
                     index=target_keys.index(settings.default_target) if settings.default_target in target_keys
                     else 0, format_func=lambda k: targets.parse(k).label)
        return st.button("Compile with pass dumps", type="primary", key="passes_compile", width="stretch")


def compile_if_asked(run: bool, settings: settings_mod.Settings) -> None:
    """The button or Ctrl/Cmd-Enter: the request kept until its result is (a keystroke in the
    editor starts a new run, which stops this one), compiled with the pass dumps on."""
    if run:
        st.session_state["passes_request"] = CompileRequest(
            source=st.session_state["passes_source"], filename=f"{st.session_state['passes_kernel']}.py",
            target=st.session_state["passes_target"], sass=False, pass_dump=True,
            max_output_bytes=settings.max_output_bytes)
    request = st.session_state.get("passes_request")
    if request is None:
        return
    with st.status("Compiling with the pass dumps on…", expanded=False) as status:
        try:
            result = services.compile_kernel(request, float(settings.compile_timeout_s))
        except Exception:
            st.session_state.pop("passes_request", None)
            raise
        services.finish_once("passes_request", request,
                             lambda: st.session_state.__setitem__("passes_result", result))
        status.update(label="Compiled" if result.ok else "Compile failed", state="complete" if result.ok else "error")


def draw_editor(box) -> None:
    """The editor, drawn after the compile into its box, to mark the line of its error."""
    with box:
        failed = st.session_state.get("passes_result")
        error = failed.error if failed is not None and not failed.ok else None
        code_editor.code_editor("passes_source", label="Kernel file", height_px=260,
                                error_line=error.line if error else None,
                                error_message=error.headline() if error else None)


def compiled() -> CompileResult:
    """The session's result; none yet, or a failed compile, stops the page."""
    result = st.session_state.get("passes_result")
    if result is None:
        st.info("Pick a kernel and press **Compile with pass dumps**.")
        st.stop()
    if not result.ok:
        st.error(plain(result.error.headline()))
        if result.error.detail:
            with st.expander("Details"):
                st.code(result.error.detail, language=None)
        st.stop()
    return result


def pick_launch(result: CompileResult) -> KernelResult:
    launches = result.kernels
    i = st.selectbox("Launch", range(len(launches)), key="passes_launch",
                     format_func=lambda i: f"{i + 1}. {launches[i].label} — " + ", ".join(
                         a.describe() for a in launches[i].args if a.type != "constexpr")[:140]) \
        if len(launches) > 1 else 0
    return launches[min(i, len(launches) - 1)]


def pass_list(steps: list) -> list:
    """The summary by IR level, the filters, the table of passes. The passes shown (none: the page stops)."""
    summary = passes.summarize(steps)
    st.subheader(f"{summary.total} passes: {summary.changed} changed the IR, {summary.unchanged} left it as it was"
                 + (f", {summary.unknown} unknown" if summary.unknown else ""))
    st.caption(" · ".join(f"{passes.LEVELS.get(level, level)}: {n} passes, {c} changed"
                          for level, (n, c) in summary.by_level.items())
               + ". “?”: nothing of the same level to compare with (the first LLVM and machine-IR dumps), or the "
                 "pass's result was not dumped (the last MLIR pass: MLIR prints the IR *before* each pass).")

    c1, c2, c3 = st.columns([2, 3, 3])
    only = c1.toggle("Only passes that changed the IR", value=True, key="passes_only_changed")
    levels = c2.multiselect("IR levels", list(summary.by_level), default=list(summary.by_level), key="passes_levels",
                            format_func=lambda lv: passes.LEVELS.get(lv, lv))
    query = c3.text_input("Search passes", key="passes_query", placeholder="Coalesce, InstCombine, isel…")
    shown = [s for s in steps if s.level in levels and (not only or s.changed is not False)
             and (not query or query.lower() in s.label.lower())]
    st.dataframe([{"#": s.index, "level": passes.LEVELS.get(s.level, s.level), "IR": s.stage, "pass": s.name,
                   "flag": s.flag, "on": s.scope, "changed": CHANGED_MARK[s.changed], "lines after": s.lines or None}
                  for s in shown], hide_index=True, width="stretch", height=320)
    if not shown:
        st.info("No pass matches.")
        st.stop()
    return shown


def show_pass(kernel: KernelResult, steps: list, shown: list) -> None:
    """The pass picked (the first that changed the IR at first): its diff, and its IR to read or download."""
    first_change = next((k for k, s in enumerate(shown) if s.changed and passes.ir_before(steps, s.index)), 0)
    pick = st.selectbox("Pass", [s.index for s in shown], key="passes_pick", index=first_change,
                        format_func=lambda n: f"#{n} {steps[n].label} · {steps[n].stage} · "
                                              f"{CHANGED_MARK[steps[n].changed]}")
    step = steps[pick]
    before, after = passes.ir_before(steps, pick), passes.ir_after(steps, pick)
    st.markdown(f"**#{step.index} {step.label}** on `{step.scope}` ({passes.LEVELS.get(step.level, step.level)}, "
                f"{step.stage})")
    if not after:
        st.info("Its result is not in the dump: MLIR prints the IR before each pass, and after the last MLIR pass "
                "comes the translation to LLVM IR.")
    elif not before:
        st.info("The first dump of this IR level: nothing before it to compare with. Its IR is shown in full below.")
    else:
        noise = st.toggle("Ignore renumbering noise", value=False, key="passes_noise",
                          help="SSA value and register numbers, location aliases, labels do not count as changes.")
        st.html(diff_html.diff_css())
        legend, body = _diff_html(passdiff.stage_of(step.stage), before, after, noise,
                                  f"before #{step.index}", f"after {step.name}")
        if legend:
            st.html(legend)
        st.html(body)
    with st.expander(f"IR after #{step.index} ({after.count(chr(10))} lines)", expanded=not before and bool(after)):
        st.download_button("⬇ Download", after, file_name=f"{kernel.name}.{step.index:03d}.{step.flag or 'pass'}.mlir"
                           if step.level == "mlir" else f"{kernel.name}.{step.index:03d}.ll", key="passes_download")
        st.code(after[:200_000], language=None)


def pass_pipeline() -> None:
    settings = settings_mod.load()
    run = sidebar(settings)
    st.title("Pass pipeline")
    st.caption("The IR after every MLIR pass (TTIR → TTGIR → LLVM dialect) and every LLVM pass (optimizer, codegen "
               "preparation, machine IR), from Triton's own dumps (`MLIR_ENABLE_DUMP=1`, `LLVM_IR_ENABLE_DUMP=1`, "
               "set in the compile worker for this compile only). No GPU needed.")
    editor_box = st.container()         # drawn after the compile, to mark the line of its error
    run = run or code_editor.compile_requested("passes_source")       # Ctrl/Cmd-Enter in the editor
    compile_if_asked(run, settings)
    draw_editor(editor_box)
    result = compiled()
    kernel = pick_launch(result)
    steps = kernel.passes
    if not steps:
        st.warning("The compile printed no pass dumps (this Triton may not honour MLIR_ENABLE_DUMP).")
        st.stop()
    shown = pass_list(steps)
    show_pass(kernel, steps, shown)


pass_pipeline()
