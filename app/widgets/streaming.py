"""A compile's launches as they come: while the rest compile, the page lists every launch
example() made ("3 of 26 compiled"), lets the user pick any of them, and shows the one picked (the
first done until one is picked) as soon as it is compiled, its Python and machine stage side by
side, highlighted as the panels are. The compile runs in a thread of its own
(app/backend/services.py): the pick stops this run and the next run draws the same compile's
progress with the launch picked. The finished page replaces it and opens at that launch.

    preview = streaming.Preview(filename)
    result = services.compile_kernel(request, timeout, on_progress=preview)
    preview.done()          # cleared; the finished page's launch picker set to the launch picked
"""
from __future__ import annotations

import html
import time

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.render import stage_html
from app.state import keys
from inspectors.base import stages

SHOW_AFTER_S = 1.0          # a compile done sooner than this draws nothing (no flicker)
LISTED = 12                 # launches named in the list; the rest counted
PREVIEW_CHARS = 200_000     # of a stage drawn while the others compile (the finished page draws it whole)

ss = st.session_state


class Preview:
    """`on_progress` for a compile (app/backend/services.py compile_kernel): its placeholder
    made only once there is something worth showing; the launch picker drawn once per run (a
    widget), the rest redrawn when a launch is done or, once a second, its clock (which also
    lets Streamlit stop this run promptly when the user picks another launch)."""

    def __init__(self, filename: str):
        self.filename = filename
        self.started = time.monotonic()
        self.slot = self.head = self.pick = self.note = self.body = None
        self.picker_drawn = False
        self.drawn: tuple = ()
        self.body_drawn: tuple | None = None    # (launch, stage names) whose stages the body shows
        self.ticked = -1

    def __call__(self, progress) -> None:
        if _asked_meanwhile():
            _rerun_now()
        if self.slot is None and progress.total <= 1 and time.monotonic() - self.started < SHOW_AFTER_S:
            return
        if self.slot is None:
            self.slot = st.empty()
            with self.slot.container():
                self.head, self.pick, self.note, self.body = st.empty(), st.empty(), st.empty(), st.empty()
        if progress.total > 1 and not self.picker_drawn:
            self.picker_drawn = True
            with self.pick:
                self._picker(progress.labels)
        wanted = self.wanted(progress)
        state = (progress.total, tuple(sorted(progress.done)), wanted)
        second = int(time.monotonic() - self.started)
        if state != self.drawn or second != self.ticked:
            self.ticked = second
            with self.head.container():
                self._draw_head(progress, second)
        if state != self.drawn:
            self.drawn = state
            self._draw_body(progress, wanted)

    @staticmethod
    def _picker(labels: tuple[str, ...]) -> None:
        if not isinstance(ss.get(keys.PREVIEW_LAUNCH), int) or ss[keys.PREVIEW_LAUNCH] >= len(labels):
            ss.pop(keys.PREVIEW_LAUNCH, None)           # a pick of another compile's launches
        st.selectbox(f"Launch ({len(labels)} launches, each shown as soon as it is compiled)", range(len(labels)),
                     index=None, placeholder="Pick any launch to see it while the others compile",
                     format_func=lambda i: f"{i + 1}. {labels[i]}", key=keys.PREVIEW_LAUNCH,
                     help="The page shows it once it is done, and the finished page opens at it")

    @staticmethod
    def wanted(progress) -> int | None:
        """The launch picked (None: none picked yet, the first done is shown)."""
        picked = ss.get(keys.PREVIEW_LAUNCH)
        return picked if isinstance(picked, int) and 0 <= picked < progress.total else None

    def _draw_head(self, progress, second) -> None:
        done, total = len(progress.done), progress.total
        head = (f"**Compiling: {done} of {total} launch{'' if total == 1 else 'es'} compiled** · {second} s" if total
                else f"**Compiling:** running `example()`… · {second} s")
        st.markdown(head, help="The launches compile at the same time, one per core; each is shown as soon as it is ready.")
        if total > 1:
            items = [f"{'✓' if i in progress.done else '…'} {i + 1}. {html.escape(label)}"
                     for i, label in enumerate(progress.labels[:LISTED])]
            more = f" · and {total - LISTED} more" if total > LISTED else ""
            st.caption(" · ".join(items) + more)

    def _draw_body(self, progress, wanted) -> None:
        """The note, and the shown launch's stages only when another launch is shown: a launch
        done elsewhere redraws a line, never its stages again (a job answering a tiny launch every
        third of a second beside a 15 MB one made the server highlight it each time)."""
        # the same elements in every state, a line then the columns: a run stopped by a pick leaves
        # its elements on the page (faded) until the next run draws over them at the same places
        picked = progress.kernel(wanted) if wanted is not None else None
        shown = picked or progress.first()
        if progress.total > 1:
            if wanted is not None and picked is None:
                progress.want(wanted)             # compiled next, once a core is free
                note = f"Launch {wanted + 1} is compiled next: it is shown here as soon as it is done"
                note += f"; meanwhile launch {shown.launch + 1}, the first done." if shown else "."
            elif shown is not None:
                note = (f"Showing launch {shown.launch + 1}, `{html.escape(shown.label or shown.name)}`, "
                        + ("the one picked." if picked is not None else "the first done."))
            else:
                note = "No launch is compiled yet."
            self.note.caption(note)
        if shown is None:
            return
        backend = "hip" if shown.target.startswith("hip") else "cuda"
        machine = stages.machine_stage(shown.stages) or "ttgir"
        names = [n for n in ("source", machine) if shown.stages.get(n)]
        if self.body_drawn == (shown.launch, tuple(names)):
            return
        self.body_drawn = (shown.launch, tuple(names))
        with self.body.container():
            for column, name in zip(st.columns(len(names), gap="small"), names):
                with column:
                    st.markdown(f"**{stages.get(name).label}** · launch {shown.launch + 1}: {html.escape(shown.name)} ({backend})")
                    text = shown.stages[name]
                    if len(text) > PREVIEW_CHARS:        # drawn whole on the finished page
                        text = text[:max(text.rfind("\n", 0, PREVIEW_CHARS), 1)]
                        st.caption(f"Its first {text.count(chr(10)) + 1:,} lines; the finished page shows all "
                                   f"{shown.stages[name].count(chr(10)) + 1:,}.")
                    # `data-preview`, not the panels' `data-stage`: what finds the finished page's panels
                    # (its scripts, tests) never finds this one
                    st.html(stage_html.render_stage_html(name, text, max_height=420).replace(
                        'data-stage="', 'data-preview="', 1))

    def done(self) -> None:
        """The placeholder cleared; the finished page's launch picker set to the launch picked."""
        picked = ss.pop(keys.PREVIEW_LAUNCH, None)
        if picked is not None:
            ss[keys.LAUNCH] = picked
        if self.slot is not None:
            self.slot.empty()


def _asked_meanwhile() -> bool:
    """A widget of this fragment (the launch picked, a keystroke) changed while this run waits.
    Streamlit lets a fragment's own widget stop a running run only when it was asked with
    st.rerun(scope="fragment"); otherwise its rerun waits for this one, the compile's end. Read
    from the run's pending request (Streamlit's own, not public: if it changes, a pick is applied
    when the compile ends, as before; tests/browser/test_browser_streaming.py sees which). The
    page's other fragments' timed reruns (watch_disk's) are not a reason."""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    data = getattr(requests, "_rerun_data", None)
    if getattr(getattr(requests, "_state", None), "name", "") != "RERUN" or data is None:
        return False
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState
        this = ThreadState.get().fragment_id
    except (ImportError, AttributeError, LookupError):
        this = getattr(ctx, "current_fragment_id", None)
    queued = getattr(data, "fragment_id_queue", None) or ()
    return this in queued if this else not getattr(data, "is_auto_rerun", True)


def _rerun_now() -> None:
    """This run stopped for the one asked (the compile goes on; the next run waits for it)."""
    try:
        st.rerun(scope="fragment")
    except StreamlitAPIException:         # a whole-page run: scope="fragment" is for a fragment's own reruns
        st.rerun()
