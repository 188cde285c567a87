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
`tlens diff` and `tlens profile` (inspectors/cli.py).

`--json` prints one object, `{"kernels": [{"name", "target", "options", "stages": {...},
...}]}`; on failure it exits 1 and prints `{"error": {"kind", "message", "file", "line",
"stage", "command"}}` (kinds: syntax, compile, runtime, timeout, usage, crash). When a later
stage failed (ptxas crashed, LLVM aborted) it also exits 1, and prints the kernels with the
stages they made (`stages`), the failing launch's `error` in it, and `error` naming the
failing `stage` and, for a tool, the `command` that reproduces it. Exit 2 is a usage error
of the CLI itself.

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
import dataclasses
import json
import sys
import threading
from pathlib import Path

from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.base.targets import TargetError, parse as parse_target
from inspectors.base import settings as settings_mod
from inspectors.compile.engine import Engine, Engines
from inspectors.explain.diff import diff_kernels
from inspectors.explain.insight import analyze
from inspectors.store.export import all_stages
from inspectors.store.history import describe_options


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
    c.add_argument("--constexpr", action="append", default=[], type=_parse_constexpr, metavar="NAME=VALUE")
    c.add_argument("--signature", help="compile without example(), e.g. '*fp32:16, *fp32:16, i32, 1024'")
    c.add_argument("--triton", metavar="VERSION", help="a configured Triton version (default: the server's own)")
    c.add_argument("--timeout", type=float, help="seconds (default 60, TLENS_COMPILE_TIMEOUT)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--stage", default="ptx", help="stage to print without --json (default ptx)")

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
        d.add_argument(f"--{side}constexpr", action="append", default=[], type=_parse_constexpr,
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


def _error_json(error: CompileError) -> dict:
    return {"kind": error.kind, "message": error.message, "file": error.file, "line": error.line,
            "stage": error.stage, "command": error.command, "detail": error.detail}


def _fail(error: CompileError, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"error": _error_json(error)}))
    else:
        where = f"{error.file}:{error.line}: " if error.file and error.line else (f"{error.file}: " if error.file else "")
        stage = f" in stage {error.stage}" if error.stage else ""
        print(f"{where}{error.kind} error{stage}: {error.message}", file=sys.stderr)
        if error.command:
            print(f"reproduce: {error.command}", file=sys.stderr)
        if error.detail and error.kind in ("compile", "runtime"):
            print(error.detail, file=sys.stderr)
    return 1


def cmd_compile(args) -> int:

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
                             max_output_bytes=settings.max_output_bytes, triton_version=args.triton or "")
    engine = Engines(settings, workers=1) if args.triton else Engine(settings)
    try:
        result = engine.compile(request, timeout=args.timeout)
    finally:
        engine.close()
    if result.error and not result.partial:
        return _fail(result.error, args.json)
    if args.json:
        data = _json(result, args.file.name)
        if result.partial:
            data["error"] = _error_json(result.error)
        print(json.dumps(data))
        return 1 if result.partial else 0
    _print_text(result, args.stage)
    return _fail(result.error, False) if result.partial else 0


def _json(result: CompileResult, filename: str) -> dict:
    """Each kernel: its fields (no cubin) plus the insight keys: resources, occupancy,
    memory_ops, source_map (line numbers are 1-based lines of the stage texts)."""
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
        if text is None and k.error is not None:
            text = f"// stage {k.error.stage} failed: {k.error.message.splitlines()[0]}"
        print(text if text is not None else f"// no {stage} stage for target {k.target}")


def cmd_diff(args) -> int:

    settings = settings_mod.load()
    if len(args.triton) > 2:
        return _fail(CompileError("usage", f"--triton given {len(args.triton)} times: at most twice (A, then B)"),
                     args.json)
    triton = {"a": args.a_triton or (args.triton[0] if args.triton else ""),
              "b": args.b_triton or (args.triton[-1] if args.triton else "")}
    sides = {}
    for side in ("a", "b"):
        path = args.a if side == "a" or args.b is None else args.b
        target = getattr(args, f"{side}_target") or args.target or settings.default_target
        try:
            parse_target(target)
            if args.show:
                stage_table.get(args.show)
        except (TargetError, KeyError) as e:
            return _fail(CompileError("usage", str(e).strip('"')), args.json)
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            return _fail(CompileError("usage", f"cannot read {path}: {e}", str(path)), args.json)
        pick = lambda name: (getattr(args, f"{side}_{name}") if getattr(args, f"{side}_{name}") is not None
                             else getattr(args, name))
        sides[side] = (path, CompileRequest(
            source=source, filename=path.name, target=target, kernel=args.kernel,
            num_warps=pick("num_warps"), num_stages=pick("num_stages"),
            constexprs={**dict(args.constexpr), **dict(getattr(args, f"{side}_constexpr"))},
            signature=args.signature, max_output_bytes=settings.max_output_bytes, triton_version=triton[side]))
    if triton["a"] or triton["b"]:
        return _diff_versions(args, settings, sides)
    engine = Engine(settings)
    try:
        results = {side: engine.compile(req, timeout=args.timeout) for side, (_, req) in sides.items()}
    finally:
        engine.close()
    for result in results.values():
        if result.error:
            return _fail(result.error, args.json)
    pairs = list(zip(results["a"].kernels, results["b"].kernels))
    indices = range(len(pairs))
    if args.launch is not None:
        if not 1 <= args.launch <= len(pairs):
            return _fail(CompileError("usage", f"--launch {args.launch}: A and B have {len(pairs)} launch(es) "
                                      "in common"), args.json)
        indices = [args.launch - 1]
    diffs = []
    for i in indices:
        ka, kb = pairs[i]
        sa, sb = all_stages(ka), all_stages(kb)
        diffs.append(diff_kernels(i, ka, kb, analyze(ka, sa, sides["a"][0].name), analyze(kb, sb, sides["b"][0].name),
                                  sa, sb, ignore_noise=not args.keep_noise))
    if args.json:
        print(json.dumps(_diff_json(sides, results, diffs)))
    else:
        _print_diff(sides, results, diffs, args.show)
    return 0


