"""The first screen of a new user at 1280×720 (a classroom projector) in headless Chromium:
after Compile the panels open where the kernel is, without a click — the Python panel at the
launched kernel (line 27, `x = tl.load(`, in view) and the PTX panel at its first global load
(`ld.global.v4.b32`) — in the explorer and in presentation mode; two panels below ~1500 px,
a third one added on demand; "⤓ load" jumps to the first global load; and the first edit of a
library kernel (which makes the workspace copy) keeps the editor's cursor and scroll.
Screenshots: artifacts/screenshots/first_screen_*.png."""
import time

import pytest

from browser import SHOTS, require_chromium

require_chromium()

from playwright.sync_api import expect  # noqa: E402

VIEW = {"width": 1280, "height": 720}

# The line's text box, its panel's scroll box (without scrollbars), both in page pixels.
BOXES = """line => {
  const scroll = line.closest('.tp-scroll'), t = line.querySelector('.t');
  const range = document.createRange(); range.selectNodeContents(t);
  const text = range.getBoundingClientRect(), box = scroll.getBoundingClientRect();
  return {text: {top: text.top, bottom: text.bottom, left: text.left},
          view: {top: box.top + scroll.clientTop, bottom: box.top + scroll.clientTop + scroll.clientHeight,
                 left: box.left, right: box.left + scroll.clientWidth}};
}"""


@pytest.fixture(scope="module")
def server_env(workspace):
    """The module's server writes a workspace of its own (server, browser, workspace:
    tests/browser/conftest.py)."""
    return dict(TLENS_WORKSPACE_DIR=str(workspace))


def _panel(page, stage):
    return page.locator(f'.tlens-panel[data-stage="{stage}"][data-ready="1"]')


def _idle(page):
    time.sleep(0.3)
    page.locator('[data-test-script-state="notRunning"]').wait_for(state="attached", timeout=120_000)


def _on_screen(line) -> dict:
    """The line is drawn inside its panel's view and inside the window; returns its boxes."""
    expect(line).to_be_attached(timeout=10_000)
    g = line.evaluate(BOXES)
    assert g["view"]["top"] - 0.5 <= g["text"]["top"] and g["text"]["bottom"] <= g["view"]["bottom"] + 0.5, g
    assert 0 <= g["text"]["top"] and g["text"]["bottom"] <= VIEW["height"], g
    return g


def _opened_where_the_kernel_is(page) -> None:
    py, ptx = _panel(page, "source"), _panel(page, "ptx")
    for panel in (py, ptx):
        expect(panel).to_have_attribute("data-opened", "start" if panel == py else "load", timeout=120_000)
    page.wait_for_timeout(800)                          # panels size themselves to the screen
    line27 = py.locator('.l[data-line="27"]')
    assert "x = tl.load(" in line27.inner_text()
    _on_screen(line27)
    _on_screen(py.locator('.l[data-line="16"]'))        # the kernel's @triton.jit is the panel's first line
    assert "@triton.jit" in py.locator('.l[data-line="16"]').inner_text()
    _on_screen(ptx.locator(".l", has_text="ld.global.v4.b32").first)
    assert page.locator(".tlens-panel .l.sel").count() == 0      # no line was clicked or followed


def test_explorer_opens_two_panels_where_the_kernel_is(browser, server):
    page = browser.new_page(viewport=VIEW)
    page.goto(server)
    page.get_by_role("button", name="Compile", exact=True).click()
    _opened_where_the_kernel_is(page)
    expect(page.locator(".tlens-panel")).to_have_count(2)       # Python + PTX below 1500 px
    for panel in (_panel(page, "source"), _panel(page, "ptx")):
        assert panel.bounding_box()["width"] >= 420             # not three ~310 px columns
    page.screenshot(path=str(SHOTS / "first_screen_1280x720.png"))
    _idle(page)

    # "⤓ load" brings the first global load back after scrolling away
    ptx = _panel(page, "ptx")
    ptx.locator(".tp-scroll").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    page.wait_for_timeout(300)
    assert not ptx.locator(".l", has_text="ld.global.v4.b32").count() or \
        ptx.locator(".l", has_text="ld.global.v4.b32").first.evaluate(BOXES)["text"]["top"] < \
        ptx.locator(".tp-scroll").evaluate("e => e.getBoundingClientRect().top")
    ptx.get_by_role("button", name="Jump to the first global load").click()
    _on_screen(ptx.locator(".l", has_text="ld.global.v4.b32").first)

    # a third panel is one pick away
    stages = page.locator('[data-testid="stMultiSelect"]').first
    stages.click()
    page.get_by_role("option", name="TTGIR").click()
    page.keyboard.press("Escape")
    expect(page.locator(".tlens-panel")).to_have_count(3, timeout=60_000)
    expect(_panel(page, "ttgir")).to_have_attribute("data-opened", "start", timeout=60_000)
    _on_screen(_panel(page, "ttgir").locator(".l", has_text="tt.load").first)
    page.close()


