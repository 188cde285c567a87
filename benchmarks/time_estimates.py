"""Are the step view's time estimates right? (issue 57; not a test: it prints figures)

For each driver (benchmarks/drivers/estimates/: the seeds' kernels at two sizes, a GPT training
step at two sizes under torch.compile, Liger-Kernel's ops forward and backward), on the GPU
machine:
  1. the estimate: `tlens compile DRIVER --summary --json --gpu H200` with the GPU hidden
     (CUDA_VISIBLE_DEVICES=), as a laptop would make it;
  2. the measurement: example() run for real, twice to compile and warm up, then REPS more
     under torch.profiler: each kernel's time per call (median), by name.
Printed per kernel: estimate, measured, their ratio; per step: whether the estimated three
slowest Triton kernels (per call) are the measured three slowest, the sums, and the time the step
spends outside Triton (cuBLAS, flash attention, ATen's own kernels). Then the goals: the median
|log(estimate / measured)| over Triton kernels of >= 5 µs against log 1.5, and the top three
right in >= 80 % of steps. A copy's bandwidth is measured too, beside the data sheet's.

    python3 benchmarks/time_estimates.py --out benchmarks/results/time_estimates.txt   # GPU machine
    python3 benchmarks/time_estimates.py --estimate benchmarks/drivers/estimates/seeds_small.py  # here
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = ROOT / "benchmarks" / "drivers" / "estimates"
STEPS = ("seeds_small", "seeds_large", "gpt_step_small", "gpt_step_large", "liger_ops")
REPS = 5
GPU = "H200"
PARTIAL: dict[str, str] = {}     # driver -> the error that stopped its CPU side after some launches
MIN_US = 5.0


def estimate(driver: Path, gpu: str = GPU) -> list[dict]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}"}
    p = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(driver), "--summary", "--json", "--gpu", gpu,
                        "--timeout", "900"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    try:
        data = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"{driver.name}: no JSON (rc {p.returncode}): {p.stderr[-1500:]}") from None
    if "summary" not in data:
        raise RuntimeError(f"{driver.name}: {json.dumps(data.get('error'))[:1500]}")
    if data.get("error"):        # a partial result: the launches before it are estimated, the error said
        print(f"{driver.name}: the CPU side stopped: {data['error'].get('message', '')[:600]}", file=sys.stderr)
        PARTIAL[driver.stem] = data["error"].get("message", "")[:600]
    return data["summary"]


def measure(driver: Path) -> dict:
    """The driver's kernels timed on this GPU (inspectors/bench/step_times.py, a process of its own)."""
    from inspectors.session import bench
    return bench.measure_step(driver, REPS, timeout=1200,
                              env={**os.environ, "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}"})


def copy_bandwidth() -> str:
    import torch
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(10):
        start.record()
        y.copy_(x)
        end.record()
        torch.cuda.synchronize()
        ms.append(start.elapsed_time(end))
    tbs = 2 * x.numel() / (statistics.median(ms) / 1e3) / 1e12
    return f"a 1 GiB copy (read + write): {tbs:.2f} TB/s, median of 10"


