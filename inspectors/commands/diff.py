"""`python -m inspectors diff A [B] ...` (the options and the JSON: inspectors/__main__.py): two
compiles compared launch by launch, with one Triton or two (`--triton A --triton B`)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.result import CompileRequest
from inspectors.base.targets import TargetError, parse as parse_target
from inspectors.commands import fail
from inspectors.session.compare import compare_results, compile_pair, diff_launch
from inspectors.session.lens import Lens
from inspectors.session.records import describe_options


def cmd_diff(args) -> int:

    settings = settings_mod.load()
    if len(args.triton) > 2:
        return fail(CompileError("usage", f"--triton given {len(args.triton)} times: at most twice (A, then B)"),
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
            return fail(CompileError("usage", str(e).strip('"')), args.json)
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            return fail(CompileError("usage", f"cannot read {path}: {e}", str(path)), args.json)
        pick = lambda name: (getattr(args, f"{side}_{name}") if getattr(args, f"{side}_{name}") is not None
                             else getattr(args, name))
        sides[side] = (path, CompileRequest(
            source=source, filename=path.name, target=target, kernel=args.kernel,
            num_warps=pick("num_warps"), num_stages=pick("num_stages"),
            constexprs={**dict(args.constexpr), **dict(getattr(args, f"{side}_constexpr"))},
            signature=args.signature, max_output_bytes=settings.max_output_bytes, triton_version=triton[side]))
    if triton["a"] or triton["b"]:
        return _diff_versions(args, settings, sides)
    lens = Lens(settings, cache=False, workers=1)
    try:
        results = {side: lens.compile(req, timeout=args.timeout).result for side, (_, req) in sides.items()}
    finally:
        lens.close()
    for result in results.values():
        if result.error:
            return fail(result.error, args.json)
    pairs = list(zip(results["a"].kernels, results["b"].kernels))
    indices = range(len(pairs))
    if args.launch is not None:
        if not 1 <= args.launch <= len(pairs):
            return fail(CompileError("usage", f"--launch {args.launch}: A and B have {len(pairs)} launch(es) "
                                      "in common"), args.json)
        indices = [args.launch - 1]
    diffs = []
    for i in indices:
        ka, kb = pairs[i]
        diffs.append(diff_launch(i, ka, kb, sides["a"][0].name, sides["b"][0].name, ignore_noise=not args.keep_noise))
    if args.json:
        print(json.dumps(_diff_json(sides, results, diffs)))
    else:
        _print_diff(sides, results, diffs, args.show)
    return 0


def _diff_versions(args, settings, sides) -> int:
    """diff with `--triton`: each side compiled by its Triton version (both at once)."""
    lens = Lens(settings, cache=False, workers=1)
    (pa, ra), (pb, rb) = sides["a"], sides["b"]
    va, vb = ra.triton_version or lens.engines.own, rb.triton_version or lens.engines.own
    try:
        results = dict(zip("ab", compile_pair(lens, ra, rb, timeout=args.timeout)))
    finally:
        lens.close()
    for side, result in results.items():
        if result.error and not result.partial:
            error = result.error
            version = (va, vb)[side == "b"]
            message = error.message if version in error.message else f"Triton {version}: {error.message}"
            return fail(dataclasses.replace(error, message=message), args.json)
    n = min(len(results["a"].kernels), len(results["b"].kernels))
    launches = None
    if args.launch is not None:
        if not 1 <= args.launch <= n:
            return fail(CompileError("usage", f"--launch {args.launch}: A and B have {n} launch(es) in common"),
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
    if sd.too_large:
        print(f"\n{sd.stage}: {sd.too_large}")
        return
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
