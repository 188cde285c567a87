"""The Compare page: two compiles side by side. Either any two from the history (the
explorer's "Compare with previous" lands here with the last two picked), or one kernel
compiled with two option sets (BLOCK 512 vs 1024, num_warps 4 vs 8, sm_80 vs sm_90), or, when the
server has extra Triton versions set up, by two Triton versions (3.6.0 vs 3.9.0: what only the
version change explains is said under the headline; a version that cannot make a stage says so
while the other's stages are compared).

Top to bottom: what to compare, the launch, the delta table (its headline first:
"loads v1 → v4, registers 26 → 18"), then one stage's diff with noise ignored or not.

One run, top to bottom (`compare()` at the end of the file): the title, the mode
(`pick_mode`), the pair, from the history (`_from_history`) or compiled here from two option sets
or Triton versions (`_from_options`, its compiles in `_build`), then the pair shown (`_show`):
the launch (`_pick_launch`), the delta table (`_delta_table`) and one stage's diff (`_stage_diff`).
"""
from __future__ import annotations

import streamlit as st

from app.backend import services
from app.render import diff_html
from app.state import keep, keys, records, workspace
from app.widgets import panels
from app.render.text import plain
from inspectors.read.sass import SassError
from inspectors.explain import diff
from inspectors.session import files
from inspectors.session.compare import delta as launch_delta
from inspectors.session.records import CompileRecord, make as make_record
from inspectors.explain.version_notes import version_headline, version_notes
from inspectors.base import stages
from inspectors.base import targets
from inspectors.base.result import CompileRequest, KernelResult
import kernels

WARPS = [None, 1, 2, 4, 8, 16, 32]
STAGE_COUNTS = [None, 1, 2, 3, 4, 5]
EXPLORER = "explorer"
MODES = {"history": "Two compiles from the history", "options": "One kernel, two option sets",
         "versions": "One kernel, two Triton versions"}


def pick_mode() -> str:
    """History, option sets or (with extra Triton versions set up) versions; the explorer's
    "Compare with previous" (its pick waiting in the session) lands on the history."""
    modes = ["history", "options"] + (["versions"] if len(services.lens().versions()) > 1 else [])
    if st.session_state.get("cmp-mode") not in modes or st.session_state.get("compare_pick"):
        st.session_state["cmp-mode"] = "history"
    return st.segmented_control("What to compare", modes, key="cmp-mode", format_func=MODES.get) or "history"


def _swap():
    st.session_state["cmp-a"], st.session_state["cmp-b"] = st.session_state["cmp-b"], st.session_state["cmp-a"]


def _from_history():
    infos = records.all_infos()
    if len(infos) < 2:
        st.info("Nothing to compare yet: compile in the **Explorer**, change something (the kernel, "
                "a constexpr, num_warps, the target), compile again, then press **Compare** above the "
                "panels — or compare two option sets of one kernel here.")
        return None
    ids = [i.id for i in reversed(infos)]            # newest first
    numbers = {i.id: n for n, i in enumerate(infos, 1)}
    by_id = {i.id: i for i in infos}
    pick = st.session_state.pop("compare_pick", None)
    if pick and all(p in by_id for p in pick):
        st.session_state["cmp-a"], st.session_state["cmp-b"] = pick
    if st.session_state.get("cmp-a") not in by_id:
        st.session_state["cmp-a"] = ids[1]
    if st.session_state.get("cmp-b") not in by_id:
        st.session_state["cmp-b"] = ids[0]
    def fmt(rid: str) -> str:
        info = by_id[rid]
        short = diff.Figures.from_json(info.figures).short() if info.figures else ""
        return f"#{numbers[rid]} · {info.label()}" + (f" · {short}" if short else "")

    c1, c2, c3 = st.columns([10, 10, 1], vertical_alignment="bottom")
    a = c1.selectbox("A (before)", ids, key="cmp-a", format_func=fmt)
    b = c2.selectbox("B (after)", ids, key="cmp-b", format_func=fmt)
    c3.button("⇄", key="cmp-swap", on_click=_swap, help="Swap A and B")
    rec_a, rec_b = records.load(a), records.load(b)
    if rec_a is None or rec_b is None:
        st.error("That compile is no longer in the history.")
        return None
    return rec_a, rec_b


def _source_choices() -> list[str]:
    ws = workspace.workspace()
    return [EXPLORER] + [k.slug for k in kernels.LIBRARY] + ["ws:" + n for n in ws.names()]


def _source_label(choice: str) -> str:
    if choice == EXPLORER:
        return "The kernel in the Explorer's editor"
    if choice.startswith("ws:"):
        return f"📄 {choice[3:]}"
    return kernels.get(choice).title


