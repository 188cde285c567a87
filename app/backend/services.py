"""The app's only doorway to the engine: one pool of warm workers for the whole server, and a
result cache shared by every session (the same kernel, options, target and Triton compile once
for a class), bounded in memory and on disk."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.backend import presence

from inspectors.base import sandbox
from inspectors.base import settings as settings_mod
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult, KernelResult
from inspectors.compile.engine import Engine
from inspectors.compile.engines import Engines
from inspectors.explain.insight import Insight, analyze, unavailable
from inspectors.explain.insight import of as of_worker
from inspectors.explain import sass_job
from inspectors.read import sass
from inspectors.read.sourcemap import SourceMap
from inspectors.store.results import ResultCache, request_key


_finish_lock = threading.Lock()


def finish_once(pending_key: str, request: CompileRequest, store: Callable[[], None]) -> None:
    """Call `store` (keep the result, add it to the history) once per compile request that
    waits in st.session_state[pending_key], however many runs compiled it: a keystroke in the
    editor starts a new run while the previous one is still compiling (runner.fastReruns),
    the new run compiles the same request (the result cache makes it wait for the first),
    and both arrive here. Whichever comes first stores; the lock makes the check and the
    store one step, so the other run then reads the stored result."""
    with _finish_lock:
        if st.session_state.get(pending_key) is request:
            store()
            st.session_state.pop(pending_key, None)


@st.cache_resource(show_spinner=False)
def engines() -> Engines:
    """One engine per configured Triton version (inspectors.base.versions); an extra version's
    workers start when it is first asked for."""
    return Engines(settings_mod.load())


def engine() -> Engine:
    """The server's own Triton: started with the server, the workers import torch and triton
    while the page loads."""
    return engines().get("")


def triton_versions() -> list[str]:
    """The Triton versions this server can compile with, oldest first."""
    return engines().versions()


def refuse_unsafe_server() -> None:
    """A class server whose students' code could not be sandboxed shows why, and serves nothing."""
    problem = _server_problem()
    if problem:
        st.error(f"**Triton Lens will not run users' code on this server.** {problem}", icon=":material/gpp_bad:")
        st.stop()
    if settings_mod.load().class_mode and not settings_mod.load().sandbox:
        st.warning("UNSANDBOXED CLASS SERVER (TLENS_UNSANDBOXED_CLASS=1): every student's code runs with this "
                   "server's rights.", icon=":material/warning:")


@st.cache_resource(show_spinner=False)
def _server_problem() -> str | None:
    return sandbox.server_problem(settings_mod.load())


@st.cache_resource(show_spinner=False)
def results() -> ResultCache:
    s = settings_mod.load()
    return ResultCache(Path(s.triton_cache_dir).parent / "results", max_items=64, max_bytes=256 * 2**20)


def session_key() -> str:
    """Who is asking, for the fair queue: the signed-in user when the proxy names one (see
    app/state/workspace.py), else this browser session."""
    user = st.session_state.get("tlens_user")
    if user:
        return f"user:{user}"
    ctx = get_script_run_ctx()
    return f"session:{ctx.session_id}" if ctx else "session:?"


REPORT_EVERY_S = 1.0     # a waiting session's queue line is redrawn at most this often


def _waiting_reporter() -> Callable[[int, float], None]:
    """Shows the queue while a compile waits: "2 compiles ahead of you · waiting 3 s". The
    placeholder is made only when there is something to show: an element added on every
    compile would shift the panels' places in the page and make Streamlit redraw them. The line
    is sent when its text changes, at most once a second: every dispatch moves every waiting
    session one place up, and 300 of them redrawn after each of 300 dispatches was most of
    what the server did for a class."""
    state: dict = {"slot": None, "text": "", "at": 0.0}

    def report(ahead: int, seconds: float) -> None:
        if state["slot"] is None:
            if seconds < 0.3 and ahead == 0:
                return               # served at once: nothing to show
            state["slot"] = st.empty()
        jobs = "compile" if ahead == 1 else "compiles"
        text = (f"In the queue: {ahead} {jobs} ahead of you · waiting {seconds:.0f} s "
                f"({engine().size} compile worker{'s' if engine().size != 1 else ''} on this server)")
        now = time.monotonic()
        if text == state["text"] or now - state["at"] < REPORT_EVERY_S:
            return
        state["text"], state["at"] = text, now
        state["slot"].info(text, icon=":material/hourglass_top:")   # an icon of its own: a
        # leading emoji in the text made Streamlit load its emoji catalog (0.14 s, the first time)

    def clear() -> None:
        if state["slot"] is not None:
            state["slot"].empty()
    report.clear = clear               # type: ignore[attr-defined]
    return report


# Results made by another version of the worker (or of the analysis it runs) may lack what this
# one shows: part of the key.
_INSPECTORS = Path(__file__).resolve().parents[2] / "inspectors"
_FORMAT = hashlib.sha256(b"".join(
    p.read_bytes() for p in sorted(_INSPECTORS.glob("*/*.py"))
    if p.parent.name in ("base", "read", "explain", "compile"))).hexdigest()[:16]


