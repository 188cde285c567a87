"""A saved profile's heat bars in the real app, in headless Chromium (issue 22). The profile is
test-made (see tests/app/test_profile_view.py): this checks the drawing, not a measurement."""
import hashlib

import pytest

from browser import SHOTS, open_app, require_chromium, running_app, switch_on
from conftest import ROOT
from inspectors.base.result import CompileRequest
from inspectors.explain import profile as prof
from inspectors.read import ncu_source as ncu
from inspectors.read import sourcemap as sm
from inspectors.store import profiles
from ncu_csv import export, load_heavy

require_chromium()

from playwright.sync_api import expect  # noqa: E402


@pytest.fixture(scope="module")
def saved(engine, tmp_path_factory):
    """A test-made profile of vector add, saved in a folder of the module's own: (folder, profile)."""
    folder = tmp_path_factory.mktemp("profiles")
    source = (ROOT / "kernels" / "vector_add.py").read_text()
    k = engine.compile(CompileRequest(source=source, filename="vector_add.py", target="cuda:90")).kernels[0]
    raw = export(k.stages["sass"], load_heavy)
    meta = {"gpu": "test-made CSV, not a measurement", "driver": "-", "cuda": "-", "torch": "-", "triton": "-",
            "date": "2026-11-24", "tool": "ncu", "file": "vector_add.py", "kernel": k.name, "launch": 1,
            "source_sha256": hashlib.sha256(source.encode()).hexdigest()}
    p = prof.build(ncu.parse(raw)[0], k.stages["sass"], sm.build(k.stages, "vector_add.py").stages["sass"], meta=meta)
    profiles.save(folder, "vector_add-launch1", p, raw)
    return folder, p


@pytest.fixture(scope="module")
def server_env(saved):
    """The module's server reads that folder (server, browser: tests/browser/conftest.py)."""
    return {"TLENS_PROFILES_DIR": str(saved[0])}


@pytest.fixture(scope="module")
def page(browser, server, saved):
    page = open_app(browser, server, viewport={"width": 1280, "height": 720})
    yield page, saved[1]
    page.close()


def test_heat_bars_drawn(page):
    page, p = page
    page.get_by_role("button", name="Compile", exact=True).click()
    py = page.locator('.tlens-panel[data-stage="source"]')
    expect(py).to_be_visible(timeout=120_000)
    switch_on(page, "Measured heat")
    hot = py.locator(f'.l.heat[data-line="{p.lines[0].python_line}"]')
    expect(hot).to_be_visible(timeout=30_000)
    assert hot.get_attribute("data-heat") == f"{100 * p.lines[0].share:.1f} % of samples"
    assert float(hot.evaluate("e => getComputedStyle(e).getPropertyValue('--heat')")) == pytest.approx(1.0)
    assert "linear-gradient" in hot.evaluate("e => getComputedStyle(e).backgroundImage")
    page.screenshot(path=str(SHOTS / "heat_test_made.png"))


COMMITTED = ROOT / "assets" / "profiles"


@pytest.mark.skipif(not (COMMITTED / "matmul-launch1.json").is_file(), reason="no committed matmul profile")
def test_a_committed_h100_profile_in_the_explorer(page):
    """The matmul profile measured on the H100 (assets/profiles/), opened as a user would at
    1280×720: the label names the GPU, the Python panel's hottest line carries its share, the
    hottest-lines table says which stall dominates. Screenshot: assets/screenshots/
    explorer_profile_1280x720.png with TLENS_SCREENSHOTS=assets."""
    import os
    saved, _ = profiles.load(COMMITTED / "matmul-launch1.json")
    top = saved.lines[0]
    shots = ROOT / "assets" / "screenshots" if os.environ.get("TLENS_SCREENSHOTS") == "assets" else SHOTS
    shots.mkdir(parents=True, exist_ok=True)
    browser = page[0].context.browser                # the module's Chromium; a server of our own
    with running_app() as url:                        # with the default profiles folder
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url + "/?kernel=matmul&target=cuda%3A90&run=1")
        py = page.locator('.tlens-panel[data-stage="source"]')
        expect(py).to_be_visible(timeout=120_000)
        switch_on(page, "Measured heat")
        expect(page.get_by_text(f"measured on {saved.meta['gpu']}").first).to_be_attached(timeout=30_000)
        hot = py.locator(f'.l.heat[data-line="{top.python_line}"]')
        hot.scroll_into_view_if_needed(timeout=30_000)
        expect(hot).to_be_visible(timeout=30_000)
        assert hot.get_attribute("data-heat") == f"{100 * top.share:.1f} % of samples"
        ptx = page.locator('.tlens-panel[data-stage="ptx"] .l.heat').first
        expect(ptx).to_be_attached(timeout=30_000)            # the heat reaches the PTX lines too
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "explorer_profile_1280x720.png"))
        page.close()
