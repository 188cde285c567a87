"""Every library kernel (and the flash-attention snippet) compiled by two Triton versions, the
figure deltas A -> B side by side in one run: global loads and stores by width, registers,
spills, shared memory, instructions per stage, and what only the version change explains.

    .venv/bin/python benchmarks/version_compare.py [--a 3.6.0] [--b 3.9.0] [--target cuda:90]
                                                   [--out benchmarks/results/version_compare.txt]

Needs both versions configured (`make setup-versions TRITON_VERSIONS="3.6.0 3.9.0"`, README
"Several Triton versions"). Both are compiled at the same time, one worker each, each with a
fresh Triton cache.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIGURES = ("memory", "resources", "instructions")


def _cell(v) -> str:
    return "n/a" if v is None else (f"{v:,}" if isinstance(v, int) else str(v))


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--a", default="3.6.0")
    p.add_argument("--b", default="3.9.0")
    p.add_argument("--target", default="cuda:90")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "version_compare.txt")
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as cache:
        os.environ["TLENS_TRITON_CACHE_DIR"] = cache
        from inspectors.base import settings as settings_mod
        from inspectors.base.result import CompileRequest
        from inspectors.compile.version_engines import Engines
        from inspectors.session.compare import compare_results, compile_both
        from inspectors.session.lens import Lens
        from kernels import LIBRARY
        import torch

        engines = Engines(settings_mod.load(), workers=1)
        missing = [v for v in (args.a, args.b) if v not in engines.versions()]
        if missing:
            print(f"not configured: Triton {', '.join(missing)} (have {', '.join(engines.versions())}); "
                  f'run make setup-versions TRITON_VERSIONS="{args.a} {args.b}"', file=sys.stderr)
            return 2
        files = [(k.slug, k.filename, k.source()) for k in LIBRARY]
        snippet = ROOT / "tests" / "snippets" / "flash_attention.py"
        files.append(("flash_attention (tests/snippets)", snippet.name, snippet.read_text()))
        lines = [f"# {datetime.now(timezone.utc):%Y-%m-%d} · Triton {args.a} → {args.b} · torch {torch.__version__} · "
                 f"python {platform.python_version()} · target {args.target} · command: .venv/bin/python "
                 f"benchmarks/version_compare.py --a {args.a} --b {args.b} --target {args.target}",
                 f"# each row: figure  {args.a}  {args.b}  change; only figures that differ are listed "
                 "(memory, resources, instructions per stage); notes: what only the version change explains", ""]
        totals = {"launches": 0, "changed": 0, "failed_a": 0, "failed_b": 0}
        started = time.perf_counter()
        try:
            for slug, filename, source in files:
                t = time.perf_counter()
                ra, rb = compile_both(Lens(engines=engines, cache=False), CompileRequest(source=source, filename=filename, target=args.target),
                                      args.a, args.b, timeout=300)
                took = time.perf_counter() - t
                head = f"== {slug} ({filename}): {len(ra.kernels)} / {len(rb.kernels)} launches, {took:.1f} s"
                lines.append(head)
                print(head, flush=True)
                for r, v in ((ra, args.a), (rb, args.b)):
                    if r.error and not r.kernels:
                        lines.append(f"  Triton {v} could not compile it: {r.error.kind}: {r.error.message.splitlines()[0]}")
                cmp = compare_results(args.a, args.b, ra, rb, filename)
                for lc in cmp.launches:
                    d = lc.diff
                    totals["launches"] += 1
                    totals["failed_a"] += d.a.error is not None
                    totals["failed_b"] += d.b.error is not None
                    rows = [r for r in d.delta.rows if r.group in FIGURES and r.changed]
                    totals["changed"] += bool(rows)
                    lines.append(f"  launch {lc.launch + 1}: {d.a.label or d.a.name}")
                    lines.append(f"    {lc.headline}")
                    for r in rows:
                        metric = f"{r.group}: {r.metric}"
                        lines.append(f"    {metric:40} {_cell(r.a):>10} {_cell(r.b):>10}  {r.change}")
                lines.append("")
        finally:
            engines.close()
        lines.append(f"{totals['launches']} launches of {len(files)} files; figures differ in {totals['changed']}; "
                     f"a stage failed in {totals['failed_a']} under {args.a}, {totals['failed_b']} under {args.b}; "
                     f"{time.perf_counter() - started:.0f} s on {os.cpu_count()} cores")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
