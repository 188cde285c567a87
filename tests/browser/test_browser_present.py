"""A classroom projector (1280×720) and a desktop (1920×1080) in headless Chromium: after
Compile the first panels are on screen; presentation mode gives two panels the screen in
large type with the memory operations and threads one click away; the panels' own controls
(search, wrap, type size, download) work. Screenshots go to artifacts/screenshots/; the
committed ones in assets/screenshots/ are refreshed with
    TLENS_SCREENSHOTS=assets .venv/bin/python -m pytest tests/browser/test_browser_present.py
Skips without Chromium, except in CI."""
import os
import re

import pytest

from browser import SHOTS, require_chromium
from conftest import ROOT

require_chromium()

from playwright.sync_api import expect  # noqa: E402

ASSETS = ROOT / "assets" / "screenshots" if os.environ.get("TLENS_SCREENSHOTS") == "assets" else SHOTS
PROJECTOR = {"width": 1280, "height": 720}

# The visible text extent of a line (a Range over its text: the line's box is as wide as
# the panel), the panel's scroll box without its scrollbars, and a character's width.
GEOMETRY = """line => {
  const scroll = line.closest('.tp-scroll'), t = line.querySelector('.t');
  const range = document.createRange(); range.selectNodeContents(t);
  const text = range.getBoundingClientRect(), box = scroll.getBoundingClientRect();
  return {text: {left: text.left, right: text.right, top: text.top, bottom: text.bottom},
          view: {left: box.left + scroll.clientLeft, top: box.top + scroll.clientTop,
                 right: box.left + scroll.clientLeft + scroll.clientWidth,
                 bottom: box.top + scroll.clientTop + scroll.clientHeight},
          codeLeft: text.left, lineHeight: line.getBoundingClientRect().height};
}"""


@pytest.fixture(scope="module")
def browser(browser):
    """The shared Chromium (server, browser: tests/browser/conftest.py), with ASSETS made."""
    ASSETS.mkdir(parents=True, exist_ok=True)
    return browser


def _panel(page, stage):
    return page.locator(f'.tlens-panel[data-stage="{stage}"][data-ready="1"]')


def _inside(inner: dict, outer: dict) -> bool:
    return (inner["left"] >= outer["left"] - 0.5 and inner["right"] <= outer["right"] + 0.5
            and inner["top"] >= outer["top"] - 0.5 and inner["bottom"] <= outer["bottom"] + 0.5)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=["1280x720", "1920x1080"])
def test_first_panels_on_screen_after_compile(browser, server, size):
    width, height = size
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server)
    compile_button = page.get_by_role("button", name="Compile", exact=True)
    compile_button.wait_for(timeout=60_000)
    box = compile_button.bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= height, box     # on the first screen too
    compile_button.click()
    shown = ("source", "ptx") if width < 1500 else ("source", "ttgir", "ptx")     # two below ~1500 px
    for stage in shown:
        expect(_panel(page, stage).locator(".l").first).to_be_attached(timeout=120_000)
    expect(page.locator(".tlens-panel")).to_have_count(len(shown))
    page.wait_for_timeout(800)                                   # panels size themselves to the screen
    for stage in shown:
        box = _panel(page, stage).bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= height + 1, (stage, box)   # whole panel, no scrolling
        lines = _panel(page, stage).locator(".l").first.evaluate(GEOMETRY)
        assert (lines["view"]["bottom"] - lines["view"]["top"]) / lines["lineHeight"] >= 12, (stage, lines)
    scrolled = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTop || window.scrollY")
    assert scrolled == 0
    page.screenshot(path=str(ASSETS / f"explorer_{width}x{height}.png"))
    page.close()


@pytest.fixture(scope="module")
def present(browser, server):
    page = browser.new_page(viewport=PROJECTOR)
    page.goto(server + "/?kernel=vector_add&present=1&run=1")
    expect(page.locator('.tlens-panel[data-mode="present"]')).to_have_count(2, timeout=120_000)
    page.wait_for_timeout(800)
    yield page
    page.close()


def test_presentation_mode_gives_two_panels_the_screen(present):
    page = present
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    expect(page.locator(".st-key-tlens-editor")).to_be_hidden()
    expect(page.locator(".tlens-panel")).to_have_count(2)
    expect(page.locator("strong:visible", has_text="vector_add.py").first).to_be_visible()   # the one line instead
    for stage in ("source", "ptx"):
        panel = _panel(page, stage)
        box = panel.bounding_box()
        assert box["y"] + box["height"] <= PROJECTOR["height"] + 1 and box["width"] >= 560, box
        line = panel.locator(".l", has_text=".address_size" if stage == "ptx" else "import torch").first
        g = line.evaluate(GEOMETRY)
        char = (g["text"]["right"] - g["text"]["left"]) / len(line.inner_text().expandtabs(4))
        columns = (g["view"]["right"] - g["codeLeft"]) / char
        rows = (g["view"]["bottom"] - g["view"]["top"]) / g["lineHeight"]
        assert columns >= 60 and rows >= 25, (stage, columns, rows)
        assert char >= 8.0                                       # large type: 12.5 px gives 7.5 px characters


def test_presentation_mode_shows_the_v4_load_whole(present):
    page = present
    py, ptx = _panel(page, "source"), _panel(page, "ptx")
    py.locator(".l[data-py]", has_text="x = tl.load(").first.click()
    v4 = ptx.locator(".l.sel", has_text="ld.global.v4.b32").first
    expect(v4).to_be_visible(timeout=10_000)
    page.wait_for_timeout(1500)                                  # the rerun the click starts has ended
    g = v4.evaluate(GEOMETRY)
    viewport = {"left": 0, "top": 0, "right": PROJECTOR["width"], "bottom": PROJECTOR["height"]}
    assert _inside(g["text"], viewport), g                       # on the screen
    assert _inside(g["text"], g["view"]), g                      # and not clipped by its panel
    assert v4.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 224, 138)"
    page.screenshot(path=str(ASSETS / "presentation_1280x720.png"))


