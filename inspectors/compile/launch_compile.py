"""Each launch example() made, compiled in the worker into its answer file: one after another
(each launch's SASS disassembled while the next compiles) or in forked children at once
(parallel.py); a stage that fails after the front end gives the stages made before it. What
the worker keeps of a launch is its header (base/launches.py): a step's hundreds of launches
are never in its memory at once, and travel in its one answer only when they are small
(`whole_answers`, CompileRequest.inline_bytes); else the engine adopts the files.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import re
import sys
import time
import traceback
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.launches import header_of
from inspectors.base.result import CompileRequest, KernelResult
from inspectors.compile import analysis, journal, loading, parallel
from inspectors.compile import diagnostics as capture
from inspectors.process import proclimits
from inspectors.read import line_twin
from inspectors.read.passes import parse_dump
from inspectors.read.sass import Disassembly, SassError

# An MLIR diagnostic printed by Triton's passes, e.g.
# /tmp/tlens-x/job-1/k.py:8:12: error: 'tt.dot' op ... incompatible dimensions
_MLIR_DIAG_RE = re.compile(r"^(?P<file>[^\s:]+\.py):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$", re.M)


def compile_launches(shim, launches, gtarget, target, req, path: Path, output_path: Path) -> list[KernelResult]:
    """Every recorded launch compiled, in launch order (one the page opened meanwhile first:
    journal.next_launch): one after another (each launch's SASS disassembled while the next
    compiles), or, several launches on several cores, in forked children at the same time
    (inspectors/compile/parallel.py). Each launch's whole result is its answer file in the job
    folder (journal.answered); what is returned is each launch without its stages (header_of):
    a step of hundreds of launches is never in this process's memory at once."""
    job_dir = output_path.parent
    if parallel.worth_forking(len(launches), req.pass_dump):    # each child analyses its own kernel too
        return parallel.compile_forked(len(launches), job_dir, path.name, lambda i: _analysed(_finish(
            *_compile_one(shim, launches[i], gtarget, target, req, i, path, output_path)), req, path.name),
            keep=header_of)
    heads, todo, pending = {}, list(range(len(launches))), None
    budget = [req.analysis_s]                    # the analysis's seconds, shared by the job's launches
    while todo or pending:       # in launch order, but a launch the page opened meanwhile first
        done, pending = pending, None
        if todo:
            i = journal.next_launch(job_dir, todo)
            kernel, sass = _compile_one(shim, launches[i], gtarget, target, req, i, path, output_path)
            journal.answered(job_dir, i, {"kernel": kernel.to_json()})     # streamed: its SASS comes after
            pending = (i, kernel, sass)
        if done is not None:     # the one before, its SASS disassembled meanwhile: finished, answered again
            heads[done[0]] = _answer_whole(job_dir, done[0], _budgeted(_finish(*done[1:]), req, path.name, budget))
    return [heads[i] for i in range(len(launches))]


def _answer_whole(job_dir: Path, i: int, kernel: KernelResult) -> KernelResult:
    """Launch i's final answer written; what the worker keeps of it: its header."""
    journal.answered(job_dir, i, {"kernel": kernel.to_json()})
    return header_of(kernel)


def _budgeted(kernel: KernelResult, req: CompileRequest, filename: str, budget: list) -> KernelResult:
    """`kernel` analysed within what is left of the job's analysis budget (`budget[0]` seconds)."""
    if req.analysis_s <= 0:
        return analysis.with_workload(kernel)
    t0 = time.monotonic()
    kernel = analysis.analysed(kernel, kernel.home(filename), t0 + max(budget[0], 0.0), req.analysis_s)
    budget[0] -= time.monotonic() - t0
    return kernel


