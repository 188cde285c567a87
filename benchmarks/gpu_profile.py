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
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FLASH = ROOT / "tests" / "snippets" / "flash_attention.py"


def targets() -> list[tuple[Path, int | None]]:
    """(file, only this launch or None for all) in the order they are profiled."""
    import kernels
    files = [(k.path, None) for k in (*kernels.LIBRARY, *kernels.LESSON_KERNELS)]
    return files + [(FLASH, 1)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--budget-s", type=float, default=500.0, help="stop starting new profiles after this")
    ap.add_argument("--set", dest="ncu_set", default="full")
    ap.add_argument("--only", help="profile only files whose name contains this (a smoke run)")
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
    say(f"command: python3 benchmarks/gpu_profile.py --out DIR --set {args.ncu_set} --budget-s {args.budget_s:g}")
    say()

    failures, skipped, done = [], [], 0
    engine = Engine()
    try:
        for path, only in targets():
            if args.only and args.only not in path.name:
                continue
            result = engine.compile(CompileRequest(source=path.read_text(), filename=path.name,
                                                   target=profiler._target()), timeout=300)
            launches = [only] if only else list(range(1, len(result.kernels) + 1))
            for n in launches:
                name = f"{path.name} launch {n}"
                if time.perf_counter() - started > args.budget_s:
                    skipped.append(name)
                    continue
                t0 = time.perf_counter()
                try:
                    prof, _raw, saved = profiler.profile_launch(path, n, out / "profiles", args.ncu_set, engine=engine)
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
                edge = sum(1 for i in prof.instructions if i.where in ("prologue", "epilogue"))
                say(f"## {name} ({prof.meta.get('kernel')}) — {time.perf_counter() - t0:.1f} s, saved {saved.name}")
                say(f"   {len(prof.instructions)} SASS instructions: {mapped} on Python lines, {edge} prologue/epilogue, "
                    f"{len(prof.unexplained)} unexplained with samples; {prof.total_samples:,.0f} samples; "
                    f"opcode mismatches {prof.opcode_mismatches}")
                for row in prof.hottest(source, n=5):
                    text = lines[row["python_line"] - 1].strip()[:60] if row["python_line"] <= len(lines) else ""
                    spr = (f", sectors/request {row['sectors_per_request']:.2f} (ideal {row['ideal_sectors_per_request']:.2f})"
                           if row["sectors_per_request"] and row["ideal_sectors_per_request"] else "")
                    say(f"   {100 * row['share']:5.1f} %  {row['where']}: `{text}`{spr}"
                        + (f" — {row['why']}" if row["why"] else ""))
                for p in problems:
                    say(f"   CHECK FAILED: {p}")
                for note in prof.notes:
                    say(f"   note: {note}")
                say()
    finally:
        engine.close()
    say(f"{done} launch(es) profiled in {time.perf_counter() - started:.0f} s; {len(failures)} failed check(s)"
        + (f"; not profiled (budget): {', '.join(skipped)}" if skipped else ""))
    for f in failures:
        say(f"FAILED: {f}")
    return 1 if failures or skipped else 0


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