def test_presentation_mode_opens_where_the_kernel_is(browser, server):
    page = browser.new_page(viewport=VIEW)
    page.goto(server + "/?kernel=vector_add&present=1&run=1")
    expect(page.locator('.tlens-panel[data-mode="present"]')).to_have_count(2, timeout=120_000)
    _opened_where_the_kernel_is(page)
    page.screenshot(path=str(SHOTS / "first_screen_present_1280x720.png"))
    _idle(page)
    page.close()


def test_wide_window_opens_three_panels(browser, server):
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(server)
    page.get_by_role("button", name="Compile", exact=True).click()
    for stage in ("source", "ttgir", "ptx"):
        expect(_panel(page, stage)).to_have_attribute("data-opened", "start" if stage != "ptx" else "load",
                                                      timeout=120_000)
    expect(page.locator(".tlens-panel")).to_have_count(3)
    _idle(page)
    page.close()


def test_first_edit_of_a_library_kernel_keeps_the_cursor(browser, server, workspace):
    page = browser.new_page(viewport=VIEW)
    page.goto(server + "/?kernel=vector_add")
    content = page.locator(".tl-editor .cm-content")
    content.wait_for(timeout=60_000)
    _idle(page)
    content.click()
    page.keyboard.press("ControlOrMeta+Home")
    for _ in range(26):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    page.keyboard.type("  # mine")
    page.keyboard.press("Control+Enter")
    expect(_panel(page, "ptx")).to_be_attached(timeout=120_000)
    _idle(page)
    deadline = time.time() + 30
    while not (workspace / "vector_add.py").exists() and time.time() < deadline:
        time.sleep(0.2)
    assert "mask=mask)  # mine\n" in (workspace / "vector_add.py").read_text()      # the copy was made
    expect(page.get_by_text("Your edits are saved as")).to_be_visible()
    page.wait_for_timeout(500)
    editor = page.locator(".tl-editor .cm-editor")
    assert "cm-focused" in editor.get_attribute("class")                              # the cursor is still there
    active = page.locator(".tl-editor .cm-lineNumbers .cm-activeLineGutter")
    expect(active).to_have_text("27")
    line = page.locator(".tl-editor .cm-activeLine")
    assert line.inner_text().endswith("mask=mask)  # mine")
    box, scroller = line.bounding_box(), page.locator(".tl-editor .cm-scroller").bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= VIEW["height"], box            # on screen
    assert scroller["y"] <= box["y"] and box["y"] + box["height"] <= scroller["y"] + scroller["height"] + 1
    page.keyboard.type("!")                                 # and typing goes on where it was
    assert line.inner_text().endswith("# mine!")
    page.screenshot(path=str(SHOTS / "first_screen_editor_1280x720.png"))
    _idle(page)
    page.close()


def test_a_followed_line_keeps_its_own_place(browser, server):
    """A link (or a lesson step) that names a line opens the panels there, not at the load."""
    page = browser.new_page(viewport=VIEW)
    page.goto(server + "/?kernel=vector_add&present=1&run=1&line=29")
    ptx = _panel(page, "ptx")
    store = ptx.locator(".l.sel", has_text="st.global").first
    expect(store).to_be_attached(timeout=120_000)
    page.wait_for_timeout(800)
    _on_screen(store)
    _on_screen(_panel(page, "source").locator('.l.sel[data-line="29"]'))
    _idle(page)
    page.close()
