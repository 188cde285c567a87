"""Sectors per request of the coalescing lesson's kernels, measured with Nsight Compute.

    python3 benchmarks/ncu_coalescing.py --out DIR          # on a GPU machine with ncu

Runs itself under `ncu` (`--launch` mode: each case launched once, after a warm-up compile
outside the profiled range is not needed since compiling launches nothing) and collects, per
kernel launch,

    l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum    32-byte sectors L1TEX moved
    l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum   warp-level global load/store requests
    dram__bytes_{read,write}.sum, gpu__time_duration.sum

and writes DIR/ncu_coalescing.json: the GPU, driver, ncu/torch/triton versions, and per case
the launch's integer arguments, the PTX the GPU compiled (so the static estimate of
inspectors/explain/coalescing.py is computed from the very code that ran), and the metrics. Commit
it as assets/ncu/coalescing.json; tests/unit/test_coalescing.py compares it with the estimate.
Needs torch with CUDA, triton and ncu; imports no streamlit.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

METRICS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
           "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")
KERNELS = ("sum_rows_kernel", "sum_cols_kernel", "strided_read_kernel", "transpose_kernel",
           "transpose_opaque_kernel", "coarse_add_kernel")


def _cases():
    """(case id, what it shows, kernel, args builder) — the lesson's launches, argument for
    argument as the launchers in kernels/ make them."""
    import torch
    import triton
    from kernels import coalescing, coarsening, strided, transpose

    def rows():
        x = torch.randn(2048, 2048, device="cuda")
        out = torch.empty(2048, device="cuda")
        k = coalescing.sum_rows_kernel[(2048,)](x, out, 2048, 2048, BLOCK_N=1024, num_warps=4)
        torch.testing.assert_close(out, x.sum(1), atol=1e-3, rtol=1e-4)
        return k, {"M": 2048, "N": 2048}

    def cols():
        xt = torch.randn(2048, 2048, device="cuda")
        out = torch.empty(2048, device="cuda")
        k = coalescing.sum_cols_kernel[(2048,)](xt, out, 2048, 2048, BLOCK_N=1024, num_warps=4)
        torch.testing.assert_close(out, xt.sum(0), atol=1e-3, rtol=1e-4)
        return k, {"M": 2048, "N": 2048}

    def strided_read(stride):
        def run():
            x = torch.randn(2**24, device="cuda")
            n = triton.cdiv(x.numel(), stride)
            out = torch.empty(n, device="cuda")
            k = strided.strided_read_kernel[(triton.cdiv(n, 1024),)](x, out, n, stride, BLOCK=1024, num_warps=4)
            torch.testing.assert_close(out, x[::stride])
            return k, {"n": n, "stride": stride}
        return run

    def transposed(opaque):
        def run():
            x = torch.randn(2048, 2048, device="cuda")
            out = torch.empty(2048, 2048, device="cuda")
            grid = (2048 // 64, 2048 // 64)
            if opaque:
                k = transpose.transpose_opaque_kernel[grid](x, out, 2048, 2048, out.stride(0), out.stride(1),
                                                            BLOCK_M=64, BLOCK_N=64, num_warps=4)
                values = {"M": 2048, "N": 2048, "stride_on": 2048, "stride_om": 1}
            else:
                k = transpose.transpose_kernel[grid](x, out, 2048, 2048, BLOCK_M=64, BLOCK_N=64, num_warps=4)
                values = {"M": 2048, "N": 2048}
            torch.testing.assert_close(out, x.t())
            return k, values
        return run

    def coarse(block, warps):
        def run():
            x, y = torch.rand(2**24, device="cuda"), torch.rand(2**24, device="cuda")
            out = torch.empty_like(x)
            k = coarsening.coarse_add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block,
                                                                                num_warps=warps)
            torch.testing.assert_close(out, x + y)
            return k, {"n_elements": x.numel()}
        return run

    return [
        ("rows", "coalescing.sum_rows_kernel: A read row-wise", "sum_rows_kernel", rows),
        ("cols", "coalescing.sum_cols_kernel: the same numbers read column-wise", "sum_cols_kernel", cols),
        ("strided2", "strided.strided_read_kernel, stride 2", "strided_read_kernel", strided_read(2)),
        ("strided8", "strided.strided_read_kernel, stride 8", "strided_read_kernel", strided_read(8)),
        ("transpose", "transpose.transpose_kernel: layout conversion through shared memory",
         "transpose_kernel", transposed(False)),
        ("transpose_opaque", "transpose.transpose_opaque_kernel: output stride hidden, no rescue",
         "transpose_opaque_kernel", transposed(True)),
        ("coarse_128x4", "coarsening.coarse_add_kernel BLOCK=128, 4 warps (1 element per thread)",
         "coarse_add_kernel", coarse(128, 4)),
        ("coarse_1024x4", "coarsening.coarse_add_kernel BLOCK=1024, 4 warps (8 per thread)",
         "coarse_add_kernel", coarse(1024, 4)),
    ]


def launch(path: Path) -> None:
    """Under ncu: launch every case once, record the PTX and arguments of each."""
    import torch
    torch.manual_seed(0)
    records = []
    for case, what, kernel, run in _cases():
        compiled, values = run()
        torch.cuda.synchronize()
        fn = _jit_function(kernel)
        params = [p.name for p in fn.params if not p.is_constexpr]
        records.append({"case": case, "what": what, "kernel": kernel, "values": values, "params": params,
                        "num_warps": compiled.metadata.num_warps, "ptx": compiled.asm["ptx"],
                        "registers": getattr(compiled, "n_regs", None)})
    path.write_text(json.dumps(records))


def _jit_function(name: str):
    from kernels import coalescing, coarsening, strided, transpose
    for module in (coalescing, coarsening, strided, transpose):
        if hasattr(module, name):
            return getattr(module, name)
    raise KeyError(name)


def _ncu() -> str:
    for cand in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu", *sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu"))):
        if cand and Path(cand).exists():
            return str(cand)
    raise SystemExit("ncu not found")


def _parse_csv(text: str) -> list[dict]:
    """ncu --csv --page raw: a header row, a units row, then one row per kernel launch."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    return [r for r in rows if r.get("ID", "").isdigit()]


