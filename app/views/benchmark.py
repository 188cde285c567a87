"""The Benchmark page: is the kernel fast? On a GPU it is checked against its torch reference
and only then timed (triton.testing.do_bench), beside torch eager and torch.compile; without
a GPU it is checked on the Triton interpreter and nothing is timed.

Top to bottom: what to time (kernel, size or sweep, baselines), Run with a progress bar,
the result (headline figures, chart, table, CSV), then the committed reference results.
Each run is a fresh worker process holding a per-GPU lock: two tabs never time at once,
and a kernel that faults takes down only its worker.

One run, top to bottom (`benchmark()` at the end of the file): the explorer's choices kept
(`keep_explorer_choices`), the title and the GPUs (`header`), what to time (`what_to_time`), the
run if asked (`run_if_asked`), two Triton versions if set up (`versions_box`), the result
(`show_result`), the reference results (`reference_results`).
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from app.backend import services
from app.widgets import bench_view
from inspectors.session import bench
from inspectors.session.bench import BenchRequest, BenchResult
import kernels

EXPLORER_KEYS = ("picker", "source", "target", "num_warps", "num_stages", "constexprs", "signature", "timeout")


@dataclasses.dataclass(frozen=True)
class Choice:
    """What to time, as the widgets say."""
    slug: str
    source: str | None          # the Explorer's edited text, or None for the library file
    size: int
    sweep: bool
    device: int
    providers: tuple[str, ...] | None     # None: every baseline
    run: bool                   # the button pressed


def keep_explorer_choices() -> None:
    """Streamlit forgets the widgets of pages not shown; keep the explorer's choices meanwhile."""
    for key in EXPLORER_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def header() -> list[dict]:
    """The title, how it times, and the GPUs found (none: checked only). The GPUs."""
    st.title("Benchmark")
    st.caption("Checked against the torch reference (torch.testing.assert_close), then timed with "
               "triton.testing.do_bench (median and 20th/80th percentiles, L2 flushed before each run; two runs "
               "per provider, in forward then reverse order, so that none is always timed first). "
               "GB/s and TFLOP/s come from each kernel's bytes/flops model; % is of this GPU's measured "
               "copy bandwidth (memory-bound kernels) or of a large fp16 torch.matmul (compute-bound).")
    probe = bench_view.gpu_probe()
    gpus = probe.get("gpus") or []
    if gpus:
        st.success("GPU: " + ", ".join(f"{g['index']}: {g['name']}" for g in gpus)
                   + f" · torch {probe.get('torch')}, triton {probe.get('triton')}")
    else:
        st.info("**No GPU on this server: timing needs a GPU.** Run checks the kernel against its torch "
                "reference on the Triton interpreter (TRITON_INTERPRET=1) and reports no timing; the reference "
                "results below were measured on a GPU." + (f" ({probe['error']})" if probe.get("error") else ""))
    return gpus


def benchable_kernels() -> dict:
    """The library kernels that declare a benchmark, by slug (none: the page stops)."""
    benchable = {k.slug: info for k in kernels.LIBRARY
                 if (info := bench_view.static_info(k.source(), k.filename)) is not None}
    if not benchable:
        st.error("No library kernel declares a benchmark (BENCH_SIZES, bench_inputs, bench_kernel, ...).")
        st.stop()
    return benchable


def what_to_time(benchable: dict, gpus: list[dict]) -> Choice:
    """Kernel (or the Explorer's edited text of it), size or sweep, baselines, GPU, and the button."""
    left, right = st.columns([2, 3])
    with left:
        slug = st.selectbox("Kernel", list(benchable), key="bench-kernel", format_func=lambda s: kernels.get(s).title)
        info = benchable[slug]
        edited = (st.session_state.get("picker") == slug
                  and st.session_state.get("source", "").strip()
                  and st.session_state["source"] != kernels.get(slug).source())
        use_draft = bool(edited) and st.checkbox("Use my edited text from the Explorer", value=True,
                                                 key="bench-draft")
        source = st.session_state["source"] if use_draft else None
        if use_draft:
            info = bench_view.static_info(source, f"{slug}.py") or info
    with right:
        sweep = st.toggle("Sweep every size", key="bench-sweep",
                          help=f"{len(info.sizes)} sizes: {', '.join(f'{s:,}' for s in info.sizes)}")
        size = st.select_slider(info.size_name, options=list(info.sizes), value=info.size,
                                key=f"bench-size-{slug}", format_func=lambda s: f"{s:,}", disabled=sweep)
        names = list(info.providers())
        chosen = st.multiselect("Timed beside Triton", names[1:], default=names[1:], key=f"bench-providers-{slug}")
        device = 0
        if len(gpus) > 1:
            device = st.selectbox("GPU", [g["index"] for g in gpus], key="bench-gpu",
                                  format_func=lambda i: f"{i}: {gpus[i]['name']}")
    run_clicked = st.button("Check and time" if gpus else "Check (no timing without a GPU)", type="primary",
                            key="bench-run")
    return Choice(slug=slug, source=source, size=size, sweep=sweep, device=device,
                  providers=tuple(chosen) if set(chosen) != set(names[1:]) else None, run=run_clicked)


