"""The commands of `python -m inspectors` (inspectors/__main__.py, which parses the command
line) and of `tlens` (inspectors/cli.py): one module each, compile.py, diff.py and profile.py,
each with its `cmd_*(args) -> exit status`; here what they share, the `--constexpr` values and
the way an error is printed (text on stderr, or `{"error": {...}}` with --json) and exits 1.
Like __main__.py and cli.py these modules sit on top of the layers (tests/unit/test_layering.py)."""
from __future__ import annotations

import argparse
import json
import sys

from inspectors.base.errors import CompileError


def parse_constexpr(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"--constexpr wants NAME=VALUE, got {text!r}")
    return name.strip(), literal(value.strip())


def literal(value: str):
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    if value in ("True", "False"):
        return value == "True"
    return value.strip("'\"")


def error_json(error: CompileError) -> dict:
    return {"kind": error.kind, "message": error.message, "file": error.file, "line": error.line,
            "stage": error.stage, "command": error.command, "detail": error.detail}


def fail(error: CompileError, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": error_json(error)}))
    else:
        where = f"{error.file}:{error.line}: " if error.file and error.line else (f"{error.file}: " if error.file else "")
        stage = f" in stage {error.stage}" if error.stage else ""
        print(f"{where}{error.kind} error{stage}: {error.message}", file=sys.stderr)
        if error.command:
            print(f"reproduce: {error.command}", file=sys.stderr)
        if error.detail and error.kind in ("compile", "runtime"):
            print(error.detail, file=sys.stderr)
    return 1
