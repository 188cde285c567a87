"""Panels of the fusion lesson (assets/lessons/fusion.md). Bias-add + ReLU and the tanh GELU as
separate torch ops, as one Triton kernel (kernels/bias_relu.py, kernels/gelu.py) and as
torch.compile generates them. Without a GPU: the eager ops and their bytes from the FX graph
Inductor recorded (tests/fixtures/inductor_cache, made on an H100), the loads and stores of every
PTX (compiled here; Inductor's from that cache). Measured time and GB/s from
assets/gpu/gpu_lessons.json when it is committed."""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from app.lessons.common import ROOT, Ctx, gpu_label, gpu_lessons, library_kernels, not_measured, read_json, table
from inspectors.explain import fusion
from inspectors.read import memops
from inspectors.read.fxgraph import FxGraph
from inspectors.session import caches

FIXTURE = ROOT / "tests" / "fixtures" / "inductor_cache"
FIXTURE_RUN = ROOT / "benchmarks" / "results" / "gpu_torch_compile.json"
# lesson example -> (inductor example, the library kernel, its @jit name)
EXAMPLES = {"bias_relu": ("bias_add_relu", "bias_relu", "triton_poi_fused_add_relu_0"),
            "gelu": ("gelu_tanh", "gelu", "gelu_kernel")}
TITLES = {"bias_relu": "bias-add + ReLU", "gelu": "GELU (tanh)"}


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


@st.cache_data(show_spinner=False, max_entries=2)
def _fixture() -> dict:
    """{example: (its FxGraph, [its Inductor kernels' cache folders])} from the committed H100 cache."""
    run = read_json(FIXTURE_RUN) or {"examples": {}}
    graphs = caches.graph_fragments_in(FIXTURE)
    found = {k.name: k for k in caches.collect(FIXTURE)}
    out = {}
    for ours, (theirs, _, _) in EXAMPLES.items():
        names = [k["name"] for k in run["examples"].get(theirs, {}).get("kernels", [])]
        for name in names:
            if name in graphs:
                out[ours] = (graphs[name], list(found[name].cache_entries) if name in found else [])
    return out


def _graph(example: str) -> FxGraph | None:
    got = _fixture().get(example)
    return got[0] if got else None


def _shape(g: FxGraph) -> str:
    first = next((n for n in g.nodes if n.kind == "placeholder"), None)
    return " × ".join(f"{d:,}" for d in first.shape) if first else "?"


def graph(ctx: Ctx):
    """The eager ops of each example: one kernel each, every intermediate written and read back."""
    facts = {}
    for example in EXAMPLES:
        g = _graph(example)
        with st.container():
            st.markdown(f"**{TITLES[example]}**")
            code = caches.EXAMPLES[EXAMPLES[example][0]]
            st.code("def fn" + code.split("def fn", 1)[1].split("def example_inputs")[0].rstrip(), language="python")
            if g is None:
                st.warning("The Inductor cache tests/fixtures/inductor_cache has no graph for this example.")
                continue
            t = fusion.traffic(g)
            table(pd.DataFrame([{"eager kernel": f"{i}. {op.op}", "reads": ", ".join(n for n, _ in op.reads),
                                 "writes": op.name, "MB moved": _mb(op.bytes)} for i, op in enumerate(t.ops, 1)]))
            facts |= {f"{example}.eager_kernels": str(t.eager_kernels), f"{example}.intermediates": str(t.intermediates),
                      f"{example}.shape": _shape(g)}
    st.caption("The eager ops, their tensors and shapes: the FX graph Inductor recorded above its fused kernel "
               "(`# Graph fragment` in the wrapper of tests/fixtures/inductor_cache, torch 2.11 on an H100).")
    return facts


def bytes_(ctx: Ctx):
    """Bytes each version must move: one round trip per eager op vs one for the fused kernel."""
    rows, facts, chart = [], {}, {}
    for example in EXAMPLES:
        g = _graph(example)
        if g is None:
            continue
        t = fusion.traffic(g)
        rows += [{"example": f"{TITLES[example]} ({_shape(g)} fp32)", "version": "separate torch ops",
                  "kernels": t.eager_kernels, "MB read": _mb(t.eager_read), "MB written": _mb(t.eager_write),
                  "MB total": _mb(t.eager_bytes), "× fused": f"{t.ratio:.1f}"},
                 {"example": f"{TITLES[example]} ({_shape(g)} fp32)", "version": "one fused kernel", "kernels": 1,
                  "MB read": _mb(t.fused_read), "MB written": _mb(t.fused_write), "MB total": _mb(t.fused_bytes),
                  "× fused": "1.0"}]
        chart[TITLES[example]] = (t.eager_bytes / 1e6, t.fused_bytes / 1e6)
        facts |= {f"{example}.eager_mb": _mb(t.eager_bytes), f"{example}.fused_mb": _mb(t.fused_bytes),
                  f"{example}.ratio": f"{t.ratio:.1f}", f"{example}.fused_read_mb": _mb(t.fused_read),
                  f"{example}.fused_write_mb": _mb(t.fused_write)}
    table(pd.DataFrame(rows))
    _mb_bars([(f"{name} · {version}", version, mb) for name, pair in chart.items()
              for version, mb in zip(("separate torch ops", "one fused kernel"), pair)])
    return facts


