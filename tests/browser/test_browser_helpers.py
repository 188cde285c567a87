"""Lines inside `@triton.jit` helpers in the real app (issue 21), in headless Chromium:
clicking the helper's load lights the loads of both calls in the PTX, each saying which
call made it; clicking one call lights only what that call made."""

from browser import SHOTS, require_chromium
from editor_helpers import fill_editor

require_chromium()

from playwright.sync_api import expect  # noqa: E402

SOURCE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _load_block(ptr, offs, mask):
    return tl.load(ptr + offs, mask=mask)


@triton.jit
def two_calls_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = _load_block(x_ptr, offs, offs < n)
    b = _load_block(y_ptr, offs, offs < n)
    tl.store(out_ptr + offs, a + b, mask=offs < n)


def example():
    x, y = torch.randn(4096), torch.randn(4096)
    two_calls_kernel[(8,)](x, y, torch.empty_like(x), x.numel(), BLOCK=512)
'''
HELPER, FIRST, SECOND = 8, 14, 15       # the helper's load, its two calls

# page: tests/browser/conftest.py


def test_helper_line_and_call_sites_in_the_browser(page):
    lines = SOURCE.splitlines()
    assert "tl.load(" in lines[HELPER - 1] and "_load_block(x_ptr" in lines[FIRST - 1] \
        and "_load_block(y_ptr" in lines[SECOND - 1]
    fill_editor(page, SOURCE)
    page.get_by_role("button", name="Compile", exact=True).click()
    py = page.locator('.tlens-panel[data-stage="source"]')
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_be_visible(timeout=120_000)
    loads = ptx.locator(".l.sel", has_text="ld.global")

    py.locator(f'.l[data-line="{HELPER}"]').click()
    expect(loads).to_have_count(2, timeout=10_000)            # one per call
    said = sorted(loads.nth(i).get_attribute("data-from") for i in range(2))
    assert said == [f"from line {FIRST}", f"from line {SECOND}"]
    # the call is written on the line, after the code (the stylesheet's ::after)
    after = loads.first.evaluate("e => getComputedStyle(e, '::after').content")
    assert after.startswith('"  from line 1'), after
    page.screenshot(path=str(SHOTS / "helper_line.png"), full_page=True)

    py.locator(f'.l[data-line="{SECOND}"]').click()
    expect(loads).to_have_count(1, timeout=10_000)            # only what the second call made
    assert loads.first.get_attribute("data-from") == f"from line {SECOND}"
    # and back: a click on that PTX load follows the helper's own line
    loads.first.click()
    expect(py.locator(".l.sel")).to_have_count(1, timeout=10_000)
    expect(py.locator(".l.sel").first).to_have_attribute("data-line", str(HELPER))
