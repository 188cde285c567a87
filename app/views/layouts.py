"""The Layouts page: every layout in a kernel's TTGIR, in words and as a picture of the block.

Top to bottom: what to compile (a library kernel, a target, num_warps), the launch, the
layouts the TTGIR uses (parameters in words, the tensors that carry them, conversions and
shared-memory buffers), then for a chosen layout and tensor shape: which warp, lane and
register own each element, and program → warps → threads → registers → elements as a graph.
Mappings come from inspectors.explain.layout_view (Triton's linear-layout algebra in pure Python,
checked against Triton's own in tests/unit/test_layouts_view.py).

One run, top to bottom (`kernel_layouts()` at the end of the file): the title, what to compile
(`what_to_compile`) and the compile (`compile_kernel`, stopping on an error), the launch
(`pick_launch`), one layout as a picture and a graph (`who_owns`), conversions and shared
buffers (`conversions`), every layout in words (`in_words`), shared layouts' banks (`shared_banks`).
"""
from __future__ import annotations

import streamlit as st

from app.backend import services
from app.render import classroom
from app.render.text import plain
from inspectors.explain import layout_view
from inspectors.read import layouts
from inspectors.base import settings as settings_mod
from inspectors.base import targets
from inspectors.base.result import CompileRequest, CompileResult, KernelResult
import kernels

ENTRIES = {k.slug: k for k in (*kernels.LIBRARY, *kernels.LESSON_KERNELS)}
EXPLORER = "explorer"     # the Explorer page's last compile, when there is one


def what_to_compile() -> None:
    """Kernel (the link's, at first), target and num_warps."""
    params = st.query_params
    if "lay_kernel" not in st.session_state:
        st.session_state["lay_kernel"] = params.get("kernel") if params.get("kernel") in ENTRIES else "matmul"
        st.session_state["lay_target"] = params.get("target") if params.get("target") in targets.KNOWN else "cuda:80"
    choices = list(ENTRIES) + ([EXPLORER] if st.session_state.get("result") is not None else [])
    c1, c2, c3 = st.columns([3, 2, 1])
    c1.selectbox("Kernel", choices, key="lay_kernel",
                 format_func=lambda s: "The Explorer's last compile" if s == EXPLORER else ENTRIES[s].title)
    c2.selectbox("Target", list(targets.KNOWN), key="lay_target", format_func=lambda k: targets.parse(k).label)
    c3.selectbox("num_warps", [None, 1, 2, 4, 8, 16], key="lay_warps",
                 format_func=lambda v: "launcher's" if v is None else str(v))


def compile_kernel(settings: settings_mod.Settings) -> tuple[CompileResult, str]:
    """The kernel picked compiled (or the Explorer's last result). (The result, its file name.)
    A failed compile stops the page."""
    slug = st.session_state["lay_kernel"]
    if slug == EXPLORER:
        result = st.session_state["result"]
        filename = "kernel.py"
    else:
        entry = ENTRIES[slug]
        filename = entry.filename
        with st.spinner(f"Compiling {entry.filename} for {targets.parse(st.session_state['lay_target']).label}…"):
            result = services.compile_kernel(CompileRequest(
                source=entry.source(), filename=entry.filename, target=st.session_state["lay_target"],
                num_warps=st.session_state["lay_warps"], sass=False, max_output_bytes=settings.max_output_bytes),
                float(settings.compile_timeout_s))
    if not result.ok:
        st.error(plain(result.error.headline()))
        st.stop()
    return result, filename


def pick_launch(result: CompileResult) -> KernelResult:
    kernels_ = result.kernels
    labels = [f"{i + 1}. {k.label}" for i, k in enumerate(result.headers)]
    i = st.selectbox("Launch", range(len(kernels_)), format_func=lambda i: labels[i], key="lay_launch") \
        if len(kernels_) > 1 else 0
    return kernels_[min(i, len(kernels_) - 1)]


def who_owns(found, result: CompileResult, kernel: KernelResult) -> None:
    """One layout and tensor shape as a picture: which warp, lane and register own each element,
    one lane outlined; then program → warps → threads → registers → elements as a graph."""
    drawable = sorted((u for u in found.uses if u.drawable), key=lambda u: isinstance(u.layout, layout_view.Slice))
    if not drawable:
        return
    st.subheader("Who owns each element")
    names = [u.name for u in drawable]
    if st.session_state.get("lay_layout") not in names:
        st.session_state["lay_layout"] = names[0]
    a, b, c, d = st.columns([3, 2, 1, 1])
    a.selectbox("Layout", names, key="lay_layout")
    use = drawable[names.index(st.session_state["lay_layout"])]
    shape_labels = ["×".join(map(str, s)) for s in use.shapes]
    if st.session_state.get("lay_shape") not in shape_labels:
        st.session_state["lay_shape"] = shape_labels[0]
    b.selectbox("Tensor shape", shape_labels, key="lay_shape")
    shape = use.shapes[shape_labels.index(st.session_state["lay_shape"])]
    try:
        own = layout_view.ownership(use.layout, shape, result.triton_version or None)   # as that version lays it out
    except ValueError as e:
        st.info(str(e))
        return
    ll = own.layout
    warp = c.number_input("Warp", 0, max(ll.num_warps - 1, 0), 0, key="lay_warp")
    lane = d.number_input("Lane", 0, ll.warp_size - 1, 1, key="lay_lane")
    grid, note = classroom.ownership_html(own, highlight=(int(warp), int(lane)))
    st.html(classroom.legend_html(ll.num_warps))
    st.html(grid)
    elems = ll.thread_elements(int(warp), int(lane))
    st.caption(f"{note} Outlined: lane {lane} of warp {warp} (tid.x = {int(warp) * ll.warp_size + int(lane)}), "
               f"which holds, register by register: {layout_view._cells(elems, 16)}.")

    st.markdown("**Program → warps → threads → registers → elements**")
    g1, g2 = st.columns(2)
    warps = g1.multiselect("Warps to unfold", list(range(ll.num_warps)), default=[0], key="lay_graph_warps")
    lanes = g2.multiselect("Lanes to unfold", list(range(ll.warp_size)), default=[0, 1], key="lay_graph_lanes")
    st.graphviz_chart(classroom.layout_graph(ll, tuple(warps), tuple(lanes), title=kernel.name))


