"""The Lessons page: two guided lessons for a projector, one click per step.

* Thread coarsening: kernels/coarsening.py compiled at BLOCK 128 … 8192 and num_warps 1 … 16
  (no GPU): elements per thread, vector width, loads per thread, registers, occupancy; GB/s
  from a committed GPU run (assets/gpu/coarsening_bandwidth.json) when there is one.
* Coalescing: the same data read row-wise and column-wise, a strided read, a naive transpose
  and its layout conversion through shared memory: for every global access, bytes per warp,
  32-byte sectors and efficiency, estimated from the PTX (inspectors.explain.coalescing); Nsight
  Compute's figures from a committed run (assets/ncu/coalescing.json) beside them.

Every step says what to look at. A link opens a lesson at a step: `?lesson=coalescing&step=4`
(`&big=1` for large type).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import altair as alt
import pandas as pd
import streamlit as st

from app import classroom, present, services
from inspectors.explain import coalescing
from inspectors.explain import coarsening
from inspectors.explain import layout_view
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest, KernelResult
import kernels

ROOT = Path(__file__).resolve().parents[2]
NCU_FILE = ROOT / "assets" / "ncu" / "coalescing.json"
GPU_FILE = ROOT / "assets" / "gpu" / "coarsening_bandwidth.json"
TARGET = "cuda:90"
settings = settings_mod.load()
LESSON_FILES = {k.slug: k for k in (*kernels.LIBRARY, *kernels.LESSON_KERNELS)}
# The integer arguments of the lesson's launches (as each file's example() makes them).
LAUNCH_VALUES = {"sum_rows_kernel": {"M": 2048, "N": 2048}, "sum_cols_kernel": {"M": 2048, "N": 2048},
                 "strided_read_kernel": {"n": 2**23, "stride": 2},
                 "transpose_kernel": {"M": 2048, "N": 2048},
                 "transpose_opaque_kernel": {"M": 2048, "N": 2048, "stride_on": 2048, "stride_om": 1}}


@dataclass(frozen=True)
class Step:
    title: str
    look: str                    # what to look at, one sentence
    show: Callable[[], None]


# ---- cached compiles (thin wrappers; the work is in inspectors) -----------------------------------
def _compile_file(slug: str) -> tuple[KernelResult, ...]:
    entry = LESSON_FILES[slug]
    result = services.compile_kernel(CompileRequest(source=entry.source(), filename=entry.filename, target=TARGET,
                                                    sass=False), float(settings.compile_timeout_s))
    if not result.ok:
        st.error(result.error.headline())
        st.stop()
    return result.kernels


def _kernel(slug: str, name: str) -> KernelResult:
    return next(k for k in _compile_file(slug) if k.name == name)


@st.cache_data(show_spinner=False, max_entries=64)
def _estimate(ptx: str, params: tuple[str, ...], values_json: str) -> coalescing.KernelEstimate:
    return coalescing.estimate(ptx, list(params), json.loads(values_json))


def _estimate_of(kernel: KernelResult, values: dict | None = None) -> coalescing.KernelEstimate:
    params = tuple(a.name for a in kernel.args if a.type != "constexpr")
    values = values if values is not None else LAUNCH_VALUES.get(kernel.name, {})
    return _estimate(kernel.stages["ptx"], params, json.dumps(values, sort_keys=True))


@st.cache_data(show_spinner=False, max_entries=8)
def _sweep(configs: tuple[tuple[int, int], ...], target: str) -> list[coarsening.SweepRow]:
    source = kernels.get("coarsening").source()
    rows = []
    for block, warps in configs:
        result = services.compile_kernel(coarsening.sweep_request(source, block, warps, target),
                                         float(settings.compile_timeout_s))
        if result.ok:
            rows.append(coarsening.sweep_row(result.kernels[0], block, warps))
    return rows


def _sweep_rows(configs) -> list[coarsening.SweepRow]:
    with st.spinner(f"Compiling {len(configs)} configurations for {TARGET} (cached after the first time)…"):
        return _sweep(tuple(configs), TARGET)


def _table(rows: list[coarsening.SweepRow]) -> pd.DataFrame:
    return pd.DataFrame([{
        "BLOCK": r.block, "num_warps": r.num_warps, "threads": r.threads,
        "elements / thread": str(r.elements_per_thread) if r.copies <= 1 else f"{r.elements_per_thread} (×{r.copies} copies)",
        "load width": r.width, "ld.global / thread": r.loads_per_thread, "st.global / thread": r.stores_per_thread,
        "bytes / load": 4 * r.load_vector, "registers": r.registers,
        "occupancy": f"{r.occupancy_warps}/{r.max_warps} warps" if r.occupancy_warps is not None else "—",
        "limited by": r.limiter or "—"} for r in rows])


def _bars(x_name: str, xs: list, series: dict[str, list], height: int = 260):
    """Grouped bars in the order given (st.bar_chart would sort '1024' before '128')."""
    long = pd.DataFrame([{x_name: str(x), "quantity": name, "value": v}
                         for name, values in series.items() for x, v in zip(xs, values)])
    order = [str(x) for x in xs]
    chart = alt.Chart(long).mark_bar().encode(
        x=alt.X(f"{x_name}:N", sort=order, title=x_name), xOffset=alt.XOffset("quantity:N"),
        y=alt.Y("value:Q", title=None), color=alt.Color("quantity:N", title=None, legend=alt.Legend(orient="top")),
        tooltip=[x_name, "quantity", "value"]).properties(height=height)
    st.altair_chart(chart, width="stretch")


def _measured() -> dict | None:
    try:
        return json.loads(GPU_FILE.read_text())
    except (OSError, ValueError):
        return None


# ---- lesson 1: thread coarsening ------------------------------------------------------------------
def coarsen_kernel():
    st.markdown("One program adds `BLOCK` elements of `x` and `y` with `32 · num_warps` threads. "
                "The compiler gives every thread an equal share:")
    st.latex(r"\text{elements per thread} = \frac{\texttt{BLOCK}}{32 \cdot \texttt{num\_warps}}")
    st.code(kernels.get("coarsening").source().split("def add(")[0].split('"""', 2)[-1].strip(), language="python")
    st.markdown("Handing each thread *more* elements is **thread coarsening**: fewer programs, more work "
                "each. The next steps compile this kernel for an H100 (`sm_90`) at many sizes — no GPU needed.")