def _mb_bars(items: list[tuple[str, str, float]]):
    """Horizontal bars, one per (label, version, MB), the value written at the end of each."""
    df = pd.DataFrame([{"what": label, "version": version, "MB": round(mb, 1)} for label, version, mb in items])
    base = alt.Chart(df).encode(y=alt.Y("what:N", sort=None, title=None,
                                        axis=alt.Axis(labelLimit=420, labelOverlap=False, labelFontSize=16)),
                                x=alt.X("MB:Q", title="MB moved", axis=alt.Axis(labelFontSize=14, titleFontSize=16)))
    chart = base.mark_bar(size=30).encode(color=alt.Color("version:N", legend=None)) + \
        base.mark_text(align="left", dx=6, fontSize=16).encode(text=alt.Text("MB:Q", format=",.1f"))
    st.altair_chart(chart.properties(height=48 * len(df)), width="stretch")


def _ptx_row(who: str, kernel, ptx: str) -> dict:
    ops = [m for m in memops.ptx_memops(ptx) if m.space == "global"]
    loads, stores = [m for m in ops if m.kind == "load"], [m for m in ops if m.kind == "store"]
    widths = lambda group: ", ".join(sorted({f"v{m.vector}" if m.vector > 1 else "scalar" for m in group})) or "—"  # noqa: E731
    return {"kernel": who, "warps": kernel.options.get("num_warps", "?"), "ld.global": len(loads),
            "load widths": widths(loads), "load bytes / thread": sum(m.bytes for m in loads),
            "st.global": len(stores), "store widths": widths(stores), "store bytes / thread": sum(m.bytes for m in stores)}


@st.cache_data(show_spinner=False, max_entries=4)
def _inductor_kernels(example: str) -> list:
    got = _fixture().get(example)
    return [caches.open_kernel(folder).kernel for folder in (got[1] if got else [])]


def inductor_ptx(ctx: Ctx):
    """Loads and stores per thread in the PTX of our Triton kernels (compiled here) and of the
    kernels torch.compile generated (the H100 cache)."""
    rows, facts = [], {}
    same = ("ld.global", "load widths", "st.global", "store widths")
    for example, (_, slug, jit_name) in EXAMPLES.items():
        ours = next((k for k in library_kernels(slug) if k.name == jit_name), None)
        mine = None
        if ours is not None:
            mine = _ptx_row(f"Triton: {ours.name} (here, {ours.target})", ours, ours.stages["ptx"])
            rows.append({"example": TITLES[example], **mine})
        matches = []
        for i, k in enumerate(_inductor_kernels(example), 1):
            row = _ptx_row(f"torch.compile: {k.name} (config {i}, H100 cache)", k, k.stages.get("ptx", ""))
            rows.append({"example": TITLES[example], **row})
            facts |= {f"{example}.inductor_name": k.name, f"{example}.inductor_configs": str(i)}
            if mine and all(row[c] == mine[c] for c in same):
                matches.append(str(i))
        facts[f"{example}.inductor_same"] = (f"config {', '.join(matches)} has exactly our loads and stores"
                                             if matches else "no config has exactly our loads and stores")
    table(pd.DataFrame(rows))
    got = _inductor_kernels("bias_relu")
    if got:
        lines = [f"{m.line:>4}  {m.text[:100]}" for m in memops.ptx_memops(got[0].stages.get("ptx", "")) if m.space == "global"]
        st.markdown(f"**PTX · {got[0].name} · generated by torch.compile (H100 cache)** — its global loads and stores:")
        st.code("\n".join(lines), language=None, wrap_lines=True)
    st.caption("Each row counts instructions one thread executes; widths are elements per instruction. The "
               "torch.compile kernels come from the committed cache tests/fixtures/inductor_cache (torch 2.11, "
               "Triton 3.6, H100); Inductor compiled one folder per autotune config it tried.")
    return facts


def _pick(data: dict, example: str) -> list[dict]:
    return (data.get("fusion") or {}).get("examples", {}).get(example, {}).get("rows", [])


