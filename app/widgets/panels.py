"""Streamlit pieces of the page. `render_stage_panel` serves every stage."""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Callable

import streamlit as st

from app.backend import services
from app.render import stage_html
from app.widgets import present, tables
from app.state import keys
from app.components.stage_panel import page_state, payload, stage_panel
from app.render.text import plain
from inspectors.base import stages
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileResult, KernelResult
from inspectors.base.stages import Stage
from inspectors.read import callsites, line_twin
from inspectors.read.sass import SassError


def inject_css() -> None:
    st.html(stage_html.page_css())


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


@functools.lru_cache(maxsize=256)
def _panel_payload(stage_name: str, text: str, filename: str, py_key: str, label: str | None = None,
                   heat_key: str = "", kernel_name: str = "", marks_key: str = "", regs_key: str = "") -> bytes:
    """The bytes a panel is sent (app/components/stage_panel/payload.py), once per text.
    Room for a class's kernels: 300 students on 80 kernel/target/warps choices open ~240
    panels, and with 48 entries they were tokenized again and again (the busiest app code
    in the class's profile, benchmarks/results/class_profile.txt). functools' cache, not
    st.cache_data: that one hashed every argument's text (a SASS panel's megabytes) with md5,
    read the function's signature and unpickled a copy on every run of every page."""
    py_lines, calls = {}, {}
    for pair in filter(None, py_key.split(",")):
        n, p, *sites = pair.split(":")
        py_lines[int(n)] = int(p)
        if sites:
            calls[int(n)] = tuple(int(c) for c in sites[0].split("."))
    heat = {int(n): float(h) for n, h in (pair.split(":") for pair in filter(None, heat_key.split(",")))}
    marks = {int(n): t for n, t in (pair.split(":", 1) for pair in filter(None, marks_key.split("\x00")))}
    regs = {int(n): int(r) for n, r in (pair.split(":") for pair in filter(None, regs_key.split(",")))}
    return payload.encode(payload.build(stage_name, text, filename, py_lines, label, calls=calls, heat=heat,
                                        kernel_name=kernel_name or None, marks=marks, regs=regs))


def short_path(path: str) -> str:
    """`…/site-packages/liger_kernel/ops/rms_norm.py` -> `liger_kernel/ops/rms_norm.py`; another
    path keeps its last three parts."""
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return "/".join(path.split("/")[-3:])


def render_stage_panel(stage: Stage, kernel: KernelResult, py_lines: dict[int, int] | None = None,
                       on_follow: Callable[[int], None] | None = None, triton_version: str = "",
                       calls: dict[int, tuple] | None = None, heat: dict[int, float] | None = None,
                       marks: dict[int, str] | None = None, regs: dict[int, int] | None = None) -> None:
    """One panel, any stage: title, legend, search, wrap, type size, download and the
    highlighted lines, drawn in the browser; it opens at the launched function and its first
    global load (`payload.opening`), or at the followed line. `py_lines` (stage line -> Python line) makes
    lines clickable to follow them; `on_follow(python_line)` hears of the click. A stage that
    failed shows its error instead. `triton_version`: named in the title ("PTX · Triton 3.6.0")
    when the server has more than one. `calls` (stage line -> the kernel lines that called its
    helper, innermost call first): following a call site lights what the call made. `heat`
    (stage line -> share of a measured profile's samples) draws the heat bars."""
    try:
        text = services.stage_text(kernel, stage.name)
    except (KeyError, SassError) as e:
        error = kernel.error if kernel.error is not None and kernel.error.stage == stage.name else None
        if isinstance(e, SassError):
            error = CompileError("compile", e.message, stage="sass", command=e.command)
        if error is None:
            raise
        render_failed_stage(stage, error, kernel)
        return
    calls = calls or {}
    py_key = ",".join(f"{n}:{p}" + (":" + ".".join(map(str, calls[n])) if calls.get(n) else "")
                      for n, p in sorted((py_lines or {}).items()))
    heat_key = ",".join(f"{n}:{h:.5f}" for n, h in sorted((heat or {}).items()))
    marks_key = "\x00".join(f"{n}:{t.replace(chr(0), ' ')}" for n, t in sorted((marks or {}).items()))
    regs_key = ",".join(f"{n}:{r}" for n, r in sorted((regs or {}).items()))
    label = f"{stage.label} · Triton {triton_version}" if triton_version else None
    if stage.name == "source" and kernel.source_path:      # written in a library or a module beside the file
        label = f"{label or stage.label} · {short_path(kernel.source_path)}"
    blob = _panel_payload(stage.name, text, f"{kernel.name}.{stage.ext}", py_key, label, heat_key, kernel.name,
                          marks_key, regs_key)
    stage_panel(blob, key=f"panel-{stage.name}-{kernel.launch}", on_follow=on_follow)


