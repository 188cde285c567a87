"""torch.compile mode end to end on a GPU machine, and the fixture cache it leaves behind.

    python3 benchmarks/gpu_torch_compile.py [--out DIR]        # DIR: $OUT by default

For each example function of `inspectors.compile.inductor.EXAMPLES` (bias-add + ReLU, LoRA's
mul-add-ReLU, a hand-written GELU, a hand-written softmax) it runs the same code the app's
torch.compile mode runs in its subprocess (`inspectors.compile.inductor.run_source`), with Inductor's
and Triton's caches under DIR/work (`inductor/` and `inductor/triton/0/`, Inductor's default
layout). Then it

* lists the Triton kernels Inductor generated and the ops each fused (from the wrapper);
* reads every Triton cache folder back with `inspectors.store.cache` (scan + load), which checks
  the cache format of this machine's Triton;
* writes DIR/inductor_cache.tar.gz (the kernel folders of the Triton cache and Inductor's
  generated .py files, nothing else: the fixture `tests/fixtures/inductor_cache/`);
* compiles `kernels/vector_add.py` once through the worker's job function with
  `pass_dump=True`, which checks the pass dump with this machine's Triton, and keeps the raw
  dump (DIR/passes_vector_add.txt.gz);
* writes DIR/gpu_torch_compile.json (everything above) and prints a summary.

The work folder is removed at the end so that only those files come back.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspectors.compile import inductor  # noqa: E402 (stdlib only at import: torch comes after the caches are set)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu_out")))
    p.add_argument("--deadline", type=float, default=200.0, help="seconds; later steps are skipped past it")
    args = p.parse_args()
    started = time.perf_counter()
    out = args.out.resolve()
    work = out / "work"
    inductor_dir, triton_dir = inductor.point_caches(work)      # before torch is imported
    summary: dict = {"examples": {}, "cache": {}, "pass_dump": {}}

    import torch
    import triton
    summary.update(torch=torch.__version__, triton=triton.__version__, python=sys.version.split()[0],
                   gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
                   inductor_dir=str(inductor_dir), triton_cache_dir=str(triton_dir))
    print(f"torch {torch.__version__}, triton {triton.__version__}, GPU {summary['gpu']}", flush=True)

    for name, source in inductor.EXAMPLES.items():
        t0 = time.perf_counter()
        run = inductor.run_source(source, f"{name}.py", work)
        summary["examples"][name] = run.to_json()
        if run.error:
            print(f"{name}: {run.error['kind']}: {run.error['message']}\n{run.error.get('detail', '')[-3000:]}", flush=True)
            continue
        print(f"{name}: {len(run.kernels)} kernel(s) in {time.perf_counter() - t0:.1f} s, max |compiled - eager| = "
              f"{run.max_abs_diff:.2e}, eager {run.eager_ms:.3f} ms, compiled {run.compiled_ms:.3f} ms", flush=True)
        for k in run.kernels:
            print(f"    {k.name:45s} {k.category:22s} fuses [{k.fused_ops}]  aten [{', '.join(k.aten_ops)}]  "
                  f"{len(k.cache_entries)} cache folder(s)  meta {sorted(k.meta)}", flush=True)

    # The cache as this machine's Triton wrote it, read back by inspectors.store.cache.
    try:
        from inspectors.store import cache
        scan = cache.scan(triton_dir)
        rows = []
        for e in scan.entries:
            row = {"key": e.key, "name": e.name, "status": e.status, "target": e.target, "files": e.files,
                   "missing": e.missing, "num_warps": e.num_warps, "size": e.size}
            try:
                opened = cache.load(e.path, [inductor_dir])
                row.update(stages=list(opened.kernel.stages), source_found=bool(opened.source_path),
                           loc_path=opened.loc_path, args=[a.describe() for a in opened.kernel.args])
            except Exception as ex:  # noqa: BLE001 - record, keep going
                row["load_error"] = f"{type(ex).__name__}: {ex}"
            rows.append(row)
        summary["cache"] = {"entries": rows, "skipped": scan.skipped, "scan_seconds": scan.seconds,
                            "files_in_first": sorted(os.listdir(scan.entries[0].path)) if scan.entries else []}
        print(f"cache: {len(rows)} kernel folders, {scan.skipped} helper folders; files of one: "
              f"{summary['cache']['files_in_first']}", flush=True)
    except Exception as ex:  # noqa: BLE001
        summary["cache"] = {"error": f"{type(ex).__name__}: {ex}"}
        print("cache read-back failed:", ex, flush=True)

    # The fixture: kernel folders of the Triton cache and Inductor's .py files, nothing else.
    tar_path = out / "inductor_cache.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        for py in sorted(inductor_dir.glob("*/*.py")):
            tar.add(py, arcname=f"inductor_cache/{py.relative_to(inductor_dir)}")
        for folder in sorted(p for p in triton_dir.iterdir() if p.is_dir()):
            files = [f for f in sorted(folder.iterdir()) if f.is_file() and not f.name.endswith((".so", ".c"))]
            if any(f.suffix in (".ttir", ".json") for f in files):
                for f in files:
                    tar.add(f, arcname=f"inductor_cache/triton/0/{folder.name}/{f.name}")

    # The pass dump with this machine's Triton, through the worker's own job function
    # (in this process; its own Triton cache so the fixture stays Inductor's alone).
    if time.perf_counter() - started < args.deadline:
        try:
            import gzip
            from inspectors.read import passes
            from inspectors.compile import worker
            from inspectors.base.result import CompileRequest
            os.environ["TRITON_CACHE_DIR"] = str(work / "lens-triton")
            job = work / "pass-job"
            result = worker.run_job(CompileRequest(source=(ROOT / "kernels" / "vector_add.py").read_text(),
                                                   filename="vector_add.py", target="cuda:90", sass=False,
                                                   pass_dump=True), job)
            raw = job / "passes-0.txt"
            if raw.exists():
                (out / "passes_vector_add.txt.gz").write_bytes(gzip.compress(raw.read_bytes()))
                heads = [line[:160] for line in raw.read_text(errors="replace").splitlines() if "IR Dump" in line]
                summary["pass_dump_headers"] = heads[:8] + heads[-4:]
            if result.error:
                summary["pass_dump"] = {"error": result.error.to_json()}
            else:
                steps = result.kernels[0].passes
                s = passes.summarize(steps)
                summary["pass_dump"] = {"launches": len(result.kernels), "passes": s.total, "changed": s.changed,
                                        "unknown": s.unknown, "by_level": s.by_level,
                                        "changed_names": [st.label for st in steps if st.changed]}
            print("pass dump:", json.dumps(summary["pass_dump"])[:400], flush=True)
        except Exception as ex:  # noqa: BLE001
            import traceback
            summary["pass_dump"] = {"error": f"{type(ex).__name__}: {ex}", "detail": traceback.format_exc()[-2000:]}
            print("pass dump failed:", ex, flush=True)
    else:
        summary["pass_dump"] = {"skipped": "deadline"}

    summary["seconds"] = round(time.perf_counter() - started, 1)
    (out / "gpu_torch_compile.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"wrote {tar_path} ({tar_path.stat().st_size} bytes) and gpu_torch_compile.json in {summary['seconds']} s",
          flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
