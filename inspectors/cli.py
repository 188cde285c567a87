"""`tlens`, the command that `pip install -e .` puts beside the virtualenv's python
(pyproject.toml, [project.scripts]):

    tlens app [FILE.py] [STREAMLIT OPTIONS ...]
                                         the app: `streamlit run app/main.py [OPTIONS ...]`, from
                                         this checkout (its .streamlit/config.toml applies); with a
                                         FILE, the explorer opens it from disk, compiles it, and
                                         recompiles it whenever it (or its project) is saved
    tlens compile FILE ...               `python -m inspectors compile FILE ...`
    tlens diff A [B] ...                 `python -m inspectors diff ...`
    tlens profile [FILE] ...             `python -m inspectors profile ...`

compile, diff and profile are inspectors/__main__.py's commands, with the same options, output
and exit statuses. Like __main__.py this module sits on top of the layers; it never imports
streamlit (inspectors/ stays free of the UI, tests/unit/test_layering.py): `tlens app` replaces
itself with `python -m streamlit run`, under the interpreter that runs tlens.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app" / "main.py"


def build_parser() -> argparse.ArgumentParser:
    from inspectors.__main__ import add_commands

    p = argparse.ArgumentParser(prog="tlens", description="Triton Lens: see what Triton does with a kernel.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{app,compile,diff,profile}")
    sub.add_parser("app", help="start the app (streamlit run app/main.py); "
                               "the options after `app` go to streamlit run, e.g. --server.port 8502",
                   add_help=False)
    add_commands(sub)
    return p


def app_command(streamlit_args: list[str]) -> list[str]:
    """The command line of `tlens app STREAMLIT_ARGS...`."""
    return [sys.executable, "-m", "streamlit", "run", str(APP), *streamlit_args]


def run_app(streamlit_args: list[str]) -> int:
    """Become the Streamlit server, started from the checkout's folder so that its
    .streamlit/config.toml (the address it listens on, no file watcher, ...) applies."""
    cmd = app_command(streamlit_args)
    os.chdir(ROOT)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cmd[0], cmd)
    return 1            # not reached: execv returns only by raising OSError


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["app"]:
        # everything after `app` is streamlit's (argparse would take `--server.port` for its own),
        # but a first argument that is a Python file is the file to open (TLENS_OPEN)
        rest = argv[1:]
        if rest and rest[0].endswith(".py") and not rest[0].startswith("-"):
            if not Path(rest[0]).is_file():
                print(f"tlens app: no such file: {rest[0]}", file=sys.stderr)
                return 2
            os.environ["TLENS_OPEN"] = str(Path(rest[0]).resolve())
            rest = rest[1:]
        return run_app(rest)
    from inspectors.__main__ import main as commands

    return commands(argv, build_parser())


if __name__ == "__main__":
    sys.exit(main())