def conversions(found, insight) -> None:
    """Each layout conversion (through shared memory or not, as the PTX says) and shared buffer."""
    ptx_shared = [m for m in insight.memory_ops if m.space == "shared"]
    ttgir_lines = insight.source_map.stages.get("ttgir")
    if found.conversions:
        st.subheader("Layout conversions")
        for conv in found.conversions:
            py = ttgir_lines.to_python.get(conv.line) if ttgir_lines else None
            here = [m for m in ptx_shared if py is not None and m.python_line == py]
            via = (f"goes through **shared memory**: {sum(m.kind == 'store' for m in here)} shared stores and "
                   f"{sum(m.kind == 'load' for m in here)} shared loads in the PTX come from the same Python line"
                   if here else "needs no shared memory in the PTX (registers or warp shuffles)")
            st.markdown(f"- TTGIR line {conv.line}{f' (Python line {py})' if py else ''}: "
                        f"`{'×'.join(map(str, conv.shape))}` tensor from `{conv.source}` to `{conv.target}` — {via}.")
    for line, enc in found.shared_allocs:
        st.markdown(f"- TTGIR line {line}: `ttg.local_alloc` of a shared buffer with layout `{enc}`.")


def in_words(found, result: CompileResult, kernel: KernelResult) -> None:
    """Every layout of the kernel: its TTGIR text, who uses it, and its parameters in words."""
    st.subheader(f"The {len(found.uses)} layouts of {kernel.name}, in words")
    for n, use in enumerate(found.uses):
        with st.expander(f"{use.name} — {type(use.layout).__name__.lower()}, "
                         f"{'×'.join(map(str, use.shapes[0]))}", expanded=n < 2):
            kind = "shared memory" if use.shared else "registers (distributed)"
            st.markdown(f"**`{use.name}`** — {kind}; used by "
                        f"{', '.join(f'`{o}`' for o in use.ops[:6]) or 'types only'}; "
                        f"shapes {', '.join('×'.join(map(str, s)) for s in use.shapes[:4])}")
            st.code(use.text, language=None)
            shape = use.shapes[0]
            if use.drawable:
                elem_bits = layouts.ELEMENT_BITS.get(layouts.TensorType(shape, use.elements[0], None).pointee, 32)
                st.markdown("\n".join(f"- {s}" for s in layout_view.words(use.layout, shape, elem_bits,
                                                                          result.triton_version or None)))
            else:
                st.markdown(f"- {use.layout.describe()}")


def shared_banks(found) -> None:
    """Each swizzled shared layout: the bank every element of a tile lands in."""
    for use in (u for u in found.uses if isinstance(u.layout, layout_view.SwizzledShared)):
        rows, cols = (use.shapes[0] + (1,))[:2] if len(use.shapes[0]) == 1 else use.shapes[0][-2:]
        elem_bytes = layouts.ELEMENT_BITS.get(use.elements[0], 16) // 8
        with st.expander(f"Shared layout {use.name}: banks of a {rows}×{cols} tile", expanded=False):
            st.caption("Each cell is the 4-byte shared-memory bank (0–31) an element lands in. Unswizzled, a "
                       "column would sit in one bank; the XOR swizzle spreads it.")
            st.html(classroom.swizzle_html(use.layout, rows, cols, elem_bytes))


def kernel_layouts() -> None:
    settings = settings_mod.load()
    st.html(classroom.CSS)
    st.title("Layouts")
    st.caption("How Triton spreads a tensor over the warps, lanes and registers of a program — "
               "read from the compiled TTGIR, drawn with Triton's linear-layout rules.")
    what_to_compile()
    result, filename = compile_kernel(settings)
    kernel = pick_launch(result)
    found = layout_view.module_layouts(kernel.stages.get("ttgir", ""))
    insight = services.insight(kernel, filename)
    st.caption(f"**{kernel.name}** · {kernel.target} · num_warps = {kernel.options.get('num_warps')} · "
               f"{found.warp_size} threads per warp · {len(found.uses)} layouts · shared memory "
               f"{kernel.metadata.get('shared', 0)} B")
    who_owns(found, result, kernel)
    conversions(found, insight)
    in_words(found, result, kernel)
    shared_banks(found)


kernel_layouts()
