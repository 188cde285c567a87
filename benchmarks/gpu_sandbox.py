"""The Benchmark page's path in the sandbox, on a GPU: its figures against do_bench outside it.

    TLENS_BWRAP=/path/to/bwrap python3 benchmarks/gpu_sandbox.py --out DIR

One call on the GPU machine (issue 19). Writes DIR/gpu_sandbox.txt:
  env      GPU, driver, torch, Triton, bubblewrap, whether the sandbox works there
  probe    the benchmark worker's probe, run in the sandbox: the GPU it sees through the device
           files passed in
  panel    for vector add, softmax and matmul at their largest size: the page's own path
           (inspectors.bench.worker.run_benchmark: a fresh worker, check, then do_bench) with the
           sandbox on and off, alternating, two rounds each; and do_bench called here, outside
           any sandbox, on the same launcher and size (benchmarks/gpu_bench.py's independent
           timing). Goal: the sandboxed figure within 3 % of the independent one.
  hostile  a draft kernel file run by the benchmark worker in the sandbox that reads the server's
           environment and a file of the server's and connects to a listener on 127.0.0.1:
           none of it may get through.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from inspectors.process import sandbox  # noqa: E402
from inspectors.bench import model as bench  # noqa: E402
from inspectors.bench.model import BenchRequest  # noqa: E402
from inspectors.bench.worker import probe, run_benchmark  # noqa: E402

KERNELS = ("vector_add", "softmax", "matmul")
SECRET = "gpu-server-secret-" + "51d2"


def _triton_ms(slug: str, size: int, sandboxed: bool) -> tuple[float, str]:
    os.environ["TLENS_SANDBOX"] = "1" if sandboxed else "0"
    req = BenchRequest(slug, size=size, sweep=False, providers=("torch eager",), lock_wait_s=60)
    r = run_benchmark(req, timeout=300)
    if r.error:
        return float("nan"), f"{r.error.kind}: {r.error.message[:300]} {r.error.detail[-600:]}"
    row = r.row(size, bench.TRITON)
    return row.ms, ""


def panel(lines: list[str]) -> bool:
    from gpu_bench import _independent_ms      # the independent timing: do_bench in this process
    ok = True
    lines.append(f"{'kernel':<12}{'size':>12}{'sandbox ms':>12}{'plain ms':>11}{'do_bench ms':>13}"
                 f"{'sandbox/do_bench':>18}{'plain/do_bench':>16}")
    for slug in KERNELS:
        size = importlib.import_module(f"kernels.{slug}").BENCH_SIZES[-1]
        runs = {True: [], False: []}
        errors = []
        for rnd in range(2):
            for sandboxed in ((True, False) if rnd == 0 else (False, True)):
                ms, err = _triton_ms(slug, size, sandboxed)
                runs[sandboxed].append(ms)
                if err:
                    errors.append(f"{'sandbox' if sandboxed else 'plain'}: {err}")
        os.environ["TLENS_SANDBOX"] = "0"
        ind = statistics.median(_independent_ms(slug, size))
        sb, pl = statistics.median(runs[True]), statistics.median(runs[False])
        within = abs(sb / ind - 1) <= 0.03
        ok &= within
        lines.append(f"{slug:<12}{size:>12}{sb:>12.4f}{pl:>11.4f}{ind:>13.4f}{sb / ind:>18.3f}{pl / ind:>16.3f}"
                     f"  {'within 3 %' if within else 'NOT within 3 %'}  (runs: sandbox {runs[True]}, plain {runs[False]})")
        lines.extend(f"   error {e}" for e in errors)
        print("\n".join(lines[-1 - len(errors):]), flush=True)
    return ok


HOSTILE = '''
import os, socket, glob
import torch
import triton
import triton.language as tl

leaks = []
for p in glob.glob("/proc/*/environ"):
    try:
        if b"{secret}" in open(p, "rb").read():
            leaks.append(p)
    except OSError:
        pass
if "{secret}" in str(dict(os.environ)):
    leaks.append("environ")
try:
    leaks.append("file:" + open("{path}").read())
except OSError:
    pass
try:
    c = socket.create_connection(("127.0.0.1", {port}), timeout=2)
    c.sendall(b"HOSTILE")
    leaks.append("net")
except OSError:
    pass
if leaks:
    raise SystemExit("LEAKED " + " ".join(leaks))


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
'''


def hostile(lines: list[str]) -> bool:
    os.environ["TLENS_SANDBOX"] = "1"
    os.environ["TLENS_GPU_SANDBOX_SECRET"] = SECRET
    secret_file = Path(tempfile.mkdtemp()) / "server-only.txt"
    secret_file.write_text(SECRET)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.3)
    got = []

    def accept():
        end = time.time() + 60
        while time.time() < end:
            try:
                got.append(server.accept()[0].recv(10))
            except OSError:
                pass
    threading.Thread(target=accept, daemon=True).start()
    src = HOSTILE.format(secret=SECRET, path=secret_file, port=server.getsockname()[1])
    r = run_benchmark(BenchRequest("hostile", source=src, size=4096, sweep=False), timeout=120)
    text = json.dumps(r.to_json())
    leaked = "LEAKED" in text or SECRET in text or bool(got)
    # nothing leaked AND the file really ran: its module loaded, and only then found no benchmark
    ran = r.error is not None and r.error.kind == "usage" and "declares no benchmark" in r.error.message
    lines.append(f"hostile draft in the sandbox: {'LEAKED' if leaked else 'nothing got through'} "
                 f"(its run: {r.error.kind + ': ' + r.error.message[:160] if r.error else 'ok'}; listener got {got})")
    print(lines[-1], flush=True)
    return ran and not leaked


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, default=Path("/tmp/tlens-gpu-sandbox"))
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import torch
    import triton
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()
    bw = subprocess.run([sandbox.bwrap_path() or "bwrap", "--version"], capture_output=True, text=True).stdout.strip()
    lines = [f"# gpu_sandbox: {smi[0] if smi else '?'} (name, driver); torch {torch.__version__}, Triton {triton.__version__}, "
             f"Python {platform.python_version()}, {bw or 'no bwrap'}; {time.strftime('%Y-%m-%d')}",
             "# command: TLENS_BWRAP=... python3 benchmarks/gpu_sandbox.py --out $OUT"]
    problem = sandbox.check()
    lines.append(f"sandbox: {'works' if problem is None else 'DOES NOT WORK: ' + problem}; "
                 f"process limit: {sandbox.describe()['process_limit']}; GPU devices passed in: {sandbox.gpu_devices()}")
    print("\n".join(lines), flush=True)
    ok = problem is None
    if ok:
        os.environ["TLENS_SANDBOX"] = "1"
        seen = probe()
        lines.append(f"probe in the sandbox: {seen}")
        print(lines[-1], flush=True)
        ok &= bool(seen.get("gpus"))
        ok &= panel(lines)
        ok &= hostile(lines)
    lines.append(f"verdict: {'all met' if ok else 'NOT all met'}")
    (args.out / "gpu_sandbox.txt").write_text("\n".join(lines) + "\n")
    print(lines[-1])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
