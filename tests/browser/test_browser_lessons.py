"""The lessons in headless Chromium, as a teacher at a projector would go through them:
open a link in large type, one click on "Next" per step, a screenshot of every step
(artifacts/screenshots/lessons_*.png), then the Layouts page. The fusion and tiling lessons run
at a projector's 1280×720, with their exercises solved in the page (the screenshots committed
under assets/screenshots/ are copies of these). Skips without Chromium, except in CI where that
is a failure (same server/page fixtures as tests/browser/test_browser.py)."""
import re

import pytest

from browser import SHOTS, require_chromium
from conftest import ROOT, SNIPPETS
from editor_helpers import editor_text, fill_editor

require_chromium()

from playwright.sync_api import expect  # noqa: E402


@pytest.fixture(scope="module")
def page(server, browser):
    """The app once the Lessons link is there (server, browser: tests/browser/conftest.py)."""
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(server)
    expect(page.get_by_text("Lessons", exact=True).first).to_be_visible(timeout=120_000)
    yield page
    page.close()


def _settled(page, timeout=180_000):
    """No spinner left (the graphviz chart and dataframes draw a moment after the run)."""
    page.wait_for_timeout(500)
    expect(page.locator('[data-testid="stSpinner"]')).to_have_count(0, timeout=timeout)


def _drawn(page, lesson: str, step: int):
    """The page marks the end of a step's content; wait for that step's mark."""
    expect(page.locator(f'.tl-done[data-lesson="{lesson}"][data-step="{step}"]')).to_have_count(1, timeout=180_000)
    _settled(page)


TITLES = {"coarsening": "Thread coarsening", "coalescing": "Coalescing", "fusion": "Kernel fusion",
          "tiling": "Tiling and pipelining", "hopper": "Copy engines: cp.async, TMA, warp specialization"}


def _next(page, lesson: str, step: int, total: int):
    page.get_by_role("button", name="Next ▶").click()
    title = TITLES[lesson]
    expect(page.get_by_text(f"{title} · step {step} of {total}")).to_be_visible(timeout=180_000)
    _drawn(page, lesson, step)


def _shot(page, name: str, width: int = 1600, height: int = 1000):
    """The whole step: Streamlit scrolls inside its main block, so grow the window to fit it."""
    full = page.evaluate("document.querySelector('[data-testid=\"stMainBlockContainer\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": max(height, min(int(full) + 120, 6000))})
    page.wait_for_timeout(400)
    page.screenshot(path=str(SHOTS / f"lessons_{name}.png"))
    page.set_viewport_size({"width": width, "height": height})


COARSENING = ["kernel", "block", "ptx", "warps", "occupancy", "gpu", "full"]
COALESCING = ["rows", "cols", "strided", "transpose", "opaque", "ncu"]


def test_coarsening_lesson_on_a_projector(page, server):
    page.goto(f"{server}/lessons?lesson=coarsening&step=1&big=1")
    _drawn(page, "coarsening", 1)
    # large type really applies: the root font is 22px
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "22px"
    _shot(page, "coarsening_1_kernel")
    for i, name in enumerate(COARSENING[1:], start=2):
        _next(page, "coarsening", i, len(COARSENING))
        assert f"step={i}" in page.url
        if name == "block":
            expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
        if name == "ptx":
            expect(page.get_by_text(re.compile(r"ld\.global\.v4\.b32")).first).to_be_visible()
        if name == "gpu":
            expect(page.get_by_text("H100").first).to_be_visible()
        if name == "full":
            page.get_by_role("button", name="Run the full sweep").click()
            expect(page.get_by_text("Each cell: elements per thread")).to_be_visible(timeout=180_000)
            _drawn(page, "coarsening", i)
        _shot(page, f"coarsening_{i}_{name}")
    expect(page.get_by_role("button", name="Next ▶")).to_be_disabled()


def test_coalescing_lesson_step_by_step(page, server):
    page.goto(f"{server}/lessons?lesson=coarsening&step=1&big=1")
    expect(page.get_by_text("Thread coarsening · step 1 of 7")).to_be_visible(timeout=120_000)
    page.get_by_text("Coalescing", exact=True).click()           # the lesson picker, as a teacher would
    _drawn(page, "coalescing", 1)
    expect(page.locator(".tl-sector").first).to_be_visible()
    assert page.locator(".tl-sector").count() == 16              # 512 contiguous bytes
    _shot(page, "coalescing_1_rows")
    for i, name in enumerate(COALESCING[1:], start=2):
        _next(page, "coalescing", i, len(COALESCING))
        if name == "cols":
            assert page.locator(".tl-sector").count() == 32
        if name == "transpose":
            expect(page.locator(".tl-grid").first).to_be_visible()
            expect(page.get_by_text("through shared memory").first).to_be_visible()
        _shot(page, f"coalescing_{i}_{name}")
    expect(page.get_by_text("within ±10 %").first).to_be_visible()


