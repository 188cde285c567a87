"""How long the cache browser takes to list a large Triton cache.

    .venv/bin/python benchmarks/cache_scan.py [--entries 5000] [--source DIR]

Builds a synthetic cache of N kernel folders in a temporary directory: copies of the real
folders of DIR (default: the fixture cache from a GPU run, tests/fixtures/inductor_cache),
each under a hash-like name of its own, files hard-linked (same inodes: the scan still does
one scandir, one stat per file and reads the two small JSON files of every folder) and the
`__grp__` JSON rewritten to name the copy. One folder in 50 is damaged (its metadata JSON
truncated, or a stage file removed) so the broken-entry path is timed too. Then it times
`inspectors.store.cache.scan` (median of --reps, warm page cache: the files were just written)
and a search in the result, and prints the figures.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from inspectors.store import cache  # noqa: E402

DEFAULT_SOURCE = ROOT / "tests" / "fixtures" / "inductor_cache" / "triton" / "0"


def build(dest: Path, sources: list[Path], n: int) -> None:
    for i in range(n):
        src = sources[i % len(sources)]
        key = hashlib.sha256(f"{src.name}-{i}".encode()).hexdigest()[:52].upper()
        folder = dest / key
        folder.mkdir()
        for f in src.iterdir():
            if f.name.startswith("__grp__"):
                grp = json.loads(f.read_text())
                grp["child_paths"] = {k: str(folder / k) for k in grp.get("child_paths", {})}
                (folder / f.name).write_text(json.dumps(grp))
            else:
                try:
                    os.link(f, folder / f.name)
                except OSError:
                    shutil.copy2(f, folder / f.name)
        if i % 50 == 7:            # damage some: unreadable metadata (broken), or a missing stage (partial)
            suffix = ".json" if i % 100 == 7 else ".ptx"
            victim = next((p for p in folder.iterdir() if p.suffix == suffix and not p.name.startswith("__grp__")),
                          None)
            if victim:
                victim.unlink()
                if suffix == ".json":
                    victim.write_text('{"hash": "trunc')


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--entries", type=int, default=5000)
    p.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    sources = [d for d in sorted(args.source.iterdir()) if d.is_dir() and cache.read_entry(d) is not None]
    if not sources:
        print(f"no kernel folders in {args.source}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="tlens-cache-bench-") as tmp:
        dest = Path(tmp)
        t0 = time.perf_counter()
        build(dest, sources, args.entries)
        built = time.perf_counter() - t0
        files = sum(len(os.listdir(d)) for d in dest.iterdir())
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            result = cache.scan(dest)
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        hits = [e for e in result.entries if e.matches("per_fused")]
        search = time.perf_counter() - t
        statuses = {s: sum(e.status == s for e in result.entries) for s in ("ok", "partial", "broken")}
        print(f"synthetic cache: {len(result.entries)} kernel folders, {files} files, copies of {len(sources)} real "
              f"folders from {args.source.relative_to(ROOT) if args.source.is_relative_to(ROOT) else args.source} "
              f"(built in {built:.1f} s)")
        print(f"entries by status: {statuses}")
        print(f"scan: median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms "
              f"over {args.reps} runs ({statistics.median(times) / len(result.entries) * 1e6:.1f} µs per folder)")
        print(f"search 'per_fused' in the listing: {len(hits)} hits in {search * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
