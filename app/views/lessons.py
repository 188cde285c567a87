"""The Lessons page: guided lessons for a projector, one click per step. Every lesson is a file
(assets/lessons/*.md, plus a teacher's folder set by TLENS_LESSONS_DIR; the format is in
assets/lessons/_TEMPLATE.md); this page only draws them. A link opens a lesson at a step:
`?lesson=coalescing&step=4` (`&big=1` for large type).

One run, top to bottom (`lessons()` at the end of the file): the lesson files read (`load_lessons`,
cached while no file changes; none: the page stops), the link applied on a session's first run
here (`_from_url`), the lesson picker and type size (`lesson_picker`), the step into the URL, the
step's navigation (`step_nav`), the step drawn, its link and file (`step_footer`).
"""
from __future__ import annotations

import os

import streamlit as st

from app.render import classroom
from app.widgets import present
from app.lessons import PANELS
from app.lessons.common import BUNDLED, LIBRARY
from app.lessons.render import draw_step
from inspectors.base import settings as settings_mod
from inspectors.base.stages import STAGES
from inspectors.explain import exercise
from inspectors.read.lessonfile import Known
from inspectors.session import files

KNOWN = Known(panels=frozenset(PANELS), metrics=exercise.names(), kernels=frozenset(LIBRARY),
              stages=frozenset(s.name for s in STAGES) | {"source"})


def _folders() -> tuple:
    """The bundled lessons and the teacher's folder: read on every run, the setting may change."""
    return (BUNDLED, settings_mod.load().lessons_dir)


def _stamp(folders: tuple) -> tuple:
    """Names, sizes and times of the lesson files: a teacher's edit shows on the next rerun."""
    out = []
    for folder in folders:
        if folder is not None:
            for p in files.lesson_files(folder):
                try:
                    s = p.stat()
                    out.append((str(p), s.st_size, s.st_mtime_ns))
                except OSError:
                    pass
    return tuple(out)


@st.cache_data(show_spinner=False, max_entries=4)
def _load(stamp: tuple, folders: tuple) -> files.Found:
    return files.lessons(folders, KNOWN)


def load_lessons() -> dict:
    """The lessons by slug; the files that did not load said so (no lesson at all: the page stops)."""
    folders = _folders()
    found = _load(_stamp(folders), folders)
    lessons = {l.slug: l for l in found.lessons}
    for error in found.errors:
        st.error(f"Lesson file not loaded — {error}")
    if not lessons:
        st.warning("No lessons found in " + ", ".join(str(f) for f in folders if f is not None))
        st.stop()
    return lessons


def _from_url(lessons: dict):
    """First run of a session on this page: the URL picks the lesson, the step and the type size."""
    qp = st.query_params
    known = qp.get("lesson") in lessons
    lesson = qp.get("lesson") if known else next(iter(lessons))
    try:
        step = int(qp.get("step", "1")) - 1 if known else 0     # a step of an unknown lesson means nothing
    except ValueError:
        step = 0
    st.session_state["lesson"] = lesson
    st.session_state["lesson_step"] = max(0, min(step, len(lessons[lesson].steps) - 1))
    st.session_state["big"] = qp.get("big") == "1" or present.on()     # presentation mode: large type


def _go(delta: int, lessons: dict):
    """Back / Next (a callback: it runs at the start of the next run, with this run's lessons)."""
    steps = lessons[st.session_state["lesson"]].steps
    st.session_state["lesson_step"] = max(0, min(st.session_state["lesson_step"] + delta, len(steps) - 1))


def _pick_lesson():
    st.session_state["lesson_step"] = 0


def lesson_picker(lessons: dict) -> None:
    """The lesson, and large type for a projector (the explorer's presentation mode)."""
    st.html(classroom.CSS)
    top, size = st.columns([3, 1])
    top.radio("Lesson", list(lessons), key="lesson", horizontal=True, format_func=lambda k: lessons[k].title,
              on_change=_pick_lesson)
    size.toggle("Large type", key="big", help="For a projector: larger text everywhere on the page.")
    if st.session_state["big"]:
        present.apply(large_text=True, when=True)      # the explorer's presentation mode, in large type


def step_nav(lessons: dict, lesson, index: int) -> None:
    """Back, the lesson's title and step, Next, and the progress bar."""
    steps = lesson.steps
    step = steps[index]
    nav_back, nav_title, nav_next = st.columns([1.4, 6, 1.4])
    nav_back.button("◀ Back", key="lesson_prev", on_click=_go, args=(-1, lessons), disabled=index == 0,
                    width="stretch")
    nav_next.button("Next ▶", key="lesson_next", on_click=_go, args=(1, lessons), disabled=index == len(steps) - 1,
                    type="primary", width="stretch")
    nav_title.markdown(f"### {lesson.title} · step {index + 1} of {len(steps)}: {step.title}")
    st.progress((index + 1) / len(steps))


def step_footer(lesson, index: int) -> None:
    """The link to this step and where its lesson file is; a marker that the step is drawn."""
    step = lesson.steps[index]
    where = os.path.relpath(lesson.file, BUNDLED.parent.parent) if lesson.file.startswith(str(BUNDLED)) \
        else lesson.file
    st.caption(f"Link to this step: `?lesson={lesson.slug}&step={index + 1}`"
               + ("&big=1" if st.session_state["big"] else "")
               + f" · lesson file: `{where}`, line {step.line}")
    st.html(f'<div class="tl-done" data-lesson="{lesson.slug}" data-step="{index + 1}"></div>')   # the step is drawn


def lessons() -> None:
    by_slug = load_lessons()
    if st.session_state.get("lesson") not in by_slug or "lesson_step" not in st.session_state:
        _from_url(by_slug)
    lesson_picker(by_slug)
    lesson = by_slug[st.session_state["lesson"]]
    steps = lesson.steps
    index = st.session_state["lesson_step"] = max(0, min(st.session_state["lesson_step"], len(steps) - 1))
    st.query_params.from_dict({"lesson": lesson.slug, "step": str(index + 1),
                               **({"big": "1"} if st.session_state["big"] else {})})
    step_nav(by_slug, lesson, index)
    step = steps[index]
    st.html(classroom.step_html(f"Look at: {step.look}"))
    draw_step(lesson, step, PANELS)
    step_footer(lesson, index)


lessons()
