"""The kernel editor (app/components/code_editor) in tests.

AppTest has no driver for custom components: the editor shows up as an element of type
"bidi_component" whose `proto.json` is the data Python sent it. Its text is the plain session
key it edits ("source" on the explorer), which a test sets the way `text_area(...).input()` did.

In Chromium the editor is typed into as a user would (select all, then the text arrives as one
insertion, like a paste); its whole text is read through `tlensText()` on the editor's frame,
since CodeMirror draws only the lines in view.
"""
import json
import time


class Editor:
    """Stands in for `at.text_area(key=...)`: `.value`, `.input(text)` (then `.run()`)."""

    def __init__(self, at, key: str = "source"):
        self.at, self.key = at, key

    @property
    def value(self) -> str:
        return self.at.session_state[self.key]

    def input(self, text: str):
        self.at.session_state[self.key] = text
        return self.at

    def data(self) -> dict:
        """What the page sent the browser's editor: doc, rev, errorLine, errorMessage, ..."""
        found = [el for el in self.at.get("bidi_component") if el.key == f"{self.key}-editor"]
        assert len(found) == 1, f"expected one editor for {self.key!r}, found {len(found)}"
        return json.loads(found[0].proto.json)


def editor(at, key: str = "source") -> Editor:
    return Editor(at, key)


EDITOR = ".tl-editor"


def open_editor(page, timeout_s: float = 120) -> None:
    """The explorer's editor box folds to one line after a kernel's first compile: open it.
    On a loaded machine the page may still be in its first script runs (a rerun redraws the
    editor after the compile part of the page): wait for the editor, opening the box when it
    is drawn folded."""
    box = page.locator(".st-key-tlens-editor")
    content = page.locator(f"{EDITOR} .cm-content").first
    deadline = time.monotonic() + timeout_s

    def ready() -> bool:
        # a box that has just folded (a kernel's first compile folds it) still shows the editor
        # while it animates, for most of a second: `details` keeps its `open` attribute until the
        # animation ends, but its content is `inert` from the start (a click there is lost)
        if box.count() and box.locator('details[open] > [data-testid="stExpanderDetails"]:not([inert])').count() == 0:
            return False
        return content.is_visible()

    while not ready():
        assert time.monotonic() < deadline, "the code editor did not appear"
        summary = box.locator("summary").first
        if box.count() and summary.is_visible() and box.locator("details[open]").count() == 0:
            summary.click()
        page.wait_for_timeout(500)


def fill_editor(page, text: str, nth: int = 0) -> None:
    """Replace the text of the page's nth code editor, through the keyboard."""
    open_editor(page)
    content = page.locator(f"{EDITOR} .cm-content").nth(nth)
    content.click()
    page.keyboard.press("ControlOrMeta+a")
    if text:
        page.keyboard.insert_text(text)
    else:
        page.keyboard.press("Delete")
    assert editor_text(page, nth) == text


def editor_text(page, nth: int = 0) -> str:
    """The whole text of the page's nth code editor."""
    return page.locator(EDITOR).nth(nth).evaluate("el => el.tlensText()")
