"""A compile's launches as they come: while the rest compile, the page lists every launch
example() made ("3 of 26 compiled") and shows the first one done, its Python and machine stage
side by side (drawn by the server, highlighted as the panels are; no widgets, so nothing the
finished page draws clashes with it). The finished page replaces it.

    preview = streaming.Preview(filename)
    result = services.compile_kernel(request, timeout, on_progress=preview)
    preview.done()          # cleared; a rerun the user asked for meanwhile goes on from here
"""
from __future__ import annotations

import html
import time

import streamlit as st

from app.render import stage_html
from inspectors.base import stages

SHOW_AFTER_S = 1.0          # a compile done sooner than this draws nothing (no flicker)
LISTED = 12                 # launches named in the list; the rest counted


class Preview:
    """`on_progress` for a compile (inspectors.session.lens.Lens.compile): its placeholder made
    only once there is something worth showing. A page control exception raised while drawing
    (the user clicked or typed: Streamlit asks this run to stop) is kept and raised by `done()`,
    once the compile's result is in, so the compile is never abandoned half-way."""

    def __init__(self, filename: str):
        self.filename = filename
        self.started = time.monotonic()
        self.slot = None
        self.drawn: tuple = ()
        self.stopped: BaseException | None = None

    def __call__(self, progress) -> None:
        if self.stopped is not None:
            return
        if self.slot is None and progress.total <= 1 and time.monotonic() - self.started < SHOW_AFTER_S:
            return
        state = (progress.total, tuple(sorted(progress.done)))
        if state == self.drawn:
            return
        try:
            if self.slot is None:
                self.slot = st.empty()
            with self.slot.container():
                self._draw(progress)
            self.drawn = state
        except BaseException as e:  # noqa: BLE001 - Streamlit's stop/rerun: raised again by done()
            self.stopped = e

    def _draw(self, progress) -> None:
        done, total = len(progress.done), progress.total
        first = progress.first()
        head = (f"**Compiling: {done} of {total} launch{'' if total == 1 else 'es'} compiled**" if total
                else "**Compiling:** running `example()`…")
        if first is not None and total > 1:
            head += f" · showing launch {first.launch + 1}, `{first.label or first.name}`; the rest join the launch picker when all are done"
        st.markdown(head, help="Each launch compiles on its own core; the page shows the first one as soon as it is ready.")
        if total > 1:
            items = [f"{'✓' if i in progress.done else '…'} {i + 1}. {html.escape(label)}"
                     for i, label in enumerate(progress.labels[:LISTED])]
            more = f" · and {total - LISTED} more" if total > LISTED else ""
            st.caption(" · ".join(items) + more)
        if first is None:
            return
        backend = "hip" if first.target.startswith("hip") else "cuda"
        machine = stages.machine_stage(first.stages) or "ttgir"
        shown = [n for n in ("source", machine) if first.stages.get(n)]
        for column, name in zip(st.columns(len(shown), gap="small"), shown):
            with column:
                st.markdown(f"**{stages.get(name).label}** · {html.escape(first.name)} ({backend})")
                # `data-preview`, not the panels' `data-stage`: what finds the finished page's panels
                # (its scripts, tests) never finds this one
                st.html(stage_html.render_stage_html(name, first.stages[name], max_height=420).replace(
                    'data-stage="', 'data-preview="', 1))

    def done(self) -> None:
        """The placeholder cleared; a stop Streamlit asked for while it drew, raised now."""
        if self.stopped is not None:
            raise self.stopped
        if self.slot is not None:
            self.slot.empty()
