"""Where a compile's analysis costs what (not a test: it prints figures side by side).

The insight of a kernel (memory ops, source map, resources with cuobjdump, thread map) used to
be computed in the Streamlit process after the compile; it is now computed in the worker and
the server only decodes it (inspectors.base.codec). Per kernel file, medians of `--reps`:

- compile: the engine's compile without the analysis (what the worker did before), and with
  it (`analysis_s`: what it does now), wall time;
- server: the analysis in this process, as the server did it before (insight.analyze, its
  cuobjdump and ptxas runs included), and the decode the server does now (insight.of); wall
  time, on the server's Python thread for all but the tools' subprocesses.

    .venv/bin/python benchmarks/analysis_cost.py [--reps 5]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine
from inspectors.explain import insight

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "kernels" / "vector_add.py", ROOT / "kernels" / "matmul.py",
         ROOT / "tests" / "snippets" / "flash_attention.py"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    engine = Engine(dataclasses.replace(settings_mod.load(), workers=1))
    assert engine.wait_ready()
    print(f"{'file':<20} {'launches':>8} {'compile, no analysis':>21} {'compile + analysis':>19} "
          f"{'server: analyze':>16} {'server: decode':>15} {'decode / analyze':>17}")
    try:
        for path in FILES:
            base = CompileRequest(source=path.read_text(), filename=path.name, target="cuda:90", sass=False)
            plain, with_analysis, analyze_s, decode_s = [], [], [], []
            for i in range(args.reps):
                # a comment line changes the source: no result or Triton cache hit, both compiled afresh
                req = dataclasses.replace(base, source=base.source + f"\n# rep {i} {time.time()}\n")
                t0 = time.perf_counter()
                r0 = engine.compile(req, timeout=600)
                plain.append(time.perf_counter() - t0)
                req = dataclasses.replace(base, source=base.source + f"\n# rep {i} {time.time()} a\n", analysis_s=60)
                t0 = time.perf_counter()
                r1 = engine.compile(req, timeout=600)
                with_analysis.append(time.perf_counter() - t0)
                assert r0.ok and r1.ok, (r0.error, r1.error)
                t0 = time.perf_counter()
                for k in r0.kernels:
                    insight.analyze(k, dict(k.stages), path.name)
                analyze_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                for k in r1.kernels:
                    assert not insight.of(k, path.name).cut
                decode_s.append(time.perf_counter() - t0)
            a, d = statistics.median(analyze_s), statistics.median(decode_s)
            print(f"{path.name:<20} {len(r1.kernels):>8} {statistics.median(plain):>19.2f} s "
                  f"{statistics.median(with_analysis):>17.2f} s {a * 1e3:>13.0f} ms {d * 1e3:>12.0f} ms "
                  f"{d / a if a else float('nan'):>17.2f}")
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