def coarsen_block():
    rows = [r for r in _sweep_rows(coarsening.DEFAULT) if r.num_warps == 4]
    st.dataframe(_table(rows), hide_index=True, width="stretch")
    _bars("BLOCK", [r.block for r in rows], {"elements / thread": [r.elements_per_thread for r in rows],
                                             "bytes per load instruction": [4 * r.load_vector for r in rows]})
    st.markdown("With 128 threads, BLOCK = 128 is **1 element per thread**: one scalar `ld.global.b32`. "
                "BLOCK = 256 gives 2 neighbours per thread: one `v2` load of 8 bytes. BLOCK = 512: 4, one "
                "`v4` load of 16 bytes — the widest load there is. Past that the width stays `v4`; "
                "a thread just issues **more** of them (2, 4, 8 … per input).")


def coarsen_ptx():
    rows = {r.block: r for r in _sweep_rows(coarsening.DEFAULT) if r.num_warps == 4}
    cols = st.columns(4)
    for col, block in zip(cols, (128, 256, 512, 1024)):
        r = rows.get(block)
        if r is None:
            continue
        with col:
            st.markdown(f"**BLOCK = {block}** · {r.elements_per_thread} per thread")
            st.code("\n".join(line.split("[")[0].replace("@%p", "@p").strip()[:44] for line in r.ptx_accesses
                              if "ld.global" in line), language=None)
    st.markdown("The PTX says it directly: `.v2` / `.v4` after `ld.global` is the vector width. The compiler "
                "only emits it when it can prove the elements are contiguous *and* 16-byte aligned — here the "
                "JIT marked every pointer and `n_elements` divisible by 16.")


