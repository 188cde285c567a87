"""The app's only doorway to the engine: a process-wide warm worker and a result
cache keyed by source + options + target + Triton version."""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

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


# SASS is disassembled once per cubin (nvdisasm: ~0.35 s for flash attention's 10,915 lines),
# in a thread of its own, so that it can start before a panel asks for it: the explorer asks
# for the launch it shows (`prefetch_sass`) once its panels are drawn. A failed job is run
# again when asked again (nvdisasm may have been installed since).
_SASS_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tlens-nvdisasm")
_SASS_JOBS: OrderedDict[str, Future] = OrderedDict()
_SASS_LOCK = threading.Lock()


def _sass_job(cubin_b64: str, retry: bool = True) -> Future:
    key = hashlib.sha1(cubin_b64.encode()).hexdigest()
    with _SASS_LOCK:
        job = _SASS_JOBS.get(key)
        if job is None or (retry and job.done() and job.exception() is not None):
            job = _SASS_JOBS[key] = _SASS_POOL.submit(sass.disassemble_b64, cubin_b64)
            while len(_SASS_JOBS) > 64:
                _SASS_JOBS.popitem(last=False)
        _SASS_JOBS.move_to_end(key)
    return job


def prefetch_sass(kernel: KernelResult) -> None:
    """Start disassembling this launch's cubin now (a SASS panel opened later finds it done)."""
    if kernel.cubin and "sass" not in kernel.stages:
        _sass_job(kernel.cubin, retry=False)


def stage_text(kernel: KernelResult, stage: str) -> str:
    """The text of one stage; SASS is disassembled on first demand (or prefetched)."""
    if stage in kernel.stages:
        return kernel.stages[stage]
    if stage == "sass" and kernel.cubin:
        job = _sass_job(kernel.cubin)
        if job.done():
            return job.result()
        with st.spinner("Disassembling the cubin…"):
            return job.result()
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
