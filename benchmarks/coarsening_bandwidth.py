"""GB/s of the thread-coarsening lesson's kernel over BLOCK x num_warps, on a GPU.

    python3 benchmarks/coarsening_bandwidth.py --out DIR [--n 67108864]

kernels/coarsening.py's coarse_add_kernel (out = x + y, fp32) at BLOCK 128 ... 8192 and
num_warps 1 ... 16, each timed with triton.testing.do_bench (median of its repetitions);
GB/s counts the bytes read and written (3 · n · 4). Also a torch device-to-device copy of
the same bytes as the ceiling. Writes DIR/coarsening_bandwidth.json with the GPU and the
versions; commit it as assets/gpu/coarsening_bandwidth.json for the Lessons page, which shows
measured figures only when that file exists. Needs torch with CUDA and triton; no streamlit.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCKS = (128, 256, 512, 1024, 2048, 4096, 8192)
WARPS = (1, 2, 4, 8, 16)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "assets" / "gpu")
    ap.add_argument("--n", type=int, default=2**26)
    args = ap.parse_args()
    import torch
    import triton
    from triton.testing import do_bench
    from kernels import coarsening

    t0 = time.time()
    n = args.n
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    moved = 3 * n * 4
    rows = []
    for block in BLOCKS:
        for warps in WARPS:
            grid = (triton.cdiv(n, block),)
            k = coarsening.coarse_add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=warps)
            torch.testing.assert_close(out, x + y)
            ms = do_bench(lambda: coarsening.coarse_add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=warps),
                          warmup=25, rep=100)
            rows.append({"block": block, "num_warps": warps, "ms": ms, "gbps": moved / ms / 1e6,
                         "registers": getattr(k, "n_regs", None)})
            print(f"BLOCK={block:5d} warps={warps:2d}  {ms * 1e3:8.1f} us  {moved / ms / 1e6:7.0f} GB/s", flush=True)
    src = torch.rand(3 * n // 2, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = do_bench(lambda: dst.copy_(src), warmup=25, rep=100)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    result = {"gpu": torch.cuda.get_device_name(), "nvidia_smi": smi, "torch": torch.__version__,
              "cuda": torch.version.cuda, "triton": triton.__version__, "python": platform.python_version(),
              "n": n, "bytes_per_run": moved, "timer": "triton.testing.do_bench(warmup=25, rep=100), median ms",
              "copy_gbps": 2 * src.numel() * 4 / copy_ms / 1e6, "seconds": round(time.time() - t0, 1), "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "coarsening_bandwidth.json").write_text(json.dumps(result, indent=1))
    print(f"torch copy of the same bytes: {result['copy_gbps']:.0f} GB/s")


if __name__ == "__main__":
    main()