def _diff_versions(args, settings, sides) -> int:
    """diff with `--triton`: each side compiled by its Triton version (both at once)."""
    from inspectors.compile.versions import compare_results
    engines = Engines(settings, workers=1)
    (pa, ra), (pb, rb) = sides["a"], sides["b"]
    va, vb = ra.triton_version or engines.own, rb.triton_version or engines.own
    try:
        results = {}

        def one(side, req):
            results[side] = engines.compile(req, timeout=args.timeout)
        threads = [threading.Thread(target=one, args=(side, req)) for side, (_, req) in sides.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        engines.close()
    for side, result in results.items():
        if result.error and not result.partial:
            error = result.error
            version = (va, vb)[side == "b"]
            message = error.message if version in error.message else f"Triton {version}: {error.message}"
            return _fail(dataclasses.replace(error, message=message), args.json)
    n = min(len(results["a"].kernels), len(results["b"].kernels))
    launches = None
    if args.launch is not None:
        if not 1 <= args.launch <= n:
            return _fail(CompileError("usage", f"--launch {args.launch}: A and B have {n} launch(es) in common"),
                         args.json)
        launches = [args.launch - 1]
    cmp = compare_results(va, vb, results["a"], results["b"], pa.name, ignore_noise=not args.keep_noise,
                          launches=launches)
    if args.json:
        data = cmp.to_json()
        data.update({"a": {**_side_json(pa, ra), "triton": va}, "b": {**_side_json(pb, rb), "triton": vb}})
        print(json.dumps(data))
        return 0
    print(f"A: {pa} · Triton {va}\nB: {pb} · Triton {vb}")
    for lc in cmp.launches:
        print(f"\n== launch {lc.launch + 1}: {lc.diff.a.label or lc.diff.a.name}")
        print(lc.headline)
        for r in lc.diff.delta.changed_rows():
            print(f"  {r.group + ' ' + r.metric:40} {_cell(r.a):>12} {_cell(r.b):>12}  {r.change}")
        for name, sd in lc.diff.stages.items():
            print(f"    {name:7} {sd.summary()}")
        if args.show and args.show in lc.diff.stages:
            _print_rows(lc.diff.stages[args.show])
    return 0


def _side_json(path: Path, request: CompileRequest) -> dict:
    return {"file": str(path), "target": request.target, "num_warps": request.num_warps,
            "num_stages": request.num_stages, "constexprs": request.constexprs}


def _kernel_json(k) -> dict:
    return {"name": k.name, "label": k.label, "target": k.target,
            "num_warps": k.options.get("num_warps"), "num_stages": k.options.get("num_stages"),
            "args": [a.describe() for a in k.args]}


def _diff_json(sides, results, diffs) -> dict:
    return {
        "a": _side_json(*sides["a"]), "b": _side_json(*sides["b"]),
        "launches_a": len(results["a"].kernels), "launches_b": len(results["b"].kernels),
        "triton_version": results["a"].triton_version,
        "launches": [{"launch": d.launch + 1, "a": _kernel_json(d.a), "b": _kernel_json(d.b),
                      "headline": d.delta.headline, "delta": [r.to_json() for r in d.delta.rows],
                      "stages": {name: sd.to_json() for name, sd in d.stages.items()}} for d in diffs],
    }


def _print_diff(sides, results, diffs, show: str | None) -> None:
    for side in ("a", "b"):
        path, req = sides[side]
        opts = describe_options(req)
        print(f"{side.upper()}: {path} · {req.target}" + (f" · {opts}" if opts else ""))
    na, nb = len(results["a"].kernels), len(results["b"].kernels)
    if na != nb:
        print(f"(A has {na} launches, B has {nb}: comparing the first {min(na, nb)})")
    for d in diffs:
        print(f"\n== launch {d.launch + 1}: {d.a.label or d.a.name}  ·  " + ", ".join(
            x.describe() for x in d.a.args if x.type != "constexpr")[:150])
        print(d.delta.headline)
        rows = [("", "metric", "A", "B", "change")] + [
            ("*" if r.changed else "", r.metric, _cell(r.a), _cell(r.b), r.change) for r in d.delta.rows]
        widths = [max(len(str(row[c])) for row in rows) for c in range(5)]
        group = None
        for r, row in zip((None,) + d.delta.rows, rows):
            if r is not None and r.group != group:
                group = r.group
                print(f"  [{group}]")
            print("  " + "  ".join(str(v).ljust(w) if c < 2 else str(v).rjust(w)
                                   for c, (v, w) in enumerate(zip(row, widths))).rstrip())
        print("  [stage text]")
        for name, sd in d.stages.items():
            print(f"    {name:7} {sd.summary()}")
        if show and show in d.stages:
            _print_rows(d.stages[show])


def _cell(value) -> str:
    return "n/a" if value is None else f"{value}"


def _print_rows(sd, context: int = 2) -> None:
    """Changed lines with `context` equal lines around them, `-`/`+` marked."""
    rows = sd.rows
    keep = set()
    for i, r in enumerate(rows):
        if r.kind != "equal":
            keep.update(range(max(0, i - context), min(len(rows), i + context + 1)))
    print(f"\n--- {sd.stage} (A)\n+++ {sd.stage} (B)")
    last = -1
    for i in sorted(keep):
        if i != last + 1:
            print("@@")
        r = rows[i]
        if r.kind == "equal":
            print(f"  {r.b_text}")
        if r.kind in ("change", "remove"):
            print(f"- {r.a_text}")
        if r.kind in ("change", "add"):
            print(f"+ {r.b_text}")
        last = i


def cmd_profile(args) -> int:
    """Measure (a file and a GPU) or show (--saved) a per-line profile."""
    from inspectors.explain.profile import ProfileMismatch
    from inspectors.store import profiles

    def fail(message: str, command: str = "") -> int:
        return _fail(CompileError("usage" if not command else "runtime", message, command=command or None), args.json)

    source = ""
    if args.saved is not None:
        try:
            profile, _raw = profiles.load(args.saved)
        except ValueError as e:
            return fail(str(e))
        saved = str(args.saved)
        candidate = args.file or args.saved.parent / str(profile.meta.get("file", ""))
        if candidate and Path(candidate).is_file():
            source = Path(candidate).read_text(encoding="utf-8")
    else:
        if args.file is None:
            return fail("profile needs a kernel FILE (or --saved PROFILE.json)")
        from inspectors.bench.profiler import ProfileError, profile_launch
        try:
            source = args.file.read_text(encoding="utf-8")
            profile, _raw, path = profile_launch(args.file, args.launch, args.out, args.ncu_set, args.timeout)
        except OSError as e:
            return fail(f"cannot read {args.file}: {e}")
        except ProfileError as e:
            return fail(str(e), e.command)
        except ProfileMismatch as e:
            return fail(str(e))
        saved = str(path) if path else None
    if args.against is not None:
        if args.saved is None:
            return fail("--against compares two saved profiles: give --saved A.json --against B.json")
        from inspectors.explain.profile import compare
        try:
            other, _ = profiles.load(args.against)
        except ValueError as e:
            return fail(str(e))
        rows = compare(profile, other)
        if args.json:
            print(json.dumps({"a": profile.meta, "b": other.meta, "lines": rows}))
            return 0
        print(f"A: {args.saved.name} ({profile.meta.get('date')})   B: {args.against.name} ({other.meta.get('date')})")
        print(" line   share A   share B   change")
        for r in rows:
            print(f"{r['python_line']:5d}  {100 * r['share_a']:6.1f} %  {100 * r['share_b']:6.1f} %  "
                  f"{100 * r['change']:+6.1f} pts")
        return 0
    hottest = profile.hottest(source, n=10)
    if args.json:
        print(json.dumps({"meta": profile.meta, "saved": saved, "total_samples": profile.total_samples,
                          "hottest": hottest, "notes": list(profile.notes),
                          "unexplained": [{"sass_line": i.sass_line, "text": i.text, "samples": i.samples}
                                          for i in profile.unexplained],
                          "lines": profile.to_json()["lines"]}))
        return 0
    m = profile.meta
    print(f"{m.get('file')} launch {m.get('launch')} ({m.get('kernel')}) on {m.get('gpu')}, driver {m.get('driver')}, "
          f"torch {m.get('torch')}, Triton {m.get('triton')}, {m.get('tool')} {m.get('ncu', '')}, {m.get('date')}")
    print(f"{profile.total_samples:,.0f} warp-stall samples")
    for row in hottest:
        spr = f", {row['sectors_per_request']:.1f} sectors/request" if row["sectors_per_request"] else ""
        print(f"{100 * row['share']:5.1f} %  {row['where']}{spr}" + (f" — {row['why']}" if row["why"] else ""))
    for note in profile.notes:
        print(f"note: {note}")
    if saved:
        print(f"saved: {saved}")
    return 0


def main(argv=None) -> int:
    parser = build_parser()
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
