"""Big kernels in the browser: how long from Compile to panels, adding the SASS panel of a
10,915-line kernel, and opening and scrolling a 20,000-line panel; and what a rerun sends.

    .venv/bin/python benchmarks/browser_render.py [--reps 3]

Starts `streamlit run app/main.py` (fresh Triton cache, one fresh server per rep) and drives
Debian's Chromium at 1280×720, on tests/snippets/flash_attention.py (cuda:90). Times are the
page's clock, from just before the click:
  compile-cold   Compile, fresh cache: -> Python, TTGIR and PTX panels drawn and the run over
  compile-warm   Compile again, unchanged (result cache): -> the run over (the panels are
                 sent again as cached-message references: nothing to decode or draw)
  sass-add       the unrolled launch (2) picked, and as soon as its run ends a SASS panel
                 (10,915 lines) added: pick -> its lines drawn (nvdisasm on demand, source
                 map, payload, transfer, gunzip, draw)
Reruns that change no panel, each: bytes the browser received over the websocket during the
rerun, and how many panel payloads it decoded (0 = nothing re-sent, nothing redrawn):
  rerun-click    a click on a PTX line (follows its Python line, then reruns to keep the URL)
  rerun-option   another followed line picked in the bar's selectbox
  rerun-sass     the SASS panel added (the TTGIR and PTX panels beside it: not re-sent)
The 20,000-line panel (app/components/stage_panel/demo.py?lines=20000, the fixture's SASS
repeated), in the same browser:
  open-20k       "Open the big panel" clicked -> its first lines drawn (server: lexing and
                 payload; browser: gunzip, parse, draw the lines in view)
  end-20k        scrollTop set to the end -> line 20,000 drawn (two animation frames)
  scroll-20k     scrolled through, 2,000 px a frame, top to end: total time; frame intervals
                 (median, p95, slowest) and the panel's own drawing time a frame
Goals (issue 13): sass-add <= 1.5 s; open-20k and end-20k <= 1 s. Medians of --reps.
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

from tests_helpers import load  # (benchmarks/tests_helpers.py)

ROOT = Path(__file__).resolve().parents[1]
fill_editor = load("editor_helpers").fill_editor     # the kernel editor, as the browser tests type into it
SOURCE = (ROOT / "tests" / "snippets" / "flash_attention.py").read_text()
VIEWPORT = {"width": 1280, "height": 720}
DRAWN = '.tlens-panel[data-stage="{}"][data-ready="1"] .l'


def _server(script: Path, cache: str, workspace: str):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # the result cache sits beside the Triton cache: both in this rep's fresh folder
    env = {**os.environ, "TLENS_TRITON_CACHE_DIR": os.path.join(cache, "triton"), "TLENS_COMPILE_TIMEOUT": "300",
           "TLENS_WORKSPACE_DIR": workspace}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script),
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


class Wire:
    """Bytes the page receives over Streamlit's websocket."""

    def __init__(self, page):
        self.received = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload):
        self.received += len(payload)


# Streamlit marks its root with data-test-script-state = running / notRunning: count the runs
# that end (installed before the page's own scripts, so no run is missed).
COUNT_RUNS = """(() => {
  window.__runsDone = 0;
  window.__runEnd = 0;
  let last = null;
  new MutationObserver(() => {
    const el = document.querySelector('[data-test-script-state]');
    const state = el && el.getAttribute('data-test-script-state');
    if (state === last) return;
    if (last === 'running' && state === 'notRunning') { window.__runsDone += 1; window.__runEnd = performance.now(); }
    last = state;
  }).observe(document, {attributes: true, subtree: true, childList: true,
                        attributeFilter: ['data-test-script-state']});
})();"""


def _runs(page) -> int:
    return page.evaluate("window.__runsDone")


def _run_over(page, before: int):
    """Wait until a run that started after `before` (a `_runs` count) has ended."""
    page.wait_for_function(f"window.__runsDone > {before}", timeout=300_000)


# Times are the page's own clock (performance.now()): from just before a click to the moment a
# panel has drawn its lines (panel.js records when it started on a payload, and how long its
# gunzip + parse and its layout + drawing took) or a run has ended; Playwright's polling is not
# in them.
def _now(page) -> float:
    return page.evaluate("performance.now()")


def _drawn_since(page, t0: float, stage: str | None = None, lines: int | None = None) -> float | None:
    """When the last panel (of `stage`, or with `lines` lines) decoded after t0 was drawn."""
    return page.evaluate("""([t0, stage, lines]) => {
        const done = window.__tlensStage.timings
            .filter(t => t[4] >= t0 && (stage === null || t[0] === stage) && (lines === null || t[1] === lines))
            .map(t => t[4] + t[2] + t[3]);
        return done.length ? Math.max(...done) : null; }""", [t0, stage, lines])


