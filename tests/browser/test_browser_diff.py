"""History, Compare, workspace and links in headless Chromium, against a real server with a
workspace folder of its own. Screenshots go to artifacts/screenshots/."""
import re
import time
import zipfile

import pytest

from browser import SHOTS, require_chromium
from conftest import ROOT
from editor_helpers import editor_text, fill_editor, open_editor

require_chromium()

from playwright.sync_api import expect  # noqa: E402


VECTOR_ADD = (ROOT / "kernels" / "vector_add.py").read_text()
SMALL_BLOCK = VECTOR_ADD.replace("BLOCK_SIZE: int = 1024", "BLOCK_SIZE: int = 128")


@pytest.fixture(scope="module")
def server_env(workspace):
    """The module's server writes a workspace of its own (server, browser, page, workspace:
    tests/browser/conftest.py)."""
    return dict(TLENS_WORKSPACE_DIR=str(workspace))


def _compile(page):
    page.get_by_role("button", name="Compile", exact=True).click()


def test_edit_compile_edit_compare(page, workspace):
    """The question users bring: "I changed one line — what happened to the PTX?"."""
    fill_editor(page, SMALL_BLOCK)
    _compile(page)
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx.locator(".l.mem-scalar").first).to_be_visible(timeout=120_000)
    assert ptx.locator(".l.mem-vec").count() == 0            # BLOCK 128, 4 warps: one element per thread

    fill_editor(page, VECTOR_ADD)
    _compile(page)
    expect(ptx.locator(".l.mem-vec").first).to_contain_text("ld.global.v4.b32", timeout=120_000)
    # both edits were saved to the workspace as a copy; the library file is untouched
    assert (workspace / "vector_add.py").read_text() == VECTOR_ADD
    assert (ROOT / "kernels" / "vector_add.py").read_text() == VECTOR_ADD

    page.get_by_role("button", name=re.compile(r"\bCompare$")).click()
    expect(page.get_by_role("heading", name=re.compile(r"^loads v1 → v4, stores v1 → v4"))).to_be_visible(
        timeout=120_000)
    table = page.locator(".tlens-diff[data-stage='ptx']")
    expect(table).to_be_visible()
    changed = table.locator("tr.d-change", has_text="ld.global.v4.b32").first
    expect(changed).to_contain_text("ld.global.b32")        # the scalar load, side by side with its v4
    expect(changed.locator("td.b .dx").first).to_have_text("v4.")
    # painted: the changed words of B are green
    assert changed.locator("td.b .dx").first.evaluate("e => getComputedStyle(e).backgroundColor") == \
        "rgb(159, 223, 176)"
    table.scroll_into_view_if_needed()
    page.set_viewport_size({"width": 1600, "height": 1900})
    time.sleep(0.5)
    page.screenshot(path=str(SHOTS / "compare_with_previous.png"), full_page=True)
    page.set_viewport_size({"width": 1600, "height": 1000})


def test_noise_toggle_changes_the_count(page):
    legend = page.locator(".tlens-chip.d-change")
    with_noise_ignored = legend.inner_text()
    page.get_by_text("Ignore noise").click()
    expect(legend).not_to_have_text(with_noise_ignored, timeout=30_000)
    changed = int(legend.inner_text().split()[0])
    assert changed > int(with_noise_ignored.split()[0])      # renumbered registers count as changes now
    page.get_by_text("Ignore noise").click()
    expect(legend).to_have_text(with_noise_ignored, timeout=30_000)


def test_refresh_reopens_the_edited_kernel(page):
    page.get_by_role("link", name="Explorer").click()
    page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=60_000)
    expect(page).to_have_url(re.compile(r"kernel=ws%3Avector_add\.py"), timeout=30_000)
    page.reload()
    expect(page.locator('.tlens-panel[data-stage="ptx"]')).to_be_visible(timeout=120_000)   # run=1 in the URL
    open_editor(page)
    expect(page.locator(".tl-editor .cm-content")).to_be_visible(timeout=30_000)
    assert editor_text(page) == VECTOR_ADD
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Workspace", exact=True).click()        # its file list is drawn when it opens
    expect(sidebar).to_contain_text("vector_add.py", timeout=30_000)


def test_export_zip_download(page):
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name=re.compile(r"\bZip$")).click()
    z = zipfile.ZipFile(download.value.path())
    names = z.namelist()
    assert download.value.suggested_filename == "vector_add-cuda_90.zip"
    report = z.read("vector_add-cuda_90/report.md").decode()
    assert "| global loads by width | v4.b32 × 4 |" in report
    assert "vector_add-cuda_90/launch-1-add_kernel/add_kernel.sass" in names


def test_a_shared_link_opens_the_same_view(browser, server):
    student = browser.new_page(viewport={"width": 1600, "height": 1000})
    student.goto(server + "/?kernel=softmax&target=cuda%3A80&num_warps=8&panels=source%2Cptx&run=1")
    ptx = student.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_contain_text(".target sm_80", timeout=120_000)
    assert student.locator(".tlens-panel").count() == 2
    expect(student.get_by_text("num_warps=8").first).to_be_visible()
    student.close()


def test_compare_two_option_sets(browser, server):
    p = browser.new_page(viewport={"width": 1600, "height": 1000})
    p.goto(server + "/compare")
    p.get_by_text("One kernel, two option sets").click()
    boxes = p.get_by_label("constexpr overrides")
    expect(boxes).to_have_count(2, timeout=30_000)
    boxes.nth(0).fill("BLOCK_SIZE=128")
    boxes.nth(1).fill("BLOCK_SIZE=1024")
    p.get_by_role("button", name="Build A and B").click()
    expect(p.get_by_role("heading", name=re.compile(r"^loads v1 → v4"))).to_be_visible(timeout=120_000)
    expect(p.locator(".tlens-diff[data-stage='ptx']")).to_be_visible()
    p.close()
