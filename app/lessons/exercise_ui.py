"""Exercise mode: the student edits a kernel toward the step's goal and presses Check; the
kernel is compiled in the worker (never run here) and the goal is checked against the
compiled PTX and resources (inspectors.explain.exercise), not against the source text."""
from __future__ import annotations

import hashlib

import streamlit as st

from app.backend import services
from app.components import code_editor
from app.render.text import plain
from app.lessons.common import Ctx, StepFailed, kernel_file, settings
from inspectors.base.result import CompileRequest
from inspectors.explain import exercise, step
from inspectors.read.lessonfile import Exercise


def _key(ctx: Ctx, what: str) -> str:
    return f"ex_{what}_{ctx.lesson.slug}_{ctx.lesson.steps.index(ctx.step) + 1}"


def draw(ctx: Ctx, ex: Exercise) -> None:
    try:
        filename, starter = kernel_file(ctx.lesson, ex.starter)
    except StepFailed as e:
        st.error(str(e))
        return
    src_key, result_key = _key(ctx, "src"), _key(ctx, "result")
    if src_key not in st.session_state:
        code_editor.set_text(src_key, starter)
    st.markdown(f"#### Exercise: {ex.goal}")
    st.caption("Checked from the compiled kernel for " + ex.target.replace("cuda:", "sm_") + ": "
               + "; ".join(c.describe() for c in ex.checks) + (f". Hint: {ex.hint}" if ex.hint else ""))
    editor_box = st.container()         # drawn after the check, so that it marks the line of its error
    check_col, reset_col, _ = st.columns([1, 1, 4])
    if (check_col.button("Check", key=_key(ctx, "check"), type="primary", width="stretch")
            or code_editor.compile_requested(src_key)):                       # Ctrl/Cmd-Enter in the editor
        st.session_state[result_key] = _check(filename, st.session_state[src_key], ex)
    reset_col.button("Start over", key=_key(ctx, "reset"), width="stretch", on_click=_reset,
                     args=(src_key, result_key, starter))
    shown = st.session_state.get(result_key)
    failed = shown if shown and "error" in shown else {}
    with editor_box:
        code_editor.code_editor(src_key, label=f"{filename} — edit it, then press Check", height_px=360,
                                wrap=True, action="check",                  # large type on a projector
                                error_line=failed.get("line"), error_message=failed.get("error"))
    if shown:
        _draw_result(shown, st.session_state[src_key])


def _reset(src_key: str, result_key: str, starter: str) -> None:
    """A callback: it runs before the page is drawn."""
    st.session_state.pop(result_key, None)
    code_editor.set_text(src_key, starter)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _check(filename: str, source: str, ex: Exercise) -> dict:
    with st.spinner(f"Compiling your {filename} for {ex.target}…"):
        result = services.compile_kernel(CompileRequest(source=source, filename=filename, target=ex.target, sass=False),
                                         float(settings.compile_timeout_s))
    if not result.ok:
        return {"digest": _digest(source), "error": result.error.headline(), "detail": result.error.detail,
                "line": result.error.line}
    values = exercise.metrics(result.kernels, ex.function, result.outside)
    if not values and not result.kernels:      # a compiled graph left whole to cuBLAS or attention kernels
        return {"digest": _digest(source), "error": "no Triton kernel was compiled: torch.compile's graphs call only "
                f"{step.outside_ops(result.outside)}, outside Triton"}
    if not values:
        return {"digest": _digest(source), "error": f"no kernel named {ex.function!r} was compiled "
                                                     f"(found: {', '.join(sorted({k.name for k in result.headers}))})"}
    verdict = exercise.check(ex.checks, values)
    return {"digest": _digest(source), "passed": verdict.passed,
            "rows": [(r.passed, r.describe()) for r in verdict.results],
            "kernels": sorted({k.name for k in result.headers})}


def _draw_result(shown: dict, source: str) -> None:
    stale = shown["digest"] != _digest(source)
    if stale:
        st.caption("The result below is for the code as it was when you pressed Check.")
    if "error" in shown:
        st.error(f"Your kernel did not compile: {plain(shown['error'])}")
        if shown.get("detail"):
            with st.expander("Details"):
                st.code(shown["detail"][-4000:], language=None)
        return
    lines = "\n".join(f"- **{'met' if ok else 'not met'}** · {text}" for ok, text in shown["rows"])
    kernels = ", ".join(f"`{k}`" for k in shown["kernels"])
    if shown["passed"]:
        st.success(f"**Goal reached.** Compiled {kernels}:\n\n{lines}")
    else:
        st.warning(f"**Not yet.** Compiled {kernels}:\n\n{lines}")