def _source_of(choice: str) -> tuple[str, str]:
    """(text, file name) of a source choice."""
    if choice == EXPLORER:
        entry = st.session_state.get("editing") or st.session_state.get("picker") or kernels.LIBRARY[0].slug
        text = st.session_state.get("source") or kernels.get(kernels.LIBRARY[0].slug).source()
        name = entry[3:] if entry.startswith("ws:") else f"{entry}.py"
        return text, name
    if choice.startswith("ws:"):
        return workspace.workspace().read(choice[3:]), choice[3:]
    return kernels.get(choice).source(), f"{choice}.py"


def _option_set(side: str, column) -> None:
    target_keys = list(targets.KNOWN)
    if f"opt-{side}-target" not in st.session_state:
        st.session_state[f"opt-{side}-target"] = st.session_state.get("target", target_keys[0])
    with column:
        st.markdown(f"**{side.upper()}**")
        st.selectbox("Target GPU", target_keys, key=f"opt-{side}-target", format_func=lambda k: targets.parse(k).label)
        versions = services.lens().versions()
        if len(versions) > 1:
            st.selectbox("Triton version", versions, key=f"opt-{side}-triton")
        st.selectbox("num_warps", WARPS, key=f"opt-{side}-warps",
                     format_func=lambda v: "as the launcher says" if v is None else str(v))
        st.selectbox("num_stages", STAGE_COUNTS, key=f"opt-{side}-stages",
                     format_func=lambda v: "as the launcher says" if v is None else str(v))
        st.text_input("constexpr overrides", key=f"opt-{side}-constexprs", placeholder="BLOCK_SIZE=512")


def _default_versions(mode: str) -> None:
    """Each time a mode is entered its Triton versions start over: two option sets are compiled by
    the one Triton the Explorer uses (a version change would hide among the option changes), two
    versions oldest → newest. Within a mode the user's picks stay."""
    versions = services.lens().versions()
    if len(versions) < 2 or st.session_state.get("opt-entered") == mode:
        return
    st.session_state["opt-entered"] = mode
    if mode == "versions":
        st.session_state["opt-a-triton"], st.session_state["opt-b-triton"] = versions[0], versions[-1]
    else:
        # the Explorer's pick: its widget's state is gone on another page, its kept copy (app/state/keep.py) is not
        own = keep.kept(keys.TRITON) or st.session_state.get(keys.TRITON)
        own = own if own in versions else services.lens().engines.own or versions[-1]
        st.session_state["opt-a-triton"] = st.session_state["opt-b-triton"] = own


def _build() -> tuple[CompileRecord, CompileRecord] | None:
    """Build A and B: the kernel compiled with each option set (None, and the error shown, if
    either fails)."""
    try:
        text, filename = _source_of(st.session_state["opt-src"])
    except (files.WorkspaceError, OSError) as e:
        st.error(str(e))
        return None
    pair = []
    for side in ("a", "b"):
        try:
            constexprs = panels.parse_overrides(st.session_state[f"opt-{side}-constexprs"])
        except ValueError as e:
            st.error(f"{side.upper()}: constexpr overrides: {plain(e)}")
            return None
        request = CompileRequest(source=text, filename=filename, target=st.session_state[f"opt-{side}-target"],
                                 num_warps=st.session_state[f"opt-{side}-warps"],
                                 num_stages=st.session_state[f"opt-{side}-stages"],
                                 constexprs=constexprs, sass=False,
                                 triton_version=st.session_state.get(f"opt-{side}-triton", "")
                                 if len(services.lens().versions()) > 1 else "")
        with st.spinner(f"Compiling {side.upper()}" + (f" with Triton {request.triton_version}…"
                                                       if request.triton_version else "…")):
            result = services.compile_kernel(request, float(st.session_state.get("timeout", 60)))
        # shown with a warning: another version's failing stage, or example() raising after its launches
        if result.partial and (request.triton_version or result.error.stage is None):
            st.warning(f"{side.upper()} (Triton {plain(result.triton_version)}): {plain(result.error.headline())}")
        elif not result.ok:
            st.error(f"{side.upper()}: {plain(result.error.headline())}")
            return None
        pair.append(make_record(filename, request, result, with_figures=False))
    return tuple(pair)


def _from_options(mode: str):
    """One kernel, two option sets (or Triton versions): the last pair built in this mode."""
    _default_versions(mode)
    choices = _source_choices()
    if st.session_state.get("opt-src") not in choices:
        st.session_state["opt-src"] = EXPLORER
    st.selectbox("Kernel", choices, key="opt-src", format_func=_source_label)
    ca, cb = st.columns(2)
    _option_set("a", ca)
    _option_set("b", cb)
    if st.button("Build A and B", type="primary", key="opt-build"):
        pair = _build()
        if pair is None:
            return None
        st.session_state[f"opt-pair-{mode}"] = pair
    return st.session_state.get(f"opt-pair-{mode}")