def _panels_drawn(page, names=("source", "ttgir", "ptx")):
    for name in names:
        page.locator(DRAWN.format(name)).first.wait_for(state="attached", timeout=300_000)


def _compile(page) -> float:
    """Click -> the run has ended and the panels are drawn (a warm compile sends the same
    panels again as references: nothing to decode, the run's end is the moment)."""
    runs = _runs(page)
    t0 = _now(page)
    page.get_by_role("button", name="Compile", exact=True).click()
    _run_over(page, runs)
    _panels_drawn(page)
    page.wait_for_timeout(300)
    ends = [page.evaluate("window.__runEnd"), _drawn_since(page, t0) or 0]
    return (max(ends) - t0) / 1000


def _decoded(page) -> int:
    return page.evaluate("window.__tlensStage ? window.__tlensStage.decoded : 0")


def _rerun(page, wire: Wire, action) -> tuple[int, int]:
    """(bytes received, payloads decoded) while `action` and the rerun it starts run."""
    page.wait_for_timeout(300)
    before_bytes, before_decoded, runs = wire.received, _decoded(page), _runs(page)
    action()
    _run_over(page, runs)
    page.wait_for_timeout(500)                        # late frames and decodes count too
    return wire.received - before_bytes, _decoded(page) - before_decoded


def app_timings(browser) -> dict:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as workspace:
        proc, url = _server(ROOT / "app" / "main.py", cache, workspace)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.add_init_script(COUNT_RUNS)
            wire = Wire(page)
            page.goto(url)
            page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=120_000)
            time.sleep(5)                             # let the worker warm up, as a user reading the page would
            fill_editor(page, SOURCE)                  # the kernel editor (CodeMirror), its box opened
            out = {"compile-cold": _compile(page), "compile-warm": _compile(page)}
            # two panels (Python out), then the unrolled kernel (launch 2), then SASS added at once
            runs = _runs(page)
            page.get_by_role("button", name="Remove Python").click()
            _run_over(page, runs)
            page.wait_for_timeout(500)
            runs = _runs(page)
            page.locator('[data-testid="stSelectbox"]').filter(has_text="Launch (").click()
            page.get_by_role("option").nth(1).click()
            _run_over(page, runs)
            shown = page.evaluate("window.__runEnd")
            page.locator('[data-testid="stMultiSelect"]').first.click()
            before_bytes, before_decoded, runs = wire.received, _decoded(page), _runs(page)
            t0 = _now(page)
            page.get_by_role("option", name="SASS").click()
            page.locator(DRAWN.format("sass")).first.wait_for(state="attached", timeout=120_000)
            _run_over(page, runs)
            out["sass-add"] = (_drawn_since(page, t0, stage="sass") - t0) / 1000
            out["sass-run"] = (page.evaluate("window.__runEnd") - t0) / 1000
            out["sass-after"] = (t0 - shown) / 1000            # asked this long after the launch was shown
            out["sass-browser"] = page.evaluate("window.__tlensStage.timings.find(t => t[0] === 'sass')")
            page.keyboard.press("Escape")
            page.wait_for_timeout(500)
            out["rerun-sass"] = (wire.received - before_bytes, _decoded(page) - before_decoded)
            page.wait_for_timeout(1000)
            out["rerun-click"] = _rerun(page, wire, lambda: page.locator(
                '.tlens-panel[data-stage="ptx"] .l[data-py]').nth(5).click())
            follow = page.locator('[data-testid="stSelectbox"]').filter(has_text="Follow a Python line")
            out["rerun-option"] = _rerun(page, wire, lambda: (follow.click(), page.keyboard.press("ArrowDown"),
                                                              page.keyboard.press("ArrowDown"),
                                                              page.keyboard.press("Enter")))
            out["sass-lines"] = int(page.locator('.tlens-panel[data-stage="sass"]').get_attribute("data-lines"))
            page.close()
        finally:
            os.killpg(proc.pid, 9)
    return out


SCROLL_END = """async (panel) => {
  const s = panel.querySelector('.tp-scroll');
  const t0 = performance.now();
  s.scrollTop = s.scrollHeight;
  const frame = () => new Promise(r => requestAnimationFrame(r));
  while (!panel.querySelector('.l[data-line="20000"]')) { await frame(); if (performance.now() - t0 > 5000) break; }
  await frame();
  return performance.now() - t0;
}"""

