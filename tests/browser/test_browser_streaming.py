"""A file of eleven launches opened from disk (`tlens app many_launches.py`), a cold Triton
cache: the page shows the first launch's Python and PTX, and "k of 11 launches compiled", while
the later launches are still compiling. The last launch, picked in the preview's own picker, is compiled
next and shown while the rest still compile (the compile goes on in its own thread; the pick is a
new run that waits for it and asks the job for that launch first); when all are done the preview
gives way to the finished page, opened at the launch picked."""
import re

import pytest

from browser import SHOTS, require_chromium
from conftest import SNIPPETS

require_chromium()

from playwright.sync_api import expect  # noqa: E402

# In one animation frame of the page: the preview's PTX panel is there (`data-preview`: the
# finished page's panels are `data-stage`), and its line says some
# but not all launches are compiled (k of N, 1 <= k < N).
STREAMING = """() => {
  const m = document.body.innerText.match(/Compiling: (\\d+) of (\\d+) launches compiled/);
  const ptx = document.querySelector('.tlens-panel[data-preview="ptx"]');
  if (!m || !ptx) return null;
  const k = +m[1], n = +m[2];
  return (k >= 1 && k < n && ptx.innerText.includes('.entry scale_kernel')) ? [k, n] : null;
}"""

# Launch 11 picked (the last matmul tile) shown in the preview while some launches still compile.
PICKED = """() => {
  const text = document.body.innerText;
  const m = text.match(/Compiling: (\\d+) of (\\d+) launches compiled/);
  const ptx = document.querySelector('.tlens-panel[data-preview="ptx"]');
  if (!m || !ptx) return null;
  const k = +m[1], n = +m[2];
  return (k < n && text.includes('launch 11: matmul_kernel') && ptx.innerText.includes('.entry matmul_kernel')) ? [k, n] : null;
}"""


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    path = tmp_path_factory.mktemp("streaming") / "many_launches.py"
    path.write_text((SNIPPETS / "streaming" / "many_launches.py").read_text())
    return path


@pytest.fixture(scope="module")
def server_env(opened, workspace, tmp_path_factory):
    return {"TLENS_OPEN": str(opened), "TLENS_WORKSPACE_DIR": str(workspace),
            "TLENS_TRITON_CACHE_DIR": str(tmp_path_factory.mktemp("cold-cache"))}


def test_the_first_launch_is_shown_while_the_rest_compile(page):
    got = page.wait_for_function(STREAMING, timeout=240_000, polling="raf").json_value()
    assert got[1] == 11 and 1 <= got[0] < 11
    page.screenshot(path=str(SHOTS / "streaming_first_launch.png"), full_page=True)

    # the last launch picked at once: compiled next (not last), shown while the others still compile
    box = page.get_by_role("combobox", name=re.compile("Launch \\(11 launches"))
    box.click()
    page.get_by_role("option", name=re.compile(r"^11\. matmul_kernel")).click()
    got = page.wait_for_function(PICKED, timeout=240_000, polling="raf").json_value()
    assert 1 <= got[0] < 11
    # every launch is listed at once, the finished ones ticked
    expect(page.get_by_text("1. scale_kernel", exact=False).first).to_be_visible()
    expect(page.get_by_text("11. matmul_kernel", exact=False).first).to_be_visible()
    page.screenshot(path=str(SHOTS / "streaming_picked_launch.png"), full_page=True)

    # done: the preview is gone, the launch picker and the panels are the finished page's, at launch 11
    expect(page.get_by_text("launches compiled")).to_have_count(0, timeout=240_000)
    expect(page.get_by_text("Launch (11 specializations)")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("combobox", name="Launch (11 specializations)")
           ).to_have_value(re.compile(r"^11\. matmul_kernel"), timeout=60_000)
    expect(page.locator('.tlens-panel[data-stage="ptx"]').first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("matmul_kernel for cuda:90", exact=False).first).to_be_visible()   # its launch card
