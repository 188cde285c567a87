"""Streamlit glue around the one door (inspectors/session): the server's one Lens
(`st.cache_resource`), who is asking (the fair queue's identity), the queue line a waiting
compile shows, spinners for the jobs a panel starts, and a compile's bookkeeping in the
session. Everything else — caches, insight, SASS, history — is the session layer's."""
from __future__ import annotations

import threading
import time
from typing import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.backend import presence, queue_line
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest, CompileResult, KernelResult
from inspectors.session import insights
from inspectors.session.lens import Lens

_finish_lock = threading.Lock()


@st.cache_resource(show_spinner=False)
def lens() -> Lens:
    """The server's engines (one per Triton version; the own version's workers start with the
    server) and the result cache every session shares."""
    return Lens(settings_mod.load())


def who() -> str:
    """The fair queue's identity: the signed-in user when the proxy names one (app/state/workspace.py),
    else this browser session."""
    user = st.session_state.get("tlens_user")
    if user:
        return f"user:{user}"
    ctx = get_script_run_ctx()
    return f"session:{ctx.session_id}" if ctx else "session:?"


def prewarm_own(user: str) -> None:
    """A run of a student's page: their tab noted, their own sandbox started if the proxy names
    them, the run counted as their activity (presence.py)."""
    if user:
        presence.seen(lens().engines, who(), user, st.context.ip_address or "")


def compile_kernel(request: CompileRequest, timeout: float, on_progress: Callable | None = None) -> CompileResult:
    """A compile for this session, its wait shown (and, with `on_progress`, its launches as they
    are compiled: app/widgets/streaming.py); its key, hit and page time kept for the page.

    With `on_progress` the compile runs in a thread of its own and this run draws its progress
    (`on_progress(Progress)` about five times a second, from this run's thread): a click in the
    progress (another launch to look at) or a keystroke stops this run at once, and the compile
    goes on; the next run asks for the same request and waits for that compile (the result
    cache's one computation per key), not for a new one."""
    reporter = queue_line.reporter(lens().engine().size)
    try:
        if on_progress is None:          # in this run's thread: its CPU is the run's (presence.accounted)
            done = lens().compile(request, who(), timeout, on_wait=reporter)
            presence.charge(who(), 0.0 if done.hit else done.result.timings.get("server_parse_s", 0.0))
        else:                            # in a thread of its own: all of it charged to this student
            done = _in_background(request, timeout, reporter, on_progress)
            presence.charge(who(), done.server_cpu_s)
    finally:
        reporter.clear()
    st.session_state["last_compile_s"] = done.seconds
    started = st.session_state.get("run_started", time.perf_counter() - done.seconds)
    st.session_state["last_compile"] = {"key": done.result.key, "hit": done.hit,
                                           "page_s": max(0.0, time.perf_counter() - done.seconds - started)}
    return done.result


def _in_background(request: CompileRequest, timeout: float, reporter: Callable, on_progress: Callable):
    """lens().compile in a thread; its queue wait and progress drawn from this one (Streamlit's
    elements belong to the run's thread). What this run's drawing raises (Streamlit stopping it)
    leaves the compile running."""
    box: dict = {"wait": None, "progress": None}
    finished = threading.Event()
    user, server = who(), lens()

    def run() -> None:
        try:
            box["done"] = server.compile(request, user, timeout, on_wait=lambda *w: box.__setitem__("wait", w),
                                         on_progress=lambda p: box.__setitem__("progress", p))
        except BaseException as e:  # noqa: BLE001 - raised again in the page's run
            box["error"] = e
        finally:
            finished.set()
    threading.Thread(target=run, name="tlens-compile", daemon=True).start()
    while not finished.wait(0.2):
        if box["wait"] is not None:
            reporter(*box["wait"])
        if box["progress"] is not None:
            on_progress(box["progress"])
    if "error" in box:
        raise box["error"]
    return box["done"]


def result_gzipped() -> bytes | None:
    """The last compile's result as the result cache stored it, gzipped (for its history record)."""
    last = st.session_state.get("last_compile")
    return lens().gzipped(last["key"]) if last else None


def finish_once(pending_key: str, request: CompileRequest, store: Callable[[], None]) -> None:
    """`store` called once per request waiting in st.session_state[pending_key], however many
    runs compiled it (a keystroke reruns the page mid-compile): check and store in one step."""
    with _finish_lock:
        if st.session_state.get(pending_key) is request:
            store()
            st.session_state.pop(pending_key, None)


def _job(ready: bool, text: str, ask: Callable):
    """`ask()`, under a spinner when it starts a job (a spinner on every run would add an element)."""
    if ready:
        return ask()
    with st.spinner(text):
        return ask()


def stage_text(kernel: KernelResult, stage: str) -> str:
    return _job(insights.ready(kernel, stage), "Disassembling the cubin…", lambda: insights.stage_text(kernel, stage))


def insight(kernel: KernelResult, filename: str, with_sass: bool = False):
    return _job(not with_sass or insights.ready(kernel, "sass-lines", filename), "Reading the SASS…",
                lambda: insights.insight(kernel, filename, with_sass))


def register_pressure(kernel: KernelResult, filename: str):
    return _job(insights.ready(kernel, "pressure", filename), "Reading the live registers of every SASS instruction…",
                lambda: insights.register_pressure(kernel, filename))