SCROLL_THROUGH = """async (panel) => {
  const s = panel.querySelector('.tp-scroll');
  s.scrollTop = 0;
  const frame = () => new Promise(r => requestAnimationFrame(r));
  await frame(); await frame();
  const t0 = performance.now(), draw0 = window.__tlensStage.drawMs || 0; let last = t0; const gaps = [];
  while (s.scrollTop + s.clientHeight < s.scrollHeight - 1) {
    s.scrollTop += 2000;
    await frame();
    const now = performance.now(); gaps.push(now - last); last = now;
  }
  const ok = !!panel.querySelector('.l[data-line="20000"]');
  gaps.sort((a, b) => a - b);
  return {total: performance.now() - t0, worst: gaps[gaps.length - 1], median: gaps[gaps.length >> 1],
          p95: gaps[Math.floor(gaps.length * 0.95)], frames: gaps.length, ok,
          draw: ((window.__tlensStage.drawMs || 0) - draw0) / gaps.length};
}"""


def big_panel_timings(browser) -> dict:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as workspace:
        proc, url = _server(ROOT / "app" / "components" / "stage_panel" / "demo.py", cache, workspace)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.add_init_script(COUNT_RUNS)
            page.goto(url + "/?lines=20000")
            page.locator(DRAWN.format("ptx")).first.wait_for(timeout=120_000)
            page.wait_for_timeout(1000)
            runs = _runs(page)
            t0 = _now(page)
            page.get_by_role("button", name="Open the big panel").click()
            big = page.locator('.tlens-panel[data-lines="20000"]')
            big.locator(".l").first.wait_for(state="attached", timeout=120_000)
            _run_over(page, runs)
            opened = (_drawn_since(page, t0, lines=20_000) - t0) / 1000
            browser_ms = page.evaluate("window.__tlensStage.timings.find(t => t[1] === 20000)")
            drawn = big.locator(".l").count()
            end = big.evaluate(SCROLL_END) / 1000
            through = big.evaluate(SCROLL_THROUGH)
            page.close()
        finally:
            os.killpg(proc.pid, 9)
    return {"open-20k": opened, "open-browser": browser_ms, "end-20k": end, "scroll-20k": through["total"] / 1000,
            "worst-frame": through["worst"] / 1000, "median-frame": through["median"] / 1000,
            "p95-frame": through["p95"] / 1000, "draw-ms": through["draw"], "frames": through["frames"],
            "reached-end": through["ok"], "lines-in-page": drawn}


def main():
    from playwright.sync_api import sync_playwright
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        apps = [app_timings(browser) for _ in range(args.reps)]
        bigs = [big_panel_timings(browser) for _ in range(args.reps)]
        browser.close()
    med = statistics.median

    def m(rows, key):
        return med(r[key] for r in rows)

    print(f"machine: {os.cpu_count()} cores, headless Chromium {VIEWPORT['width']}x{VIEWPORT['height']}; kernel: "
          f"tests/snippets/flash_attention.py (cuda:90; launch 2, unrolled: SASS {apps[0]['sass-lines']:,} lines); "
          f"medians of {args.reps}")
    print(f"{'compile-cold':>13} {'compile-warm':>13} {'sass-add':>9} {'open-20k':>9} {'end-20k':>8} "
          f"{'scroll-20k':>11}")
    print(f"{m(apps, 'compile-cold'):>12.2f}s {m(apps, 'compile-warm'):>12.2f}s {m(apps, 'sass-add'):>8.2f}s "
          f"{m(bigs, 'open-20k'):>8.2f}s {m(bigs, 'end-20k'):>7.3f}s {m(bigs, 'scroll-20k'):>10.2f}s")
    print(f"scroll-20k: {bigs[0]['frames']} frames of 2,000 px, line 20,000 reached: "
          f"{all(b['reached-end'] for b in bigs)}; frame interval median {m(bigs, 'median-frame') * 1000:.0f} ms, "
          f"p95 {m(bigs, 'p95-frame') * 1000:.0f} ms, slowest {m(bigs, 'worst-frame') * 1000:.0f} ms; the panel's "
          f"own drawing {m(bigs, 'draw-ms'):.1f} ms a frame; <div>s of lines in the page: {bigs[0]['lines-in-page']}")
    print(f"sass-add: asked {m(apps, 'sass-after'):.2f}s after launch 2 was shown; the run that adds it ends at "
          f"{m(apps, 'sass-run'):.2f}s (the insight tabs below the panels)")
    sb, ob = apps[0]["sass-browser"], bigs[0]["open-browser"]
    print(f"in the browser (first rep): SASS {sb[1]:,} lines: gunzip + parse {sb[2]} ms, lay out + draw {sb[3]} ms; "
          f"20k panel: gunzip + parse {ob[2]} ms, lay out + draw {ob[3]} ms")
    for key in ("rerun-click", "rerun-option", "rerun-sass"):
        sent = [a[key][0] for a in apps]
        decoded = [a[key][1] for a in apps]
        print(f"{key:>13}: {med(sent) / 1024:,.1f} KiB received (min {min(sent) / 1024:,.1f}, max "
              f"{max(sent) / 1024:,.1f}), panel payloads decoded: {', '.join(map(str, decoded))}")


if __name__ == "__main__":
    main()
