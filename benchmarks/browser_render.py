"""Big kernels in the browser: how long from Compile to panels, and how long a
20,000-line SASS panel takes to render.

    .venv/bin/python benchmarks/browser_render.py [--reps 3]

Starts `streamlit run app/main.py` (fresh Triton cache) and drives Debian's Chromium:
  compile-cold   Compile on tests/snippets/flash_attention.py, fresh cache: click -> PTX panel shown
  compile-warm   the same again, unchanged (result cache): click -> PTX panel shown
  sass-open      add the SASS panel of the 10,915-line unrolled kernel: pick -> panel shown
                 (nvdisasm on demand + highlighting + browser layout)
  html-20k       server side: render_stage_html of a 20,000-line SASS text (pygments)
  layout-20k     browser side: that HTML put into a page and laid out (set innerHTML -> layout done)
Goal: layout-20k + html-20k <= 2 s. Medians of --reps (cold: one run per fresh server).
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SOURCE = (ROOT / "tests" / "snippets" / "flash_attention.py").read_text()


def _server(cache: str):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "TLENS_TRITON_CACHE_DIR": cache, "TLENS_COMPILE_TIMEOUT": "300"}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
                             "--server.port", str(port), "--server.headless", "true"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=2)
            return proc, url
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("server did not start")


def _compile_and_wait(page) -> float:
    """Click Compile; done when the script run has finished and the PTX panel has lines.
    Streamlit marks its root with data-test-script-state = running / notRunning."""
    from playwright.sync_api import TimeoutError as PwTimeout
    t = time.perf_counter()
    page.get_by_role("button", name="Compile").click()
    try:
        page.locator('[data-test-script-state="running"]').wait_for(state="attached", timeout=3000)
    except PwTimeout:
        pass                                          # finished before we looked
    page.locator('[data-test-script-state="notRunning"]').wait_for(state="attached", timeout=300_000)
    page.locator('.tlens-panel[data-stage="ptx"] .l').first.wait_for(timeout=300_000)
    return time.perf_counter() - t


def app_timings() -> dict:
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory() as cache:
        proc, url = _server(cache)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1600, "height": 1000})
                page.goto(url)
                page.get_by_role("button", name="Compile").wait_for(timeout=120_000)
                time.sleep(5)                       # let the worker warm up, as a user reading the page would
                page.locator(".tl-editor .cm-content").click()          # the kernel editor (CodeMirror)
                page.keyboard.press("ControlOrMeta+a")
                page.keyboard.insert_text(SOURCE)
                cold = _compile_and_wait(page)
                warm = _compile_and_wait(page)
                # the unrolled kernel (launch 2), then add its SASS panel
                try:
                    page.locator('[data-testid="stSelectbox"]').filter(has_text="compiled launches").click()
                    page.get_by_role("option").nth(1).click()
                except Exception:
                    page.screenshot(path="/tmp/browser_render_failure.png")
                    raise
                page.locator('.tlens-panel[data-stage="ptx"] .l').first.wait_for(timeout=60_000)
                t = time.perf_counter()
                page.get_by_role("button", name="Remove Python").click()
                page.locator('[data-testid="stMultiSelect"]').first.click()
                page.get_by_role("option", name="SASS").click()
                page.keyboard.press("Escape")
                page.locator('.tlens-panel[data-stage="sass"] .l').nth(10_000).wait_for(state="attached",
                                                                                     timeout=120_000)
                sass_open = time.perf_counter() - t
                browser.close()
        finally:
            os.killpg(proc.pid, 9)
    return {"compile-cold": cold, "compile-warm": warm, "sass-open": sass_open}


def render_20k() -> tuple[float, float, int]:
    from playwright.sync_api import sync_playwright
    from app import render
    import json
    fixture = ROOT / "tests" / "fixtures" / "insight" / "matmul_sm80.kernel.json"
    sass = json.loads(fixture.read_text())["stages"]["sass"].splitlines()
    text = "\n".join((sass * (20_000 // len(sass) + 1))[:20_000])
    t = time.perf_counter()
    html = render.render_stage_html("sass", text)
    server = time.perf_counter() - t
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_content(render.page_css() + '<div id="host"></div>')
        browser_ms = page.evaluate("""(html) => {
            const t0 = performance.now();
            document.getElementById('host').innerHTML = html;
            document.body.offsetHeight;                       // force style + layout
            return new Promise(r => requestAnimationFrame(() => r(performance.now() - t0)));
        }""", html)
        lines = page.locator(".l").count()
        browser.close()
    return server, browser_ms / 1000, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    apps = [app_timings() for _ in range(args.reps)]
    renders = [render_20k() for _ in range(args.reps)]
    med = statistics.median
    print(f"machine: {os.cpu_count()} cores, headless Chromium; kernel: tests/snippets/flash_attention.py "
          f"(cuda:90; 2 launches, the unrolled one: TTGIR 2,098 lines, SASS 10,915); medians of {args.reps}")
    print(f"{'compile-cold':>13} {'compile-warm':>13} {'sass-open':>10} {'html-20k':>9} {'layout-20k':>11} {'lines':>6}")
    print(f"{med(a['compile-cold'] for a in apps):>12.2f}s {med(a['compile-warm'] for a in apps):>12.2f}s "
          f"{med(a['sass-open'] for a in apps):>9.2f}s {med(r[0] for r in renders):>8.2f}s "
          f"{med(r[1] for r in renders):>10.2f}s {renders[0][2]:>6}")


if __name__ == "__main__":
    main()
