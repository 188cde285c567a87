"""`python -m inspectors compile FILE ...` (the options: inspectors/__main__.py): every launch of a
file's example() compiled, a stage printed or everything as JSON with the insight keys."""
from __future__ import annotations

import json
import sys

from inspectors.base import gpu_specs
from inspectors.base import settings as settings_mod
from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.base.targets import TargetError, parse as parse_target
from inspectors.commands import error_json, fail
from inspectors.explain import step
from inspectors.read import line_twin
from inspectors.session import files as session_files
from inspectors.session import insights
from inspectors.session.lens import Lens


def cmd_compile(args) -> int:

    if args.jsonl:
        args.json = True
    settings = settings_mod.load()
    target = args.target or settings.default_target
    try:
        parse_target(target)
        stage_table.get(args.stage)
    except (TargetError, KeyError) as e:
        return fail(CompileError("usage", str(e).strip('"')), args.json)
    gpu = None
    if args.gpu:
        gpu = gpu_specs.named(args.gpu)
        if gpu is None:
            return fail(CompileError("usage", f"no figures for a GPU named {args.gpu!r}; known: "
                                     + ", ".join(g.name for g in gpu_specs.GPUS)), args.json)
    try:
        source = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return fail(CompileError("usage", f"cannot read {args.file}: {e}", str(args.file)), args.json)
    files, package = session_files.project_of(args.file)    # its package and the files beside it: importable
    request = CompileRequest(source=source, filename=args.file.name, target=target, kernel=args.kernel,
                             num_warps=args.num_warps, num_stages=args.num_stages,
                             constexprs=dict(args.constexpr), signature=args.signature,
                             max_output_bytes=settings.max_output_bytes, triton_version=args.triton or "",
                             analysis_s=60.0 if args.json or args.summary else 0.0, files=files, package=package)
    lens = Lens(settings, cache=False, workers=1)
    try:
        result = lens.compile(request, timeout=args.timeout, on_progress=_stream() if args.jsonl else None).result
    finally:
        lens.close()
    head = {"event": "result"} if args.jsonl else {}
    if result.error and not result.partial:
        if args.jsonl:
            print(json.dumps({**head, "error": error_json(result.error)}))
            return 1
        return fail(result.error, args.json)
    measured = None
    if args.measure:             # example() run for real on this machine's GPU, its kernels timed
        from inspectors.session import bench
        try:
            measured = bench.per_call(bench.measure_step(args.file))
        except bench.MeasureError as e:
            return fail(CompileError("usage", str(e), str(args.file)), args.json)
    if args.json:
        extra = {"error": error_json(result.error)} if result.partial else {}
        if args.summary:
            extra["summary"] = [r.to_json() for r in step.rows(result.headers, args.file.name, gpu, result.outside, measured, target)]
        _print_json(head, result, args.file.name, extra)
        return 1 if result.partial else 0
    if args.summary or not result.kernels:    # no Triton launch: the step is its calls outside Triton
        print(step.text(step.rows(result.headers, args.file.name, gpu, result.outside, measured, target)))
    else:
        _print_text(result, args.stage)
    return fail(result.error, False) if result.partial else 0


def _stream():
    """`--jsonl`'s events as the job goes: the launches once example() has run, then each launch
    as it is compiled (journal.Progress), one JSON object per line, flushed."""
    told: set = set()

    def on_progress(progress) -> None:
        if -1 not in told and progress.total:
            told.add(-1)
            print(json.dumps({"event": "launches", "labels": list(progress.labels),
                              "example_s": progress.example_s}), flush=True)
        for i in sorted(set(progress.done) - told):
            told.add(i)
            if (kernel := progress.kernel(i)) is not None:
                data = {k: v for k, v in kernel.to_json().items() if k not in ("cubin", "analysis", "line_twin")}
                print(json.dumps({"event": "kernel", "launch": i, "seconds": round(progress.done[i], 3),
                                  "kernel": data}), flush=True)
    return on_progress


def _kernel_json(kernel, filename: str) -> dict:
    """A kernel: its fields (no cubin) plus the insight keys: resources, occupancy,
    memory_ops, source_map, remarks (line numbers are 1-based lines of the stage texts); with
    SASS, register_pressure (Python line -> most live registers), register_peak and spills."""
    data = {k: v for k, v in kernel.to_json().items() if k not in ("cubin", "analysis", "line_twin")}
    if kernel.line_twin:         # compiled without line info: mapped through a twin (read/line_twin.py), or why not
        data["line_info"] = line_twin.note(kernel.line_twin)
    data.update(insights.insight(kernel, filename).to_json())
    if kernel.cubin and "sass" in kernel.stages and "ptx" in kernel.stages:
        p = insights.register_pressure(kernel, filename)       # in a bounded job, as the app's
        if isinstance(p, str):
            data["register_pressure_error"] = p
        else:
            data["register_pressure"] = {str(n): r for n, r in sorted(p.by_line.items())}
            data["register_peak"] = p.peak
            data["spills"] = {"stores": {str(n): c for n, c in sorted(p.spill_stores.items())},
                              "loads": {str(n): c for n, c in sorted(p.spill_loads.items())}}
    return data


def _print_json(head: dict, result: CompileResult, filename: str, extra: dict) -> None:
    """One JSON object, `{**head, "kernels": [...], "output", "triton_version", "seconds", **extra}`,
    written a kernel at a time: a step of 500 launches (a stored result: base/launches.py) is
    never one string, nor one list of dicts, in this process."""
    tail = {"output": result.output, "triton_version": result.triton_version,
            "seconds": round(result.seconds, 3), **({"outside": list(result.outside)} if result.outside else {}), **extra}
    out = sys.stdout
    out.write(json.dumps(head)[:-1] + (", " if head else "") + '"kernels": [')
    for i, kernel in enumerate(result.kernels):
        out.write((", " if i else "") + json.dumps(_kernel_json(kernel, filename)))
    out.write("], " + json.dumps(tail)[1:] + "\n")
    out.flush()


def _print_text(result: CompileResult, stage: str) -> None:
    for k in result.kernels:
        print(f"// ===== {k.label} · {k.target} · num_warps={k.options.get('num_warps')} "
              f"num_stages={k.options.get('num_stages')}")
        print("// " + ", ".join(a.describe() for a in k.args))
        text = k.stages.get(stage)
        if text is None and k.error is not None:
            text = f"// stage {k.error.stage} failed: {k.error.message.splitlines()[0]}"
        print(text if text is not None else f"// no {stage} stage for target {k.target}")
