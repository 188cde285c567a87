"""What the panels show of one compiled kernel, for every caller, with one policy:

    insight(kernel, filename)                  the worker's analysis (KernelResult.analysis,
                                               decoded: insight.of); a kernel that came without
                                               one (a cache file, an old record) is analysed
                                               here, once per content, within the settings'
                                               analysis budget, else a note says it was cut
    insight(kernel, filename, with_sass=True)  the same plus the SASS line map and summary
    stage_text(kernel, "sass")                 SASS disassembled in a job (compile.sass_job)
    register_pressure(kernel, filename)        live registers per Python line, or why not

The caches are this process's, shared by every session, bounded, and keyed by what the answer
depends on (the kernel object while it lives, else its content's digest; a cubin's digest).
Nothing here imports streamlit; `ready(kernel, "sass")` lets the UI show a spinner only when
a job will run.
"""
from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Callable, Hashable

from inspectors.base import settings as settings_mod
from inspectors.base.result import KernelResult
from inspectors.compile import sass_job
from inspectors.explain.insight import Insight, analyze, of as of_worker, unavailable
from inspectors.read import sass
from inspectors.read.sourcemap import SourceMap

ITEMS = 256              # insights (and SASS answers) kept for every caller of this process


class _Lru:
    """A bounded mapping shared by threads: `get_or(key, make)` makes a missing value once per
    call (two threads may both make it; the last kept wins) and keeps the newest ITEMS."""

    def __init__(self, items: int = ITEMS):
        self.items, self._d, self._lock = items, OrderedDict(), threading.Lock()

    def get(self, key: Hashable):
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]
        return None

    def put(self, key: Hashable, value) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.items:
                self._d.popitem(last=False)

    def get_or(self, key: Hashable, make: Callable[[], object]):
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        return found

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._d


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- SASS: disassembled, line-mapped and register-read in jobs (compile.sass_job) ---------------

_sass = _Lru(64)
_sass_lines = _Lru(64)
_pressure = _Lru(32)


def ready(kernel: KernelResult, what: str, filename: str = "") -> bool:
    """Whether asking for `what` answers without starting a job: a stage's text ("sass"), the
    SASS line map of `insight(..., with_sass=True)` ("sass-lines"), or "pressure"."""
    if what in kernel.stages or not kernel.cubin:
        return True
    if _sha(kernel.cubin) not in _sass:
        return False
    filename = kernel.home(filename)
    if what == "pressure":
        return (_sha(kernel.cubin), filename) in _pressure
    if what == "sass-lines" and "ptx" in kernel.stages:
        try:
            return _lines_key(kernel, stage_text(kernel, "sass"), filename) in _sass_lines
        except sass.SassError:
            return True          # nothing more will be asked: the SASS panel says why
    return True


def _lines_key(kernel: KernelResult, sass_text: str, filename: str) -> tuple:
    return _sha(sass_text), _sha(kernel.stages["ptx"]), filename


def stage_text(kernel: KernelResult, stage: str) -> str:
    """The text of one stage; SASS is disassembled in a job when first asked for (SassError
    when it cannot be)."""
    if stage in kernel.stages:
        return kernel.stages[stage]
    if stage == "sass" and kernel.cubin:
        return _sass.get_or(_sha(kernel.cubin), lambda: sass_job.disassemble(kernel.cubin)).check().sass
    raise KeyError(f"{kernel.name} has no {stage} stage")


def register_pressure(kernel: KernelResult, filename: str):
    """Live registers per Python line (inspectors.read.liveregs, read in a job), or why not (str)."""
    if not kernel.cubin or "ptx" not in kernel.stages:
        return sass_job.no_cubin(kernel.stages)
    filename = kernel.home(filename)
    try:
        text = stage_text(kernel, "sass")
        reply = _pressure.get_or((_sha(kernel.cubin), filename), lambda: sass_job.pressure(
            kernel.cubin, text, kernel.stages["ptx"], filename))
        return reply.check().pressure
    except sass.SassError as e:
        return e.message


# -- the insight --------------------------------------------------------------------------------

_by_kernel: OrderedDict[tuple[int, str], tuple[KernelResult, Insight]] = OrderedDict()
_by_kernel_lock = threading.Lock()
_by_digest = _Lru()
_pending: dict[tuple[str, str], Future] = {}
_pending_lock = threading.Lock()
_analysis_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tlens-analysis")
STILL_RUNNING = "The analysis of this kernel took longer than"


def digest(kernel: KernelResult) -> str:
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


def _analyze_here(kernel: KernelResult, filename: str, budget_s: float) -> Insight:
    """A kernel that came without its worker's analysis: analysed in this process, once per
    digest, within `budget_s` (past it, the analysis goes on beside and a later ask finds it)."""
    key = (digest(kernel), filename)
    found = _by_digest.get(key)
    if found is not None:
        return found
    with _pending_lock:
        future = _pending.get(key)
        if future is None:
            future = _pending[key] = _analysis_pool.submit(_analyze, kernel, filename)
    try:
        found = future.result(timeout=budget_s)
    except FutureTimeout:
        return unavailable(filename, f"{STILL_RUNNING} {budget_s:g} s and was cut: the stages are shown "
                           "without it; it goes on, rerun the page to see it (TLENS_ANALYSIS_BUDGET_S)")
    with _pending_lock:
        _pending.pop(key, None)
    _by_digest.put(key, found)
    return found


def _base(kernel: KernelResult, filename: str) -> Insight:
    """Found by identity (every run of every session showing a kernel asks), else decoded from
    what its worker sent, else analysed here."""
    ident = (id(kernel), filename)
    with _by_kernel_lock:
        hit = _by_kernel.get(ident)
        if hit is not None and hit[0] is kernel:
            _by_kernel.move_to_end(ident)
            return hit[1]
    found = of_worker(kernel, filename) or _analyze_here(kernel, filename, settings_mod.load().analysis_budget_s)
    if found.cut.startswith(STILL_RUNNING):
        return found                       # not kept: the next ask finds the analysis done beside
    with _by_kernel_lock:
        _by_kernel[ident] = (kernel, found)       # the kernel is held: its id is not reused
        while len(_by_kernel) > ITEMS:
            _by_kernel.popitem(last=False)
    return found


def insight(kernel: KernelResult, filename: str, with_sass: bool = False) -> Insight:
    """Source map, memory ops, resources, remarks of one kernel. `with_sass`: the SASS part of
    the source map and its summary added (SASS is disassembled on demand), without redoing the
    rest; a SASS that cannot be read leaves the rest standing (its panel says why)."""
    filename = kernel.home(filename)     # a kernel written in a library: its own file's lines
    base = _base(kernel, filename)
    if not with_sass or not kernel.cubin or "ptx" not in kernel.stages:
        return base
    try:
        text = stage_text(kernel, "sass")
        found = _sass_lines.get_or(_lines_key(kernel, text, filename), lambda: sass_job.sass_lines(
            text, kernel.stages["ptx"], filename)).check()
    except sass.SassError:
        return base
    smap = SourceMap(filename, {**base.source_map.stages, "sass": found.lines})
    return dataclasses.replace(base, source_map=smap, summaries={**base.summaries, "sass": found.summary})


def all_stages(kernel: KernelResult) -> dict[str, str]:
    """The kernel's stage texts, SASS disassembled (in a job) when it has a cubin; a cubin that
    cannot be disassembled leaves SASS out (its panel and the report say why)."""
    texts = dict(kernel.stages)
    if "sass" not in texts and kernel.cubin:
        try:
            texts["sass"] = stage_text(kernel, "sass")
        except sass.SassError:
            pass
    return texts
