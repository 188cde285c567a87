"""The Why list and the live-register bars in the real app (headless Chromium): the library
matmul's remarks, a click that follows the loop's line in every panel, the amber marks in the
Python panel's gutter, and the register bars."""
import re

from browser import SHOTS, open_app, require_chromium, switch_on
from conftest import ROOT

require_chromium()

from playwright.sync_api import expect  # noqa: E402

MATMUL = (ROOT / "kernels" / "matmul.py").read_text().splitlines()
LOOP = next(n for n, line in enumerate(MATMUL, 1) if line.strip().startswith("for k in range"))


def test_why_list_follows_and_register_bars_draw(browser, server):
    page = open_app(browser, server + "/?kernel=matmul&target=cuda%3A90&run=1", viewport={"width": 1280, "height": 900})
    py = page.locator('.tlens-panel[data-stage="source"]')
    expect(py).to_be_visible(timeout=180_000)
    expect(py.locator(f'.l.why[data-line="{LOOP}"]')).to_be_attached(timeout=60_000)     # the gutter mark
    assert "loop pipelined" in py.locator(f'.l.why[data-line="{LOOP}"]').get_attribute("data-why")
    page.get_by_role("radio", name=re.compile(r"^Why")).click()
    link = page.get_by_role("button", name=re.compile(rf"line {LOOP} · pipeline .*loop pipelined"))
    expect(link).to_be_visible(timeout=30_000)
    link.click()
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(py.locator(f'.l.sel[data-line="{LOOP}"]')).to_be_attached(timeout=60_000)
    expect(ptx.locator(".l.sel").first).to_be_attached(timeout=30_000)   # the loop's PTX lights up too
    switch_on(page, "Live registers")
    bars = py.locator(".l.regs")
    expect(bars.first).to_be_attached(timeout=120_000)
    counts = [int(b.get_attribute("data-regs").split()[0]) for b in bars.all()]
    assert counts and max(counts) > 0
    expect(page.get_by_text(re.compile(r"holds the most live registers"))).to_be_visible()
    bar = bars.first.evaluate("e => getComputedStyle(e, '::after').width")
    assert float(bar.rstrip("px")) > 0                                   # drawn, not only tagged
    page.get_by_role("radio", name=re.compile(r"^Why")).scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "why_and_registers.png"))


def test_closed_boxes_are_drawn_when_opened(browser, server):
    """The History popover, the sidebar's Workspace box and "About this kernel" are drawn only
    while open (a Compile's page run draws none of them): a click on each reruns the page and
    its content comes."""
    page = open_app(browser, server + "/?kernel=vector_add&target=cuda%3A90&run=1", viewport={"width": 1280, "height": 900})
    expect(page.locator('.tlens-panel[data-stage="ptx"]')).to_be_visible(timeout=180_000)
    page.get_by_role("button", name=re.compile(r"^History \d")).click()
    expect(page.get_by_text("Pick any two on the Compare page.")).to_be_visible(timeout=30_000)
    page.keyboard.press("Escape")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("About this kernel").click()
    expect(sidebar.get_by_text(re.compile(r"v4|vector|coalesc", re.I)).first).to_be_visible(timeout=30_000)
    sidebar.get_by_text("Workspace", exact=True).click()
    expect(sidebar.get_by_text(re.compile(r"file\(s\) in"))).to_be_visible(timeout=30_000)
    page.screenshot(path=str(SHOTS / "open_boxes.png"))
