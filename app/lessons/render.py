"""One lesson step, drawn from its file: the step's compiles, its panel, its stage lines, the
prose with {{figures}} filled in, the questions for the class, and the exercise."""
from __future__ import annotations

import re

import streamlit as st

from app.backend import services
from app.render import classroom
from app.lessons import exercise_ui
from app.lessons.common import Ctx, StepFailed, compile_spec, kernel_file
from inspectors.explain import exercise
from inspectors.read import ptxops, sourcemap
from inspectors.read.lessonfile import Lesson, ShowSpec, Step, fill, prose_parts


def draw_step(lesson: Lesson, step: Step, panels: dict) -> None:
    ctx = Ctx(lesson, step)
    facts: dict[str, str] = {}
    try:
        with st.spinner("Compiling the step's kernels (cached after the first time)…"):
            for spec in step.compiles:
                ctx.compiled[spec.name] = compile_spec(lesson, spec, ctx.outside)
                facts.update(exercise.facts(exercise.metrics(ctx.compiled[spec.name], outside=ctx.outside[spec.name]),
                                            spec.name))
    except StepFailed as e:
        st.error(str(e))
        return
    slots = [(kind, text, st.container()) for kind, text in prose_parts(step.prose)]
    prose_shown = True
    for kind, _, slot in slots:
        if kind == "panel" and step.panel:
            with slot:
                try:
                    got = panels[step.panel](ctx)
                except StepFailed as e:
                    st.error(str(e))
                    got = None
            if got is None:          # the panel had nothing to show (no GPU file): its prose would mislead
                prose_shown = False
            else:
                facts.update({k: str(v) for k, v in got.items()})
        elif kind == "show" and step.shows:
            with slot:
                draw_shows(ctx)
    missing: list[str] = []
    if prose_shown:
        for kind, text, slot in slots:
            if kind == "md":
                filled, lost = fill(text, facts)
                missing += lost
                slot.markdown(filled)
    questions = []
    for q in step.questions:
        filled, lost = fill(q, facts)
        questions.append(filled)
        missing += lost
    if missing:
        st.warning(f"{lesson.file}, line {step.line}: no figure for {', '.join('{{' + m + '}}' for m in missing)} "
                   f"(a figure is a compile's metric, e.g. {{{{main.registers}}}}, or one the panel gives)")
    if questions and prose_shown:
        st.html(classroom.questions_html(questions))
    if step.exercise:
        exercise_ui.draw(ctx, step.exercise)


def draw_shows(ctx: Ctx) -> None:
    shows = ctx.step.shows
    for i in range(0, len(shows), 3):
        row = shows[i:i + 3]
        cols = st.columns(len(row)) if len(row) > 1 else [st.container()]
        for col, show in zip(cols, row):
            with col:
                _draw_show(ctx, show)


def _draw_show(ctx: Ctx, show: ShowSpec) -> None:
    """The lines a [[show]] asks for, of every kernel its compile selected (one block)."""
    spec = ctx.step.compile_named(show.compile)
    filename = kernel_file(ctx.lesson, spec.kernel)[0]
    kernels = ctx.compiled[show.compile]
    blocks, shown, total = [], 0, 0
    for kernel in kernels:
        try:
            text = services.stage_text(kernel, show.stage) if show.stage != "source" else kernel.stages.get("source", "")
        except KeyError:
            st.error(f"{kernel.name} has no {show.stage} stage for {kernel.target}")
            return
        to_python = {}
        if show.stage != "source" and show.python_lines:
            # a stage line stands for its own Python line and, in a helper, the calls that made it
            sl = sourcemap.stage_lines(show.stage, text, filename)
            to_python = {n: frozenset(ln for path, ln in sl.chain(n) if not path) for n in sl.to_python}
        span = None
        if show.region == "loop":
            loop = ptxops.main_loop(text)
            span = (loop.start, loop.end) if loop else (0, -1)
        picked, found = excerpt(text, show.match, to_python, show.python_lines, show.limit, show.stage == "source", span)
        shown, total = shown + len(picked), total + found
        head = [f"// {kernel.name}"] if len(kernels) > 1 else []
        blocks.append("\n".join(head + [f"{n:>4}  {line.strip()[:110]}" for n, line in picked]))
        if show.stage == "source":
            break                      # one file: its lines once
    first = kernels[0]
    title = show.title or f"{show.stage.upper()} · {first.name} · {first.target.replace('cuda:', 'sm_')}"
    st.markdown(f"**{title}**")
    st.code("\n\n".join(blocks) or "(no line matches)", language=None, wrap_lines=True)
    what = f"lines matching `{show.match}`" if show.match else \
        f"the lines of Python line{'s' if len(show.python_lines) > 1 else ''} {', '.join(map(str, show.python_lines))}"
    what += " in the main loop" if show.region == "loop" else ""
    st.caption(f"{shown} of {total} {what}" + (" (the first ones)" if total > shown else ""))


def excerpt(text: str, match: str | None, to_python: dict[int, frozenset[int]], python_lines: tuple[int, ...],
            limit: int, is_source: bool = False,
            span: tuple[int, int] | None = None) -> tuple[list[tuple[int, str]], int]:
    """(line number, text) of the stage lines a [[show]] asks for, at most `limit`; and how many
    matched. `to_python`: stage line -> the Python lines it stands for (its own, and the call
    sites of the helper it is in). `span`: only lines first..last (the main loop)."""
    lines = text.splitlines()
    wanted = set(python_lines)
    rx = re.compile(match) if match else None
    found = []
    for n, line in enumerate(lines, 1):
        if span and not span[0] <= n <= span[1]:
            continue
        if wanted and (n not in wanted if is_source else not to_python.get(n, frozenset()) & wanted):
            continue
        if rx and not rx.search(line):
            continue
        if not wanted and not rx:
            continue
        found.append((n, line))
    return found[:limit], len(found)
