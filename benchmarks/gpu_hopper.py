"""The Hopper lesson's GPU figures (assets/lessons/hopper.md), in one call on a GPU machine:

    PYTHONPATH=$PWD python3 benchmarks/gpu_hopper.py --out DIR   # then commit DIR/gpu_hopper.json as assets/gpu/gpu_hopper.json

The lesson's three kernel files (assets/lessons/hopper/: pointers and cp.async, TMA, the persistent
warp_specialize loop) at 4096^3 and 8192^3 fp16, each checked against torch.matmul, then timed with
triton.testing.do_bench (median of its runs, 2*M*N*K flops), beside torch.matmul. For each kernel
that ran: the warps it was compiled for (PTX .reqntid), whether its TTGIR holds a warp-specialized
loop, its registers, spills and shared memory, and its copy instructions (inspectors.explain.copies).
Needs an NVIDIA GPU with torch and triton (tested: H100, torch 2.11, triton 3.6); without one it
exits with status 2 and writes nothing. Also prints a plain-text table (benchmarks/results/gpu_hopper.txt).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSON_DIR = ROOT / "assets" / "lessons" / "hopper"
SIZES = (4096, 8192)
STEPS = (("ptr", "ptr_matmul.py", "matmul_kernel"), ("tma", "tma_matmul.py", "tma_matmul_kernel"),
         ("ws", "ws_matmul.py", "ws_matmul_kernel"))
_REQNTID_RE = re.compile(r"\.reqntid\s+(\d+)")


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"hopper_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compiled_kernels(jit_fn) -> list:
    """Every kernel the JIT compiled for this function (Triton 3.3+: device_caches; older: cache)."""
    caches = getattr(jit_fn, "device_caches", None)
    if caches:
        return [k for entry in caches.values() for k in entry[0].values()]
    return [k for per_dev in getattr(jit_fn, "cache", {}).values() for k in per_dev.values()]


def facts_of(kernel, num_warps: int) -> dict:
    from inspectors.explain.copies import copy_plan
    ptx, ttgir = kernel.asm.get("ptx", ""), kernel.asm.get("ttgir", "")
    m = _REQNTID_RE.search(ptx)
    plan = copy_plan(ptx, ttgir, num_warps)
    md = kernel.metadata
    return {"compiled_warps": int(m.group(1)) // 32 if m else None, "num_warps": num_warps,
            "warp_specialized": "ttg.warp_specialize" in ttgir, "setmaxnreg": ptx.count("setmaxnreg."),
            "registers": getattr(kernel, "n_regs", None), "spills": getattr(kernel, "n_spills", None),
            "shared_bytes": getattr(md, "shared", None), "copy": plan.instruction,
            "copies_per_step": plan.instructions_per_step, "bytes_per_copy": plan.bytes_each,
            "bytes_per_step": plan.bytes_per_step}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    import torch
    import triton
    from triton.testing import do_bench
    if not torch.cuda.is_available():
        print(f"benchmarks/gpu_hopper.py needs an NVIDIA GPU (torch {torch.__version__} sees none).", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    data = {"env": {"gpu": props.name, "capability": f"{props.major}.{props.minor}", "sms": props.multi_processor_count,
                    "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__,
                    "python": platform.python_version(), "when": time.strftime("%Y-%m-%d %H:%M:%S")},
            "runs": {}, "kernels": {}}
    mods = {name: load(LESSON_DIR / file) for name, file, _ in STEPS}
    torch.manual_seed(0)
    lines = [f"# {props.name} (sm_{props.major}{props.minor}, {props.multi_processor_count} SMs) · torch "
             f"{torch.__version__} · triton {triton.__version__} · fp16 in, fp32 accumulate, fp16 out · "
             f"do_bench median", f"{'size':>6}  {'version':<34} {'TFLOP/s':>8} {'vs torch':>9}  "
             f"max |err| / max |ref| (vs torch.matmul fp16 · vs fp32 matmul)"]
    for n in SIZES:
        a = torch.randn(n, n, dtype=torch.float16, device="cuda")
        b = torch.randn(n, n, dtype=torch.float16, device="cuda")
        b_nk = b.t().contiguous()
        ref = torch.matmul(a, b)
        exact = torch.matmul(a.float(), b.float())      # fp32 in: what every fp16 version rounds away from
        flops = 2.0 * n ** 3
        calls = {"torch": lambda: torch.matmul(a, b), "ptr": lambda: mods["ptr"].matmul(a, b),
                 "tma": lambda: mods["tma"].matmul(a, b), "ws": lambda: mods["ws"].matmul(a, b_nk)}
        results = {}
        for name, fn in calls.items():
            try:
                out = fn()
                torch.cuda.synchronize()
                err = float((out.float() - ref.float()).abs().max() / ref.float().abs().max())
                err32 = float((out.float() - exact).abs().max() / exact.abs().max())
                ms = do_bench(fn, warmup=25, rep=200, return_mode="median")
                results[name] = {"ms": ms, "tflops": flops / ms / 1e9, "rel_err": err, "rel_err_fp32": err32,
                                 "ok": err < 1e-2 and err32 < 1e-2}
            except Exception as e:  # a step that fails is recorded, the others still run
                results[name] = {"error": f"{type(e).__name__}: {e}"[:500]}
        data["runs"][str(n)] = results
        base = results["torch"].get("tflops")
        for name, r in results.items():
            label = {"torch": "torch.matmul (cuBLAS)", "ptr": "pointers: cp.async (ptr_matmul.py)",
                     "tma": "TMA loads and store (tma_matmul.py)",
                     "ws": "persistent TMA, warp_specialize=True (ws_matmul.py)"}[name]
            if "error" in r:
                lines.append(f"{n:>6}  {label:<34} {'failed':>8}  {r['error'][:80]}")
                continue
            ratio = f"{r['tflops'] / base:.2f}" if base else "—"
            lines.append(f"{n:>6}  {label:<34} {r['tflops']:>8.0f} {ratio:>9}  {r['rel_err']:.1e} · {r['rel_err_fp32']:.1e}{'' if r['ok'] else '  WRONG'}")
        torch.cuda.empty_cache()
    for name, _, fn_name in STEPS:
        ks = compiled_kernels(getattr(mods[name], fn_name))
        if ks:
            data["kernels"][name] = facts_of(ks[0], 8)
    lines.append("# what ran (the JIT's own compile on this GPU)")
    for name, f in data["kernels"].items():
        lines.append(f"{name:<4} warps {f['num_warps']} asked, {f['compiled_warps']} compiled · warp-specialized loop: "
                     f"{'yes' if f['warp_specialized'] else 'no'} · {f['registers']} registers, {f['spills']} spills, "
                     f"{f['shared_bytes']} B shared · per K step {f['copies_per_step']} × {f['copy']} of "
                     f"{f['bytes_per_copy']} B = {f['bytes_per_step']} B")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_hopper.json").write_text(json.dumps(data, indent=1))
    (args.out / "gpu_hopper.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
