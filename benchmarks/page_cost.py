"""What a Compile of an edited kernel costs the server's page run, before and after a change (not
a test: it prints figures side by side).

A class's students press Compile on their own edits; each click reruns the explorer page on the
server (one Python process for many students: its CPU is what they queue behind, beside the
compile workers'). Here one AppTest session opens vector add and presses Compile `--clicks`
times, each time on a new edit (a BLOCK_SIZE of its own and a comment: a new compile, new
panels, a new history record). Per click: the process's CPU time for the page run (the compile
itself runs in the worker, another process, and is not counted). The first click is left out
(imports). Medians.

    .venv/bin/python benchmarks/page_cost.py --before 344144c [--clicks 40]

The tree at `--before` is checked out into a temporary git worktree and measured in a process of
its own with that tree first on the import path; then this working tree, the same way.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(clicks: int) -> list[float]:
    """Milliseconds of this process's CPU per Compile page run (run in the tree measured)."""
    from streamlit.testing.v1 import AppTest

    from tests_helpers import load  # (benchmarks/tests_helpers.py)
    editor = load("editor_helpers").editor
    at = AppTest.from_file(str(Path.cwd() / "app" / "main.py"), default_timeout=240)
    at.run()
    at.selectbox(key="picker").set_value("vector_add").run()
    base = editor(at).value
    out = []
    for i in range(clicks + 1):
        edit = base.replace("BLOCK_SIZE=1024", f"BLOCK_SIZE={2 ** (6 + i % 6)}", 1) + f"\n# edit {i}\n"
        editor(at).input(edit)                       # the edit and the click arrive in one rerun
        t0 = time.process_time()
        at.button(key="compile").click().run()
        out.append((time.process_time() - t0) * 1000)
        if at.exception or at.error:
            raise SystemExit(f"the page failed: {at.exception or [e.value for e in at.error]}")
    return out[1:]


def run_tree(tree: Path, clicks: int) -> list[float]:
    work = Path(tempfile.mkdtemp(prefix="tlens-page-cost-"))
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT / 'benchmarks'}",
           "TLENS_WORKSPACE_DIR": str(work / "ws"), "TLENS_TRITON_CACHE_DIR": str(work / "cache" / "triton")}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure", "--clicks", str(clicks)],
                         cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"measuring {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="the commit to compare with")
    ap.add_argument("--clicks", type=int, default=40)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)   # the child: this tree, JSON out
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.clicks)))
        return 0
    rows = []
    if args.before:
        base = Path(tempfile.mkdtemp(prefix="tlens-before-"))
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.before], cwd=ROOT, check=True)
        try:
            rows.append((f"before ({args.before})", run_tree(base, args.clicks)))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT)
    rows.append(("after (this tree)", run_tree(ROOT, args.clicks)))
    print(f"page_cost: a Compile of an edited vector add, the server's page run (AppTest, {args.clicks} clicks, "
          f"medians; {len(os.sched_getaffinity(0))} cores)")
    print(f"{'':28} {'CPU / Compile':>14} {'p90':>8}")
    for name, ms in rows:
        print(f"{name:28} {statistics.median(ms):11.1f} ms {sorted(ms)[int(0.9 * (len(ms) - 1))]:5.1f} ms")
    if len(rows) == 2:
        print(f"{'after / before':28} {statistics.median(rows[1][1]) / statistics.median(rows[0][1]):14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