def coarsen_warps():
    rows = sorted((r for r in _sweep_rows(coarsening.DEFAULT) if r.block == 1024), key=lambda r: r.num_warps)
    st.dataframe(_table(rows), hide_index=True, width="stretch")
    _bars("num_warps", [r.num_warps for r in rows], {"elements / thread": [r.elements_per_thread for r in rows],
                                                     "registers": [r.registers or 0 for r in rows]})
    st.markdown("Same BLOCK = 1024, more warps: the same work is split over more threads, so each holds "
                "fewer elements (32 → 2) and needs fewer registers. At 16 warps a thread has only 2 elements: "
                "the loads drop back to `v2`.")


def coarsen_occupancy():
    rows = _sweep_rows(coarsening.DEFAULT)
    df = _table(rows)[["BLOCK", "num_warps", "elements / thread", "registers", "occupancy", "limited by"]]
    st.dataframe(df, hide_index=True, width="stretch")
    st.markdown("Registers grow with the elements a thread keeps in flight (each loaded float lives in a "
                "register until it is added and stored). Up to ~32 registers nothing changes: an H100 SM "
                "still holds its 64 warps. At BLOCK = 4096 with 4 warps a thread needs 50+ registers and "
                "the SM fits fewer warps: **occupancy** falls, limited by the register file.")


def coarsen_gpu():
    data = _measured()
    if data is None:
        st.info("No GPU measurements are committed (assets/gpu/coarsening_bandwidth.json). Run "
                "`python3 benchmarks/coarsening_bandwidth.py` on a GPU machine to add them.")
        return
    df = pd.DataFrame(data["rows"])
    pivot = df.pivot(index="block", columns="num_warps", values="gbps").round(0)
    pivot.index.name, pivot.columns.name = "BLOCK", "num_warps"
    st.markdown(f"Measured on **{data['gpu']}** (torch {data['torch']}, Triton {data['triton']}): GB/s of "
                f"`x + y` on {data['n']:,} floats, bytes read and written; a device copy of the same bytes runs "
                f"at **{data['copy_gbps']:.0f} GB/s**.")
    st.dataframe(pivot, width="stretch")
    shown = df[df.num_warps.isin([1, 4, 16])].assign(warps=lambda d: d.num_warps.astype(str) + " warps")
    st.altair_chart(alt.Chart(shown).mark_line(point=True).encode(
        x=alt.X("block:N", sort=[str(b) for b in sorted(df.block.unique())], title="BLOCK"),
        y=alt.Y("gbps:Q", title="GB/s"), color=alt.Color("warps:N", title=None, legend=alt.Legend(orient="top")),
        tooltip=["block", "num_warps", "gbps"]).properties(height=280)
        + alt.Chart(pd.DataFrame({"copy": [data["copy_gbps"]]})).mark_rule(strokeDash=[4, 4]).encode(y="copy:Q"),
        width="stretch")
    st.caption("Dashed: the device copy of the same bytes.")
    st.markdown("BLOCK = 128 (1 scalar load per thread) stays well below the copy: too few bytes in flight "
                "per thread. From BLOCK = 256 on, every configuration with enough bytes per thread reaches "
                "the copy's speed. At 16 warps and a small BLOCK, a program has more threads than elements: "
                "threads hold copies of the same elements and the loads are repeated.")


def coarsen_full():
    full = tuple((b, w) for b in coarsening.BLOCKS for w in coarsening.WARPS)
    if not st.session_state.get("full_sweep"):
        st.markdown(f"The steps so far used {len(coarsening.DEFAULT)} compiles. The full grid is "
                    f"{len(full)} compiles (about a second each on a laptop, then cached).")
        if st.button("Run the full sweep", key="full_sweep_btn"):
            st.session_state["full_sweep"] = True
            st.rerun()
        return
    rows = _sweep_rows(full)
    grid = pd.DataFrame([{"BLOCK": r.block, "num_warps": r.num_warps,
                          "cell": f"{r.elements_per_thread}/thr{f' (×{r.copies})' if r.copies > 1 else ''} · {r.width} "
                                  f"×{r.loads_per_thread // 2} · {r.registers} regs"}
                         for r in rows]).pivot(index="BLOCK", columns="num_warps", values="cell")
    st.dataframe(grid, width="stretch")
    st.caption("Each cell: elements per thread (×N: N threads hold copies of each element) · load width × "
               "loads per input · registers per thread.")


