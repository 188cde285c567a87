"""Streamlit pieces of the page. `render_stage_panel` serves every stage."""
from __future__ import annotations

import hashlib

import streamlit as st

from app import render, services
from inspectors.errors import CompileError
from inspectors.result import CompileResult, KernelResult
from inspectors.stages import Stage


def inject_css() -> None:
    st.html(render.page_css())


def parse_overrides(text: str) -> dict:
    """`"BLOCK_SIZE=512, ACTIVATION=relu"` -> {"BLOCK_SIZE": 512, "ACTIVATION": "relu"}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip().isidentifier():
            raise ValueError(f"write NAME=VALUE, got {part!r}")
        value = value.strip()
        try:
            out[name.strip()] = int(value)
        except ValueError:
            try:
                out[name.strip()] = float(value)
            except ValueError:
                out[name.strip()] = {"True": True, "False": False}.get(value, value.strip("'\""))
    return out


@st.cache_data(show_spinner=False, max_entries=256)
def _panel_html(stage_name: str, text: str, query: str, only_hits: bool, error_line: int | None) -> tuple[str, str]:
    classes = render.line_classes(stage_name, text, query, error_line)
    summary = render.summarize(stage_name, text, classes)
    return (render.render_stage_html(stage_name, text, query, only_hits, error_line),
            render.legend_html(summary) + f'<span class="tlens-chip">{summary.lines} lines</span>')


def render_stage_panel(stage: Stage, kernel: KernelResult) -> None:
    text = services.stage_text(kernel, stage.name)
    key = f"{stage.name}-{kernel.launch}"
    head, dl = st.columns([3, 1])
    head.markdown(f"**{stage.label}**")
    dl.download_button("⬇", text, file_name=f"{kernel.name}.{stage.ext}", key=f"dl-{key}",
                       help=f"Download {stage.label}")
    q1, q2 = st.columns([3, 1])
    query = q1.text_input("Search", key=f"q-{key}", placeholder=f"search {stage.label}",
                          label_visibility="collapsed")
    only = q2.checkbox("only", key=f"only-{key}", help="Show only matching lines")
    body, legend = _panel_html(stage.name, text, query, only, None)
    st.html(legend)
    st.html(body)


def pick_launch(kernels: tuple[KernelResult, ...]) -> KernelResult:
    if len(kernels) == 1:
        return kernels[0]
    labels = [f"{i + 1}. {k.label} — " + ", ".join(a.describe() for a in k.args if a.type != "constexpr"
                                                 or a.value is not None)[:160] for i, k in enumerate(kernels)]
    i = st.selectbox(f"{len(kernels)} compiled launches (each specialization the JIT would build)",
                     range(len(kernels)), format_func=lambda i: labels[i], key="launch")
    return kernels[min(i, len(kernels) - 1)]


def render_launch_card(kernel: KernelResult, result: CompileResult) -> None:
    opts = kernel.options
    md = kernel.metadata
    took = (f"compiled in {kernel.compile_seconds:.2f} s" if kernel.compile_seconds >= 0.05
            else "from Triton's cache")
    st.markdown(
        f"**{kernel.name}** for `{kernel.target}` · num_warps={opts.get('num_warps')} · "
        f"num_stages={opts.get('num_stages')} · shared memory {md.get('shared', 0)} B · "
        f"{took} · Triton {result.triton_version}")
    st.caption("Specialization: " + " · ".join(a.describe() for a in kernel.args))


def render_error(error: CompileError, source: str) -> None:
    st.error(error.headline())
    if error.line:
        st.html(render.render_stage_html("source", source, error_line=error.line, max_height=220, context=3))
    if error.detail:
        with st.expander("Details (traceback / compiler log)"):
            st.code(error.detail, language=None)


def render_output(output: str) -> None:
    if output.strip():
        with st.expander("Program output (stdout/stderr of example() and the compiler)"):
            st.code(output, language=None)