def test_a_link_opens_the_step_and_the_layouts_page(page, server):
    page.goto(f"{server}/lessons?lesson=coalescing&step=3")
    expect(page.get_by_text("Coalescing · step 3 of 6: Strided read")).to_be_visible(timeout=120_000)
    _drawn(page, "coalescing", 3)
    page.goto(f"{server}/layouts?kernel=matmul&target=cuda:80")
    expect(page.get_by_text("mma.sync").first).to_be_visible(timeout=180_000)
    _settled(page)
    expect(page.locator(".tl-grid").first).to_be_visible()
    expect(page.locator('[data-testid="stGraphVizChart"] svg').first).to_be_visible(timeout=60_000)
    _shot(page, "layouts_matmul_sm80")


# ---- the fusion and tiling lessons at a projector's 1280x720 ------------------------------------
FUSION = ["graph", "bytes", "ptx", "inductor", "exercise", "measured", "seed"]
TILING = ["tile", "sm80", "sm90", "blocks", "stages", "grouping", "exercise", "measured"]
HOPPER = ["cpasync", "tma", "warpspec", "measured", "exercise"]


@pytest.fixture()
def projector(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    yield page
    page.close()


def _no_clipping(page):
    """Nothing wider than the window: no page-level horizontal scroll at 1280 px, and no table
    or code block that scrolls sideways inside itself (a projector cannot scroll)."""
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    clipped = page.evaluate("""[...document.querySelectorAll(
            '[data-testid="stTable"], [data-testid="stTable"] > div, [data-testid="stCode"] pre, [data-testid="stDataFrame"]')]
        .filter(d => d.scrollWidth > d.clientWidth + 1 || d.getBoundingClientRect().right > window.innerWidth + 1)
        .map(d => (d.innerText || '').slice(0, 60))""")
    assert clipped == [], clipped


def _solve(page, lesson: str, step: int, label: str, edit):
    """Edit the exercise's kernel in its code editor, then Ctrl-Enter (= Check), wait for the verdict."""
    expect(page.get_by_label(label)).to_be_visible()
    fill_editor(page, edit(editor_text(page)))
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Goal reached.")).to_be_visible(timeout=300_000)
    _drawn(page, lesson, step)


def _run_lesson(page, server, lesson: str, names: list[str], solve):
    page.goto(f"{server}/lessons?lesson={lesson}&step=1&big=1")
    _drawn(page, lesson, 1)
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "22px"
    _no_clipping(page)
    _shot(page, f"{lesson}_1_{names[0]}", 1280, 720)
    for i, name in enumerate(names[1:], start=2):
        _next(page, lesson, i, len(names))
        assert page.locator("text=⟨").count() == 0                   # every figure filled in
        if name == "exercise":
            solve(page, i)
        _no_clipping(page)
        _shot(page, f"{lesson}_{i}_{name}", 1280, 720)
    expect(page.get_by_role("button", name="Next ▶")).to_be_disabled()


def test_fusion_lesson_at_1280x720(projector, server):
    fused = (SNIPPETS / "lesson_fused_v4.py").read_text()
    _run_lesson(projector, server, "fusion", FUSION,
                lambda page, i: _solve(page, "fusion", i, "fuse_bias_relu.py — edit it, then press Check", lambda _: fused))
    expect(projector.get_by_text("Not yet measured on a GPU").or_(projector.get_by_text("GB/s here")).first).to_be_visible()


def test_tiling_lesson_at_1280x720(projector, server):
    _run_lesson(projector, server, "tiling", TILING,
                lambda page, i: _solve(page, "tiling", i, "matmul.py — edit it, then press Check",
                                       lambda text: text.replace("BLOCK_N: int = 256", "BLOCK_N: int = 128")))


def test_hopper_lesson_at_1280x720(projector, server):
    """cp.async → TMA → warp specialization; the exercise solved with the lesson's TMA matmul."""
    tma = (ROOT / "assets" / "lessons" / "hopper" / "tma_matmul.py").read_text()
    _run_lesson(projector, server, "hopper", HOPPER,
                lambda page, i: _solve(page, "hopper", i, "ptr_matmul.py — edit it, then press Check", lambda _: tma))
