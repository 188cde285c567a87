"""Measured cost per line of every library kernel and of the flash-attention snippet, in one
call on a GPU machine (issue 22).

    python3 benchmarks/gpu_profile.py --out DIR [--budget-s 500] [--set full]

For every launch of every kernel file of the library (kernels/, the lesson kernels strided and
transpose included) and launch 1 of tests/snippets/flash_attention.py, runs
inspectors.bench.profiler.profile_launch: the launch under `ncu --set full --import-source yes
--clock-control none`, its Source page exported as CSV, the rows paired with the compiled SASS
and summed per Python line through the source map. Writes

    DIR/profiles/<stem>-launch<N>.json   the profile (GPU, driver, CUDA, torch, Triton, ncu, date)
    DIR/profiles/<stem>-launch<N>.ncu.csv  ncu's raw export beside it
    DIR/gpu_profile.txt                  the report: environment, then per launch the checks
                                         and the hottest lines with their top stall

and checks each mapping: every SASS instruction with samples maps to a Python line of the file
or is prologue/epilogue (before the first mapped instruction, after the last), and ncu's
instructions are the compiled ones (same opcode at every offset). For matmul it also checks that
the hottest line is the tl.dot or a tl.load feeding it. Exit status 1 when a check fails, 2
without a GPU or ncu. Commit DIR/profiles as assets/profiles/ and DIR/gpu_profile.txt as
benchmarks/results/gpu_profile.txt.

Needs an NVIDIA GPU, torch with CUDA, triton and Nsight Compute; imports no streamlit or
pygments (tested on the CPU side: python3 3.12, torch 2.11, triton 3.6 on the H100 machine).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLASH = ROOT / "tests" / "snippets" / "flash_attention.py"
BANKS = ROOT / "tests" / "snippets" / "why" / "bank_conflict.py"    # Gluon: an unswizzled and a padded buffer


def targets() -> list[tuple[Path, int | None]]:
    """(file, only this launch or None for all) in the order they are profiled."""
    import kernels
    files = [(k.path, None) for k in (*kernels.LIBRARY, *kernels.LESSON_KERNELS)]
    return files + [(FLASH, 1), (BANKS, None)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--budget-s", type=float, default=500.0, help="stop starting new profiles after this")
    ap.add_argument("--set", dest="ncu_set", default="full")
    ap.add_argument("--only", help="profile only the files whose name contains one of these comma-separated "
                                   "words (a smoke run, or the rest of a run the budget cut short)")
    args = ap.parse_args(argv)

    from inspectors.base.result import CompileRequest
    from inspectors.bench import profiler
    from inspectors.compile.engine import Engine

    started = time.perf_counter()
    out = args.out
    (out / "profiles").mkdir(parents=True, exist_ok=True)
    report: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        report.append(line)
        (out / "gpu_profile.txt").write_text("\n".join(report) + "\n")

    ncu = profiler.find_ncu()
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if ncu is None or not gpu:
        say(f"no {'ncu' if ncu is None else 'GPU'}: nothing measured")
        return 2
    env = profiler.environment(ncu)
    say("Measured cost per line (benchmarks/gpu_profile.py)")
    for key in ("gpu", "capability", "driver", "cuda", "torch", "triton", "python", "ncu", "date"):
        say(f"{key}: {env.get(key)}")
    say(f"command: python3 benchmarks/gpu_profile.py --out DIR --set {args.ncu_set} --budget-s {args.budget_s:g}"
        + (f" --only {args.only}" if args.only else ""))
    say()

    failures, skipped, done = [], [], 0
    engine = Engine()
    try:
        for path, only in targets():
            if args.only and not any(w and w in path.name for w in args.only.split(",")):
                continue
            result = engine.compile(CompileRequest(source=path.read_text(), filename=path.name,
                                                   target=profiler._target()), timeout=300)
            launches = [only] if only else list(range(1, len(result.kernels) + 1))
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    log = profiler.record_launches(path, profiler_env(), Path(tmp) / "log.json", 300)
            except profiler.ProfileError as e:
                failures.append(f"{path.name}: example() did not run: {e}")
                say(f"## {path.name}: example() did not run: {e}")
                continue
            for n in launches:
                name = f"{path.name} launch {n}"
                if time.perf_counter() - started > args.budget_s:
                    skipped.append(name)
                    continue
                t0 = time.perf_counter()
                try:
                    prof, _raw, saved = profiler.profile_launch(path, n, out / "profiles", args.ncu_set, engine=engine,
                                                                launch_log=log)
                except Exception as e:  # noqa: BLE001 - one launch failing must not stop the others
                    failures.append(f"{name}: {type(e).__name__}: {e}")
                    say(f"## {name}: FAILED {type(e).__name__}: {e}")
                    if getattr(e, "command", ""):
                        say(f"   reproduce: {e.command}")
                    say("   " + traceback.format_exc().strip().splitlines()[-1])
                    say()
                    continue
                done += 1
                source = path.read_text()
                lines = source.splitlines()
                problems = check(prof, path, lines)
                failures += [f"{name}: {p}" for p in problems]
                mapped = sum(1 for i in prof.instructions if i.chain)
                edge = sum(1 for i in prof.instructions if i.where in ("prologue", "epilogue", "padding"))
                say(f"## {name} ({prof.meta.get('kernel')}) — {time.perf_counter() - t0:.1f} s, saved {saved.name}")
                say(f"   {len(prof.instructions)} SASS instructions: {mapped} on Python lines, {edge} prologue/epilogue/NOP padding, "
                    f"{len(prof.unexplained)} unexplained with samples; {prof.total_samples:,.0f} samples; "
                    f"opcode mismatches {prof.opcode_mismatches}")
                for row in prof.hottest(source, n=5):
                    text = lines[row["python_line"] - 1].strip()[:60] if row["python_line"] <= len(lines) else ""
                    spr = (f", sectors/request {row['sectors_per_request']:.2f} (ideal {row['ideal_sectors_per_request']:.2f})"
                           if row["sectors_per_request"] and row["ideal_sectors_per_request"] else "")
                    say(f"   {100 * row['share']:5.1f} %  {row['where']}: `{text}`{spr}"
                        + (f" — {row['why']}" if row["why"] else ""))
                kernel = result.kernels[n - 1]
                try:
                    compared = static_vs_measured(prof, kernel, path)
                except Exception as e:  # noqa: BLE001 - the estimate models a subset of PTX
                    compared = []
                    say(f"   no static estimate: {type(e).__name__}: {e}")
                    if path.name in COALESCING_FILES:
                        problems.append(f"no static estimate to compare: {e}")
                for row in compared:
                    ok = row["ratio"] is not None and abs(row["ratio"] - 1) <= 0.10
                    say(f"   line {row['python_line']} {row['kind']}: sectors/request static "
                        f"{_f(row['static'])}, measured {_f(row['measured'])}"
                        + (f" ({100 * (row['ratio'] - 1):+.1f} %)" if row["ratio"] else ""))
                    if path.name in COALESCING_FILES and not ok:
                        problems.append(f"line {row['python_line']} {row['kind']}: measured sectors/request "
                                        f"{_f(row['measured'])} vs static {_f(row['static'])}: more than 10 % apart")
                failures += [f"{name}: {p}" for p in problems if f"{name}: {p}" not in failures]
                for p in problems:
                    say(f"   CHECK FAILED: {p}")
                for note in prof.notes:
                    say(f"   note: {note}")
                say()
    finally:
        engine.close()
    say(f"{done} launch(es) profiled in {time.perf_counter() - started:.0f} s; {len(failures)} failed check(s)"
        + (f"; not profiled (budget): {', '.join(skipped)} — run again with --only "
           + ",".join(sorted({s.split(' launch')[0] for s in skipped})) if skipped else ""))
    for f in failures:
        say(f"FAILED: {f}")
    return 1 if failures or skipped else 0


# The coalescing lesson's kernels: their measured sectors per request must match the static
# estimate within 10 % (the bound; ncu is the judge).
COALESCING_FILES = ("coalescing.py", "strided.py", "transpose.py")


def _f(x) -> str:
    return "—" if x is None else f"{x:.2f}"


def profiler_env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def static_vs_measured(prof, kernel, path: Path) -> list[dict]:
    """The static coalescing estimate of the launch's PTX, with the sizes it ran with, next
    to the measured sectors per request, per Python line and access kind."""
    from inspectors.explain import coalescing
    from inspectors.explain.profile import measured_vs_static
    from inspectors.read import sourcemap
    params = [a.name for a in kernel.args if a.type != "constexpr"]
    est = coalescing.estimate(kernel.stages["ptx"], params, prof.meta.get("launch_ints") or {})
    ptx_lines = sourcemap.stage_lines("ptx", kernel.stages["ptx"], path.name)
    return measured_vs_static(prof, est, ptx_lines)


def check(prof, path: Path, lines: list[str]) -> list[str]:
    """The mapping checks of one profile; [] when they hold."""
    problems = []
    for i in prof.unexplained:
        problems.append(f"SASS line {i.sass_line} `{i.text}` has {i.samples:g} samples and maps to no Python line")
    if prof.opcode_mismatches:
        problems.append(f"{prof.opcode_mismatches} instructions differ between ncu and the compiled SASS")
    if not prof.total_samples:
        problems.append("no warp-stall samples at all")
    if path.name == "matmul.py" and prof.lines:
        hot = lines[prof.lines[0].python_line - 1]
        if "tl.dot" not in hot and "tl.load" not in hot:
            problems.append(f"the hottest line is neither the tl.dot nor a load feeding it: `{hot.strip()}`")
    return problems


if __name__ == "__main__":
    sys.exit(main())
