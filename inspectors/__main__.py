"""Headless CLI over the same engine the app uses.

    python -m inspectors compile FILE [--kernel NAME] [--target cuda:90] [--num-warps N]
                                      [--num-stages N] [--constexpr NAME=VALUE ...]
                                      [--signature SIG] [--timeout S] [--json] [--stage ptx]

    python -m inspectors profile FILE [--launch N] [--out DIR] [--set full] [--json]     (GPU + ncu)
    python -m inspectors profile --saved PROFILE.json [FILE] [--json]                (anywhere)
    python -m inspectors profile --saved A.json --against B.json [--json]            (two edits, line by line)

    python -m inspectors diff A [B] [--target cuda:90] [--a-target T] [--b-target T]
                                    [--num-warps N] [--a-num-warps N] [--b-num-warps N]
                                    [--num-stages N] [--a-num-stages N] [--b-num-stages N]
                                    [--constexpr N=V] [--a-constexpr N=V] [--b-constexpr N=V]
                                    [--launch N] [--show STAGE] [--keep-noise] [--json]
                                    [--triton VERSION [--triton VERSION]]

Installed (`pip install -e .`, which `make setup` runs), the same commands are `tlens compile`,
`tlens diff` and `tlens profile` (inspectors/cli.py). This module parses the command line; each
command is a module of inspectors/commands/ (compile.py, diff.py, profile.py).

`--json` prints one object, `{"kernels": [{"name", "target", "options", "stages": {...},
...}]}`; on failure it exits 1 and prints `{"error": {"kind", "message", "file", "line",
"stage", "command"}}` (kinds: syntax, compile, runtime, timeout, usage, crash). When a later
stage failed (ptxas crashed, LLVM aborted) it also exits 1, and prints the kernels with the
stages they made (`stages`), the failing launch's `error` in it, and `error` naming the
failing `stage` and, for a tool, the `command` that reproduces it. Exit 2 is a usage error
of the CLI itself.

`--jsonl` streams one JSON object per line as the compile goes, for tools: `{"event":
"launches", "labels": [...], "example_s"}` once example() has run, `{"event": "kernel",
"launch", "seconds", "kernel": {...}}` as each launch is compiled (its stages, without the
insight keys and the SASS, which come with the result), then `{"event": "result", ...}`, the
`--json` object (or `{"event": "result", "error": {...}}`).

`--summary` prints every launch in one table instead of a stage: its graph (forward, backward,
inference under torch.compile), kernel, warps, stages, grid, registers, the bytes it moves and
FLOPs of its dots, its time estimated on a target GPU without one (`--gpu H100`; default the
target's first in inspectors/base/gpu_specs.py) and its share of the step, the lines of the
file it computes and the ATen ops it fuses (inspectors/explain/step.py); with `--json` the
object gains `"summary"`, those rows. `--measure`, on a machine with a GPU, runs example() for
real under torch.profiler (inspectors/bench/step_times.py) and puts each Triton kernel's
measured time beside its estimate.

`diff` compiles A and B (two kernel files, or one file twice with the `--a-*`/`--b-*`
options; plain `--target`, `--num-warps`, ... apply to both) and compares launch i of A
with launch i of B. `--json` prints `{"a": {...}, "b": {...}, "launches": [{"launch",
"a", "b", "headline", "delta": [{"group", "metric", "a", "b", "changed", "change"}],
"stages": {"ptx": {"changed", "added", "removed", "identical", "ignore_noise"}, ...}}]}`.

`--triton A --triton B` compiles the file with two configured Triton versions (README, "Several
Triton versions"; one `--triton` or `--a-triton`/`--b-triton` set one side): each launch also
gets `notes` (what only the version change explains: ptxas flags, layout copies of small
tensors, a stage one version could not make) and a `headline` naming the versions. A launch
one version compiled only in part is compared on the stages both made.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspectors.commands import parse_constexpr
from inspectors.commands.compile import cmd_compile
from inspectors.commands.diff import cmd_diff
from inspectors.commands.profile import cmd_profile


def build_parser(prog: str = "python -m inspectors") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="See what Triton does with a kernel.")
    add_commands(p.add_subparsers(dest="command", required=True))
    return p


def add_commands(sub) -> None:
    """compile, diff and profile, on the subparsers `sub` (also `tlens`'s: inspectors/cli.py)."""
    c = sub.add_parser("compile", help="compile every launch of a kernel file's example()")
    c.add_argument("file", type=Path)
    c.add_argument("--kernel", help="only this kernel")
    c.add_argument("--target", default=None, help="cuda:80, cuda:90, cuda:100, hip:gfx942, ...")
    c.add_argument("--num-warps", type=int)
    c.add_argument("--num-stages", type=int)
    c.add_argument("--constexpr", action="append", default=[], type=parse_constexpr, metavar="NAME=VALUE")
    c.add_argument("--signature", help="compile without example(), e.g. '*fp32:16, *fp32:16, i32, 1024'")
    c.add_argument("--triton", metavar="VERSION", help="a configured Triton version (default: the server's own)")
    c.add_argument("--timeout", type=float, help="seconds (default 60, TLENS_COMPILE_TIMEOUT)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--jsonl", action="store_true", help="stream JSON lines: the launches, each one as it is "
                   "compiled, then the --json object as {\"event\": \"result\", ...}")
    c.add_argument("--stage", default="ptx", help="stage to print without --json (default ptx)")
    c.add_argument("--summary", action="store_true", help="every launch in one table (graph, kernel, warps, "
                   "stages, the lines it computes, the ATen ops it fuses) instead of a stage; with --json, "
                   "the object's \"summary\" rows")
    c.add_argument("--measure", action="store_true", help="with --summary, on a machine with an NVIDIA GPU: "
                   "example() run for real under torch.profiler, each kernel's measured time beside its estimate")
    c.add_argument("--gpu", default="", help="the GPU --summary estimates times on (H200, H100, B200, A100, "
                   "MI300X; default the target's first)")

    d = sub.add_parser("diff", help="compare two compiles: two files, or one file with two option sets")
    d.add_argument("a", type=Path, metavar="A")
    d.add_argument("b", type=Path, metavar="B", nargs="?", help="default: A again (compare option sets)")
    d.add_argument("--kernel", help="only this kernel")
    d.add_argument("--signature", help="compile without example(), e.g. '*fp32:16, *fp32:16, i32, 1024'")
    for side in ("", "a-", "b-"):
        who = {"": "both", "a-": "A", "b-": "B"}[side]
        d.add_argument(f"--{side}target", default=None, help=f"target of {who}")
        d.add_argument(f"--{side}num-warps", type=int, help=f"num_warps of {who}")
        d.add_argument(f"--{side}num-stages", type=int, help=f"num_stages of {who}")
        d.add_argument(f"--{side}constexpr", action="append", default=[], type=parse_constexpr,
                       metavar="NAME=VALUE", help=f"constexpr override of {who}")
    d.add_argument("--triton", action="append", default=[], metavar="VERSION",
                   help="Triton version: once for both sides, twice for A then B")
    d.add_argument("--a-triton", metavar="VERSION", help="Triton version of A")
    d.add_argument("--b-triton", metavar="VERSION", help="Triton version of B")
    d.add_argument("--launch", type=int, help="only launch N of example() (1-based)")
    d.add_argument("--show", metavar="STAGE", help="also print the changed lines of this stage")
    d.add_argument("--keep-noise", action="store_true",
                   help="compare raw text (register/SSA numbers, .loc lines, labels count as changes)")
    d.add_argument("--timeout", type=float, help="seconds per compile (default 60, TLENS_COMPILE_TIMEOUT)")
    d.add_argument("--json", action="store_true", help="print one JSON object with the delta tables")
    f = sub.add_parser("profile", help="measure one launch under Nsight Compute, per line (GPU), "
                                       "or show a saved profile (--saved)")
    f.add_argument("file", type=Path, nargs="?", help="the kernel file (with example())")
    f.add_argument("--launch", type=int, default=1, help="launch N of example() (1-based, default 1)")
    f.add_argument("--out", type=Path, help="save the profile here (<stem>-launch<N>.json and .ncu.csv)")
    f.add_argument("--set", dest="ncu_set", default="full", help="ncu section set (default full)")
    f.add_argument("--saved", type=Path, help="a saved profile (.json) to show instead of measuring")
    f.add_argument("--against", type=Path, help="with --saved: a second saved profile, line by line (A vs B)")
    f.add_argument("--timeout", type=float, default=300.0, help="seconds for the compile and for ncu")
    f.add_argument("--json", action="store_true", help="print one JSON object")


def main(argv=None, parser: argparse.ArgumentParser | None = None) -> int:
    """Parse `argv` (with `parser`: `tlens`'s, which adds `app`) and run the command."""
    parser = parser or build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """The parsed command, run; its exit status."""
    if args.command == "compile":
        return cmd_compile(args)
    if args.command == "diff":
        return cmd_diff(args)
    if args.command == "profile":
        return cmd_profile(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