def test_memory_ops_and_threads_one_click_away(present):
    page = present
    page.get_by_role("button", name="Memory").click()
    body = page.locator('[data-testid="stPopoverBody"]')
    expect(body.locator("table").first).to_contain_text("ld.global.v4.b32", timeout=10_000)
    expect(body.get_by_text("global memory instructions")).to_be_visible()
    box = body.locator("table").first.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PROJECTOR["width"]      # no column cut off
    page.screenshot(path=str(ASSETS / "presentation_memory_ops.png"))
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Threads").click()
    expect(body.get_by_text("its 128 threads hold 8 each")).to_be_visible(timeout=10_000)
    expect(body.locator("table").first).to_contain_text("1024·ctaid.x")
    page.screenshot(path=str(ASSETS / "presentation_threads.png"))
    page.keyboard.press("Escape")


def test_panel_controls_wrap_size_download(present):
    page = present
    ptx = _panel(page, "ptx")
    size = lambda: float(ptx.locator(".tp-scroll").evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))  # noqa
    before = size()
    ptx.get_by_role("button", name="Larger text (every panel)").click()
    assert size() == pytest.approx(before * 1.1, rel=0.02)
    ptx.get_by_role("button", name="Smaller text (every panel)").click()
    assert size() == pytest.approx(before, rel=0.02)

    py = _panel(page, "source")
    long_line = py.locator(".l", has_text="With BLOCK_SIZE=1024").first
    one_row = long_line.bounding_box()["height"]
    py.get_by_role("button", name="Wrap long lines").click()
    assert long_line.bounding_box()["height"] >= 1.9 * one_row          # wrapped onto two rows or more
    py.get_by_role("button", name="Wrap long lines").click()
    assert long_line.bounding_box()["height"] == pytest.approx(one_row, abs=1)

    with page.expect_download() as download:
        ptx.get_by_role("button", name="Download PTX").click()
    assert download.value.suggested_filename == "add_kernel.ptx"
    text = open(download.value.path()).read()
    assert text.count("\n") == int(ptx.get_attribute("data-lines"))
    assert "ld.global.v4.b32" in text and text.startswith("//")


def test_leave_and_enter_presentation_mode(present):
    page = present
    page.get_by_role("button", name="✕ Exit").click()
    expect(page.locator('[data-testid="stSidebar"]')).to_be_visible(timeout=30_000)
    expect(page.locator(".tlens-panel")).to_have_count(2, timeout=30_000)     # the explorer's two at 1280 px
    assert "present=1" not in page.url
    page.locator('[data-testid="stSidebar"]').get_by_text("Presentation mode").click()
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden(timeout=30_000)
    expect(page).to_have_url(re.compile(r"[?&]present=1"), timeout=30_000)


def test_lessons_use_the_same_mode(browser, server):
    page = browser.new_page(viewport=PROJECTOR)
    page.goto(server + "/lessons?lesson=coalescing&step=1&big=1")
    expect(page.locator('.tl-done[data-lesson="coalescing"][data-step="1"]')).to_have_count(1, timeout=180_000)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "22px"
    expect(page.locator('[data-testid="stSpinner"]')).to_have_count(0, timeout=180_000)
    expect(page.locator('[data-testid="stDataFrame"] canvas').first).to_be_visible(timeout=60_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ASSETS / "lesson_presentation_1280x720.png"))
    # the other classroom lesson, at the step whose PTX is the point (the coarsened v4 loads)
    page.goto(server + "/lessons?lesson=coarsening&step=3&big=1")
    expect(page.locator('.tl-done[data-lesson="coarsening"][data-step="3"]')).to_have_count(1, timeout=180_000)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    expect(page.locator('[data-testid="stSpinner"]')).to_have_count(0, timeout=180_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ASSETS / "lesson_coarsening_1280x720.png"))
    page.close()


def test_a_rerun_does_not_resend_unchanged_panels(browser, server):
    """A click on a line reruns the page (the URL keeps the followed line): the panels' data is
    unchanged, so Streamlit sends a reference to what the browser has, and the panels' code
    does not run again."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    page = browser.new_page(viewport=PROJECTOR)
    frames = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    page.goto(server + "/?kernel=vector_add&present=1&run=1")
    expect(_panel(page, "ptx").locator(".l").first).to_be_attached(timeout=120_000)
    page.wait_for_timeout(1000)

    def sent():
        names = []
        for raw in frames:
            msg = ForwardMsg.FromString(raw if isinstance(raw, bytes) else raw.encode())
            if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element" \
                    and msg.delta.new_element.WhichOneof("type") == "bidi_component":
                names.append(msg.delta.new_element.bidi_component.component_name)
        return names

    assert sent().count("tlens_stage_panel") == 2                 # the first run sent both
    invoked = page.evaluate("window.__tlensStage.invoked")
    frames.clear()
    _panel(page, "ptx").locator(".l[data-py]").nth(3).click()
    expect(page).to_have_url(re.compile(r"[?&]line=\d+"), timeout=30_000)     # the rerun happened
    page.wait_for_timeout(1000)
    # the followed line only; the window's width and the editor (a few KB each: its module is a
    # static file) every run sends, as Streamlit sends a reference only for messages of 10 KB or more
    assert [n for n in sent() if n not in ("tlens_viewport", "triton_lens.code_editor")] == ["tlens_page_state"]
    assert page.evaluate("window.__tlensStage.invoked") == invoked
    page.close()
