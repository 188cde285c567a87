"""Every GPU measurement of issue 5, in one call on the GPU machine.

    python3 benchmarks/gpu_bench.py --out DIR [--tune] [--budget-s 540]

Imports inspectors.bench.model / inspectors.bench.worker and kernels only (no streamlit). Sections,
each written to DIR/gpu_bench.json as soon as it ends (a section that fails records its error
and the next one runs):

  env      GPU, driver, torch, triton
  panel    the Benchmark page's own code path: inspectors.bench.worker.run_benchmark, one worker
           process per run, check then do_bench; the seeds' tables come from these runs (GELU,
           softmax, add-mul-activation sweeps with every baseline), and every library kernel
           at its largest size. The first run re-measures this GPU's ceilings.
  agree    an independent script: triton.testing.do_bench called here, in this process, on each
           kernel's launcher at the panel's sizes; the panel's figure must be within 5 %.
           Also: torch copy vs vector add over the sizes (the seed's "vector add vs copy").
  fault    a kernel that stores to an illegal address, through the panel path: reported as a
           value; then a normal run in a fresh worker, to show the service carries on.
  lock     two panel runs started together on one GPU: their timed windows must not overlap.
  tune     (--tune) block sizes / warps / stages of the library kernels at their largest size,
           to pick defaults that reach the targets (>= 95 % of copy, matmul >= 90 % of torch).

Prints a short summary table last.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import threading
import time
import traceback
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from inspectors.bench import model as bench, runner  # noqa: E402
from inspectors.bench.model import BenchRequest  # noqa: E402
from inspectors.bench.worker import run_benchmark  # noqa: E402

MEMORY_BOUND = ("vector_add", "softmax", "gelu", "bias_relu", "add_mul_act", "giou", "coalescing", "coarsening")

# (slug, sweep, providers): None = every provider the kernel has
PANEL_RUNS = (
    ("vector_add", True, ("torch eager",)),
    ("gelu", True, None),                       # seed: manual vs F.gelu vs torch.compile vs Triton
    ("softmax", True, None),                    # seed: manual vs torch.softmax vs torch.compile vs Triton
    ("add_mul_act", True, None),                # seed: GB/s vs eager and TorchScript, batch/weight sizes
    ("matmul", True, ("torch.matmul (fp16)", "torch eager")),
    ("bias_relu", False, ("torch eager", "torch.compile")),
    ("giou", False, ("torch eager",)),
    ("coalescing", False, ("torch eager", "Triton, strided (sum_cols_kernel)")),
    ("coarsening", False, None),
)


class Report:
    def __init__(self, out: Path):
        self.out = out
        self.data: dict = {"sections": {}, "errors": {}}
        self.t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def save(self):
        (self.out / "gpu_bench.json").write_text(json.dumps(self.data, indent=1))

    def section(self, name: str, fn, *args):
        t = time.perf_counter()
        print(f"== {name} (t={self.elapsed():.0f}s)", flush=True)
        try:
            self.data["sections"][name] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - record and go on to the next section
            self.data["errors"][name] = traceback.format_exc()
            print(f"!! {name} failed: {type(e).__name__}: {e}", flush=True)
        self.data.setdefault("seconds", {})[name] = round(time.perf_counter() - t, 1)
        self.save()


def env_section() -> dict:
    import torch
    info = runner.gpu_info(torch.cuda.current_device())
    return {"gpu": info.__dict__, "describe": info.describe(), "python": sys.version.split()[0]}


def _largest(slug: str) -> int:
    return importlib.import_module(f"kernels.{slug}").BENCH_SIZES[-1]


def panel_section(rep: Report) -> dict:
    runs = {}
    first = True
    for slug, sweep, providers in PANEL_RUNS:
        t = time.perf_counter()
        req = BenchRequest(slug, size=None if sweep else _largest(slug), sweep=sweep, providers=providers,
                           remeasure_ceilings=first, lock_wait_s=60)
        result = run_benchmark(req, timeout=240)
        first = False
        runs[slug] = result.to_json()
        err = f" ERROR {result.error.kind}: {result.error.message[:300]}" if result.error else ""
        print(f"   {slug:12s} {len(result.rows):3d} rows in {time.perf_counter() - t:5.1f}s{err}", flush=True)
        for c in result.checks:
            if not c.ok:
                print(f"     check failed: {c.size} {c.provider}: {c.message[:200]}", flush=True)
        rep.data["sections"]["panel"] = runs
        rep.save()
    return runs


def _independent_ms(slug: str, size: int) -> list[float]:
    """Not the panel's code: inputs, launcher and do_bench called right here, three times after
    300 ms of memset to bring the clocks up (an idle GPU times small kernels slow)."""
    import torch
    from triton.testing import do_bench
    m = importlib.import_module(f"kernels.{slug}")
    with torch.device("cuda"):
        inputs = m.bench_inputs(size)
    fn = m.bench_kernel
    fn(*inputs)
    busy = torch.empty(2**26, device="cuda")
    t = time.perf_counter()
    while time.perf_counter() - t < 0.3:
        busy.zero_()
        torch.cuda.synchronize()
    del busy
    runs = [float(do_bench(partial(fn, *inputs), warmup=100, rep=100, return_mode="median")) for _ in range(3)]
    del inputs
    torch.cuda.empty_cache()
    return runs


def agree_section(rep: Report) -> dict:
    import torch
    from triton.testing import do_bench
    panel = rep.data["sections"].get("panel", {})
    rows = []
    for slug, result in panel.items():
        res = bench.BenchResult.from_json(result)
        timed = sorted({r.size for r in res.rows if r.provider == bench.TRITON})
        default = importlib.import_module(f"kernels.{slug}").BENCH_SIZE
        sizes = sorted({timed[-1]} | ({default} & set(timed)))       # the default and the largest
        if slug in ("gelu", "vector_add"):
            sizes = sorted(set(sizes) | {2**20})                      # and a small (~8 us) one
        for size in sizes:
            p = res.row(size, bench.TRITON)
            runs = _independent_ms(slug, size)
            ind = sorted(runs)[1]                   # the median of three
            ind_gbps = p.bytes / (ind * 1e-3) / 1e9
            ind_tflops = p.flops / (ind * 1e-3) / 1e12
            panel_fig, ind_fig = (p.tflops, ind_tflops) if res.bound == "compute" else (p.gbps, ind_gbps)
            diff = 100.0 * (panel_fig - ind_fig) / ind_fig
            rows.append({"slug": slug, "size": size, "unit": "TFLOP/s" if res.bound == "compute" else "GB/s",
                         "panel": panel_fig, "independent": ind_fig, "panel_ms": p.ms, "independent_ms": ind,
                         "independent_runs_ms": runs, "panel_p20_p80_ms": [p.ms_p20, p.ms_p80],
                         "diff_pct": diff, "within_5pct": abs(diff) <= 5.0})
            print(f"   {slug:12s} {size:>10d} panel {panel_fig:9.1f} independent {ind_fig:9.1f} {diff:+5.1f}% "
                  f"(independent runs spread {100 * (max(runs) - min(runs)) / ind:.1f}%)", flush=True)
    # The seed's "vector add vs copy": torch copy and torch add, timed here, beside the panel's Triton.
    copy_rows = []
    va = bench.BenchResult.from_json(panel["vector_add"]) if "vector_add" in panel else None
    for size in importlib.import_module("kernels.vector_add").BENCH_SIZES:
        src = torch.rand(size, device="cuda")
        dst = torch.empty_like(src)
        copy_ms = float(do_bench(partial(dst.copy_, src), return_mode="median"))
        del src, dst
        p = va.row(size, bench.TRITON) if va else None
        e = va.row(size, bench.EAGER) if va else None
        copy_rows.append({"size": size, "copy_ms": copy_ms, "copy_gbps": 2 * size * 4 / (copy_ms * 1e-3) / 1e9,
                          "triton_add_ms": p.ms if p else None, "triton_add_gbps": p.gbps if p else None,
                          "torch_add_ms": e.ms if e else None, "torch_add_gbps": e.gbps if e else None})
    torch.cuda.empty_cache()
    return {"rows": rows, "vector_add_vs_copy": copy_rows,
            "max_abs_diff_pct": max((abs(r["diff_pct"]) for r in rows), default=None)}


def fault_section() -> dict:
    src = (ROOT / "tests" / "snippets" / "bench_fault.py").read_text()
    t = time.perf_counter()
    bad = run_benchmark(BenchRequest("bench_fault", source=src, lock_wait_s=60), timeout=120)
    bad_s = time.perf_counter() - t
    after = run_benchmark(BenchRequest("vector_add", size=2**20, providers=(), lock_wait_s=60), timeout=120)
    out = {"fault": {"mode": bad.mode, "error": bad.error.__dict__ if bad.error else None, "seconds": bad_s},
           "next_run": {"ok": after.ok, "rows": len(after.rows),
                        "error": after.error.__dict__ if after.error else None}}
    print(f"   faulting kernel -> {bad.error.kind if bad.error else 'no error?!'}: "
          f"{(bad.error.message if bad.error else '')[:200]}", flush=True)
    print(f"   next run ok={after.ok} rows={len(after.rows)}", flush=True)
    return out


def lock_section() -> dict:
    results = {}

    def go(tag):
        results[tag] = run_benchmark(BenchRequest("vector_add", sweep=True, providers=(), lock_wait_s=120),
                                     timeout=240)
    threads = [threading.Thread(target=go, args=(t,)) for t in ("a", "b")]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    a, b = results["a"], results["b"]
    windows = sorted([(a.started_at, a.finished_at, a.lock_wait_s), (b.started_at, b.finished_at, b.lock_wait_s)])
    overlap = windows[0][1] > windows[1][0]
    out = {"windows": windows, "overlap": overlap, "ok": a.ok and b.ok and not overlap,
           "errors": [r.error.__dict__ for r in (a, b) if r.error]}
    print(f"   windows {[(round(w[0] % 1000, 2), round(w[1] % 1000, 2), round(w[2], 2)) for w in windows]} "
          f"overlap={overlap}", flush=True)
    return out


# -- tuning ----------------------------------------------------------------------------------------

def _bench_ms(fn) -> float:
    from triton.testing import do_bench
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def tune_section(rep: Report, budget_s: float) -> dict:
    import torch
    import triton
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    ceil = rep.data["sections"].get("panel", {}).get("vector_add", {}).get("ceilings") or {}
    copy = ceil.get("copy_gbps")
    out: dict = {}

    def record(kernel, label, nbytes, ms, flops=None):
        row = {"config": label, "ms": ms, "gbps": nbytes / (ms * 1e-3) / 1e9}
        if flops:
            row["tflops"] = flops / (ms * 1e-3) / 1e12
        if copy:
            row["pct_copy"] = 100 * row["gbps"] / copy
        out.setdefault(kernel, []).append(row)
        print(f"   {kernel:12s} {label:40s} {ms:8.4f} ms {row['gbps']:8.1f} GB/s"
              + (f" {row['tflops']:6.1f} TFLOP/s" if flops else "")
              + (f" {row.get('pct_copy', 0):5.1f}%" if copy else ""), flush=True)
        rep.data["sections"]["tune"] = out
        rep.save()

    def left():
        return budget_s - rep.elapsed()

    with torch.device("cuda"):
        # matmul at 4096^3 against torch.matmul
        from kernels import matmul as mm
        a, b = mm.bench_inputs(4096)
        flops = 2 * 4096**3
        nbytes = 3 * 4096 * 4096 * 2
        record("matmul", "torch.matmul", nbytes, _bench_ms(partial(torch.matmul, a, b)), flops)
        for bm, bn, bk, g, w, s in ((128, 128, 64, 8, 8, 3), (128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 4),
                                    (256, 128, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (128, 256, 32, 8, 8, 4),
                                    (128, 128, 128, 8, 8, 3)):
            if left() < 30:
                break
            fn = partial(mm.matmul, a, b, bm, bn, bk, g, w, s)
            try:
                ok = torch.allclose(fn().float(), torch.matmul(a, b).float(), atol=1e-1, rtol=1e-2)
                record("matmul", f"{bm}x{bn}x{bk} g{g} w{w} s{s}{'' if ok else ' WRONG'}", nbytes, _bench_ms(fn), flops)
            except Exception as e:  # noqa: BLE001 - e.g. out of shared memory
                out.setdefault("matmul_errors", []).append(f"{bm}x{bn}x{bk} w{w} s{s}: {str(e)[:200]}")
        del a, b

        # elementwise: vector add, gelu at 2^28
        from kernels import vector_add as va, gelu as ge
        n = 2**28
        x, y = torch.rand(n), torch.rand(n)
        o = torch.empty_like(x)
        for block, w in ((1024, 4), (2048, 4), (4096, 4), (2048, 8), (4096, 8), (8192, 8)):
            if left() < 30:
                break
            record("vector_add", f"BLOCK={block} w{w}", 3 * n * 4, _bench_ms(
                partial(va.add_kernel[(triton.cdiv(n, block),)], x, y, o, n, BLOCK_SIZE=block, num_warps=w)))
            record("gelu", f"BLOCK={block} w{w}", 2 * n * 4, _bench_ms(
                partial(ge.gelu_kernel[(triton.cdiv(n, block),)], x, o, n, BLOCK_SIZE=block, num_warps=w)))
        del x, y, o

        # softmax 16384 x 16384
        from kernels import softmax as sm
        xs = torch.randn(16384, 16384)
        ys = torch.empty_like(xs)
        for w, st in ((16, 2), (16, 1), (32, 1), (32, 2), (8, 1)):
            for progs in (sms, 2 * sms, 4 * sms, 16384):
                if left() < 30:
                    break
                record("softmax", f"w{w} stages{st} programs={progs}", 2 * xs.numel() * 4, _bench_ms(
                    partial(sm.softmax_kernel[(progs,)], ys, xs, xs.stride(0), ys.stride(0), 16384, 16384,
                            BLOCK_SIZE=16384, NUM_STAGES=st, num_warps=w)))
        del xs, ys

        # add-mul-activation 262144 x 1024
        from kernels import add_mul_act as am
        xa, ya, wa = am.bench_inputs(262144)
        for bm, bn, w in ((8, 128, 4), (16, 128, 4), (32, 128, 8), (8, 256, 4), (16, 256, 8), (32, 256, 8),
                          (4, 1024, 4), (8, 1024, 8)):
            if left() < 30:
                break
            record("add_mul_act", f"BLOCK_M={bm} BLOCK_N={bn} w{w}", 3 * xa.numel() * 4, _bench_ms(
                partial(am.add_mul_act, xa, ya, wa, "relu", BLOCK_M=bm, BLOCK_N=bn, num_warps=w)))
        del xa, ya, wa

        # bias + relu, in place, 262144 x 768
        from kernels import bias_relu as br
        xb, bb = br.bench_inputs(262144)
        nb = xb.numel()
        for block, w in ((1024, 4), (2048, 4), (4096, 8), (2048, 8), (8192, 8)):
            if left() < 30:
                break
            record("bias_relu", f"XBLOCK={block} w{w}", 2 * nb * 4, _bench_ms(
                partial(br.triton_poi_fused_add_relu_0[(triton.cdiv(nb, block),)], xb, bb, 768, nb, XBLOCK=block,
                        num_warps=w)))
        del xb, bb

        # giou 2^26 boxes
        from kernels import giou as gi
        p, t = gi.bench_inputs(2**26)
        loss = torch.empty(2**26)
        for block, w in ((256, 4), (512, 4), (1024, 4), (1024, 8), (2048, 8)):
            if left() < 30:
                break
            record("giou", f"BLOCK_SIZE={block} w{w}", 36 * 2**26, _bench_ms(
                partial(gi.giou_loss_kernel[(triton.cdiv(2**26, block),)], p, t, loss, 2**26, EPS=1e-7,
                        BLOCK_SIZE=block, num_warps=w)))
        del p, t, loss

        # coalescing: row sums of 16384 x 16384
        from kernels import coalescing as co
        xc = torch.randn(16384, 16384)
        oc = torch.empty(16384)
        for block, w, st in ((1024, 4, 3), (2048, 4, 3), (4096, 8, 3), (2048, 8, 3), (1024, 4, 1), (4096, 4, 3)):
            if left() < 30:
                break
            record("coalescing", f"BLOCK_N={block} w{w} stages{st}", (xc.numel() + 16384) * 4, _bench_ms(
                partial(co.sum_rows_kernel[(16384,)], xc, oc, 16384, 16384, BLOCK_N=block, num_warps=w, num_stages=st)))
        del xc, oc
    torch.cuda.empty_cache()
    return out


def explore_section() -> dict:
    """Softmax's grid at narrow and mid rows: the persistent grid of 4 programs per SM it had
    (half of torch.softmax's speed at 256 columns), the one sized to the SM's warp slots that
    it has now, and one program per row (no persistence). Data for a follow-up."""
    import torch
    from kernels import softmax as sm
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    rows = []
    for n_cols in (256, 1024, 4096, 8192):
        x = torch.randn(16384, n_cols, device="cuda")
        y = torch.empty_like(x)
        block = 1 << (n_cols - 1).bit_length()
        w = 16 if block >= 4096 else 8 if block >= 2048 else 4
        for label, progs in (("4 per SM (before)", 4 * sms), ("warp slots (now)", sms * (64 // w)), ("one per row", 16384)):
            ms = _bench_ms(partial(sm.softmax_kernel[(min(progs, 16384),)], y, x, x.stride(0), y.stride(0), 16384, n_cols,
                                   BLOCK_SIZE=block, NUM_STAGES=2, num_warps=w))
            rows.append({"n_cols": n_cols, "grid": label, "programs": min(progs, 16384), "ms": ms,
                         "gbps": 2 * x.numel() * 4 / (ms * 1e-3) / 1e9})
            print(f"   softmax n_cols={n_cols:5d} {label:20s} {ms:8.4f} ms {rows[-1]['gbps']:8.1f} GB/s", flush=True)
        del x, y
    torch.cuda.empty_cache()
    return {"softmax_grid": rows}


# -- summary ---------------------------------------------------------------------------------------

def summary(rep: Report) -> dict:
    panel = {k: bench.BenchResult.from_json(v) for k, v in rep.data["sections"].get("panel", {}).items()}
    out = {"targets": [], "ceilings": None}
    any_result = next(iter(panel.values()), None)
    if any_result and any_result.ceilings:
        out["ceilings"] = any_result.ceilings.to_json()
    for slug in MEMORY_BOUND:
        res = panel.get(slug)
        if not res or not res.rows:
            continue
        size = max(r.size for r in res.rows)
        p = res.row(size, bench.TRITON)
        if p:
            out["targets"].append({"slug": slug, "size": size, "gbps": p.gbps, "pct_of_copy": p.pct_of_ceiling,
                                   "meets_95": (p.pct_of_ceiling or 0) >= 95.0})
    mm = panel.get("matmul")
    if mm:
        p, t = mm.row(4096, bench.TRITON), mm.row(4096, "torch.matmul (fp16)")
        if p and t:
            out["matmul"] = {"triton_tflops": p.tflops, "torch_tflops": t.tflops, "ratio_pct": 100 * p.tflops / t.tflops,
                             "meets_90": p.tflops >= 0.9 * t.tflops, "pct_of_ceiling": p.pct_of_ceiling}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--budget-s", type=float, default=540)
    ap.add_argument("--skip", default="", help="comma-separated sections to skip")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    rep = Report(out)
    rep.section("env", env_section)
    print("  ", rep.data["sections"].get("env", {}).get("describe"), flush=True)
    if "panel" not in skip:
        rep.section("panel", panel_section, rep)
    if "agree" not in skip:
        rep.section("agree", agree_section, rep)
    if "fault" not in skip:
        rep.section("fault", fault_section)
    if "lock" not in skip:
        rep.section("lock", lock_section)
    if args.tune:
        rep.section("tune", tune_section, rep, args.budget_s)
    if "explore" not in skip:
        rep.section("explore", explore_section)
    rep.section("summary", summary, rep)
    s = rep.data["sections"].get("summary", {})
    print("== summary", flush=True)
    if s.get("ceilings"):
        print(f"   ceilings: copy {s['ceilings']['copy_gbps']:.0f} GB/s, fp16 matmul {s['ceilings']['matmul_tflops']:.0f} TFLOP/s")
    for t in s.get("targets", []):
        print(f"   {t['slug']:12s} {t['size']:>10d} {t['gbps']:8.1f} GB/s {t['pct_of_copy']:6.1f}% of copy"
              f" {'ok' if t['meets_95'] else 'MISS'}")
    if s.get("matmul"):
        m = s["matmul"]
        print(f"   matmul 4096^3 {m['triton_tflops']:.1f} vs torch {m['torch_tflops']:.1f} TFLOP/s = {m['ratio_pct']:.1f}%"
              f" {'ok' if m['meets_90'] else 'MISS'}")
    ag = rep.data["sections"].get("agree", {})
    if ag.get("max_abs_diff_pct") is not None:
        print(f"   panel vs independent do_bench: max |diff| {ag['max_abs_diff_pct']:.2f}%")
    print(f"   errors in sections: {sorted(rep.data['errors'])}; total {rep.elapsed():.0f}s", flush=True)


if __name__ == "__main__":
    main()
