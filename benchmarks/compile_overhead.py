"""Compile overhead of the engine vs raw `triton.compile`, and the app's warm re-render.

    .venv/bin/python benchmarks/compile_overhead.py [--reps 5]

Prints, side by side in one run (medians over --reps, each with a fresh Triton cache):
  raw-cold     triton.compile in a fresh process (first compile there: LLVM/MLIR start-up)
  raw-warm     triton.compile of the kernel in a process that already compiled another
  engine       Engine.compile of the same kernel file (warm worker, fresh cache): runs the file,
               example(), the JIT's specialization, compile, JSON back to the caller (app path)
  engine+sass  the same with SASS disassembled in the worker (CLI path)
  nvdisasm     disassembling that kernel's cubin alone
  rerender     AppTest re-run of the page after Compile, unchanged kernel (cache hit)
Goal: engine / raw-warm <= 1.15, rerender <= 0.15 s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KERNEL_FILE = ROOT / "tests" / "snippets" / "vadd.py"

RAW = textwrap.dedent("""
    import importlib.util, json, sys, time
    import torch, triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    spec = importlib.util.spec_from_file_location("vadd", sys.argv[1])
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(4)}
    target = GPUTarget("cuda", 90, 32)
    def once(block):
        t = time.perf_counter()
        triton.compile(ASTSource(m.add_kernel, sig, {(4,): block}, attrs), target=target, options={"num_warps": 4})
        return time.perf_counter() - t
    cold = once(1024)          # first compile in this process
    warm = once(2048)          # a different kernel, same process: what a warm worker sees
    print(json.dumps({"cold": cold, "warm": warm}))
""")


def raw_once() -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITON_CACHE_DIR": cache, "TRITON_DEFAULT_FP_FUSION": "1"}
        out = subprocess.run([sys.executable, "-c", RAW, str(KERNEL_FILE)], env=env, capture_output=True,
                             text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def engine_once(sass: bool) -> float:
    from inspectors.base import settings as settings_mod
    from inspectors.compile.engine import Engine
    from inspectors.base.result import CompileRequest
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TLENS_TRITON_CACHE_DIR"] = cache
        engine = Engine(settings_mod.load())
        engine.wait_ready()
        time.sleep(0.5)
        # exactly one launch: the aligned vector add that raw compiles
        src = KERNEL_FILE.read_text().split("def example():")[0] + \
            "def example():\n    x, y = torch.rand(4096), torch.rand(4096)\n    add(x, y)\n"
        t = time.perf_counter()
        result = engine.compile(CompileRequest(source=src, filename="vadd.py", target="cuda:90", sass=sass))
        total = time.perf_counter() - t
        engine.close()
    assert result.ok, result.error
    return total


def sass_seconds() -> float:
    code = ("import time, sys\n"
            "from inspectors.read.sass import Disassembly\n"
            "import glob\n"
            "cubin = open(sys.argv[1], 'rb').read()\n"
            "t = time.perf_counter(); Disassembly(cubin).result(); print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "TRITON_CACHE_DIR": d, "TRITON_DEFAULT_FP_FUSION": "1"}
        make = textwrap.dedent("""
            import importlib.util, sys, triton
            from triton.backends.compiler import GPUTarget
            from triton.compiler import ASTSource
            spec = importlib.util.spec_from_file_location("vadd", sys.argv[1])
            m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
            sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
            k = triton.compile(ASTSource(m.add_kernel, sig, {(4,): 1024}, {}), target=GPUTarget("cuda", 90, 32))
            open(sys.argv[2], "wb").write(k.asm["cubin"])
        """)
        cubin = Path(d) / "k.cubin"
        subprocess.run([sys.executable, "-c", make, str(KERNEL_FILE), str(cubin)], env=env, check=True,
                       capture_output=True)
        out = subprocess.run([sys.executable, "-c", code, str(cubin)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def rerender_times(reps: int) -> list[float]:
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=300)
    at.run()
    at.selectbox(key="picker").set_value("vector_add").run()
    at.button(key="compile").click().run()
    assert not at.exception, at.exception
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        at.button(key="compile").click().run()
        times.append(time.perf_counter() - t)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    raws = [raw_once() for _ in range(args.reps)]
    engines = [engine_once(sass=False) for _ in range(args.reps)]
    engines_sass = [engine_once(sass=True) for _ in range(args.reps)]
    sass = [sass_seconds() for _ in range(args.reps)]
    rerender = rerender_times(args.reps)
    med = statistics.median
    raw_cold, raw_warm = med(r["cold"] for r in raws), med(r["warm"] for r in raws)
    eng, eng_sass, sass_m = med(engines), med(engines_sass), med(sass)
    print(f"machine: {os.cpu_count()} cores; kernel: {KERNEL_FILE.name} add_kernel BLOCK=1024, cuda:90; "
          f"medians of {args.reps}, fresh Triton cache each")
    print(f"{'raw-cold':>9} {'raw-warm':>9} {'engine':>9} {'engine+sass':>12} {'nvdisasm':>9} "
          f"{'engine/raw-warm':>16} {'engine/raw-cold':>16} {'rerender':>9}")
    print(f"{raw_cold:>8.3f}s {raw_warm:>8.3f}s {eng:>8.3f}s {eng_sass:>11.3f}s {sass_m:>8.3f}s "
          f"{eng / raw_warm:>15.2f}x {eng / raw_cold:>15.2f}x {med(rerender):>8.3f}s")
    print("engine: the app's path (SASS disassembled when a SASS panel opens); engine+sass: the CLI's path")


if __name__ == "__main__":
    main()
