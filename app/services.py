"""The app's only doorway to the engine: a process-wide warm worker and a result
cache keyed by source + options + target + Triton version."""
from __future__ import annotations

import json

import streamlit as st

from inspectors.read import sass
from inspectors.base import settings as settings_mod
from inspectors.compile.engine import Engine
from inspectors.base.result import CompileRequest, CompileResult, KernelResult


@st.cache_resource(show_spinner=False)
def engine() -> Engine:
    """Started with the server: the worker imports torch and triton while the page loads."""
    return Engine(settings_mod.load())


class _NotCached(Exception):
    """Raised inside the cached function so Streamlit does not keep a result that
    says nothing about the source (a timeout, a crashed worker)."""

    def __init__(self, result: CompileResult):
        self.result = result


@st.cache_data(show_spinner=False, max_entries=64)
def _compile_cached(request_json: str, triton_version: str, timeout: float) -> dict:
    result = engine().compile(CompileRequest(**json.loads(request_json)), timeout=timeout)
    if result.error and result.error.kind in ("timeout", "crash"):
        raise _NotCached(result)
    return result.to_json()


def compile_kernel(request: CompileRequest, timeout: float) -> CompileResult:
    key = json.dumps(request.to_json(), sort_keys=True)
    try:
        return CompileResult.from_json(_compile_cached(key, engine().triton_version, timeout))
    except _NotCached as e:
        return e.result


@st.cache_data(show_spinner="Disassembling the cubin…", max_entries=64)
def _sass(cubin_b64: str) -> str:
    return sass.disassemble_b64(cubin_b64)


def stage_text(kernel: KernelResult, stage: str) -> str:
    """The text of one stage; SASS is disassembled the first time a panel shows it."""
    if stage in kernel.stages:
        return kernel.stages[stage]
    if stage == "sass" and kernel.cubin:
        return _sass(kernel.cubin)
    raise KeyError(f"{kernel.name} has no {stage} stage")


@st.cache_data(show_spinner=False, max_entries=64)
def _insight(kernel_json: str, filename: str):
    from inspectors.explain.insight import analyze
    kernel = KernelResult.from_json(json.loads(kernel_json))
    return analyze(kernel, dict(kernel.stages), filename)


@st.cache_data(show_spinner=False, max_entries=64)
def _sass_lines(sass_text: str, ptx: str, filename: str):
    from inspectors.read import sourcemap
    return sourcemap.StageLines("sass", sourcemap.sass_lines(sass_text, filename, sourcemap.sass_hints(ptx, filename)))


def insight(kernel: KernelResult, stage_names: list[str], filename: str):
    """Source map, memory ops, resources of one kernel. The SASS part of the source map
    is added only when a SASS panel is open (SASS is disassembled on demand), without
    redoing the rest."""
    import dataclasses

    from inspectors.explain.insight import summarize_stage
    from inspectors.read.sourcemap import SourceMap
    base = _insight(json.dumps(kernel.to_json(), sort_keys=True), filename)
    if "sass" not in stage_names or not kernel.cubin or "ptx" not in kernel.stages:
        return base
    try:
        sass_text = stage_text(kernel, "sass")
    except sass.SassError:       # the SASS panel shows the failure; the rest stands
        return base
    sass_map = _sass_lines(sass_text, kernel.stages["ptx"], filename)
    smap = SourceMap(filename, {**base.source_map.stages, "sass": sass_map})
    return dataclasses.replace(base, source_map=smap,
                               summaries={**base.summaries, "sass": summarize_stage("sass", sass_text)})