def compare(name: str, rows: list[dict], times: dict) -> tuple[list[dict], dict]:
    """Per Triton kernel: estimate per call (the mean of its rows', by calls) against the measured median."""
    by_name: dict[str, list[dict]] = {}
    for r in rows:
        if r["estimate_us"] is not None and not r["alternative"] and not r.get("outside"):
            by_name.setdefault(r["kernel"], []).append(r)
    extern = [r for r in rows if r.get("outside") and r["estimate_us"] is not None]
    out = []
    for kernel, rs in by_name.items():
        calls = sum(r["calls"] for r in rs)
        est = sum(r["estimate_us"] * r["calls"] for r in rs) / calls
        got = times.get(kernel)
        # one size: the median call; several (a kernel launched at two sizes): the mean call, as
        # the estimate is the mean of its rows' (a median would pick one size's)
        meas = (statistics.median(got) if len(rs) == 1 else statistics.fmean(got)) if got else None
        out.append({"step": name, "kernel": kernel, "estimate_us": est, "measured_us": meas, "rows": len(rs),
                    "calls_est": calls, "calls_meas": len(got) / REPS if got else 0,
                    "bound": rs[0]["bound"], "how": rs[0]["how"],
                    # what the model saw, so a later model can be checked against this run without a GPU
                    **{f: rs[0].get(f) for f in ("grid", "warps", "stages", "registers", "blocks_per_sm", "bytes",
                                                 "flops", "issued", "waits", "config")}})
    matched = [k for k in out if k["measured_us"] is not None]
    top_est = {k["kernel"] for k in sorted(matched, key=lambda k: -k["estimate_us"])[:3]}
    top_meas = {k["kernel"] for k in sorted(matched, key=lambda k: -k["measured_us"])[:3]}
    triton_names = set(by_name)
    outside = {n: sum(v) / REPS for n, v in times.items() if n not in triton_names}
    summary = {"step": name, "top3_right": top_est == top_meas, "top_est": sorted(top_est), "top_meas": sorted(top_meas),
               "est_total_us": sum(k["estimate_us"] * k["calls_est"] for k in out),
               "meas_triton_us": sum(sum(times.get(k["kernel"], ())) / REPS for k in out),
               "outside_us": sum(outside.values()),
               "outside_est_us": sum(r["estimate_us"] * r["calls"] for r in extern), "outside_est_calls": len(extern),
               "total_meas_us": sum(sum(v) for v in times.values()) / REPS,
               "outside_top": sorted(outside.items(), key=lambda kv: -kv[1])[:3],
               "unmatched": [k["kernel"] for k in out if k["measured_us"] is None]}
    return out, summary


def recheck(files: list[Path], names: list[str]) -> str:
    """The model as this checkout has it against GPU runs already made: each step's drivers
    compiled here (no GPU), its kernels joined by name to the measured times in `files` (the
    newest file's run of a step wins)."""
    measured: dict[str, dict] = {}
    for f in files:
        for k in json.loads(f.read_text())["kernels"]:
            if k["measured_us"] is not None:
                # the first file's run of a kernel wins; its median stands for the run's calls
                measured.setdefault(k["step"], {}).setdefault(k["kernel"], [k["measured_us"]] * REPS)
    kernels, steps = [], []
    for name in names:
        if name not in measured:
            continue
        ks, s = compare(name, estimate(DRIVERS / f"{name}.py"), measured[name])
        kernels += ks
        steps.append(s)
    return (f"recheck: this checkout's estimates against the measured times of {', '.join(str(f) for f in files)} "
            "(outside-Triton sums and calls are not in those files: ignore them)\n" + report(kernels, steps))