def _error_kind(value: dict) -> str | None:
    return (value.get("error") or {}).get("kind")


def _keep(value: dict) -> bool:
    return _error_kind(value) not in ("timeout", "crash", "busy")


def _share(value: dict) -> bool:
    """Sessions that waited for the same compile get its timeout or crash too; a `busy`
    refusal was about the session that asked first."""
    return _error_kind(value) != "busy"


def compile_kernel(request: CompileRequest, timeout: float) -> CompileResult:
    try:
        pool = engines().get(request.triton_version)
    except KeyError as e:
        return CompileResult(error=CompileError("usage", e.args[0], request.filename, None))
    # The version the request is routed to, as configured: what a worker reports is missing
    # while its slot's worker is being replaced (a sandboxed worker ends after its job), and a
    # key with "" in it was a second compile of the same request (across processes, too).
    version = request.triton_version or engines().own or pool.triton_version
    if not request.analysis_s:       # the worker analyses what it compiled (insight.of reads it)
        request = dataclasses.replace(request, analysis_s=ANALYSIS_BUDGET_S)
    session = session_key()
    # A student's own sandbox keeps what their earlier jobs left in it (their Triton cache): its
    # results are theirs alone, never served to another student who compiles the same text.
    own = f"/own:{session}" if pool.uses_own(request, session) else ""
    key = request_key(request, f"{version}/{_FORMAT}{own}")     # the files hashed as they are, not copied
    reporter = _waiting_reporter()
    t0 = time.perf_counter()
    try:
        value, hit = results().get_or_compute(
            key, lambda: pool.compile(request, timeout=timeout, session=session,
                                        on_wait=reporter).to_json(), _keep, _share)
    finally:
        reporter.clear()
    st.session_state["last_compile_s"] = time.perf_counter() - t0
    # this click's own part of the time, beside the result's (which a cached result shares)
    st.session_state["last_compile"] = {"key": key, "hit": hit,
                                         "page_s": t0 - st.session_state.get("run_started", t0)}
    return _result_of(key, value)


def result_gzipped() -> bytes | None:
    """The last compile's result as the result cache stored it, gzipped (for its history record)."""
    last = st.session_state.get("last_compile")
    return results().gzipped(last["key"]) if last else None


def prewarm_own(user: str) -> None:
    """A run of a student's page (`user`: whose page, app/state/workspace.py, which session_key
    names too: one browser's tabs and refreshes share it): their tab noted, their own sandbox
    started if the proxy names them, the run counted as their activity (presence.py)."""
    if user:
        presence.seen(engines(), session_key(), user, st.context.ip_address or "")


_SHARED_ITEMS = 256      # results and insights kept parsed for every session of this process
_shared_lock = threading.Lock()
_parsed: OrderedDict[str, tuple[dict, CompileResult]] = OrderedDict()


def _result_of(key: str, value: dict) -> CompileResult:
    """One CompileResult object per cached result for all the sessions that show it (results
    are frozen): the class's sessions on one kernel parse it once, and what is computed from
    the object (the insight, below) is found again by identity."""
    with _shared_lock:
        hit = _parsed.get(key)
        if hit is not None and hit[0] is value:
            _parsed.move_to_end(key)
            return hit[1]
    result = dataclasses.replace(CompileResult.from_json(value), key=key)
    with _shared_lock:
        _parsed[key] = (value, result)
        while len(_parsed) > _SHARED_ITEMS:
            _parsed.popitem(last=False)
    return result


@st.cache_data(show_spinner="Disassembling the cubin…", max_entries=64)
def _sass(cubin_b64: str) -> sass_job.Reply:
    return sass_job.disassemble(cubin_b64)


def stage_text(kernel: KernelResult, stage: str) -> str:
    """The text of one stage; SASS is disassembled in a job (sass_job) when a panel first shows it."""
    if stage in kernel.stages:
        return kernel.stages[stage]
    if stage == "sass" and kernel.cubin:
        return _sass(kernel.cubin).check().sass
    raise KeyError(f"{kernel.name} has no {stage} stage")


_insights: OrderedDict[tuple[int, str], tuple[KernelResult, Insight]] = OrderedDict()
_by_digest: OrderedDict[tuple[str, str], Insight] = OrderedDict()
_pending: dict[tuple[str, str], Future] = {}

# The worker analyses what it compiles (memory ops, source map, resources, thread map:
# CompileRequest.analysis_s) within this many seconds, and the server decodes it
# (insight.of). A kernel the app did not compile in a worker (a cache file, a record saved
# before the analysis moved there) is analysed here, beside the page, within the same
# budget: past it the page shows the stages with a note, and the analysis goes on beside.
ANALYSIS_BUDGET_S = float(os.environ.get("TLENS_ANALYSIS_BUDGET_S") or 20)
_analysis_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tlens-analysis")


