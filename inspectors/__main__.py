"""Headless CLI over the same engine the app uses.

    python -m inspectors compile FILE [--kernel NAME] [--target cuda:90] [--num-warps N]
                                      [--num-stages N] [--constexpr NAME=VALUE ...]
                                      [--signature SIG] [--timeout S] [--json] [--stage ptx]

`--json` prints one object, `{"kernels": [{"name", "target", "options", "stages": {...},
...}]}`; on failure it exits 1 and prints `{"error": {"kind", "message", "file", "line"}}`
(kinds: syntax, compile, runtime, timeout, usage, crash). Exit 2 is a usage error of the CLI itself.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import stages as stage_table
from .errors import CompileError
from .result import CompileRequest, CompileResult
from .targets import TargetError, parse as parse_target


def _parse_constexpr(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"--constexpr wants NAME=VALUE, got {text!r}")
    return name.strip(), _literal(value.strip())


def _literal(value: str):
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    if value in ("True", "False"):
        return value == "True"
    return value.strip("'\"")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m inspectors", description="See what Triton does with a kernel.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="compile every launch of a kernel file's example()")
    c.add_argument("file", type=Path)
    c.add_argument("--kernel", help="only this kernel")
    c.add_argument("--target", default=None, help="cuda:80, cuda:90, cuda:100, hip:gfx942, ...")
    c.add_argument("--num-warps", type=int)
    c.add_argument("--num-stages", type=int)
    c.add_argument("--constexpr", action="append", default=[], type=_parse_constexpr, metavar="NAME=VALUE")
    c.add_argument("--signature", help="compile without example(), e.g. '*fp32:16, *fp32:16, i32, 1024'")
    c.add_argument("--timeout", type=float, help="seconds (default 60, TLENS_COMPILE_TIMEOUT)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--stage", default="ptx", help="stage to print without --json (default ptx)")
    return p


def _fail(error: CompileError, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": {"kind": error.kind, "message": error.message, "file": error.file,
                                    "line": error.line, "detail": error.detail}}))
    else:
        where = f"{error.file}:{error.line}: " if error.file and error.line else (f"{error.file}: " if error.file else "")
        print(f"{where}{error.kind} error: {error.message}", file=sys.stderr)
        if error.detail and error.kind in ("compile", "runtime"):
            print(error.detail, file=sys.stderr)
    return 1


def cmd_compile(args) -> int:
    from . import settings as settings_mod
    from .engine import Engine

    settings = settings_mod.load()
    target = args.target or settings.default_target
    try:
        parse_target(target)
        stage_table.get(args.stage)
    except (TargetError, KeyError) as e:
        return _fail(CompileError("usage", str(e).strip('"')), args.json)
    try:
        source = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return _fail(CompileError("usage", f"cannot read {args.file}: {e}", str(args.file)), args.json)
    request = CompileRequest(source=source, filename=args.file.name, target=target, kernel=args.kernel,
                             num_warps=args.num_warps, num_stages=args.num_stages,
                             constexprs=dict(args.constexpr), signature=args.signature,
                             max_output_bytes=settings.max_output_bytes)
    engine = Engine(settings)
    try:
        result = engine.compile(request, timeout=args.timeout)
    finally:
        engine.close()
    if result.error:
        return _fail(result.error, args.json)
    if args.json:
        print(json.dumps(_json(result, args.file.name)))
    else:
        _print_text(result, args.stage)
    return 0


def _json(result: CompileResult, filename: str) -> dict:
    """Each kernel: its fields (no cubin) plus the insight keys: resources, occupancy,
    memory_ops, source_map (line numbers are 1-based lines of the stage texts)."""
    from .insight import analyze
    kernels = []
    for kernel in result.kernels:
        data = {k: v for k, v in kernel.to_json().items() if k != "cubin"}
        data.update(analyze(kernel, kernel.stages, filename).to_json())
        kernels.append(data)
    return {"kernels": kernels, "output": result.output,
            "triton_version": result.triton_version, "seconds": round(result.seconds, 3)}


def _print_text(result: CompileResult, stage: str) -> None:
    for k in result.kernels:
        print(f"// ===== {k.label} · {k.target} · num_warps={k.options.get('num_warps')} "
              f"num_stages={k.options.get('num_stages')}")
        print("// " + ", ".join(a.describe() for a in k.args))
        text = k.stages.get(stage)
        print(text if text is not None else f"// no {stage} stage for target {k.target}")


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.command == "compile":
        return cmd_compile(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