def run_if_asked(choice: Choice) -> None:
    """The button: a fresh worker checks and times, with a progress bar; the result is stored."""
    if not choice.run:
        return
    request = BenchRequest(slug=choice.slug, source=choice.source, size=choice.size, sweep=choice.sweep,
                           device=choice.device, providers=choice.providers)
    bar = st.progress(0.0, text="Starting the benchmark worker…")

    def on_progress(p: bench.Progress) -> None:
        bar.progress(min(max(p.fraction, 0.0), 1.0), text=p.message)

    result = bench.run(request, on_progress)
    bar.empty()
    st.session_state["bench-result"] = result.to_json()
    st.session_state["bench-result-size"] = choice.size


def versions_box(choice: Choice) -> None:
    """Two Triton versions (README, "Several Triton versions"): A and B timed in turns."""
    versions = services.lens().versions()
    if len(versions) <= 1:
        return
    with st.expander("Time it under two Triton versions"):
        c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        va = c1.selectbox("A", versions, index=0, key="bench-va")
        vb = c2.selectbox("B", versions, index=len(versions) - 1, key="bench-vb")
        rounds = c3.number_input("rounds", 1, 5, 2, key="bench-vrounds",
                                 help="each round runs A and B once, each in its own worker; order A B, B A, ...")
        if st.button("Compare the versions", key="bench-versions", disabled=va == vb):
            request = BenchRequest(slug=choice.slug, source=choice.source, size=choice.size, sweep=choice.sweep,
                                   device=choice.device)
            vbar = st.progress(0.0, text="Starting the benchmark workers…")
            vres = bench.versions(
                services.lens(), request, va, vb, rounds=int(rounds),
                on_progress=lambda p: vbar.progress(min(max(p.fraction, 0.0), 1.0), text=p.message))
            vbar.empty()
            st.session_state["bench-versions-result"] = vres
        vres = st.session_state.get("bench-versions-result")
        if vres is not None:
            st.markdown(f"**Triton {vres.versions[0]} vs {vres.versions[1]}:** {vres.describe()}")
            if vres.ratios:
                st.dataframe([{"size": s, f"{vres.versions[0]} ms": round(a, 4), f"{vres.versions[1]} ms": round(b, 4),
                               "B / A": round(r, 3)} for s, a, b, r in vres.ratios], hide_index=True)
            st.caption("Runs, in order: " + ", ".join(
                f"{v} ({r.mode}{', ' + r.error.kind if r.error else ''})" for v, r in zip(vres.order, vres.runs)))


def show_result(benchable: dict) -> None:
    """The last run's result (headline figures, chart, table, CSV), or what to do."""
    stored = st.session_state.get("bench-result")
    if stored is None:
        st.info("Pick a kernel and a size, then press the button. A sweep times every size; each run "
                "starts a fresh worker process and waits its turn if another benchmark holds this GPU.")
        return
    result = BenchResult.from_json(stored)
    st.subheader(f"{kernels.get(result.slug).title if result.slug in benchable else result.slug}")
    bench_view.render_result(result, st.session_state.get("bench-result-size", 0))


def reference_results() -> None:
    st.divider()
    st.subheader("Reference results")
    bench_view.render_reference(bench_view.reference_tables())


def benchmark() -> None:
    keep_explorer_choices()
    gpus = header()
    benchable = benchable_kernels()
    choice = what_to_time(benchable, gpus)
    run_if_asked(choice)
    versions_box(choice)
    show_result(benchable)
    reference_results()


benchmark()