def _digest(kernel: KernelResult) -> str:
    """What the analysis depends on, hashed (the same kernel read again from the history)."""
    h = hashlib.sha256()
    for part in (kernel.name, kernel.target, repr(sorted(kernel.options.items())),
                 repr([(a.name, a.type, a.divisible_by_16, a.value) for a in kernel.args]),
                 repr(sorted(kernel.metadata.items())), kernel.cubin):
        h.update(str(part).encode("utf-8", "replace") + b"\0")
    for name in sorted(kernel.stages):
        h.update(name.encode() + b"\0" + str(kernel.stages[name]).encode("utf-8", "replace") + b"\0")
    return h.hexdigest()


def _analyze(kernel: KernelResult, filename: str) -> Insight:
    try:
        return analyze(kernel, dict(kernel.stages), filename)
    except Exception as e:  # noqa: BLE001 - a job's text may be anything: the page shows the stages
        return unavailable(filename, f"the analysis of this kernel failed ({type(e).__name__}: {e})")


_STILL_RUNNING = "The analysis of this kernel took longer than"


def _analyze_here(kernel: KernelResult, filename: str) -> Insight:
    """A kernel that came without its worker's analysis: analysed in this process, once per
    digest, within ANALYSIS_BUDGET_S."""
    key = (_digest(kernel), filename)
    with _shared_lock:
        found = _by_digest.get(key)
        if found is not None:
            return found
        future = _pending.get(key)
        if future is None:
            future = _pending[key] = _analysis_pool.submit(_analyze, kernel, filename)
    try:
        found = future.result(timeout=ANALYSIS_BUDGET_S)
    except FutureTimeout:
        return unavailable(filename, f"{_STILL_RUNNING} {ANALYSIS_BUDGET_S:g} s and was cut: the stages are shown "
                           "without it; it goes on, rerun the page to see it (TLENS_ANALYSIS_BUDGET_S)")
    with _shared_lock:
        _pending.pop(key, None)
        _by_digest[key] = found
        while len(_by_digest) > _SHARED_ITEMS:
            _by_digest.popitem(last=False)
    return found


def _base_insight(kernel: KernelResult, filename: str) -> Insight:
    """The insight of a kernel: found by identity (every script run of every session showing
    it asks), else decoded from what its worker sent, else analysed here."""
    ident = (id(kernel), filename)
    with _shared_lock:
        hit = _insights.get(ident)
        if hit is not None and hit[0] is kernel:
            _insights.move_to_end(ident)
            return hit[1]
    found = of_worker(kernel, filename) or _analyze_here(kernel, filename)
    if found.cut.startswith(_STILL_RUNNING):
        return found                   # not kept: the next run finds the analysis done beside
    with _shared_lock:
        _insights[ident] = (kernel, found)        # the kernel is held: its id is not reused
        while len(_insights) > _SHARED_ITEMS:
            _insights.popitem(last=False)
    return found


@st.cache_data(show_spinner="Reading the live registers of every SASS instruction…", max_entries=32)
def _pressure(cubin_b64: str, sass_text: str, ptx: str, filename: str) -> sass_job.Reply:
    return sass_job.pressure(cubin_b64, sass_text, ptx, filename)


def register_pressure(kernel: KernelResult, filename: str):
    """Live registers per Python line (inspectors.read.liveregs, read in a job), or why not."""
    if not kernel.cubin or "ptx" not in kernel.stages:
        return sass_job.no_cubin(kernel.stages)
    try:
        return _pressure(kernel.cubin, stage_text(kernel, "sass"), kernel.stages["ptx"],
                         kernel.home(filename)).check().pressure
    except sass.SassError as e:
        return e.message


@st.cache_data(show_spinner=False, max_entries=64)
def _sass_lines(sass_text: str, ptx: str, filename: str) -> sass_job.Reply:
    return sass_job.sass_lines(sass_text, ptx, filename)


def insight(kernel: KernelResult, stage_names: list[str], filename: str):
    """Source map, memory ops, resources of one kernel. The SASS part of the source map
    is added only when a SASS panel is open (SASS is disassembled on demand), without
    redoing the rest."""
    filename = kernel.home(filename)     # a kernel written in a library: its own file's lines
    base = _base_insight(kernel, filename)
    if "sass" not in stage_names or not kernel.cubin or "ptx" not in kernel.stages:
        return base
    try:           # the line map and summary are read in a job too (inspectors.explain.sass_job)
        found = _sass_lines(stage_text(kernel, "sass"), kernel.stages["ptx"], filename).check()
    except sass.SassError:       # the SASS panel shows the failure; the rest stands
        return base
    smap = SourceMap(filename, {**base.source_map.stages, "sass": found.lines})
    return dataclasses.replace(base, source_map=smap, summaries={**base.summaries, "sass": found.summary})
