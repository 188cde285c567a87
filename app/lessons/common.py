"""What every lesson panel shares: the step's context, cached compiles, the committed GPU
files, grouped bars. Thin wrappers; the work is in inspectors."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from app.backend import services
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest, CompileResult, KernelResult
from inspectors.read.lessonfile import CompileSpec, Lesson, Step
from inspectors.session import files
import kernels

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "assets" / "lessons"
GPU_DIR = ROOT / "assets" / "gpu"
LESSONS_GPU_FILE = GPU_DIR / "gpu_lessons.json"
TARGET = "cuda:90"
settings = settings_mod.load()
LIBRARY = {k.slug: k for k in (*kernels.LIBRARY, *kernels.LESSON_KERNELS)}


@dataclass
class Ctx:
    """One step being drawn: its lesson, its settings, its compiles (name -> the kernels the
    [[compile]] selects: its function, its launch; every one when it names neither)."""
    lesson: Lesson
    step: Step
    compiled: dict[str, tuple[KernelResult, ...]] = field(default_factory=dict)
    outside: dict[str, tuple] = field(default_factory=dict)     # name -> its calls outside Triton

    def kernel(self, name: str | None = None) -> KernelResult:
        """The first kernel a compile selected (the step's first compile by default)."""
        return self.compiled[name or self.step.compiles[0].name][0]

    @property
    def options(self) -> dict:
        return self.step.options


class StepFailed(Exception):
    """A compile of the step failed: the message is shown, the page keeps serving."""


def kernel_file(lesson: Lesson, ref: str) -> tuple[str, str]:
    """(file name, source) of a step's kernel: a library kernel or a .py next to the lesson."""
    if ref.endswith(".py"):
        path = files.lesson_kernel(lesson, ref)
        if path is None:
            raise StepFailed(f"{lesson.file}: no kernel file {ref!r} next to the lesson")
        return path.name, path.read_text(encoding="utf-8")
    entry = LIBRARY.get(ref)
    if entry is None:
        raise StepFailed(f"{lesson.file}: no library kernel {ref!r}")
    return entry.filename, entry.source()


def compile_result(filename: str, source: str, target: str, **options) -> CompileResult:
    result = services.compile_kernel(CompileRequest(source=source, filename=filename, target=target, sass=False,
                                                    **options), float(settings.compile_timeout_s))
    if not result.ok:
        raise StepFailed(f"{filename} for {target}: {result.error.headline()}")
    return result


def compile_source(filename: str, source: str, target: str, **options) -> tuple[KernelResult, ...]:
    return compile_result(filename, source, target, **options).kernels


def compile_spec(lesson: Lesson, spec: CompileSpec, outside: dict | None = None) -> tuple[KernelResult, ...]:
    """The kernels a [[compile]] of a lesson selects (its function, its launch); what the compile
    runs outside Triton goes to `outside[spec.name]` (a torch.compile'd step's cuBLAS calls)."""
    filename, source = kernel_file(lesson, spec.kernel)
    result = compile_result(filename, source, spec.target, kernel=spec.function, num_warps=spec.num_warps,
                            num_stages=spec.num_stages, constexprs=dict(spec.constexprs), signature=spec.signature)
    found = result.kernels
    if outside is not None:
        outside[spec.name] = result.outside
    if spec.function:
        found = tuple(k for k in found if k.name == spec.function)
        if not found:
            raise StepFailed(f"{filename}: no kernel named {spec.function!r} was compiled")
    if spec.launch is not None:
        found = tuple(k for k in found if k.launch == spec.launch - 1)
        if not found:
            raise StepFailed(f"{filename}: launch {spec.launch} asked for, example() made fewer")
    return found


def library_kernels(slug: str) -> tuple[KernelResult, ...]:
    entry = LIBRARY[slug]
    return compile_source(entry.filename, entry.source(), TARGET)


def library_kernel(slug: str, name: str) -> KernelResult:
    return next(k for k in library_kernels(slug) if k.name == name)


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def gpu_lessons() -> dict | None:
    """The committed run of benchmarks/gpu_lessons.py, or None when there is none yet."""
    return read_json(LESSONS_GPU_FILE)


def not_measured(what: str) -> None:
    st.info(f"**Not yet measured on a GPU.** {what} come from `benchmarks/gpu_lessons.py`, run on a GPU "
            f"machine; its output is committed as `assets/gpu/gpu_lessons.json`, which this checkout does not have yet. "
            f"No figure is shown in its place: the other figures of this lesson come from compiles on this machine "
            f"and from the committed H100 caches.")


def gpu_label(data: dict) -> str:
    env = data.get("env", {})
    return (f"measured on **{env.get('gpu', '?')}** (driver {env.get('driver', '?')}, torch {env.get('torch', '?')}, "
            f"Triton {env.get('triton', '?')}; `assets/gpu/gpu_lessons.json`)")


def bars(x_name: str, xs: list, series: dict[str, list], height: int = 260, title: str | None = None):
    """Grouped bars in the order given (st.bar_chart would sort '1024' before '128')."""
    long = pd.DataFrame([{x_name: str(x), "quantity": name, "value": v}
                         for name, values in series.items() for x, v in zip(xs, values)])
    order = [str(x) for x in xs]
    chart = alt.Chart(long).mark_bar().encode(
        x=alt.X(f"{x_name}:N", sort=order, title=x_name), xOffset=alt.XOffset("quantity:N"),
        y=alt.Y("value:Q", title=title), color=alt.Color("quantity:N", title=None, legend=alt.Legend(orient="top")),
        tooltip=[x_name, "quantity", "value"]).properties(height=height)
    st.altair_chart(chart, width="stretch")


def table(df: pd.DataFrame):
    """A static table: every row and column on the page, long cells wrapped (a projector
    cannot scroll inside a grid)."""
    st.table(df, hide_index=True)
