"""The explorer page: compile a Triton kernel without a GPU and see every stage side by side.

Top to bottom: sidebar (kernel, target, options, Compile), the editor, the launches the
example made, two or three stage panels, and what they mean (memory operations,
programs and threads, registers and occupancy).
"""
from __future__ import annotations

import streamlit as st

from app import panels, services
from inspectors import settings as settings_mod, stages, targets
from inspectors.result import CompileRequest
import kernels

settings = settings_mod.load()
engine = services.engine()          # starts the warm worker on first load

MY_KERNEL = "my_kernel"
NEW_KERNEL_TEXT = (kernels.get("vector_add").source())


# ---- sidebar: what to compile and how -------------------------------------------------------
def _library_label(slug: str) -> str:
    return "✎ My kernel" if slug == MY_KERNEL else kernels.get(slug).title


def _on_pick():
    """Switching kernels keeps every draft: each kernel's text lives under its own key."""
    slug = st.session_state["picker"]
    drafts = st.session_state.setdefault("drafts", {})
    drafts[st.session_state.get("editing", slug)] = st.session_state.get("source", "")
    st.session_state["editing"] = slug
    st.session_state["source"] = drafts.get(slug) or (
        NEW_KERNEL_TEXT if slug == MY_KERNEL else kernels.get(slug).source())
    st.session_state.pop("result", None)


with st.sidebar:
    st.title("Triton Lens")
    st.caption("See what the Triton compiler does with a kernel — no GPU needed to compile.")
    slugs = [k.slug for k in kernels.LIBRARY] + [MY_KERNEL]
    st.selectbox("Kernel", slugs, key="picker", format_func=_library_label, on_change=_on_pick)
    if "source" not in st.session_state:
        st.session_state["editing"] = st.session_state["picker"]
        st.session_state["source"] = kernels.get(st.session_state["picker"]).source()
    target_keys = list(targets.KNOWN)
    st.selectbox("Target GPU", target_keys, key="target",
                 index=target_keys.index(settings.default_target) if settings.default_target in target_keys else 0,
                 format_func=lambda k: targets.parse(k).label)
    st.selectbox("num_warps", [None, 1, 2, 4, 8, 16, 32], key="num_warps",
                 format_func=lambda v: "as the launcher says" if v is None else str(v))
    st.selectbox("num_stages", [None, 1, 2, 3, 4, 5], key="num_stages",
                 format_func=lambda v: "as the launcher says" if v is None else str(v))
    st.text_input("constexpr overrides", key="constexprs", placeholder="BLOCK_SIZE=512, ACTIVATION=relu",
                  help="Replace constexpr values of every launch, e.g. BLOCK_SIZE=512.")
    st.text_input("signature (files without example())", key="signature",
                  placeholder="*fp32:16, *fp32:16, *fp32:16, i32:16, 1024",
                  help="Positional types as in Triton's AOT compiler: ':16' marks divisible by 16 / "
                       "16-byte aligned, a number is a constexpr value. Leave empty to run example().")
    st.number_input("time limit (s)", min_value=5, max_value=600, value=int(settings.compile_timeout_s),
                    key="timeout")
    compile_clicked = st.button("Compile", type="primary", key="compile", width="stretch")
    if kernels.LIBRARY and st.session_state["picker"] != MY_KERNEL:
        with st.expander("About this kernel", expanded=False):
            st.markdown(kernels.get(st.session_state["picker"]).note)


# ---- editor -----------------------------------------------------------------------------------
st.text_area("Kernel file (Python: @triton.jit kernels, a launcher and example())", key="source", height=300)


# ---- compile ----------------------------------------------------------------------------------
def _request() -> CompileRequest | None:
    try:
        constexprs = panels.parse_overrides(st.session_state["constexprs"])
    except ValueError as e:
        st.error(f"constexpr overrides: {e}")
        return None
    slug = st.session_state["picker"]
    return CompileRequest(
        source=st.session_state["source"],
        filename=f"{slug}.py",
        target=st.session_state["target"],
        num_warps=st.session_state["num_warps"],
        num_stages=st.session_state["num_stages"],
        constexprs=constexprs,
        signature=st.session_state["signature"].strip() or None,
        max_output_bytes=settings.max_output_bytes,
        sass=False,          # disassembled when a SASS panel is opened (~0.35 s per kernel)
    )


if compile_clicked:
    request = _request()
    if request is not None:
        with st.status(f"Compiling for {targets.parse(request.target).label}…", expanded=False) as status:
            result = services.compile_kernel(request, float(st.session_state["timeout"]))
            status.update(label="Compiled" if result.ok else "Compile failed",
                          state="complete" if result.ok else "error")
        st.session_state["result"] = result


# ---- results ----------------------------------------------------------------------------------
result = st.session_state.get("result")
if result is None:
    st.info("Pick a kernel and press **Compile**. Every launch that `example()` makes is compiled "
            "for the chosen GPU exactly as Triton's JIT specializes those arguments.")
elif not result.ok:
    panels.render_error(result.error, st.session_state["source"])
    panels.render_output(result.output)
else:
    kernel = panels.pick_launch(result.kernels)
    panels.render_launch_card(kernel, result)
    backend = targets.parse(kernel.target).backend
    available = [s for s in stages.stages_for(backend) if s.name in kernel.stage_names()]
    # Python, TTGIR and the first machine-level stage (PTX, or AMDGCN for AMD)
    machine = next((s.name for s in available if s.name in ("ptx", "amdgcn")), available[-1].name)
    default = [n for n in ("source", "ttgir", machine) if n in kernel.stages]
    chosen = st.multiselect("Stages side by side", [s.name for s in available], default=default,
                            key=f"stages-{backend}",
                            format_func=lambda n: stages.get(n).label, max_selections=3)
    filename = f"{st.session_state['picker']}.py"
    insight = services.insight(kernel, chosen, filename)
    smap = insight.source_map
    mapped = sorted(smap.python_to_stage())
    source_lines = kernel.stages["source"].splitlines()
    selected_py = st.selectbox(
        "Follow a Python line (or click any line in a panel)", [None] + mapped, key="follow",
        format_func=lambda n: "—" if n is None else f"{n}: {source_lines[n - 1].strip()[:90]}")
    for column, name in zip(st.columns(max(len(chosen), 1)), chosen):
        with column:
            py_lines = ({n: n for n in mapped} if name == "source"
                        else dict(smap.stages[name].to_python) if name in smap.stages else {})
            panels.render_stage_panel(stages.get(name), kernel, py_lines, selected_py)
    panels.render_insight(insight, kernel, source_lines)
    panels.render_output(result.output)
