"""A driver that calls a library's op, in the real app in headless Chromium: the Python panel
holds the library's file where the kernel is written (its title names it), and a click on
the library's `tl.load` line lights that load in the PTX."""
from pathlib import Path

import pytest

from browser import SHOTS, require_chromium
from editor_helpers import fill_editor

require_chromium()
liger = pytest.importorskip("liger_kernel")

from playwright.sync_api import expect  # noqa: E402

from conftest import SNIPPETS  # noqa: E402

# page: tests/browser/conftest.py


def test_a_library_kernel_line_lights_its_ptx(page):
    fill_editor(page, (SNIPPETS / "liger" / "rms_norm.py").read_text())
    page.get_by_role("button", name="Compile", exact=True).click()
    py = page.locator('.tlens-panel[data-stage="source"]')
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_be_visible(timeout=180_000)
    expect(py).to_contain_text("liger_kernel/ops/rms_norm.py", timeout=30_000)

    library = Path(liger.__file__).parent / "ops" / "rms_norm.py"
    lines = library.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines, 1) if ln.lstrip().startswith("def _rms_norm_forward_kernel("))
    x_row = next(i for i, ln in enumerate(lines, 1) if i > start and "X_row = tl.load(" in ln)
    line = py.locator(f'.l[data-line="{x_row}"]')
    line.scroll_into_view_if_needed()
    line.click()
    lit = ptx.locator(".l.sel", has_text="ld.global")
    expect(lit.first).to_be_visible(timeout=10_000)
    assert lit.count() >= 1
    page.screenshot(path=str(SHOTS / "library_kernel.png"), full_page=True)