def whole_answers(job_dir: Path, heads: list[KernelResult], inline_bytes: int) -> list[KernelResult] | None:
    """The launches whole, read back from their answer files, when all of them together are
    at most `inline_bytes` (they travel in the worker's one answer, as they always did); None
    when they are more (the engine adopts the files: inspectors.store.launches)."""
    try:
        total = sum((job_dir / f"launch-{i}.answer.json").stat().st_size for i in range(len(heads)))
    except OSError:
        total = inline_bytes + 1
    if total > inline_bytes:
        return None
    whole = []
    for i, head in enumerate(heads):
        data = json.loads((job_dir / f"launch-{i}.answer.json").read_text())
        whole.append(KernelResult.from_json(data["kernel"]) if "kernel" in data else head)
    return whole


def _analysed(kernel: KernelResult, req: CompileRequest, filename: str) -> KernelResult:
    """In a launch's child: its insight, within the job's analysis budget (its own clock)."""
    if req.analysis_s <= 0:
        return analysis.with_workload(kernel)
    return analysis.analysed(kernel, kernel.home(filename), time.monotonic() + req.analysis_s, req.analysis_s)


def _compile_one(shim, launch, gtarget, target, req, index, path: Path, output_path: Path):
    """Compiles one launch; returns its result without SASS and the pending disassembly.

    A stage that fails after the front end (ptxas, LLVM) gives a partial result: the
    stages made before it, and the error naming the stage. Each stage is also written to
    `launch-N/` in the job folder as it is made (with `kernel.json` describing the launch),
    so the engine can still show them if this process dies in the middle (an LLVM abort)."""
    filename = path.name
    t0 = time.perf_counter()
    before = output_path.stat().st_size if output_path.exists() else 0
    name, label = launch.fn.__name__, launch.label or launch.fn.__name__
    options = {k: v for k, v in launch.options.items() if isinstance(v, (int, float, str, bool)) or v is None}
    args = shim.arg_specs(launch)
    home = loading.home_of(launch.fn, filename, output_path.parent)       # a kernel written in a library, or a module beside the file
    source, source_path = home[1] if home else req.source, home[0] if home else ""
    folder = journal.begin(output_path.parent, index, KernelResult(name, target.key, options, args, {"source": source},
                                                                   index, label, source_path=source_path))
    diag_path, wall0 = output_path.parent / f"diagnostics-{index}.txt", time.time()   # this launch's fd 2
    try:
        with _PassDump(output_path.parent / f"passes-{index}.txt", output_path) if req.pass_dump else \
                capture.Diagnostics(diag_path, output_path):
            compiled = shim.compile_launch(launch, gtarget, journal_dir=folder, repro_dir=_repro_dir())
    except shim.StageFailure as e:
        failed = _partial(e, name, label, options, args, target, req, index, path, output_path, before, t0)
        return dataclasses.replace(failed, stages={**failed.stages, "source": source}, source_path=source_path), None
    except BaseException as e:  # noqa: BLE001
        if type(e).__name__ == "CompilationError":
            line = loading.compilation_error_line(e, path.read_text())
            raise loading.JobError(CompileError("compile", loading.first_line(e), filename, line, loading.detail_of(e))) from None
        sys.stderr.flush()
        log = output_path.read_text(errors="replace")[before:] if output_path.exists() else ""
        diag = _MLIR_DIAG_RE.search(log)
        if diag:
            raise loading.JobError(CompileError("compile", diag["msg"], filename, int(diag["line"]), log[-8000:])) from None
        raise loading.JobError(CompileError("compile", f"{type(e).__name__}: {e}", filename, None,
                                     traceback.format_exc() + log[-8000:])) from None
    texts = {"source": source, **stage_table.texts_from_asm(compiled.asm, target.backend)}
    sass, cubin = None, ""
    if target.backend == "cuda" and "cubin" in compiled.asm:
        cubin = base64.b64encode(compiled.asm["cubin"]).decode()
        if req.sass:
            sass = Disassembly(compiled.asm["cubin"])
    passes = ()
    if req.pass_dump:
        passes = parse_dump((output_path.parent / f"passes-{index}.txt").read_text(errors="replace"))
    diagnostics = "" if req.pass_dump else capture.remembered(compiled, diag_path, wall0, lambda: shim.compile_launch(
        launch, gtarget, journal_dir=folder, repro_dir=_repro_dir()))
    return KernelResult(
        name=name, target=target.key, options=options, args=args, stages=texts, launch=index, label=label,
        compile_seconds=time.perf_counter() - t0, metadata=shim.compiled_metadata(compiled), cubin=cubin,
        passes=passes, source_path=source_path, diagnostics=diagnostics, origin=dict(launch.origin),
        workload=dict(launch.call), line_twin=_line_twin(shim, launch, gtarget, texts, target.backend)), sass


