"""The kernel editor (CodeMirror 6, app/components/code_editor) in Chromium at 1280×720, a
classroom projector: line numbers, Python colours, the editing keys, typing saved to the
workspace (a reload brings it back), Ctrl-Enter compiles, and an error's line is marked in the
gutter with its message. Screenshots: artifacts/screenshots/editor_1280x720*.png."""
import re
import time

import pytest

from browser import SHOTS, require_chromium
from conftest import ROOT, SNIPPETS
from editor_helpers import editor_text, fill_editor

require_chromium()

from playwright.sync_api import expect  # noqa: E402

VECTOR_ADD = (ROOT / "kernels" / "vector_add.py").read_text()
VIEWPORT = {"width": 1280, "height": 720}


@pytest.fixture(scope="module")
def server_env(workspace):
    """The module's server writes a workspace of its own (server, browser, workspace:
    tests/browser/conftest.py)."""
    return dict(TLENS_WORKSPACE_DIR=str(workspace))


def _open(browser, url, **options):
    page = browser.new_page(viewport=VIEWPORT, **options)
    page.goto(url)
    page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=60_000)
    page.locator(".tl-editor .cm-content").wait_for(timeout=60_000)
    return page


@pytest.fixture(scope="module")
def page(browser, server):
    page = _open(browser, server)
    yield page
    page.close()


def _idle(page):
    """The script has finished its run (the editor's reports each start one)."""
    time.sleep(0.3)
    page.locator('[data-test-script-state="notRunning"]').wait_for(state="attached", timeout=120_000)


def _line_number_box(page, n: int):
    return page.locator(".tl-editor .cm-lineNumbers .cm-gutterElement", has_text=re.compile(rf"^{n}$")).bounding_box()