def render_panels(kernel: KernelResult, chosen: list[str], smap, mapped: list[int], follow_key: str,
                  selected_py: int | None, triton_version: str = "",
                  heat: dict[str, dict[int, float]] | None = None, marks: dict[int, str] | None = None,
                  regs: dict[int, int] | None = None) -> None:
    """The chosen stages side by side. A click on a line follows its Python line in every
    panel at once (in the browser) and then sets the `follow_key` selectbox. `heat`: per
    stage, line -> share of a measured profile's samples (app/widgets/profile_view.py)."""
    def follow(py: int) -> None:
        if py in mapped:
            st.session_state[follow_key] = py

    page_state(selected_py, present.on())
    for column, name in zip(st.columns(max(len(chosen), 1), gap="small"), chosen):
        with column:
            sl = smap.stages.get(name) if name != "source" else None
            py_lines = {n: n for n in mapped} if name == "source" else dict(sl.to_python) if sl else {}
            calls = {n: sl.call_sites(n) for n in sl.calls} if sl else {}
            render_stage_panel(stages.get(name), kernel, py_lines, follow, triton_version, calls,
                               (heat or {}).get(name), marks if name == "source" else None,
                               regs if name == "source" else None)


def render_failed_stage(stage: Stage, error: CompileError, kernel: KernelResult) -> None:
    """The panel of a stage that failed: its error, and the command that reproduces it."""
    st.markdown(f"**{stage.label}** — not made")
    st.error(plain(error.message))
    if error.command:
        st.caption("Reproduce it in a shell (the input file it names is kept; the stages before "
                   "this one are downloadable from their panels):")
        st.code(error.command, language="bash")
    if error.detail:
        with st.expander("Compiler log"):
            st.code(error.detail[-6000:], language=None)


def render_partial(result: CompileResult) -> None:
    """Above the panels when a later stage failed in some launch, or example() raised after
    making the launches shown."""
    failed = [k for k in result.headers if k.error is not None]
    if not failed:
        st.warning(plain(result.error.headline()))
        if result.error.detail:
            with st.expander("Details (traceback)"):
                st.code(result.error.detail, language=None)
        return
    where = ", ".join(f"launch {k.launch + 1} ({k.error.stage})" for k in failed)
    st.warning(f"{len(failed)} of {len(result.kernels)} launch(es) stopped at a later stage: {where}. The stages "
               "made before it are shown and downloadable; the failing stage's panel holds the error"
               + (" and the command that reproduces it." if any(k.error.command for k in failed) else "."))
    if any(k.error.stage == "sass" and "ptxas crashed" in k.error.message for k in failed):
        st.caption("Known: the CUDA 12.8/12.9 ptxas that Triton 3.6-3.8 run for sm_90 crashes on some large "
                   "kernels that CUDA 13's ptxas compiles (Triton 3.9 runs CUDA 13.4's for sm_90 and up). "
                   "TRITON_PTXAS_PATH=<a CUDA 13 ptxas> or DISABLE_PTXAS_OPT=1 gets past it "
                   "(benchmarks/results/ptxas_crash.txt).")


def present_bar(title: str) -> SimpleNamespace:
    """Presentation mode's one line: what is shown, Compile, launch, stages, followed line,
    memory operations and threads (one click each), and the way out. Returns its slots;
    `compile` is whether Compile was pressed."""
    cols = st.columns([1.6, 1.0, 1.8, 2.1, 2.0, 1.3, 1.3, 0.9], vertical_alignment="center", gap="small")
    cols[0].markdown(title)
    clicked = cols[1].button("Compile", key="compile-present", type="primary", width="stretch")
    cols[7].button("✕ Exit", key="present-exit", on_click=present.set_on, args=(False,), width="stretch",
                   help="Leave presentation mode: the sidebar and the editor come back")
    return SimpleNamespace(compile=clicked, launch=cols[2], stages=cols[3], follow=cols[4],
                           memory=cols[5], threads=cols[6])


def present_extras(bar: SimpleNamespace, insight, source_lines: list[str]) -> None:
    """The memory-operation table and the thread mapping, one click away from the panels."""
    with bar.memory.popover("Memory", icon=":material/memory:", width="stretch",
                            help="The memory operations of this launch, line by line"):
        _memory_table(insight, source_lines, html_table=True)
    with bar.threads.popover("Threads", icon=":material/grid_view:", width="stretch",
                             help="Programs and threads: which elements each one handles, and every address"):
        _thread_map(insight, source_lines, html_table=True)