@st.cache_data(show_spinner=False, max_entries=32)
def _diff_html(stage: str, a: str, b: str, ignore_noise: bool, context: int | None,
               a_label: str, b_label: str) -> tuple[str, str, str]:
    d = diff.diff_stage(stage, a, b, ignore_noise)
    return diff_html.legend_html(d), diff_html.render_diff_html(d, a, b, context, a_label, b_label), d.summary()


def _pick_launch(ka_all: list[KernelResult], kb_all: list[KernelResult]) -> int | None:
    """Which launch i of A is compared with launch i of B (None when either has none)."""
    n = min(len(ka_all), len(kb_all))
    if n == 0:
        st.warning("One of the two compiles has no kernels.")
        return None
    if len(ka_all) != len(kb_all):
        st.caption(f"A has {len(ka_all)} launches, B has {len(kb_all)}: launch i is compared with launch i.")
    if max(len(ka_all), len(kb_all)) > 1:
        if st.session_state.get("cmp-launch", 0) >= n:
            st.session_state["cmp-launch"] = 0
        return st.selectbox("Launch", range(n), key="cmp-launch",
                            format_func=lambda i: f"{i + 1}. {ka_all[i].label} — " + ", ".join(
                                a.describe() for a in ka_all[i].args if a.type != "constexpr")[:140])
    return 0


def _delta_table(rec_a: CompileRecord, rec_b: CompileRecord,
                 ka: KernelResult, kb: KernelResult) -> None:
    """The headline (and what only a version change explains), then the figures of A and B."""
    table = launch_delta(ka, kb, rec_a.request.filename, rec_b.request.filename)
    va, vb = rec_a.result.triton_version, rec_b.result.triton_version
    if va and vb and va != vb:
        notes = version_notes(va, vb, ka, kb)
        st.subheader(version_headline(va, vb, table, ()))
        for note in notes:
            st.markdown(f"- {note}")
    else:
        st.subheader(table.headline)
    only = st.toggle("Only what changed", value=True, key="cmp-only-changed")
    rows = [r for r in table.rows if r.changed or not only or r.group == "launch" and r.metric == "kernel"]
    st.dataframe([{"": "●" if r.changed else "", "group": r.group, "metric": r.metric,
                   "A": "n/a" if r.a is None else str(r.a), "B": "n/a" if r.b is None else str(r.b),
                   "change": r.change} for r in rows], hide_index=True, width="stretch", key="cmp-delta",
                 column_config={"": st.column_config.TextColumn(width=24),
                                "group": st.column_config.TextColumn(width="small")})


def _stage_diff(rec_a: CompileRecord, rec_b: CompileRecord,
                ka: KernelResult, kb: KernelResult) -> None:
    """One stage both have, its diff with noise ignored or not, three lines of context or all."""
    common = [s.name for s in sorted(stages.STAGES, key=lambda s: s.order)
              if s.name in ka.stage_names() and s.name in kb.stage_names()]
    if st.session_state.get("cmp-stage") not in common:
        st.session_state["cmp-stage"] = stages.machine_stage(common) or common[-1]
    c1, c2, c3 = st.columns([6, 2, 2], vertical_alignment="bottom")
    stage = c1.segmented_control("Stage", common, key="cmp-stage", format_func=lambda s: stages.get(s).label) \
        or common[-1]
    noise = c2.toggle("Ignore noise", value=True, key="cmp-noise",
                      help="Register and SSA value numbers (%r12 → %r14, %offs_3), .loc lines and #loc ids, "
                           "label numbers, hashes and SASS addresses do not count as changes.")
    all_lines = c3.toggle("Show all lines", value=False, key="cmp-all")
    try:
        ta, tb = services.stage_text(ka, stage), services.stage_text(kb, stage)
    except SassError as e:                  # nvdisasm failed on one cubin: say so, keep the page
        st.error(plain(e.message))
        st.code(e.command, language="bash")
        return
    label = lambda side, rec: f"{side} · {rec.info.label()}"
    legend, body, summary = _diff_html(stage, ta, tb, noise, None if all_lines else 3,
                                       label("A", rec_a), label("B", rec_b))
    st.html(legend)
    st.html(body)


def _show(rec_a: CompileRecord, rec_b: CompileRecord) -> None:
    ka_all, kb_all = rec_a.result.kernels, rec_b.result.kernels
    i = _pick_launch(ka_all, kb_all)
    if i is None:
        return
    ka, kb = ka_all[i], kb_all[i]
    _delta_table(rec_a, rec_b, ka, kb)
    _stage_diff(rec_a, rec_b, ka, kb)


def compare() -> None:
    st.html(diff_html.diff_css())
    st.title("Compare")
    mode = pick_mode()
    if mode == "history":
        st.session_state.pop("opt-entered", None)
    pair = _from_history() if mode == "history" else _from_options(mode)
    if pair:
        _show(*pair)


compare()