# ---- lesson 2: coalescing ---------------------------------------------------------------------------
def _accesses_table(est: coalescing.KernelEstimate) -> pd.DataFrame:
    return pd.DataFrame([{
        "PTX line": a.ptx_line, "kind": a.kind, "instruction": a.text.split()[1] if a.text.startswith("@") else a.text.split()[0],
        "based on": a.pointer, "bytes / warp": int(a.bytes_per_request), "sectors (32 B)": round(a.sectors_per_request, 2),
        "efficiency": f"{100 * a.efficiency:.1f} %", "lane → lane": f"{a.lane_stride} B" if a.lane_stride is not None else "—",
    } for a in est.accesses if not a.error])


def _show_access(est: coalescing.KernelEstimate, kind: str, title: str):
    access = next((a for a in est.accesses if a.kind == kind and a.requests), None)
    if access is None:
        return
    st.markdown(f"**{title}** — {coalescing.describe(access)}.")
    st.html(classroom.sectors_html(access))


def _ttgir_lines(kernel: KernelResult, needles: tuple[str, ...], limit: int = 8) -> str:
    out = [line.strip()[:150] for line in kernel.stages["ttgir"].splitlines()
           if any(n in line for n in needles) and not line.startswith("#loc")]
    return "\n".join(out[:limit])


def coal_rows():
    k = _kernel("coalescing", "sum_rows_kernel")
    est = _estimate_of(k)
    st.code("acc += tl.load(x_ptr + m * N + n, mask=n < N, other=0.0)   # contiguous in n", language="python")
    _show_access(est, "load", "Each load of a warp")
    st.dataframe(_accesses_table(est), hide_index=True, width="stretch")
    st.markdown("Program *m* walks row *m*. A thread holds 4 neighbouring floats (`v4`, 16 bytes), 32 lanes "
                "side by side: **512 contiguous bytes = 16 sectors, all used**. That is a coalesced access.")


def coal_cols():
    k = _kernel("coalescing", "sum_cols_kernel")
    est = _estimate_of(k)
    st.code("acc += tl.load(xt_ptr + n * M + m, mask=n < N, other=0.0)   # stride M in n", language="python")
    _show_access(est, "load", "Each load of a warp")
    st.dataframe(_accesses_table(est), hide_index=True, width="stretch")
    st.markdown("The same numbers, stored transposed: neighbouring lanes are a whole row (M · 4 = 8192 bytes) "
                "apart. Each lane's 4 bytes sit in a sector of their own: **32 sectors for 128 useful bytes, "
                "12.5 %**. No vector load either: nothing is contiguous within a thread.")


def coal_strided():
    k = _kernel("strided", "strided_read_kernel")
    stride = st.select_slider("stride", [1, 2, 4, 8, 16], value=2, key="coal_stride")
    est = _estimate_of(k, {"n": 2**23, "stride": stride})
    st.code("x = tl.load(x_ptr + offs * stride, mask=mask)   # stride * 4 bytes between neighbours", language="python")
    _show_access(est, "load", f"Each load of a warp, stride {stride}")
    s = est.summary("load")
    st.markdown(f"Per instruction: **{s['sectors_per_request']:g} sectors per request, "
                f"{100 * s['efficiency']:.1f} % used**. Over a warp's 8 loads the distinct sectors give "
                f"**{100 * s['unique_sectors_efficiency']:.1f} %**: what reaches DRAM at best, if L1 keeps "
                f"the sectors between the loads.")
    st.dataframe(_accesses_table(est), hide_index=True, width="stretch")
    st.markdown("The same PTX, evaluated for another `stride`: the address arithmetic multiplies by a runtime "
                "value, so the compiler emits scalar loads whatever the stride. The layout still gives a "
                "thread 4 consecutive *indices*: lane *t* reads elements (4t + j) · stride, so lanes are "
                "16 · stride bytes apart.")