def _number(text: str) -> float:
    return float(text.replace(",", "")) if text not in ("", "n/a") else float("nan")


def measure(out: Path) -> dict:
    ncu = _ncu()
    out.mkdir(parents=True, exist_ok=True)
    launches = out / "launches.json"
    log = out / "ncu_raw.csv"
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--metrics", ",".join(METRICS),
           "--kernel-name", "regex:^(" + "|".join(KERNELS) + ")", "--log-file", str(log),
           sys.executable, str(Path(__file__).resolve()), "--launch", str(launches)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
    if proc.returncode != 0:
        raise SystemExit(f"ncu exited with {proc.returncode}")
    rows = _parse_csv(log.read_text())
    records = json.loads(launches.read_text())
    if len(rows) != len(records):
        raise SystemExit(f"ncu profiled {len(rows)} launches for {len(records)} cases")
    for rec, row in zip(records, rows):
        assert row["Kernel Name"].startswith(rec["kernel"]), (row["Kernel Name"], rec["kernel"])
        rec["ncu"] = {m: _number(row[m]) for m in METRICS}
        for op in ("ld", "st"):
            req = rec["ncu"][f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"]
            sec = rec["ncu"][f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"]
            rec["ncu"][f"sectors_per_request_{op}"] = sec / req if req else None
        rec["ncu"]["grid"] = row.get("Grid Size") or row.get("launch__grid_size")
    import torch
    import triton
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    ncu_version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    result = {"gpu": torch.cuda.get_device_name(), "nvidia_smi": smi, "ncu": ncu_version,
              "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__,
              "python": platform.python_version(), "seconds": round(time.time() - t0, 1),
              "metrics": list(METRICS), "cases": records}
    (out / "ncu_coalescing.json").write_text(json.dumps(result, indent=1))
    launches.unlink()
    for rec in records:
        print(f"{rec['case']:18s} ld {rec['ncu']['sectors_per_request_ld']}  st {rec['ncu']['sectors_per_request_st']}")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for ncu_coalescing.json")
    ap.add_argument("--launch", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.launch:
        launch(args.launch)
    else:
        measure(args.out or ROOT / "assets" / "ncu")


if __name__ == "__main__":
    main()