def pick_launch(kernels: tuple[KernelResult, ...], where=None, compact: bool = False) -> KernelResult:
    if len(kernels) == 1:
        return kernels[0]
    heads = getattr(kernels, "headers", kernels)      # a stored result's: no launch read to list them
    labels = [f"{i + 1}. {k.label}{' (stopped at ' + k.error.stage + ')' if k.error else ''} — " + ", ".join(a.describe() for a in k.args if a.type != "constexpr"
                                                 or a.value is not None)[:160] for i, k in enumerate(heads)]
    i = (where or st).selectbox(f"Launch ({len(kernels)} specializations)", range(len(kernels)),
                                format_func=lambda i: labels[i], key="launch",
                                help="Each specialization the JIT would build for the launches example() makes",
                                label_visibility="collapsed" if compact else "visible")
    return kernels[min(i, len(kernels) - 1)]


def render_launch_card(kernel: KernelResult, result: CompileResult) -> None:
    """One line under the bar: what was compiled and how; how each argument was specialized
    is in its tooltip (and in the launch picker)."""
    opts = kernel.options
    md = kernel.metadata
    took = (f"compiled in {kernel.compile_seconds:.2f} s" if kernel.compile_seconds >= 0.05
            else "from Triton's cache")
    st.caption(
        f"**{kernel.name}** for `{kernel.target}` · num_warps={opts.get('num_warps')} · "
        f"num_stages={opts.get('num_stages')} · shared memory {md.get('shared', 0)} B · "
        f"{took} · Triton {result.triton_version}",
        help="Specialization: " + " · ".join(a.describe() for a in kernel.args) + timing_note(result))
    if kernel.line_twin:          # its library turned line info off: how its lines are mapped, or why not
        st.caption(f":material/link: {line_twin.note(kernel.line_twin)}")


def timing_note(result: CompileResult) -> str:
    """Where the compile's time went, for the launch card's tooltip: the page's run up to the
    compile (this click's), then the result's own CompileResult.timings (or that it came from
    the result cache, made by an earlier compile)."""
    t = result.timings
    if not t:
        return ""
    last = st.session_state.get(keys.LAST_COMPILE) or {}
    mine = last.get("key") == result.key and result.key
    parts = [f"page {last['page_s']:.2f} s"] if mine else []
    parts += [f"{label} {t[k]:.2f} s" for k, label in (("queue_s", "queue"), ("start_s", "worker start"),
                                                        ("compile_s", "compile"), ("analysis_s", "analysis"),
                                                        ("cpu_s", "CPU"), ("job_cpu_s", "CPU with its sandbox"))
              if k in t]
    cached = " (from the result cache: the compile that made it)" if mine and last.get("hit") else ""
    return "\n\nThis compile" + cached + ": " + " · ".join(parts) + "."


def render_error(error: CompileError, source: str) -> None:
    st.error(plain(error.headline()))
    if error.line:
        st.html(stage_html.render_stage_html("source", source, error_line=error.line, max_height=220, context=3))
    if error.detail:
        with st.expander("Details (traceback / compiler log)"):
            st.code(error.detail, language=None)


def render_output(output: str) -> None:
    if output.strip():
        with st.expander("Program output (stdout/stderr of example() and the compiler)"):
            st.code(output, language=None)


INSIGHTS = ("Why", "Memory operations", "Programs & threads", "Registers & occupancy", "Stage summary")