def _layout_picture(kernel: KernelResult, name: str, shape: tuple[int, ...], rows: int = 8, cols: int = 32):
    found = layout_view.module_layouts(kernel.stages["ttgir"])
    use = next((u for u in found.uses if u.name == name), None)
    if use is None or not use.drawable:
        return
    own = layout_view.ownership(use.layout, shape)
    grid, note = classroom.ownership_html(own, max_rows=rows, max_cols=cols, highlight=(0, 0))
    st.markdown(f"`{name}`: {use.layout.describe()}")
    st.html(grid)
    st.caption(note + " Outlined: lane 0 of warp 0.")


def coal_transpose():
    k = _kernel("transpose", "transpose_kernel")
    est = _estimate_of(k)
    st.code("tile = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask)   # contiguous in n\n"
            "tl.store(out_ptr + offs_n[None, :] * M + offs_m[:, None], tile, mask=mask)   # contiguous in m",
            language="python")
    st.code(_ttgir_lines(k, ("ttg.convert_layout", "tt.load", "tt.store")), language=None)
    st.html(classroom.legend_html(4))
    _layout_picture(k, "#blocked", (64, 64), rows=8, cols=32)
    _layout_picture(k, "#blocked1", (64, 64), rows=16, cols=32)
    shared = [line for line in k.stages["ptx"].splitlines() if ".shared" in line and ("st." in line or "ld." in line)]
    st.markdown(f"The load's layout (`#blocked`) runs lanes along a row; the store's (`#blocked1`) down a column. "
                f"`ttg.convert_layout` moves the tile between them **through shared memory**: the PTX has "
                f"{sum('st.shared' in l for l in shared)} `st.shared`, a `bar.sync`, and "
                f"{sum('ld.shared' in l for l in shared)} `ld.shared` per thread "
                f"({k.metadata.get('shared', 0):,} bytes of shared memory).")
    _show_access(est, "load", "Loads")
    _show_access(est, "store", "Stores, after the conversion")
    st.dataframe(_accesses_table(est), hide_index=True, width="stretch")


def coal_opaque():
    k = _kernel("transpose", "transpose_opaque_kernel")
    est = _estimate_of(k)
    st.code("@triton.jit(do_not_specialize=[\"stride_om\"])   # the 1 in out.stride(1) is hidden\n"
            "tl.store(out_ptr + offs_n[None, :] * stride_on + offs_m[:, None] * stride_om, tile, mask=mask)",
            language="python")
    st.code(_ttgir_lines(k, ("ttg.convert_layout", "tt.store")), language=None)
    _show_access(est, "store", "Each store of a warp")
    st.dataframe(_accesses_table(est)[lambda d: d.kind == "store"].head(4), hide_index=True, width="stretch")
    store = next((a for a in est.accesses if a.kind == "store" and a.requests), None)
    version = services.engine().triton_version
    if store is not None and store.lane_stride not in (None, 4):
        what = (f"Triton {version} (compiling here) runs the lanes along `n`: each lane writes into another "
                f"row, **{store.sectors_per_request:g} sectors per request for {store.bytes_per_request:g} bytes "
                f"({100 * store.efficiency:.1f} %)**")
    else:
        what = (f"Triton {version} (compiling here) happens to run the lanes along `m`: scalar stores, "
                f"coalesced, but 4 bytes per lane where the rescued kernel wrote 16")
    st.markdown(f"Now the compiler cannot see that `m` is contiguous in the output, so nothing tells it to pick "
                f"a store layout along `m`. {what}. Which layout a compiler guesses is up to it: Triton 3.6 on "
                f"the GPU machine put the lanes along `m`, Triton 3.9 along `n` (see the next step). Telling the "
                f"compiler what is contiguous is what makes it reliable.")


