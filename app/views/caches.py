"""Kernels you did not write: browse Triton's caches and dump folders, and see what
torch.compile generated for a small PyTorch function. Any kernel opens in the stage viewer
with the insight panels, read from the cache's files (nothing is compiled again).

Top to bottom: where the kernels come from (a cache folder, or torch.compile), the list,
and the opened kernel: its card, stage panels, and what they mean.

One run, top to bottom (`caches()` at the end of the file): the title and the compile server
(`_server_status`), the mode, then either the cache browser (`cache_browser`: the folder,
`_cache_folder`, and its kernels, `_cache_list`) or torch.compile (`torch_compile`: the function
and its run, `_tc_run`, the kernels it made or the H100 fixture's, `_tc_kernels` and
`_gpu_summary`, the one to open, `_tc_open`), and the opened kernel (`render_kernel`).
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import streamlit as st

from app.backend import presence, services
from app.widgets import model_lines, panels
from app.render.text import plain
from inspectors.session import caches as cache
from inspectors.base import settings as settings_mod
from inspectors.base import stages
from inspectors.base import targets
from inspectors.base.result import CompileRequest
from inspectors.explain import step

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "inductor_cache"            # made on an H100, see below
GPU_SUMMARY = ROOT / "benchmarks" / "results" / "gpu_torch_compile.json"
PAGE_SIZE = 50
OTHER = "Another folder…"


# ---- thin cached wrappers (logic lives in inspectors.session.caches) -------------
@st.cache_data(show_spinner="Listing kernels…", max_entries=16)
def _scan(root: str, root_mtime: float) -> cache.ScanResult:
    return cache.scan(root)


@st.cache_data(show_spinner="Reading the kernel's files…", max_entries=32)
def _open(path: str, mtime: float, roots: tuple[str, ...], confined: str = "") -> cache.OpenedKernel:
    return cache.open_kernel(path, roots, confined=Path(confined) if confined else None)


@st.cache_data(show_spinner=False, max_entries=8)
def _collect(inductor_dir: str, mtime: float) -> tuple[cache.InductorKernel, ...]:
    return cache.collect(Path(inductor_dir))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _source_roots(settings: settings_mod.Settings) -> tuple[str, ...]:
    """Where a bare file name in a TTIR (`vector_add.py`, from Triton Lens's own cache) may be."""
    return (str(ROOT / "kernels"), str(settings.workspace_dir))


# ---- the kernel viewer, shared by both modes ---------------------------------------------------
def _server_status() -> None:
    """The compile pool and the shared result cache: what they hold, and a way to empty it."""
    with st.expander("Compile server: workers, queue, result cache", expanded=False):
        pool = services.lens().engine().status()
        size = services.lens().cache_size()
        st.markdown(f"**{pool['workers']}** warm compile workers ({pool['slots']} now, spares included) · "
                    f"**{pool['running']}** compiling · **{pool['waiting']}** waiting · {pool['completed']} done  \n"
                    + (f"Students' own sandboxes: **{pool['own']['live']}** warm of at most {pool['own']['cap']} "
                       f"({pool['own']['busy']} compiling; {pool['own']['started']} started, "
                       f"{pool['own']['evicted']} stopped for room)  \n" if "own" in pool else "")
                    + f"Result cache, shared by every session: {size.describe()}")
        teacher = presence.is_teacher(services.who(), settings_mod.load())
        students = presence.rows(services.lens().engines, services.who(), teacher=teacher,
                                 results=services.lens().results)
        if "own" in pool and students:       # a class server: what each holds (a student: their own)
            st.caption((f"Per student ({len(students)}, as a teacher sees them)" if teacher else "Your session")
                       + ": the server's CPU for the page's runs and their compiles' answers, what the session "
                       "keeps in its memory "
                       "(an estimate), what its results hold of the shared cache and the launch store, "
                       "its history on disk, the own sandbox and its memory")
            st.dataframe(students, hide_index=True, width="stretch")
        if st.button("Clear the result cache", key="clear_results",
                     help="Every session compiles again on its next Compile; the Triton cache is kept"):
            services.lens().clear_results()
            st.toast("Result cache cleared")
            st.rerun()


def _timing_rows(timing: dict) -> None:
    """Compiled vs eager as the Benchmark page shows a timing: median of rounds in both orders
    with the L2 flushed and the spread, the GPU's time (CUDA graph replay) first, then a call
    from Python (do_bench), the profiler's kernel time as the check, and why compiled may be slow."""
    rows = []
    for name in ("eager", "compiled"):
        s, g = timing[name], timing.get(f"{name}_gpu")
        rows.append({"": name,
                     "GPU ms (graph replay)": round(g["median_ms"], 4) if g else None,
                     "GPU p20–p80 ms": f"{g['p20_ms']:.4f}–{g['p80_ms']:.4f}" if g else None,
                     "kernels ms (profiler)": timing.get(f"{name}_kernel_ms"),
                     "per call from Python ms (do_bench)": round(s["median_ms"], 4),
                     "do_bench p20–p80 ms": f"{s['p20_ms']:.4f}–{s['p80_ms']:.4f}",
                     "host µs / call": timing.get(f"{name}_host_us")})
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption(" · ".join(timing.get("notes", ())) + (" · not measured: " + "; ".join(timing["errors"])
                                                       if timing.get("errors") else ""))


def render_kernel(opened: cache.OpenedKernel, key: str) -> None:
    kernel, entry = opened.kernel, opened.entry
    md, opts = kernel.metadata, kernel.options
    when = datetime.fromtimestamp(entry.mtime).strftime("%Y-%m-%d %H:%M") if entry.mtime else "?"
    st.markdown(f"**{kernel.name}** for `{kernel.target}` ({targets.parse(kernel.target).label}) · "
                f"num_warps={opts.get('num_warps')} · num_stages={opts.get('num_stages')} · "
                f"shared memory {md.get('shared', 0)} B · compiled {when}"
                + (f" · Triton {entry.triton_version}" if entry.triton_version else ""))
    st.caption(f"Folder `{entry.path}` · " + (" · ".join(a.describe() for a in kernel.args) or "no arguments read"))
    if opened.source_path:
        st.caption(f"Python source: `{opened.source_path}` (read from disk now)")
    for note in opened.notes:
        st.info(note)
    backend = targets.parse(kernel.target).backend
    available = [s for s in stages.stages_for(backend) if s.name in kernel.stage_names()]
    if not available:
        st.error("This folder has no stage the viewer can show.")
        return
    machine = stages.machine_stage(s.name for s in available) or available[-1].name
    default = [n for n in ("source", "ttgir", machine) if n in kernel.stage_names()] or [available[0].name]
    chosen = st.multiselect("Stages side by side", [s.name for s in available], default=default,
                            key=f"{key}-stages-{backend}", format_func=lambda n: stages.get(n).label,
                            max_selections=3)
    insight = services.insight(kernel, opened.filename, with_sass="sass" in chosen)
    smap = insight.source_map
    mapped = sorted(smap.python_to_stage())
    source_lines = kernel.stages.get("source", "").splitlines()
    selected_py = st.selectbox(
        "Follow a Python line (or click any line in a panel)", [None] + mapped, key=f"{key}-follow",
        format_func=lambda n: "—" if n is None else (
            f"{n}: {source_lines[n - 1].strip()[:90]}" if n <= len(source_lines) else f"line {n} of {opened.filename}"))
    panels.render_panels(kernel, chosen, smap, mapped, f"{key}-follow", selected_py)
    panels.render_insight(insight, kernel, source_lines)


# ---- cache browser -----------------------------------------------------------------------------
def _cache_folder(settings: settings_mod.Settings) -> Path | None:
    """The folder picked: a default location, the H100 fixture, or one typed (None: none yet).
    On a class server the caches hold every student's kernels: only the shared fixture is offered."""
    locations = [] if settings.per_user_workspaces else cache.default_locations(settings.triton_cache_dir)
    if FIXTURE.is_dir():
        locations.append(("torch.compile cache from an H100 (fixture)", FIXTURE / "triton" / "0"))
    labels = [f"{label} — {path}" for label, path in locations] + ([] if settings.per_user_workspaces else [OTHER])
    pick = st.selectbox("Folder", labels, key="cache_location")
    if pick == OTHER:
        typed = st.text_input("Folder path", key="cache_folder",
                              placeholder="~/.triton/cache, /tmp/torchinductor_me/triton/0, a TRITON_DUMP_DIR, a copy")
        return Path(typed).expanduser() if typed.strip() else None
    return locations[labels.index(pick)][1]


def _cache_list(root: Path, settings: settings_mod.Settings) -> cache.OpenedKernel | None:
    """The folder's kernels: searched, a page of them listed, and the one picked opened."""
    result = _scan(str(root), _mtime(root))
    if result.error:
        st.error(plain(result.error))
    query = st.text_input("Search", key="cache_query", placeholder="kernel name, target, hash, 'partial'…")
    entries = [e for e in result.entries if e.matches(query)]
    bad = sum(e.status != "ok" for e in entries)
    st.caption(f"{len(result.entries)} kernels in `{root}` (listed in {result.seconds * 1000:.0f} ms)"
               + (f", {result.skipped} other folders skipped" if result.skipped else "")
               + (f"; {len(entries)} match" if query else "")
               + (f"; {bad} incomplete or broken" if bad else ""))
    if not entries:
        if not result.error:
            st.info("No kernels here" + (" match the search." if query else "."))
        return None
    pages = (len(entries) + PAGE_SIZE - 1) // PAGE_SIZE
    page = st.number_input(f"Page (of {pages}, {PAGE_SIZE} a page)", min_value=1, max_value=pages,
                           value=1, key="cache_page") if pages > 1 else 1
    shown = entries[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    st.dataframe([{"kernel": e.name or "?", "target": e.target or "?", "warps": e.num_warps,
                   "stages": e.num_stages, "compiled": datetime.fromtimestamp(e.mtime).strftime("%Y-%m-%d %H:%M")
                   if e.mtime else "", "size": f"{e.size / 1024:.0f} KiB",
                   "status": e.status if e.status == "ok" else f"{e.status}: {e.problem}",
                   "kind": e.kind, "folder": e.key} for e in shown], hide_index=True, width="stretch")
    options = [None] + [e.path for e in shown]
    by_path = {e.path: e for e in shown}
    chosen_path = st.selectbox(
        "Open a kernel", options, key="cache_pick",
        format_func=lambda p: "—" if p is None else
        f"{by_path[p].name or '?'} · {by_path[p].target or '?'} · {by_path[p].key[:12]}"
        + ("" if by_path[p].status == "ok" else f" · {by_path[p].status}"))
    if not chosen_path:
        return None
    entry = by_path[chosen_path]
    try:
        return _open(chosen_path, entry.mtime, _source_roots(settings))
    except (OSError, ValueError) as e:
        st.error(f"Cannot open {entry.key}: {e}")
        return None


def cache_browser(settings: settings_mod.Settings) -> cache.OpenedKernel | None:
    root = _cache_folder(settings)
    if root is None:
        st.info("Type the path of a Triton cache, a dump folder, a torch.compile cache, or one kernel's folder.")
    elif not root.is_dir():
        st.error(f"{root} is not a folder on this machine.")
    else:
        return _cache_list(root, settings)
    return None


# ---- torch.compile -----------------------------------------------------------------------------
def _tc_run(settings: settings_mod.Settings, gpu: bool) -> cache.InductorRun | None:
    """The example's function file, Run (a GPU only), and the session's last run (its error shown)."""
    example = st.selectbox("Example", list(cache.EXAMPLES), key="tc_example",
                           format_func=lambda n: n.replace("_", " "))
    if st.session_state.get("tc_loaded") != example:
        st.session_state["tc_loaded"] = example
        st.session_state["tc_source"] = cache.EXAMPLES[example]
    st.text_area("PyTorch function file: fn(...) and example_inputs() (tensors made without a device)",
                 key="tc_source", height=260)
    run_clicked = st.button("Run torch.compile", type="primary", key="tc_run", disabled=not gpu,
                            help=None if gpu else "needs an NVIDIA GPU")
    if run_clicked:
        with st.status("torch.compile in a worker process…", expanded=False) as status:
            run = cache.torch_compile(st.session_state["tc_source"], max(120.0, 2 * settings.compile_timeout_s),
                                      settings)
            status.update(label="Compiled" if run.ok else "torch.compile failed",
                          state="complete" if run.ok else "error")
        st.session_state["tc_run_result"] = run
    run = st.session_state.get("tc_run_result")
    if run is not None and not run.ok:
        st.error(plain(f"{run.error['kind']}: {run.error['message']}"))
        if run.error.get("detail"):
            with st.expander("Details"):
                st.code(run.error["detail"], language=None)
    return run


def _gpu_summary() -> None:
    """What `benchmarks/gpu_torch_compile.py` measured on a GPU machine for the same examples."""
    summary = json.loads(GPU_SUMMARY.read_text())
    def spread(r, key):
        s = (r.get("timing") or {}).get(key)
        return f"{s['p20_ms']:.4f}–{s['p80_ms']:.4f}" if s else None
    gpu = any((r.get("timing") or {}).get("compiled_gpu") for r in summary.get("examples", {}).values())
    rows = [{"example": name, "kernels": ", ".join(k["name"] for k in r.get("kernels", ())),
             ("eager ms (GPU)" if gpu else "eager ms"): r.get("eager_ms"),
             ("compiled ms (GPU)" if gpu else "compiled ms"): r.get("compiled_ms"),
             "compiled p20–p80 ms": spread(r, "compiled_gpu" if gpu else "compiled"),
             "compiled per call from Python ms": (r["timing"]["compiled"]["median_ms"]
                                                  if gpu and r.get("timing") else None),
             "max |compiled − eager|": r.get("max_abs_diff")}
            for name, r in summary.get("examples", {}).items()]
    st.markdown(f"**From a GPU machine:** {summary.get('gpu')}, torch {summary.get('torch')}, "
                f"Triton {summary.get('triton')} (`{GPU_SUMMARY.relative_to(ROOT)}`)")
    st.dataframe(rows, hide_index=True, width="stretch")


def _tc_kernels(run: cache.InductorRun | None) -> tuple[tuple, Path]:
    """The kernels of a good run (with its timing), else the H100 fixture's (with its GPU's figures).
    (The kernels, the Inductor folder they are in.)"""
    if run is not None and run.ok:
        kernels = run.kernels
        st.success(f"{len(kernels)} Triton kernel(s) on {run.gpu} · max |compiled − eager| = {run.max_abs_diff:.2e}")
        if run.timing:
            _timing_rows(run.timing)
        return kernels, Path(run.inductor_dir)
    kernels = _collect(str(FIXTURE), _mtime(FIXTURE)) if FIXTURE.is_dir() else ()
    if GPU_SUMMARY.exists():
        _gpu_summary()
    return kernels, FIXTURE


def _tc_open(kernels, inductor_dir: Path, run: cache.InductorRun | None) -> cache.OpenedKernel | None:
    """The kernels in a table and the config picked opened (a run's read confined to its folder)."""
    st.dataframe([{"kernel": k.name, "kind": k.category, "fuses (FX nodes)": k.fused_ops,
                   "ATen ops": ", ".join(k.aten_ops), "configs compiled": len(k.cache_entries),
                   "loads": k.meta.get("num_load"), "stores": k.meta.get("num_store"),
                   "reductions": k.meta.get("num_reduction")} for k in kernels],
                 hide_index=True, width="stretch")
    choices = [None] + [(k.name, e) for k in kernels for e in k.cache_entries]
    pick = st.selectbox("Open a kernel", range(len(choices)), key="tc_pick",
                        format_func=lambda i: "—" if i == 0 else
                        f"{choices[i][0]} · config {Path(choices[i][1]).name[:12]}")
    if not pick:
        return None
    path = Path(choices[pick][1])
    try:
        return _open(str(path), _mtime(path), (str(inductor_dir),),
                     str(inductor_dir.parent) if run is not None and run.ok else "")
    except (OSError, ValueError) as e:
        st.error(f"Cannot open {path}: {e}")
        return None


TC_FILE = "model.py"          # the function file's name in a compile for the target


def _tc_on_target(settings: settings_mod.Settings) -> None:
    """Without a GPU: the function file compiled for the target GPU by the compile worker (every
    kernel Inductor writes for it, each candidate config a launch; nothing run or timed), its
    kernels listed, one opened with its stages and the model's lines it computes."""
    target = st.selectbox("Target", ["cuda:90", "cuda:80", "hip:gfx942"], key="tc_target",
                          format_func=lambda t: targets.parse(t).label)
    if st.button(f"Compile for {targets.parse(target).label.split(' · ')[0]} (no GPU needed)", key="tc_target_run",
                 help="Dynamo and AOTAutograd trace the function here on the CPU; Inductor writes its kernels "
                      "for the target; every kernel and config is compiled, none is run"):
        source = st.session_state["tc_source"]
        request = CompileRequest(source=cache.target_driver(source), filename=TC_FILE, target=target, sass=False)
        with st.spinner("torch.compile for the target in a worker process…"):
            st.session_state["tc_target_result"] = (services.compile_kernel(request, max(120.0, 2 * settings.compile_timeout_s)),
                                                    request.source)
        st.session_state["tc_launch"] = 0
    done = st.session_state.get("tc_target_result")
    if done is None:
        return
    result, source = done
    if result.error is not None and not result.kernels:
        st.error(plain(f"{result.error.kind}: {result.error.message}"))
        if result.error.detail:
            with st.expander("Details"):
                st.code(result.error.detail, language=None)
        return
    if not result.kernels:         # Inductor left the graphs whole to library kernels
        st.info("torch.compile made no Triton kernel: its graphs call only "
                f"{step.outside_ops(result.outside)}, outside Triton, as the GPU runs them")
        return
    heads = result.headers
    st.success(f"{len(heads)} kernel config(s) for {heads[0].target}, compiled without a GPU "
               "(Inductor would time the configs of a kernel on the GPU to choose one)")
    st.dataframe([{"launch": i + 1, "kernel": k.name, "graph": k.origin.get("graph"),
                   "config": k.label.split(" · ", 1)[-1], "fuses": ", ".join(k.origin.get("source_nodes", ())),
                   "ATen ops": ", ".join(k.origin.get("aten_ops", ())),
                   "lines": ", ".join(map(str, k.origin.get("lines", {}).get(TC_FILE, ())))}
                  for i, k in enumerate(heads)], hide_index=True, width="stretch")
    i = st.selectbox("Open a launch", range(len(heads)), key="tc_launch",
                     format_func=lambda i: f"{i + 1}. {heads[i].label}")
    kernel = result.kernels[min(i, len(result.kernels) - 1)]
    model_lines.render(result, kernel, source, TC_FILE, launch_key="tc_launch")
    insight = services.insight(kernel, TC_FILE)
    smap = insight.source_map
    chosen = [s for s in ("source", "ttgir", stages.machine_stage(kernel.stages)) if s in kernel.stages]
    panels.render_panels(kernel, chosen, smap, sorted(smap.python_to_stage()), "tc_follow",
                         st.session_state.get("tc_follow"))


def torch_compile(settings: settings_mod.Settings) -> cache.OpenedKernel | None:
    gpu = cache.gpu_probe()
    if not gpu:
        st.info("**No GPU on this machine.** **Compile for the target** below shows every Triton kernel Inductor "
                "writes for the GPU you pick, compiled here without one (as a kernel file's `torch.compile` is in "
                "the explorer). Timing needs a GPU: further down, the kernels and timings "
                "`benchmarks/gpu_torch_compile.py` measured on an H100 for these same examples.")
    run = _tc_run(settings, gpu)
    if not gpu:
        _tc_on_target(settings)
        st.divider()
    kernels, inductor_dir = _tc_kernels(run)
    opened = _tc_open(kernels, inductor_dir, run) if kernels else None
    bench = ROOT / "app" / "views" / "benchmark.py"
    if bench.exists():
        try:
            st.page_link("views/benchmark.py", label="Time compiled vs eager in the benchmark page", icon="⏱")
        except Exception:  # noqa: BLE001 - the page may not be registered yet
            st.caption("Compiled vs eager timing: see the benchmark page.")
    return opened


# ---- page --------------------------------------------------------------------------------------
def caches() -> None:
    settings = settings_mod.load()
    st.title("Kernels from caches and torch.compile")
    st.caption("Open kernels that Triton already compiled — your Triton cache, a `TRITON_KERNEL_DUMP` folder, a "
               "cache copied from another machine, or what torch.compile generated — in the stage viewer. Nothing "
               "is compiled again: every stage comes from the cache's files.")
    _server_status()
    mode = st.radio("Kernels from", ["Cache browser", "torch.compile"], horizontal=True, key="caches_mode")
    opened = cache_browser(settings) if mode == "Cache browser" else torch_compile(settings)
    if opened is not None:
        st.divider()
        render_kernel(opened, "cache" if mode == "Cache browser" else "tc")


caches()