def render_insight(insight, kernel: KernelResult, source_lines: list[str], follow_key: str | None = None,
                   mapped: list[int] | None = None) -> None:
    """Below the panels: why (remarks by line), memory operations, programs and threads,
    registers and occupancy, stage counts. `follow_key`: the followed-line selectbox, set when a
    remark's row is clicked.

    One section at a time, picked on a bar (keys.INSIGHT): only it is drawn. All five drawn on
    every run, as tabs, were a large part of a Compile's messages and of the server's CPU for it
    (docs/09-benchmark-results.md#figures-behind-design-choices). A keyed segmented control, not
    tabs drawn only while open (`st.tabs(on_change="rerun")`): that widget is named by its
    labels, and Why's count changes with the kernel."""
    if insight.cut:
        st.warning(insight.cut, icon=":material/timer_off:")
    n = len(insight.remarks)
    if st.session_state.get(keys.INSIGHT) not in INSIGHTS:
        st.session_state[keys.INSIGHT] = INSIGHTS[0]
    shown = st.segmented_control("Show", INSIGHTS, key=keys.INSIGHT, required=True, label_visibility="collapsed",
                                 format_func=lambda s: f"{s} ({n})" if s == INSIGHTS[0] and n else s)
    if shown == INSIGHTS[0]:
        _why(insight, source_lines, follow_key, mapped or [])
    elif shown == INSIGHTS[1]:
        _memory_table(insight, source_lines)
    elif shown == INSIGHTS[2]:
        _thread_map(insight, source_lines)
    elif shown == INSIGHTS[3]:
        _resources(insight, kernel)
    else:
        rows = [{"stage": name, "lines": s.lines, "instructions": s.instructions,
                 "most common": ", ".join(f"{op} ×{n}" for op, n in list(s.mix.items())[:8])}
                for name, s in insight.summaries.items()]
        st.dataframe(tables.arrow(rows), hide_index=True, width="stretch")


_WHY_ICON = {"warning": "⚠", "remark": "✎", "note": "✎", "info": "·"}


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#|~$"})


def _follow_line(follow_key: str, line: int) -> None:
    st.session_state[follow_key] = line


def _why(insight, source_lines: list[str], follow_key: str | None, mapped: list[int]) -> None:
    """The compiler's remarks and the findings (inspectors.explain.remarks), one link each; a
    click follows its line in every panel."""
    if not insight.remarks:
        st.caption("No remark: no loop loads from global memory, no layout conversion, every access as wide "
                   "as its layout allows, and the compiler printed no remark or warning.")
        return
    st.caption("Each loop (pipelined or not, and why), each layout conversion (through shared memory or not), "
               "shared-memory bank conflicts predicted from the PTX, each access narrower than its layout allows, and "
               "the compiler's own remarks and warnings (its MLIR diagnostics for this compile). ⚠ costs time. "
               "Click one to follow its line.")
    home = insight.source_map.filename.rsplit("/", 1)[-1]
    for i, r in enumerate(insight.remarks[:200]):
        where = f"line {r.line}" if r.line else "no line"
        if r.file != home:
            where = f"{r.file}:{r.line}" if r.line else r.file
        code = (source_lines[r.line - 1].strip()[:60] if r.line and r.file == home and r.line <= len(source_lines)
                else "")
        label = (f"{_WHY_ICON.get(r.severity, '')} **{where}** · {r.kind}"
                 f"{' · `' + code.replace('`', '') + '`' if code else ''} — {r.message.translate(_MD_SPECIAL)}")
        clickable = bool(follow_key) and r.file == home and r.line in mapped
        st.button(label, key=f"{keys.WHY_LINK}{i}", type="tertiary", disabled=not clickable,
                  on_click=_follow_line if clickable else None, args=(follow_key, r.line) if clickable else None)


def _memory_table(insight, source_lines: list[str], html_table: bool = False) -> None:
    """`html_table`: a plain table, whose type the page's styles can enlarge (presentation)."""
    groups: dict[tuple, dict] = {}
    source = "\n".join(source_lines)
    for m in insight.memory_ops:
        key = (m.python_line or 0, m.chain, m.space, m.kind, m.op, m.vector, m.bits)
        row = groups.setdefault(key, {
            "Python line": m.python_line, "where": m.where(source),
            "source": (source_lines[m.python_line - 1].strip()[:70]
                       if m.python_line and m.python_line <= len(source_lines) else ""),
            "instruction": m.op, "space": m.space, "count": 0,
            "width": m.width,
            "bytes/thread/instr": m.bytes_per_thread, "why not wider": m.why})
        row["count"] += 1
    if not groups:
        st.caption("No global or shared memory instructions found.")
        return
    vec = sum(1 for m in insight.memory_ops if m.space == "global" and (m.vector > 1 or m.bits >= 64) and not m.role)
    glob = sum(1 for m in insight.memory_ops if m.space == "global")
    tma_ops = [m for m in insight.memory_ops if m.role == "tma"]
    tma_note = ""
    if tma_ops:
        moved = sum(m.bytes_per_thread for m in tma_ops)
        tma_note = (f" {len(tma_ops)} of the global ones are TMA tile copies "
                    f"({', '.join(sorted({m.kind for m in tma_ops}))}; {moved // 1024:,} KiB as written, each "
                    "issued by one thread for the whole tile, completion tracked by an mbarrier).")
    st.caption(f"{glob} global memory instructions, {vec} of them vectorized; "
               f"{len(insight.memory_ops) - glob} shared-memory instructions.{tma_note}")
    rows = [groups[k] for k in sorted(groups)]
    if html_table:
        st.table(tables.arrow(rows), hide_index=True)
    else:
        st.dataframe(tables.arrow(rows), hide_index=True, width="stretch")


