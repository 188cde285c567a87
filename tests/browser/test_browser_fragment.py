"""A Compile reruns the explorer's main area alone (the `main_area` fragment), not the sidebar:
what a class server's CPU per click rests on (docs/06-serving-a-class.md). Read off the page's
websocket in headless Chromium: the Compile's run ends as a fragment's run, sends the panels
again and nothing to the sidebar; a library kernel's first edit, which opens its workspace copy,
reruns the whole page (the sidebar's Kernel picker lists the copy)."""
import time

import pytest

from browser import require_chromium
from editor_helpers import editor_text, fill_editor

require_chromium()

from playwright.sync_api import expect  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

SIDEBAR = 1          # the first index of a delta's path: 0 the main area, 1 the sidebar


@pytest.fixture(scope="module")
def server_env(workspace):
    """The module's server writes a workspace of its own (tests/browser/conftest.py)."""
    return dict(TLENS_WORKSPACE_DIR=str(workspace))


def _runs_after(page, received: list, start: int, timeout_s: float = 120) -> tuple[list, list]:
    """The deltas and the script_finished statuses received after `start`, once a run has ended
    and the page has been quiet for a second (Playwright delivers the frames while it waits)."""
    deadline, quiet = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        n = len(received)
        page.wait_for_timeout(500)
        finished = [m.script_finished for m in received[start:] if m.WhichOneof("type") == "script_finished"]
        if finished and len(received) == n:
            quiet = (quiet or 0) + 1
            if quiet >= 2:
                break
        else:
            quiet = None
    msgs = received[start:]
    return [m for m in msgs if m.WhichOneof("type") == "delta"], \
        [m.script_finished for m in msgs if m.WhichOneof("type") == "script_finished"]


def test_compile_reruns_the_main_area_alone(browser, server):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    received: list = []
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda payload: received.append(ForwardMsg.FromString(payload))
        if isinstance(payload, bytes) else None))
    page.goto(server + "/?kernel=vector_add&target=cuda%3A90&run=1")
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_be_visible(timeout=180_000)
    _runs_after(page, received, 0)

    start = len(received)
    page.get_by_role("button", name="Compile", exact=True).click()
    deltas, finished = _runs_after(page, received, start)
    assert finished and all(f == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY for f in finished), finished
    assert not [d for d in deltas if d.metadata.delta_path[0] == SIDEBAR]            # the sidebar is not sent
    assert any(d.delta.new_element.WhichOneof("type") == "bidi_component" for d in deltas)   # the panels are
    expect(ptx.locator(".l.mem-vec").first).to_contain_text("ld.global.v4.b32")

    # the first edit of a library kernel opens its workspace copy: the whole page runs again
    start = len(received)
    fill_editor(page, editor_text(page) + "\n# mine\n")
    deltas, finished = _runs_after(page, received, start)
    assert ForwardMsg.FINISHED_SUCCESSFULLY in finished, finished
    assert [d for d in deltas if d.metadata.delta_path[0] == SIDEBAR]
    expect(page.get_by_text("Your edits are saved as")).to_be_visible(timeout=30_000)
    page.locator('[data-testid="stSidebar"]').get_by_role("combobox", name="Kernel").click()
    expect(page.get_by_role("option", name="📄 vector_add.py")).to_be_visible(timeout=30_000)   # the picker lists it
    page.keyboard.press("Escape")