def coal_ncu():
    try:
        data = json.loads(NCU_FILE.read_text())
    except (OSError, ValueError):
        st.info("No Nsight Compute results are committed (assets/ncu/coalescing.json). Run "
                "`python3 benchmarks/ncu_coalescing.py --out assets/ncu` on a GPU machine.")
        return
    st.markdown(f"Measured on **{data['gpu']}** with Nsight Compute {data['ncu'].split('(')[0].replace('Version', '').strip()} "
                f"(driver {data['nvidia_smi'].split(',')[-1].strip()}, torch {data['torch']}, Triton {data['triton']}). "
                f"*Static* is this page's estimate from the PTX that ran there; ncu divides "
                f"`l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum` by `…_requests_…` (and `st`).")
    rows = _ncu_rows(NCU_FILE.read_text())
    here = _static_here(data)
    column = f"static here (Triton {services.engine().triton_version} PTX)"
    for row in rows:
        row[column] = here.get((row["kernel"], row["access"]))
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=36 * (len(rows) + 1) + 4)
    st.caption("The last column evaluates the PTX compiled on this machine (its Triton, sm_90) for the same "
               "launch. It differs only where the compilers chose differently: the hidden-stride transpose's "
               "store layout.")
    st.markdown("The estimate and the hardware counters agree: sectors per request are a property of the "
                "addresses a warp computes, which the PTX fixes. DRAM traffic is another matter: the column "
                "read fetches 32 sectors per request, yet the whole 16 MB matrix fits in L2, so DRAM reads it "
                "once; the strided read at stride 2 re-touches its sectors and DRAM moves 2× the useful bytes.")


CASE_KERNELS = {"rows": ("coalescing", "sum_rows_kernel"), "cols": ("coalescing", "sum_cols_kernel"),
                "strided2": ("strided", "strided_read_kernel"), "strided8": ("strided", "strided_read_kernel"),
                "transpose": ("transpose", "transpose_kernel"), "transpose_opaque": ("transpose", "transpose_opaque_kernel")}


def _static_here(data: dict) -> dict:
    """(case, load|store) -> sectors per request of this machine's compile of the same launch."""
    out = {}
    for case in data["cases"]:
        if case["case"] in CASE_KERNELS:
            kernel = _kernel(*CASE_KERNELS[case["case"]])
        elif case["case"].startswith("coarse_"):
            block, warps = (int(x) for x in case["case"].split("_")[1].split("x"))
            result = services.compile_kernel(coarsening.sweep_request(kernels.get("coarsening").source(), block, warps,
                                                                      TARGET), float(settings.compile_timeout_s))
            if not result.ok:
                continue
            kernel = result.kernels[0]
        else:
            continue
        est = _estimate_of(kernel, case["values"])
        for kind in ("load", "store"):
            out[(case["case"], kind)] = round(est.summary(kind)["sectors_per_request"], 2)
    return out


@st.cache_data(show_spinner=False, max_entries=2)
def _ncu_rows(text: str) -> list[dict]:
    return ncu_rows(json.loads(text))


def ncu_rows(data: dict) -> list[dict]:
    rows = []
    for case in data["cases"]:
        est = coalescing.estimate(case["ptx"], case["params"], case["values"])
        for op, kind in (("ld", "load"), ("st", "store")):
            measured = case["ncu"].get(f"sectors_per_request_{op}")
            static = est.summary(kind)["sectors_per_request"]
            if measured is None:
                continue
            rows.append({"kernel": case["case"], "access": kind, "static sectors / request": round(static, 2),
                         "ncu sectors / request": round(measured, 2),
                         "difference": f"{100 * (static - measured) / measured:+.1f} %",
                         "within ±10 %": abs(static - measured) <= 0.1 * measured})
    return rows


