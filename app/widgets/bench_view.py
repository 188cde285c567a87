"""The Benchmark page's pieces: the cached GPU probe, the result (headline figures, table,
chart, CSV) and the committed reference results. Timing itself happens in
inspectors.bench.worker's process, never here."""
from __future__ import annotations

import json
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from app.render.text import plain
from inspectors.session import bench
from inspectors.session.bench import BenchResult

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "bench"


@st.cache_resource(show_spinner="Looking for a GPU…")
def gpu_probe() -> dict:
    """Which GPUs the benchmark worker sees; asked once per server (imports torch in a subprocess)."""
    return bench.probe()


@st.cache_data(show_spinner=False)
def static_info(source: str, filename: str) -> bench.StaticInfo | None:
    try:
        return bench.static_info(source, filename)
    except bench.BenchUsageError:
        return None


def frame(result: BenchResult) -> pd.DataFrame:
    ceiling = "% of matmul" if result.bound == "compute" else "% of copy"
    return pd.DataFrame([{
        result.size_name: r.size, "provider": r.provider, "ms (median)": r.ms, "ms p20": r.ms_p20,
        "ms p80": r.ms_p80, "GB/s": r.gbps, "TFLOP/s": r.tflops, ceiling: r.pct_of_ceiling,
    } for r in result.rows])


def render_headline(result: BenchResult, size: int) -> None:
    """The chosen size: Triton's figures, and each baseline's time relative to Triton."""
    triton = result.row(size, bench.TRITON)
    if triton is None:
        return
    label = "of the fp16 matmul ceiling" if result.bound == "compute" else "of measured copy bandwidth"
    cols = st.columns(4)
    cols[0].metric("Triton, median", f"{triton.ms * 1000:.1f} µs" if triton.ms < 1 else f"{triton.ms:.3f} ms",
                   help=f"do_bench median; 20th–80th percentile {triton.ms_p20:.4f}–{triton.ms_p80:.4f} ms")
    cols[1].metric("GB/s", f"{triton.gbps:,.0f}", help=f"{triton.bytes:,} bytes (the kernel's model) / median time")
    cols[2].metric("TFLOP/s", f"{triton.tflops:,.2f}", help=f"{triton.flops:,} flops (the kernel's model) / median time")
    if triton.pct_of_ceiling is not None:
        cols[3].metric(f"% {label}", f"{triton.pct_of_ceiling:.1f} %")
    others = [r for r in result.rows if r.size == size and r.provider != bench.TRITON]
    if others:
        st.caption(" · ".join(f"{r.provider}: {r.ms:.4f} ms ({r.ms / triton.ms:.2f}× Triton's time)" for r in others))


def render_chart(result: BenchResult) -> None:
    sizes = {r.size for r in result.rows}
    if len(sizes) < 2:
        return
    data = pd.DataFrame([{"size": r.size, "provider": r.provider, "GB/s": r.gbps, "TFLOP/s": r.tflops}
                         for r in result.rows])
    y = "TFLOP/s" if result.bound == "compute" else "GB/s"
    chart = alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("size:Q", scale=alt.Scale(type="log", base=2), title=result.size_name),
        y=alt.Y(f"{y}:Q", title=y), color=alt.Color("provider:N", title=None),
        tooltip=["size", "provider", alt.Tooltip(f"{y}:Q", format=",.1f")])
    if result.ceilings and result.bound == "memory":
        rule = alt.Chart(pd.DataFrame({"y": [result.ceilings.copy_gbps]})).mark_rule(strokeDash=[4, 4]).encode(y="y:Q")
        chart = chart + rule
    st.altair_chart(chart, width="stretch")


def render_result(result: BenchResult, size: int) -> None:
    if result.error:
        st.error(plain(result.error.headline()))
        if result.error.detail:
            with st.expander("Details"):
                st.code(result.error.detail, language=None)
    if result.mode == "interpreter":
        for c in result.checks:
            (st.success if c.ok else st.error)(("✓ " if c.ok else "✗ ") + plain(c.message or c.provider))
        st.warning(result.note or bench.TIMING_NEEDS_GPU)
        return
    failed = [c for c in result.checks if not c.ok]
    for c in failed:
        st.warning(f"{c.provider} at {bench.format_size(c.size)} does not match the reference and was not "
                   f"timed: {plain(c.message[:400])}")
    if result.gpu:
        ceil = ""
        if result.ceilings:
            c = result.ceilings
            ceil = (f" · ceilings: copy {c.copy_gbps:,.0f} GB/s, fp16 matmul ({c.matmul_n}³) "
                    f"{c.matmul_tflops:,.0f} TFLOP/s, measured {c.measured_at}{' (cached)' if c.cached else ''}")
        st.caption(f"{result.gpu.describe()}{ceil}")
    if not result.rows:
        return
    checked = sorted({c.size for c in result.checks if c.ok and c.provider == bench.TRITON})
    if checked:
        st.caption(f"Triton matched the reference (torch.testing.assert_close) at every size before it was timed: "
                   f"{', '.join(bench.format_size(s) for s in checked)}.")
    render_headline(result, size if result.row(size, bench.TRITON) else result.rows[-1].size)
    render_chart(result)
    st.dataframe(frame(result), hide_index=True, width="stretch", key="bench-table")
    st.download_button("Download CSV", bench.to_csv(result), file_name=f"{result.slug}-benchmark.csv",
                       mime="text/csv", key="bench-csv")


# -- reference results (assets/bench/*.json, written by benchmarks/reference_tables.py) ---------

@st.cache_data(show_spinner=False)
def reference_tables() -> list[dict]:
    tables = []
    for path in sorted(ASSETS.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "table" in data:
            tables.append(data)
    return sorted(tables, key=lambda t: t.get("order", 99))


def render_reference(tables: list[dict]) -> None:
    if not tables:
        st.caption("No reference results are committed.")
        return
    env = tables[0].get("env", {})
    st.caption(f"Measured once on {env.get('describe', 'a GPU')} with benchmarks/gpu_bench.py "
               f"(the same code path as this page); committed in assets/bench/.")
    for t in tables:
        st.markdown(f"**{t['title']}**")
        if t.get("note"):
            st.caption(t["note"])
        st.dataframe(pd.DataFrame(t["table"]["rows"], columns=t["table"]["columns"]), hide_index=True,
                     width="stretch", key=f"ref-{t['id']}")
        png = ASSETS / f"{t['id']}.png"
        if png.exists():
            st.image(str(png))
