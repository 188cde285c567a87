"""The compile door: one Lens per process holds the engines of every configured Triton version
and the result cache every caller shares (the same kernel, options, target and Triton compile
once for a class), bounded in memory and on disk.

    lens = Lens(settings)
    done = lens.compile(CompileRequest(source, filename="k.py"), who="session:ab12",
                        on_progress=lambda p: print(len(p.done), "of", p.total))   # as they come
    done.result.kernels[0].stages["ptx"]; done.hit      # True: another caller compiled it first

A result lives as one CompileResult object in memory, shared by every caller; its JSON is made
only when it is written to disk (ResultCache's encode/decode), never for a hit.
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from inspectors.base import settings as settings_mod
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.compile.engine import Engine
from inspectors.compile.version_engines import Engines
from inspectors.compile.journal import Progress
from inspectors.process import sandbox
from inspectors.store.results import CacheSize, ResultCache, request_key

# Results made by another version of the worker (or of the analysis it runs) may lack what this
# one shows: a hash of their source is part of every key.
_INSPECTORS = Path(__file__).resolve().parents[1]
FORMAT = hashlib.sha256(b"".join(
    p.read_bytes() for p in sorted(_INSPECTORS.glob("*/*.py"))
    if p.parent.name in ("base", "process", "read", "explain", "target", "compile"))).hexdigest()[:16]

RESULTS_ITEMS = 64             # results kept in memory
RESULTS_BYTES = 256 * 2**20    # gzipped results kept on disk


@dataclass(frozen=True)
class Compiled:
    result: CompileResult      # with its cache key (result.key)
    hit: bool                  # from the cache: another caller (or an earlier click) compiled it
    seconds: float             # this call's wall time, waiting included
    server_cpu_s: float = 0.0  # the server's CPU for it: this call's thread, and parsing the worker's answer


def _error_kind(result: CompileResult) -> str | None:
    return result.error.kind if result.error else None


def _keep(result: CompileResult) -> bool:
    """A timeout, a crash or a refusal says nothing about the source: not kept."""
    return _error_kind(result) not in ("timeout", "crash", "busy")


def _share(result: CompileResult) -> bool:
    """Callers that waited for the same compile get its timeout or crash too; a `busy` refusal
    was about the caller that asked first."""
    return _error_kind(result) != "busy"


class Lens:
    """The engines (one per Triton version, started on first use) and the shared result cache.
    `results_dir=None`: the cache's disk level next to the Triton cache; `cache=False`: no
    result cache at all (the CLI: one compile per process); `engines`: ones already started."""

    def __init__(self, settings: settings_mod.Settings | None = None, *, cache: bool = True,
                 results_dir: Path | None = None, engines: Engines | None = None, **engines_kw):
        self.settings = settings or settings_mod.load()
        self.engines = engines if engines is not None else Engines(self.settings, **engines_kw)
        folder = results_dir or Path(self.settings.triton_cache_dir).parent / "results"
        self._live: dict[str, Progress] = {}      # a compile running now (by key): its launches so far
        self.results = ResultCache(folder, RESULTS_ITEMS, RESULTS_BYTES, encode=CompileResult.to_json,
                                   decode=CompileResult.from_json) if cache else None

    # -- what the server has ----------------------------------------------------------------------

    def engine(self, version: str = "") -> Engine:
        """The engine of `version` ("": the server's own Triton, started with the server)."""
        return self.engines.get(version)

    def versions(self) -> list[str]:
        """The Triton versions this server can compile with, oldest first."""
        return self.engines.versions()

    def cache_size(self) -> CacheSize | None:
        return self.results.size() if self.results else None

    def clear_results(self) -> None:
        if self.results:
            self.results.clear()

    def gzipped(self, key: str) -> bytes | None:
        """A cached result's JSON, gzipped as the disk holds it (a history record reuses it)."""
        return self.results.gzipped(key) if self.results and key else None

    # -- a student's presence (their own sandbox) -------------------------------------------------

    def prewarm(self, who: str, address: str = "", named: bool | None = None) -> None:
        self.engine().prewarm(who, address, named)

    def forget(self, who: str) -> bool:
        return self.engine().forget(who)

    # -- compiling --------------------------------------------------------------------------------

    def compile(self, request: CompileRequest, who: str = "", timeout: float | None = None,
                on_wait: Callable[[int, float], None] | None = None,
                on_progress: Callable[[Progress], None] | None = None) -> Compiled:
        """`request` compiled for `who` (the fair queue's identity), or the cached result of an
        equal request. The worker analyses what it compiled within the settings' analysis
        budget (insights.insight reads it). `on_progress(Progress)`: the launches example() made
        and each one compiled, as the job runs (not called for a cached result, nor for one
        another caller is compiling)."""
        t0, cpu0 = time.perf_counter(), time.thread_time()
        try:
            pool = self.engines.get(request.triton_version)
        except KeyError as e:
            error = CompileResult(error=CompileError("usage", e.args[0], request.filename, None))
            return Compiled(error, False, time.perf_counter() - t0)
        if not request.analysis_s:
            request = dataclasses.replace(request, analysis_s=self.settings.analysis_budget_s)

        if self.results is None:
            return Compiled(pool.compile(request, timeout=timeout, session=who, on_wait=on_wait,
                                         on_progress=on_progress), False, time.perf_counter() - t0)
        # The version the request is routed to, as configured: what a worker reports is missing
        # while its slot's worker is being replaced (a sandboxed worker ends after its job).
        version = request.triton_version or self.engines.own or pool.triton_version
        # A student's own sandbox keeps what their earlier jobs left in it (their Triton cache):
        # its results are theirs alone, never served to another student with the same text.
        own = f"/own:{who}" if pool.uses_own(request, who) else ""
        key = request_key(request, f"{version}/{FORMAT}{own}")

        def publish(progress: Progress) -> None:     # for this caller, and for who waits for the same key
            self._live[key] = progress
            on_progress(progress)

        def run() -> CompileResult:
            try:
                return dataclasses.replace(pool.compile(request, timeout=timeout, session=who, on_wait=on_wait,
                                                        on_progress=publish if on_progress else None), key=key)
            finally:
                self._live.pop(key, None)

        def watch() -> None:       # waiting for another caller's compile of the same key: its progress
            if (progress := self._live.get(key)) is not None:
                on_progress(progress)
        result, hit = self.results.get_or_compute(key, run, _keep, _share, watch if on_progress else None, owner=who)
        if result.key != key:            # read from another process's file (the key is not in it)
            result = dataclasses.replace(result, key=key)
        # what it cost the server: this thread's CPU (decoding, bounding, caching it) and the reader's
        # parse of the worker's answer; a cached result, its lookup only
        server = time.thread_time() - cpu0 + (0.0 if hit else result.timings.get("server_parse_s", 0.0))
        return Compiled(result, hit, time.perf_counter() - t0, round(server, 4))

    def close(self) -> None:
        self.engines.close()


def server_problem(settings) -> str | None:
    """Why this server may not run users' code (a class server whose sandbox does not work
    here), or None: the app asks before it serves a page."""
    return sandbox.server_problem(settings)