def test_line_numbers_and_python_colours(page):
    numbers = page.locator(".tl-editor .cm-lineNumbers .cm-gutterElement")
    expect(numbers.filter(has_text=re.compile(r"^1$"))).to_be_visible()
    shown = [t.strip() for t in numbers.all_inner_texts() if t.strip()]
    assert shown[:10] == [str(i) for i in range(1, 11)]
    # a keyword is painted in another colour than a name, at a readable size
    content = page.locator(".tl-editor .cm-content")
    keyword = content.locator("span", has_text=re.compile(r"^import$")).first
    plain = content.locator(".cm-line").first
    assert keyword.evaluate("e => getComputedStyle(e).color") != plain.evaluate("e => getComputedStyle(e).color")
    assert float(content.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 14
    # the whole editor is inside the 1280-wide viewport, next to the sidebar
    box = page.locator(".tl-editor").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"]
    page.screenshot(path=str(SHOTS / "editor_1280x720.png"))


def test_editing_keys(page):
    """Tab / Shift-Tab indent, undo, bracket matching and Ctrl-F search, on a scratch text."""
    fill_editor(page, "def f(x):\nreturn (x + 1)\n")
    content = page.locator(".tl-editor .cm-content")
    content.locator(".cm-line").nth(1).click()
    page.keyboard.press("Home")
    indented, flat = "def f(x):\n    return (x + 1)\n", "def f(x):\nreturn (x + 1)\n"
    page.keyboard.press("Tab")
    assert editor_text(page) == indented
    page.keyboard.press("ControlOrMeta+z")
    assert editor_text(page) == flat
    page.keyboard.press("Control+y")               # redo (Ctrl-Shift-Z too; Playwright sends that as a lowercase z)
    assert editor_text(page) == indented
    page.keyboard.press("Shift+Tab")
    assert editor_text(page) == flat
    page.keyboard.press("Tab")
    page.keyboard.press("End")                     # after ")": both brackets of the pair are marked
    expect(page.locator(".tl-editor .cm-matchingBracket")).to_have_count(2)
    page.keyboard.press("ControlOrMeta+f")
    search = page.locator(".tl-editor .cm-search input[name=search]")
    expect(search).to_be_focused()
    page.keyboard.type("x")
    page.keyboard.press("Enter")
    expect(page.locator(".tl-editor .cm-searchMatch")).to_have_count(2)
    page.keyboard.press("Escape")
    expect(search).to_have_count(0)
    _idle(page)


def test_typing_is_saved_and_survives_a_reload(browser, server, workspace, page):
    fill_editor(page, VECTOR_ADD)
    page.locator(".tl-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+End")
    typed = "# classroom note: r and c are plain letters here\n"
    page.keyboard.type(typed)                      # real key presses; Streamlit's r/c shortcuts stay out
    saved = workspace / "vector_add.py"            # a library kernel's edits become a workspace copy
    deadline = time.time() + 30
    while not (saved.exists() and saved.read_text().endswith(typed)) and time.time() < deadline:
        time.sleep(0.2)
    assert saved.read_text() == VECTOR_ADD + typed  # saved without Compile, within the debounce
    assert (ROOT / "kernels" / "vector_add.py").read_text() == VECTOR_ADD
    _idle(page)
    expect(page).to_have_url(re.compile(r"kernel=ws%3Avector_add\.py"), timeout=30_000)
    page.reload()
    page.locator(".tl-editor .cm-content").wait_for(timeout=60_000)
    assert editor_text(page) == VECTOR_ADD + typed
    # keys typed just before a reload (inside the 300 ms debounce) come back and are saved
    page.locator(".tl-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.type("# and one more\n")
    page.reload()
    page.locator(".tl-editor .cm-content").wait_for(timeout=60_000)
    assert editor_text(page) == VECTOR_ADD + typed + "# and one more\n"
    deadline = time.time() + 30
    while not saved.read_text().endswith("# and one more\n") and time.time() < deadline:
        time.sleep(0.2)
    assert saved.read_text() == VECTOR_ADD + typed + "# and one more\n"
    _idle(page)


def test_ctrl_enter_compiles(page):
    page.locator(".tl-editor .cm-content").click()
    page.keyboard.press("Control+Enter")
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_be_visible(timeout=120_000)
    expect(ptx).to_contain_text("ld.global.v4.b32", timeout=60_000)
    assert page.locator(".tl-editor .tl-error-message").count() == 0
    _idle(page)


def test_typing_during_a_compile_keeps_both(page, workspace):
    """Keys typed while a compile runs neither cancel it nor get lost: the text waits for the run
    to end (a report mid-run would stop it, and a Compile click is not replayed)."""
    # a text no earlier run compiled (results are cached on disk), whose example() takes 4 s
    slow = VECTOR_ADD.replace("def example():\n", f"def example():  # {time.time_ns()}\n    import time; time.sleep(4)\n")
    fill_editor(page, slow)
    page.get_by_role("button", name="Compile", exact=True).click()
    page.locator('[data-test-script-state="running"]').wait_for(state="attached", timeout=30_000)
    time.sleep(1)
    page.locator(".tl-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.type("# typed while compiling\n", delay=30)
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_contain_text("ld.global.v4.b32", timeout=120_000)
    _idle(page)
    assert editor_text(page) == slow + "# typed while compiling\n"
    deadline = time.time() + 30
    while (workspace / "vector_add.py").read_text() != editor_text(page) and time.time() < deadline:
        time.sleep(0.2)
    assert (workspace / "vector_add.py").read_text() == slow + "# typed while compiling\n"
    expect(ptx).to_be_visible()                    # and the panels stay after the text's own run


def test_error_line_marked_in_the_gutter(page):
    broken = (SNIPPETS / "syntax_error.py").read_text()     # "(" never closed on line 7
    fill_editor(page, broken)
    page.keyboard.press("Control+Enter")
    marker = page.locator(".tl-editor .tl-error-marker[title*='line 7']")
    expect(marker).to_be_visible(timeout=60_000)
    assert "syntax error" in marker.get_attribute("title")
    # on the gutter row of line 7, and the message right under that line
    mark, seven = marker.bounding_box(), _line_number_box(page, 7)
    assert abs((mark["y"] + mark["height"] / 2) - (seven["y"] + seven["height"] / 2)) < seven["height"] / 2
    message = page.locator(".tl-editor .tl-error-message")
    expect(message).to_contain_text("syntax error (line 7)")
    assert 0 <= message.bounding_box()["y"] - (seven["y"] + seven["height"]) < 8
    line7 = page.locator(".tl-editor .cm-line.tl-error-line")
    expect(line7).to_have_text(broken.splitlines()[6])
    assert editor_text(page) == broken                       # the text is kept as typed
    page.screenshot(path=str(SHOTS / "editor_1280x720_error.png"))
    # fixing it and compiling again clears the mark
    page.locator(".tl-editor .cm-content").click()
    page.keyboard.press("ControlOrMeta+End")
    page.keyboard.type(")\n")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".tl-editor .tl-error-message")).to_have_count(0, timeout=60_000)


def test_dark_theme(browser, server):
    """With the system in dark mode Streamlit's theme is dark, and so is the editor."""
    page = _open(browser, server, color_scheme="dark")
    try:
        def luminance(css: str) -> float:
            r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
            return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
        editor = page.locator(".tl-editor .cm-editor")
        assert luminance(editor.evaluate("e => getComputedStyle(e).backgroundColor")) < 0.2
        assert luminance(page.locator(".tl-editor .cm-line").first.evaluate("e => getComputedStyle(e).color")) > 0.7
        keyword = page.locator(".tl-editor .cm-content span", has_text=re.compile(r"^import$")).first
        assert luminance(keyword.evaluate("e => getComputedStyle(e).color")) > 0.45     # readable on dark
        page.screenshot(path=str(SHOTS / "editor_1280x720_dark.png"))
    finally:
        page.close()
