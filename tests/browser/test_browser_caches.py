"""Caches, torch.compile mode and the pass pipeline in headless Chromium, against a real
server: open the Inductor cache made on an H100, a broken copy, and vector add's pass list.
Screenshots go to artifacts/screenshots/caches_*.png."""
import re
import time

import pytest

from browser import SHOTS, open_app, require_chromium
from conftest import FIXTURES

require_chromium()

from playwright.sync_api import expect  # noqa: E402


@pytest.fixture(scope="module")
def page(browser, server):
    """The Caches page (server, browser: tests/browser/conftest.py)."""
    page = open_app(browser, server)             # the app first: it registers the pages
    page.get_by_role("link", name="Caches & torch.compile").click()
    page.get_by_text("Kernels from caches and torch.compile").wait_for(timeout=60_000)
    yield page
    page.close()


def _choose(page, label: str, option):
    box = page.get_by_role("combobox", name=label)
    box.click()
    box.fill("")                                 # the box filters by what it shows: clear it
    page.get_by_role("option", name=option).first.click()


def _shot(page, name: str):
    time.sleep(0.5)                              # let the last rerun paint
    page.screenshot(path=str(SHOTS / f"caches_{name}.png"), full_page=True)


def test_open_an_inductor_kernel_from_the_h100_cache(page):
    _choose(page, "Folder", re.compile("fixture"))
    expect(page.get_by_text(re.compile(r"^7 kernels in"))).to_be_visible(timeout=30_000)
    _choose(page, "Open a kernel", re.compile(r"^triton_poi_fused_add_relu_0 · cuda:90 · LBYJENOZ"))
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx.locator(".l.mem-vec").first).to_contain_text("ld.global.v4.b32", timeout=60_000)
    py = page.locator('.tlens-panel[data-stage="source"]')
    expect(py).to_contain_text("tmp1 = tl.load(in_ptr1 + (x0), None, eviction_policy='evict_last')")
    # click the bias load in the generated Python: its PTX lights up
    bias = py.locator('.l[data-line="26"]')
    expect(bias).to_contain_text("tmp1 = tl.load(")
    bias.click()
    selected = ptx.locator(".l.sel")
    expect(selected.first).to_be_visible(timeout=10_000)
    assert "evict_last" in " ".join(selected.all_inner_texts())
    page.get_by_role("radio", name="Registers & occupancy").click()   # only the chosen section is drawn
    expect(page.get_by_text("registers / thread")).to_be_attached(timeout=30_000)
    _shot(page, "inductor_kernel")


def test_broken_copy_is_listed_not_crashed_on(page):
    _choose(page, "Folder", "Another folder…")
    box = page.get_by_label("Folder path")
    box.fill(str(FIXTURES / "broken_cache"))
    box.press("Enter")
    expect(page.get_by_text(re.compile(r"^2 kernels in .*2 incomplete or broken"))).to_be_visible(timeout=30_000)
    _choose(page, "Open a kernel", re.compile(r"^add_kernel · cuda:90 · .* · partial$"))
    expect(page.get_by_text("incomplete folder: missing add_kernel.ptx, add_kernel.cubin")).to_be_visible(
        timeout=30_000)
    expect(page.locator('.tlens-panel[data-stage="ttgir"]')).to_be_visible()
    _shot(page, "broken_cache")


def test_torch_compile_mode_without_gpu(page):
    page.get_by_text("torch.compile", exact=True).click()
    expect(page.get_by_text("No GPU on this machine.")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Run torch.compile")).to_be_disabled()
    _choose(page, "Example", "softmax")
    expect(page.locator("textarea").first).to_contain_text("torch.exp(z)")
    _choose(page, "Open a kernel", re.compile(r"^triton_per_fused_div_exp_max_sub_sum_unsqueeze_0"))
    expect(page.locator('.tlens-panel[data-stage="ptx"]')).to_be_visible(timeout=60_000)
    expect(page.locator('.tlens-panel[data-stage="source"]')).to_contain_text("tl.sum(")
    page.get_by_text("No GPU on this machine.").scroll_into_view_if_needed()
    _shot(page, "torch_compile_no_gpu")


def test_pass_list_for_vector_add(page):
    page.get_by_role("link", name="Pass pipeline").click()
    page.get_by_role("button", name="Compile with pass dumps").click()
    heading = page.get_by_role("heading", name=re.compile(r"^\d+ passes: \d+ changed the IR"))
    expect(heading).to_be_visible(timeout=120_000)
    total, changed = map(int, re.findall(r"\d+", heading.inner_text())[:2])
    assert total > 200 and 10 < changed < total
    # the first pass with something to compare: the Canonicalizer's diff, side by side
    table = page.locator(".tlens-diff")
    expect(table).to_be_visible(timeout=30_000)
    _choose(page, "Pass", re.compile(r"TritonGPUCoalesce"))
    # the coalesce pass works on TTGIR; wait for that diff (the previous one may linger during the rerun)
    coalesce = page.locator('.tlens-diff[data-stage="ttgir"]').last
    expect(coalesce.locator("tr.d-change, tr.d-add").first).to_be_visible(timeout=30_000)
    expect(coalesce).to_contain_text("sizePerThread = [4]")
    _shot(page, "passes_vector_add")