LESSONS: dict[str, tuple[str, list[Step]]] = {
    "coarsening": ("Thread coarsening", [
        Step("One kernel, two knobs", "The formula: BLOCK elements shared by 32 · num_warps threads.", coarsen_kernel),
        Step("BLOCK grows at 4 warps", "The 'load width' column: scalar → v2 → v4, then more v4 loads per thread.",
             coarsen_block),
        Step("Where v4 comes from", "The .v2 / .v4 after ld.global in each PTX.", coarsen_ptx),
        Step("More warps, same BLOCK", "Elements per thread and registers halve as warps double.", coarsen_warps),
        Step("Registers and occupancy", "The 'registers' and 'occupancy' columns at BLOCK 4096 and 8192.",
             coarsen_occupancy),
        Step("On a real GPU", "The BLOCK = 128 row, and the 16-warp column at small BLOCK.", coarsen_gpu),
        Step("The full sweep", "The whole grid at once: where the width stops growing and registers take over.",
             coarsen_full),
    ]),
    "coalescing": ("Coalescing", [
        Step("Row-wise read", "The green sectors: 16 of them, all full.", coal_rows),
        Step("Column-wise read", "32 sectors, each one eighth full: 12.5 % of the traffic is used.", coal_cols),
        Step("Strided read", "Move the stride slider and watch sectors per request and the DRAM estimate.",
             coal_strided),
        Step("A naive transpose, rescued", "The ttg.convert_layout line and the two layout pictures.",
             coal_transpose),
        Step("The same transpose, stride hidden", "The store rows: sectors per request and efficiency.", coal_opaque),
        Step("Measured with Nsight Compute", "The 'within ±10 %' column.", coal_ncu),
    ]),
}


# ---- the page -------------------------------------------------------------------------------------
def _from_url():
    """First run of a session on this page: the URL picks the lesson, the step and the type size."""
    qp = st.query_params
    known = qp.get("lesson") in LESSONS
    lesson = qp.get("lesson") if known else "coarsening"
    try:
        step = int(qp.get("step", "1")) - 1 if known else 0     # a step of an unknown lesson means nothing
    except ValueError:
        step = 0
    st.session_state["lesson"] = lesson
    st.session_state["lesson_step"] = max(0, min(step, len(LESSONS[lesson][1]) - 1))
    st.session_state["big"] = qp.get("big") == "1" or present.on()     # presentation mode: large type


def _go(delta: int):
    steps = LESSONS[st.session_state["lesson"]][1]
    st.session_state["lesson_step"] = max(0, min(st.session_state["lesson_step"] + delta, len(steps) - 1))


def _pick_lesson():
    st.session_state["lesson_step"] = 0


if "lesson_step" not in st.session_state or "lesson" not in st.session_state:
    _from_url()

st.html(classroom.CSS)
top, size = st.columns([4, 1])
top.radio("Lesson", list(LESSONS), key="lesson", horizontal=True, format_func=lambda k: LESSONS[k][0],
          on_change=_pick_lesson)
size.toggle("Large type", key="big", help="For a projector: larger text everywhere on the page.")
if st.session_state["big"]:
    present.apply(large_text=True, when=True)      # the explorer's presentation mode, in large type

lesson_key = st.session_state["lesson"]
title, steps = LESSONS[lesson_key]
index = st.session_state["lesson_step"] = max(0, min(st.session_state["lesson_step"], len(steps) - 1))
step = steps[index]
st.query_params.from_dict({"lesson": lesson_key, "step": str(index + 1), **({"big": "1"} if st.session_state["big"] else {})})

nav_back, nav_title, nav_next = st.columns([1, 6, 1])
nav_back.button("◀ Back", key="lesson_prev", on_click=_go, args=(-1,), disabled=index == 0, width="stretch")
nav_next.button("Next ▶", key="lesson_next", on_click=_go, args=(1,), disabled=index == len(steps) - 1,
                type="primary", width="stretch")
nav_title.markdown(f"### {title} · step {index + 1} of {len(steps)}: {step.title}")
st.progress((index + 1) / len(steps))
st.html(classroom.step_html(f"Look at: {step.look}"))
step.show()

st.caption(f"Link to this step: `?lesson={lesson_key}&step={index + 1}`" + ("&big=1" if st.session_state["big"] else ""))
st.html(f'<div class="tl-done" data-lesson="{lesson_key}" data-step="{index + 1}"></div>')   # the step is drawn