def _resources(insight, kernel: KernelResult) -> None:
    r, occ = insight.resources, insight.occupancy
    if r is None:
        st.caption("Register allocation comes from the cubin: CUDA targets only." if not insight.notes
                   else insight.notes[0])
        return
    c = st.columns(5)
    c[0].metric("registers / thread", r.registers)
    c[1].metric("spill stores", f"{r.spills} B")
    c[2].metric("shared memory / block", f"{r.shared_bytes:,} B")
    c[3].metric("local / stack", f"{r.local_bytes} / {r.stack_bytes} B")
    if occ:
        c[4].metric("occupancy", f"{occ.warps_per_sm}/{occ.max_warps_per_sm} warps")
        st.markdown(occ.explanation)
    if insight.declared_registers and insight.declared_registers.by_type:
        declared = ", ".join(f"{n} × .{t}" for t, n in insight.declared_registers.by_type.items())
        st.caption(f"PTX declares virtual registers {declared}; ptxas allocated {r.registers} physical "
                   f"32-bit registers per thread (source: {r.source}).")
    _partitions(insight, kernel)


def _partitions(insight, kernel: KernelResult) -> None:
    """A warp-specialized loop: the warps a block really runs, and each partition's work."""
    if not insight.partitions:
        return
    asked = kernel.options.get("num_warps")
    st.markdown(f"**Warp specialization**: a block runs **{insight.warps} warps** ({asked} asked for with "
                f"`num_warps`; the partitions' own warps are added, rounded up to whole warp groups of 4); "
                "occupancy above counts them all.")
    st.dataframe(tables.arrow([{"partition": p.name, "warps": p.warps,
                               "registers asked": "the rest" if p.registers is None else p.registers,
                               "role": p.role, "Python lines": ", ".join(map(str, p.python_lines))}
                              for p in insight.partitions]), hide_index=True, width="stretch")


def _thread_map(insight, source_lines: list[str], html_table: bool = False) -> None:
    """%ctaid/%tid: addresses rebuilt from the PTX, and the layout's element ownership."""
    from inspectors.explain.threadmap import thread_examples
    seen = set()
    for mapping in insight.mappings:
        key = (mapping.formula, mapping.shape)
        if key in seen:
            continue
        seen.add(key)
        py = insight.source_map.stages.get("ttgir")
        line = py.to_python.get(mapping.ttgir_line) if py else None
        said = callsites.describe(py.chain(mapping.ttgir_line), "\n".join(source_lines)) if line else ""
        where = f"{said}: `{source_lines[line - 1].strip()[:80]}`" if line and line <= len(source_lines) else \
            f"TTGIR line {mapping.ttgir_line}"
        with st.container(border=True):
            st.markdown(f"**Tensor {'×'.join(map(str, mapping.shape))}** at {where}")
            st.code(mapping.formula, language=None)
            if mapping.program_stride and len(mapping.shape) == 1:
                st.markdown(f"Program *p* (`%ctaid.x` = p) covers elements {mapping.program_stride}·p … "
                            f"{mapping.program_stride}·p + {mapping.shape[0] - 1}; its {mapping.threads} threads "
                            f"hold {mapping.per_thread} each.")
            else:
                st.markdown(f"{mapping.threads} threads per program, {mapping.per_thread} elements each.")
            st.markdown("\n".join(f"- {t}" for t in thread_examples(mapping)))
    ptx_lines = insight.source_map.stages.get("ptx")
    rows = [{"PTX line": a.line,
             "Python line": ptx_lines.to_python.get(a.line) if ptx_lines else None,
             "where": callsites.describe(ptx_lines.chain(a.line), "\n".join(source_lines)) if ptx_lines else "",
             "address (from the PTX)": a.expr} for a in insight.addresses.values()]
    if rows:
        st.caption("Each global access's address, rebuilt from the PTX instructions that compute it "
                   "(`%ctaid` = program id, `%tid` = thread id within the program; offsets in bytes).")
        if html_table:
            st.table(tables.arrow(rows), hide_index=True)
        else:
            st.dataframe(tables.arrow(rows), hide_index=True, width="stretch")
    elif not seen:
        st.caption("No blocked-layout global accesses to map.")