def _ncu_bytes(data: dict, example: str, version: str) -> float | None:
    launches = (data.get("ncu") or {}).get("cases", {}).get(f"fusion/{example}/{version}")
    if not launches:
        return None
    total = [(l.get("dram__bytes_read.sum") or 0) + (l.get("dram__bytes_write.sum") or 0) for l in launches]
    return sum(total)


def measured(ctx: Ctx):
    """Time and GB/s of each version on the GPU of the committed run."""
    data = gpu_lessons()
    if data is None or not (data.get("fusion") or {}).get("examples"):
        not_measured("Time, GB/s and the DRAM bytes Nsight Compute counts for each version")
        return None
    copy = (data.get("ceilings") or {}).get("copy_gbps")
    st.markdown(f"Each version {gpu_label(data)}; `triton.testing.do_bench` median. GB/s = the bytes that version "
                f"moves (its own model: every eager op reads its inputs and writes its result) ÷ time"
                + (f"; a device-to-device copy runs at **{copy:,.0f} GB/s**." if copy else "."))
    facts = {}
    for example in EXAMPLES:
        rows = _pick(data, example)
        if not rows:
            continue
        fused = next((r for r in rows if r["version"].startswith("Triton")), rows[-1])
        shape = " × ".join(f"{d:,}" for d in data["fusion"]["shapes"][example][0])
        st.markdown(f"**{TITLES[example]}**, {shape} fp32")
        out = []
        for r in rows:
            dram = _ncu_bytes(data, example, r["version"])
            out.append({"version": r["version"], "kernels": r["kernels"], "MB moved (model)": _mb(r["bytes"]),
                        "MB DRAM (ncu)": _mb(dram) if dram is not None else "—", "ms": f"{r['ms']:.3f}",
                        "GB/s": f"{r['gbps']:,.0f}", "% of copy": f"{100 * r['gbps'] / copy:.0f} %" if copy else "—",
                        "time ÷ Triton's": f"{r['ms'] / fused['ms']:.2f}"})
            slug = "eager" if r["version"] == "separate torch ops" else "triton" if r["version"].startswith("Triton") \
                else "compile" if r["version"] == "torch.compile" else "one_op"
            facts |= {f"{example}.{slug}_ms": f"{r['ms']:.3f}", f"{example}.{slug}_gbps": f"{r['gbps']:,.0f}",
                      f"{example}.{slug}_speedup": f"{r['ms'] / fused['ms']:.1f}"}
        eager = next((r for r in rows if r["version"] == "separate torch ops"), None)
        if eager:
            facts[f"{example}.model_ratio"] = f"{eager['bytes'] / fused['bytes']:.1f}"
        table(pd.DataFrame(out))
    if copy:
        facts["copy_gbps"] = f"{copy:,.0f}"
    facts["gpu"] = data.get("env", {}).get("gpu", "?")
    return facts


def seed(ctx: Ctx):
    """The seeds' tables beside this GPU's figures: the CS336 notes' GELU (ms) and the CUDA-mode
    talk's relu(x + y·w) sweep (GB/s). The seeds' own figures are quoted in the lesson file."""
    data = gpu_lessons()
    if data is None or not (data.get("fusion") or {}).get("examples"):
        not_measured("This GPU's column of the seeds' tables")
        return None
    seed_ms = ctx.options.get("seed_gelu_ms", {})
    rows = _pick(data, "gelu")
    st.markdown(f"**GELU (tanh), {data['fusion']['shapes']['gelu'][0][0]:,} fp32** — {gpu_label(data)}")
    table(pd.DataFrame([{"version": r["version"], "ms here": f"{r['ms']:.3f}", "GB/s here": f"{r['gbps']:,.0f}",
                         "seed ms (their GPU)": seed_ms.get(r["version"], "—")} for r in rows]))
    sweep = (data["fusion"].get("add_mul_act") or {}).get("rows", [])
    seed_gbps = ctx.options.get("seed_add_mul_gbps", {})
    if sweep:
        st.markdown("**relu(x + y · w), GB/s over the talk's batch / weight sizes**")
        table(pd.DataFrame([{"batch": f"{r['batch']:,}", "width": r["width"],
                             **{k: f"{v:,.3g}" for k, v in r["gbps"].items()},
                             **{f"seed {name}": (seed_gbps.get(str(r["batch"])) or ["—"] * 3)[i]
                                for i, name in enumerate(("Triton", "torch", "TorchScript"))}} for r in sweep]))
    st.caption(ctx.options.get("seed_note", ""))
    return {}


PANELS = {"fusion.graph": graph, "fusion.bytes": bytes_, "fusion.inductor": inductor_ptx,
          "fusion.measured": measured, "fusion.seed": seed}
