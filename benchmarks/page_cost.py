"""What a Compile of an edited kernel costs the server's page run, before and after a change (not
a test: it prints figures side by side).

A class's students press Compile on their own edits; each click reruns the explorer page on the
server (one Python process for many students: its CPU is what they queue behind, beside the
compile workers'). Here one AppTest session opens vector add and presses Compile `--clicks`
times, each time on a new edit (a BLOCK_SIZE of its own and a comment: a new compile, new
panels, a new history record). Per click: the process's CPU time for the page run (the compile
itself runs in the worker, another process, and is not counted). The first click is left out
(imports). Medians.

    .venv/bin/python benchmarks/page_cost.py --before 344144c [--clicks 40] [--same] [--browser]

`--same`: every click on the unchanged kernel, its result from the result cache (the page's own work).

The tree at `--before` is checked out into a temporary git worktree and measured in a process of
its own with that tree first on the import path; then this working tree, the same way.

`--browser`: what AppTest cannot show (it reruns the whole script; a fragment's rerun, the
messages sent and the event loop's share are not in it). A real server (`streamlit run`, a
class server: TLENS_CLASS=1) per tree and headless Chromium pressing Compile `--clicks` times on
the library's vector add, each click's result from the result cache (the page's own work: the
worker does nothing); per click, the server process's CPU (all its threads) from the press until
the page is idle again. Medians of 3 rounds, the trees taking turns.
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

from inspectors.process import proctree

ROOT = Path(__file__).resolve().parents[1]


def measure(clicks: int, same: bool = False) -> list[float]:
    """Milliseconds of this process's CPU per Compile page run (run in the tree measured);
    `same`: every click on the unchanged kernel (its result from the result cache)."""
    from streamlit.testing.v1 import AppTest

    from tests_helpers import load  # (benchmarks/tests_helpers.py)
    editor = load("editor_helpers").editor
    at = AppTest.from_file(str(Path.cwd() / "app" / "main.py"), default_timeout=240)
    at.run()
    at.selectbox(key="picker").set_value("vector_add").run()
    base = editor(at).value
    out = []
    for i in range(clicks + 1):
        edit = base if same else base.replace("BLOCK_SIZE=1024", f"BLOCK_SIZE={2 ** (6 + i % 6)}", 1) + f"\n# edit {i}\n"
        editor(at).input(edit)                       # the edit and the click arrive in one rerun
        t0 = time.process_time()
        at.button(key="compile").click().run()
        out.append((time.process_time() - t0) * 1000)
        if at.exception or at.error:
            raise SystemExit(f"the page failed: {at.exception or [e.value for e in at.error]}")
    return out[1:]


def browser_round(tree: Path, clicks: int) -> float:
    """Milliseconds of the server's CPU per Compile click, Chromium pressing it (see --browser)."""
    from playwright.sync_api import expect, sync_playwright

    from tests_helpers import load  # (benchmarks/tests_helpers.py)
    browser_helpers = load("browser")
    work = Path(tempfile.mkdtemp(prefix="tlens-page-cost-"))
    port = browser_helpers.free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(tree / "app" / "main.py"), "--server.port", str(port),
         "--server.headless", "true"], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(tree), "TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(work / "ws"),
             "TLENS_TRITON_CACHE_DIR": str(work / "cache" / "triton")}, start_new_session=True)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_helpers.CHROMIUM)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for _ in range(120):
                try:
                    page.goto(f"http://127.0.0.1:{port}/?kernel=vector_add&target=cuda%3A90&run=1")
                    break
                except Exception:  # noqa: BLE001 - the server is still starting
                    time.sleep(0.5)
            expect(page.locator('.tlens-panel[data-stage="ptx"]')).to_be_visible(timeout=180_000)
            button = page.get_by_role("button", name="Compile", exact=True)

            def press() -> None:
                button.click()
                time.sleep(0.15)
                page.locator('[data-test-script-state="notRunning"]').wait_for(state="attached", timeout=120_000)
            for _ in range(3):
                press()
            time.sleep(1.0)
            c0 = proctree.cpu_seconds(server.pid)
            for _ in range(clicks):
                press()
            return (proctree.cpu_seconds(server.pid) - c0) * 1000 / clicks
    finally:
        os.killpg(server.pid, 9)


def run_tree(tree: Path, clicks: int, same: bool = False) -> list[float]:
    work = Path(tempfile.mkdtemp(prefix="tlens-page-cost-"))
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT / 'benchmarks'}",
           "TLENS_WORKSPACE_DIR": str(work / "ws"), "TLENS_TRITON_CACHE_DIR": str(work / "cache" / "triton")}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--measure", "--clicks", str(clicks)]
                         + (["--same"] if same else []),
                         cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"measuring {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="the commit to compare with")
    ap.add_argument("--clicks", type=int, default=40)
    ap.add_argument("--browser", action="store_true", help="Chromium pressing Compile on a real server")
    ap.add_argument("--same", action="store_true", help="every click on the unchanged kernel (a cache hit)")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)   # the child: this tree, JSON out
    args = ap.parse_args()
    if args.browser:
        return browser_main(args)
    if args.measure:
        print(json.dumps(measure(args.clicks, args.same)))
        return 0
    rows = []
    if args.before:
        base = Path(tempfile.mkdtemp(prefix="tlens-before-"))
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.before], cwd=ROOT, check=True)
        try:
            rows.append((f"before ({args.before})", run_tree(base, args.clicks, args.same)))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT)
    rows.append(("after (this tree)", run_tree(ROOT, args.clicks, args.same)))
    what = "the unchanged vector add (a result-cache hit)" if args.same else "an edited vector add"
    print(f"page_cost: a Compile of {what}, the server's page run (AppTest, {args.clicks} clicks, "
          f"medians; {len(os.sched_getaffinity(0))} cores)")
    print(f"{'':28} {'CPU / Compile':>14} {'p90':>8}")
    for name, ms in rows:
        print(f"{name:28} {statistics.median(ms):11.1f} ms {sorted(ms)[int(0.9 * (len(ms) - 1))]:5.1f} ms")
    if len(rows) == 2:
        print(f"{'after / before':28} {statistics.median(rows[1][1]) / statistics.median(rows[0][1]):14.2f}")
    return 0


def browser_main(args) -> int:
    trees = [("after (this tree)", ROOT)]
    base = None
    if args.before:
        base = Path(tempfile.mkdtemp(prefix="tlens-before-"))
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.before], cwd=ROOT, check=True)
        trees.insert(0, (f"before ({args.before})", base))
    try:
        rounds: dict[str, list[float]] = {name: [] for name, _ in trees}
        for _ in range(3):
            for name, tree in trees:
                rounds[name].append(browser_round(tree, args.clicks))
    finally:
        if base is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT)
    print(f"page_cost --browser: Compile pressed in Chromium on a class server, vector add from the result cache "
          f"(the server's CPU per click, all its threads; {args.clicks} clicks a round, 3 rounds; "
          f"{len(os.sched_getaffinity(0))} cores)")
    print(f"{'':28} {'CPU / Compile':>14}   rounds")
    for name, ms in rounds.items():
        print(f"{name:28} {statistics.median(ms):11.1f} ms   {', '.join(f'{m:.1f}' for m in ms)}")
    if len(rounds) == 2:
        a, b = (statistics.median(v) for v in rounds.values())
        print(f"{'after / before':28} {b / a:14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
