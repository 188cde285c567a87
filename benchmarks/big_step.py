"""A step of hundreds of launches, stored one file each vs answered whole, side by side in one run.

    .venv/bin/python benchmarks/big_step.py [--file benchmarks/drivers/step_320.py]

Each way in a process of its own (a server's memory is its peak: one process per way), an engine
of one warm worker, a fresh Triton cache, the analysis on (as the app asks):
- `stored`: as the product runs (launches past CompileRequest.inline_bytes stay files that the
  engine adopts: base/launches.py); `whole`: inline_bytes unbounded, every launch in the one
  answer, as before.
- peak memory: the server process (VmHWM, and its growth over the engine's start), the worker and
  its compile children (the largest VmRSS seen of each, sampled every 0.1 s); SASS on demand, as
  the Explorer asks it (nvdisasm would be most of a small launch's time: docs/09-benchmark-results.md);
- time to the first launch on screen: when the server saw example()'s list, and the first launch
  done and read after it (what the page draws), in seconds since the job was sent;
- the whole step's wall time vs Σ each launch's compile time ÷ cores;
- reading every launch once, in order (a user stepping through): the median per launch.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _kib(pid: int | str, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
        except OSError:
            pass
    return out


def one(path: Path, mode: str) -> dict:
    os.environ["TLENS_TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tlens-bigstep-") + "/triton"
    from dataclasses import replace
    from inspectors.base import settings as settings_mod
    from inspectors.base.result import CompileRequest
    from inspectors.compile.engine import Engine
    engine = Engine(settings_mod.load(), workers=1)
    engine.wait_ready()
    worker = engine.worker_pids()[0]
    base_kib = _kib("self", "VmHWM")
    peaks = {"worker": 0, "child": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for p in _tree(worker):
                key = "worker" if p == worker else "child"
                peaks[key] = max(peaks[key], _kib(p, "VmRSS"))
            stop.wait(0.1)
    threading.Thread(target=sample, daemon=True).start()
    seen: dict = {}

    def on_progress(p) -> None:
        if p.listed_s is not None and "listed_s" not in seen:
            seen["listed_s"], seen["example_s"], seen["launches"] = p.listed_s, p.example_s, p.total
        if p.done and "first_s" not in seen and p.first() is not None:
            seen["first_s"] = time.monotonic() - t_sent
    request = CompileRequest(source=path.read_text(), filename=path.name, analysis_s=20.0, sass=False)  # as the Explorer
    if mode == "whole":
        request = replace(request, inline_bytes=1 << 40)
    t_sent = time.monotonic()
    result = engine.compile(request, timeout=1800, on_progress=on_progress)
    wall = time.monotonic() - t_sent
    stop.set()
    if not result.ok:
        raise SystemExit(f"{mode}: {result.error}")
    heads = result.headers
    compile_sum = sum(h.compile_seconds for h in heads)
    reads = []
    for i in range(len(result.kernels)):
        t = time.perf_counter()
        assert "ptx" in result.kernels[i].stages
        reads.append(time.perf_counter() - t)
    answer = len(json.dumps(result.to_json()))
    out = {"mode": mode, "launches": len(heads), "wall_s": wall, "compile_sum_s": compile_sum,
           "cores": len(os.sched_getaffinity(0)), "server_peak_mib": _kib("self", "VmHWM") / 1024,
           "server_growth_mib": (_kib("self", "VmHWM") - base_kib) / 1024,
           "worker_peak_mib": peaks["worker"] / 1024, "child_peak_mib": peaks["child"] / 1024,
           "read_ms": 1000 * statistics.median(reads), "result_json_kib": answer / 1024,
           "stored": type(result.kernels).__name__ == "StoredLaunches", **seen}
    engine.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", type=Path, default=ROOT / "benchmarks" / "drivers" / "step_320.py")
    ap.add_argument("--one", choices=("stored", "whole"))
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.file.resolve(), args.one)))
        return 0
    rows = []
    for mode in ("stored", "whole"):
        p = subprocess.run([sys.executable, __file__, "--file", str(args.file), "--one", mode], cwd=ROOT,
                           capture_output=True, text=True)
        if p.returncode:
            print(p.stdout, p.stderr[-4000:])
            return 1
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    s, w = rows
    print(f"big_step: {args.file.name}, {s['launches']} launches, {s['cores']} cores, one warm worker, "
          f"fresh Triton cache, analysis on")
    fmt = "{:<44} {:>12} {:>12} {:>8}"
    print(fmt.format("", "stored", "whole", "ratio"))
    for key, label in (("server_growth_mib", "server memory growth (MiB, VmHWM)"),
                       ("server_peak_mib", "server peak (MiB, VmHWM)"),
                       ("worker_peak_mib", "worker peak (MiB, VmRSS)"),
                       ("child_peak_mib", "largest compile child (MiB, VmRSS)"),
                       ("result_json_kib", "the result's own JSON (KiB)"),
                       ("example_s", "example() (s, worker clock)"),
                       ("listed_s", "list seen by the server (s after send)"),
                       ("first_s", "first launch read for the page (s)"),
                       ("wall_s", "whole step (s)"),
                       ("read_ms", "one launch read, median (ms)")):
        a, b = s.get(key), w.get(key)
        ratio = f"{a / b:.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else ""
        print(fmt.format(label, f"{a:.1f}" if a is not None else "-", f"{b:.1f}" if b is not None else "-", ratio))
    for r in rows:
        per = r["compile_sum_s"] / r["cores"]
        print(f"{r['mode']}: whole step {r['wall_s']:.1f} s vs Σ compile ÷ cores {per:.1f} s "
              f"({r['wall_s'] / per:.2f}x); first launch {r['first_s'] - r['listed_s']:.1f} s after the list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