def _line_twin(shim, launch, gtarget, texts: dict, backend: str) -> dict:
    """Compiled without line info (a library turned it off): a twin with it, which maps the
    real instructions (inspectors/read/line_twin.py); {} when line info is on."""
    if backend != "cuda" or not shim.line_info_off(launch):
        return {}
    try:
        twin = shim.compile_line_twin(launch, gtarget)
    except Exception as e:  # noqa: BLE001 - the real compile stands; the page says why it is not mapped
        return {"differs": f"a twin compiled with line info failed ({type(e).__name__}: {str(e)[:200]})"}
    return line_twin.twins(texts, stage_table.texts_from_asm(twin.asm, backend))


def _partial(e, name, label, options, args, target, req, index, path: Path, output_path: Path, before: int,
             t0: float) -> KernelResult:
    """The KernelResult of a launch whose stage `e.stage` failed: the stages made before it."""
    sys.stderr.flush()
    log = output_path.read_text(errors="replace")[before:] if output_path.exists() else ""
    diag = _MLIR_DIAG_RE.search(log)
    message = e.message
    limit = proclimits.memory_limit_mb()
    if e.stage == "cubin" and limit and "crashed" in message:
        message += (f"\n(The compile worker limits its address space, and ptxas's, to {limit} MB on machines "
                    "without a GPU; if the command below succeeds in a shell, raise TLENS_WORKER_MEMORY_MB.)")
    error = CompileError("compile", message, path.name, int(diag["line"]) if diag else None,
                         (traceback.format_exception_only(e.cause)[-1] if e.cause else "") + log[-8000:],
                         stage=stage_table.from_triton(e.stage), command=e.command)
    texts = {"source": req.source, **stage_table.texts_from_asm(e.made, target.backend)}
    return KernelResult(name=name, target=target.key, options=options, args=args, stages=texts, launch=index,
                        label=label, compile_seconds=time.perf_counter() - t0, error=error)


def _repro_dir() -> Path | None:
    """Where the input of a failed tool is kept for its repro command (set by the engine)."""
    return settings_mod.load().repro_dir


class _PassDump(capture.StderrTo):
    """Around one compile: libtriton prints the IR before every MLIR pass and after every
    LLVM pass to fd 2 (MLIR_ENABLE_DUMP=1, LLVM_IR_ENABLE_DUMP=1), here into `path` instead of
    the job's output; TRITON_ALWAYS_COMPILE=1 so a cached kernel is compiled again. On failure
    the dump's tail goes to the output, where the compiler's diagnostic is looked for."""
    ENV = {"MLIR_ENABLE_DUMP": "1", "LLVM_IR_ENABLE_DUMP": "1", "TRITON_ALWAYS_COMPILE": "1", "MLIR_DUMP_PATH": None}

    def failed_text(self) -> str:      # the diagnostics (`k.py:8:12: error: ...`) sit before the failed IR
        text = self.path.read_text(errors="replace")
        errors = [line for line in text.splitlines() if ": error: " in line][:20]
        return "\n".join(errors) + "\n" + text[-4000:]


def _finish(kernel: KernelResult, sass) -> KernelResult:
    """Adds the SASS once its background disassembly is done; an nvdisasm failure leaves
    the other stages and names the SASS stage as failed."""
    if sass is None:
        return kernel
    try:
        return dataclasses.replace(kernel, stages={**kernel.stages, "sass": sass.result()})
    except SassError as e:
        return dataclasses.replace(kernel, error=CompileError("compile", e.message, None, None, "", stage="sass",
                                                              command=e.command))