def report(kernels: list[dict], steps: list[dict]) -> str:
    lines = []
    for s in steps:
        lines.append(f"\n## {s['step']}")
        if s["step"] in PARTIAL:
            lines.append(f"the CPU side stopped after some launches: {PARTIAL[s['step']]}")
        lines.append(f"{'kernel':60} {'est µs':>9} {'meas µs':>9} {'est/meas':>8} {'calls':>9}  bound")
        for k in (k for k in kernels if k["step"] == s["step"]):
            ratio = f"{k['estimate_us'] / k['measured_us']:.2f}" if k["measured_us"] else "-"
            meas = f"{k['measured_us']:.1f}" if k["measured_us"] else "not run"
            lines.append(f"{k['kernel'][:60]:60} {k['estimate_us']:9.1f} {meas:>9} {ratio:>8} "
                         f"{k['calls_est']:>4}/{k['calls_meas']:<4g}  {k['bound']}")
        lines.append(f"three slowest per call: estimated {s['top_est']}, measured {s['top_meas']}: "
                     f"{'right' if s['top3_right'] else 'WRONG'}")
        lines.append(f"step's Triton kernels: estimated {s['est_total_us']:.0f} µs, measured {s['meas_triton_us']:.0f} µs; "
                     f"outside Triton (measured): {s['outside_us']:.0f} µs, most "
                     + ", ".join(f"{n[:50]} {t:.0f} µs" for n, t in s["outside_top"]))
        lines.append(f"outside Triton, estimated from the graph's {s['outside_est_calls']} calls (cuBLAS, attention): "
                     f"{s['outside_est_us']:.0f} µs; the whole step: estimated "
                     f"{s['est_total_us'] + s['outside_est_us']:.0f} µs, measured {s['total_meas_us']:.0f} µs")
        if s["unmatched"]:
            lines.append(f"estimated but not seen on the GPU: {s['unmatched']}")
    judged = [k for k in kernels if k["measured_us"] and k["measured_us"] >= MIN_US]
    errs = [abs(math.log(k["estimate_us"] / k["measured_us"])) for k in judged]
    right = sum(s["top3_right"] for s in steps)
    lines.append("\n## goals")
    if errs:
        med = statistics.median(errs)
        lines.append(f"median |log(estimate/measured)| over {len(judged)} Triton kernels of >= {MIN_US:g} µs: "
                     f"{med:.3f} (a factor of {math.exp(med):.2f}; goal <= log 1.5 = {math.log(1.5):.3f}): "
                     f"{'met' if med <= math.log(1.5) else 'NOT met'}")
        within = sum(e <= math.log(1.5) for e in errs)
        lines.append(f"within 1.5x: {within} of {len(judged)}; within 2x: {sum(e <= math.log(2) for e in errs)}")
        worst = sorted(judged, key=lambda k: -abs(math.log(k["estimate_us"] / k["measured_us"])))[:5]
        lines.append("largest misses: " + "; ".join(
            f"{k['step']}/{k['kernel'][:48]} est {k['estimate_us']:.1f} meas {k['measured_us']:.1f} ({k['how'][:90]})"
            for k in worst))
    lines.append(f"top three right in {right} of {len(steps)} steps ({100 * right / max(len(steps), 1):.0f} %; goal >= 80 %)")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--estimate", type=Path, help="only the CPU side's rows for one driver")
    ap.add_argument("--recheck", type=Path, nargs="+", help="without a GPU: today's estimates (this checkout's "
                    "model, the CPU side's compile) against the measured times of committed runs' .json files; "
                    "kernels are joined by name, so run it with the GPU run's torch (another numbers Inductor's "
                    "kernels otherwise)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--steps", default=",".join(STEPS))
    args = ap.parse_args()
    if args.recheck:
        print(recheck(args.recheck, args.steps.split(",")))
        return 0
    if args.estimate:
        for r in estimate(args.estimate):
            print(f"{r['kernel'][:60]:60} {r['estimate_us']} x{r['calls']} {r['how']}")
        return 0
    import torch
    import triton
    head = [f"GPU: {torch.cuda.get_device_name()}", f"torch {torch.__version__}, triton {triton.__version__}",
            f"commit: {os.environ.get('TLENS_COMMIT', 'unknown')}", f"estimates on: {GPU} (inspectors/base/gpu_specs.py)",
            copy_bandwidth(), f"measured: torch.profiler, {REPS} runs of example() after 2 warm-up runs, median per call"]
    kernels, steps = [], []
    for name in args.steps.split(","):
        driver = DRIVERS / f"{name}.py"
        try:
            rows, times = estimate(driver), measure(driver)
        except Exception as e:  # noqa: BLE001 - one driver's failure is reported, the others still run
            head.append(f"{name}: FAILED: {str(e)[:1500]}")
            continue
        ks, s = compare(name, rows, times)
        kernels += ks
        steps.append(s)
        print(f"{name}: {len(ks)} kernels", file=sys.stderr, flush=True)
        _write(args.out, head, kernels, steps)          # after each driver: a run cut short keeps what it made
    print(_write(args.out, head, kernels, steps))
    return 0


def _write(out: Path | None, head: list, kernels: list, steps: list) -> str:
    text = "\n".join(head) + "\n" + report(kernels, steps) + "\n"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        out.with_suffix(".json").write_text(json.dumps({"kernels": kernels, "steps": steps}, indent=1))
    return text


if __name__ == "__main__":
    sys.exit(main())
