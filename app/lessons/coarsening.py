"""Panels of the thread-coarsening lesson (assets/lessons/coarsening.md): kernels/coarsening.py
compiled at BLOCK 128 … 8192 and num_warps 1 … 16 (no GPU): elements per thread, vector width,
loads per thread, registers, occupancy; GB/s from assets/gpu/coarsening_bandwidth.json."""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from app.backend import services
from app.lessons.common import GPU_DIR, TARGET, Ctx, bars, read_json, settings
from inspectors.explain import coarsening
import kernels

GPU_FILE = GPU_DIR / "coarsening_bandwidth.json"


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


def sweep_rows(configs) -> list[coarsening.SweepRow]:
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


def kernel(ctx: Ctx):
    st.code(kernels.get("coarsening").source().split("def add(")[0].split('"""', 2)[-1].strip(), language="python")
    return {}


def block(ctx: Ctx):
    rows = [r for r in sweep_rows(coarsening.DEFAULT) if r.num_warps == 4]
    st.dataframe(_table(rows), hide_index=True, width="stretch")
    bars("BLOCK", [r.block for r in rows], {"elements / thread": [r.elements_per_thread for r in rows],
                                            "bytes per load instruction": [4 * r.load_vector for r in rows]})
    return {}


def ptx(ctx: Ctx):
    rows = {r.block: r for r in sweep_rows(coarsening.DEFAULT) if r.num_warps == 4}
    # two by two: at 1280×720 in large type a PTX line (up to 48 characters) fits its column unclipped
    cols = [c for _ in range(2) for c in st.columns(2)]
    for col, size in zip(cols, (128, 256, 512, 1024)):
        r = rows.get(size)
        if r is None:
            continue
        with col:
            st.markdown(f"**BLOCK = {size}** · {r.elements_per_thread} per thread")
            st.code("\n".join(line.split("[")[0].replace("@%p", "@p").strip().rstrip(",") for line in r.ptx_accesses
                              if "ld.global" in line), language=None)
    return {}


def warps(ctx: Ctx):
    rows = sorted((r for r in sweep_rows(coarsening.DEFAULT) if r.block == 1024), key=lambda r: r.num_warps)
    st.dataframe(_table(rows), hide_index=True, width="stretch")
    bars("num_warps", [r.num_warps for r in rows], {"elements / thread": [r.elements_per_thread for r in rows],
                                                    "registers": [r.registers or 0 for r in rows]})
    return {}


def occupancy(ctx: Ctx):
    rows = sweep_rows(coarsening.DEFAULT)
    df = _table(rows)[["BLOCK", "num_warps", "elements / thread", "registers", "occupancy", "limited by"]]
    st.dataframe(df, hide_index=True, width="stretch")
    return {}


def gpu(ctx: Ctx):
    data = read_json(GPU_FILE)
    if data is None:
        st.info("No GPU measurements are committed (assets/gpu/coarsening_bandwidth.json). Run "
                "`python3 benchmarks/coarsening_bandwidth.py` on a GPU machine to add them.")
        return None
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
    return {}


def full(ctx: Ctx):
    grid_all = tuple((b, w) for b in coarsening.BLOCKS for w in coarsening.WARPS)
    if not st.session_state.get("full_sweep"):
        st.markdown(f"The steps so far used {len(coarsening.DEFAULT)} compiles. The full grid is "
                    f"{len(grid_all)} compiles (about a second each on a laptop, then cached).")
        if st.button("Run the full sweep", key="full_sweep_btn"):
            st.session_state["full_sweep"] = True
            st.rerun()
        return {}
    rows = sweep_rows(grid_all)
    grid = pd.DataFrame([{"BLOCK": r.block, "num_warps": r.num_warps,
                          "cell": f"{r.elements_per_thread}/thr{f' (×{r.copies})' if r.copies > 1 else ''} · {r.width} "
                                  f"×{r.loads_per_thread // 2} · {r.registers} regs"}
                         for r in rows]).pivot(index="BLOCK", columns="num_warps", values="cell")
    st.dataframe(grid, width="stretch")
    st.caption("Each cell: elements per thread (×N: N threads hold copies of each element) · load width × "
               "loads per input · registers per thread.")
    return {}


PANELS = {"coarsening.kernel": kernel, "coarsening.block": block, "coarsening.ptx": ptx, "coarsening.warps": warps,
          "coarsening.occupancy": occupancy, "coarsening.gpu": gpu, "coarsening.full": full}
