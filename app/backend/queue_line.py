"""The line a waiting compile shows: "In the queue: 2 compiles ahead of you · waiting 3 s".
Every dispatch moves every waiting session one place up: the line is drawn only when there is
something to show and sent only when its text changes, at most every REPORT_EVERY_S."""
from __future__ import annotations

import time
from typing import Callable

import streamlit as st

REPORT_EVERY_S = 1.0


def reporter(workers: int) -> Callable[[int, float], None]:
    """The queue line while a compile waits ("2 compiles ahead of you · waiting 3 s"): its
    placeholder made only when there is something to show (an element added on every compile
    would shift the panels' places), its text sent when it changes, at most every REPORT_EVERY_S."""
    state: dict = {"slot": None, "text": "", "at": 0.0}

    def report(ahead: int, seconds: float) -> None:
        if state["slot"] is None and (seconds < 0.3 and ahead == 0):
            return                   # served at once: nothing to show
        if state["slot"] is None:
            state["slot"] = st.empty()
        text = (f"In the queue: {ahead} compile{'' if ahead == 1 else 's'} ahead of you · waiting {seconds:.0f} s "
                f"({workers} compile worker{'s' if workers != 1 else ''} on this server)")
        if text != state["text"] and time.monotonic() - state["at"] >= REPORT_EVERY_S:
            state["text"], state["at"] = text, time.monotonic()
            state["slot"].info(text, icon=":material/hourglass_top:")

    report.clear = lambda: state["slot"] is not None and state["slot"].empty()   # type: ignore[attr-defined]
    return report
