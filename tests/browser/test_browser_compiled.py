"""`tlens app block.py` on a torch.compile driver with `.backward()`, no GPU: the page shows
Inductor's kernels, the launch card says which graph and ops each fuses, and a click on a line
of the model opens the kernel that computes it, its lines lit."""
import pytest

from browser import SHOTS, require_chromium
from conftest import SNIPPETS

require_chromium()

from playwright.sync_api import expect  # noqa: E402


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "block.py"
    path.write_text((SNIPPETS / "compiled" / "block.py").read_text())
    return path


@pytest.fixture(scope="module")
def server_env(opened, workspace):
    return {"TLENS_OPEN": str(opened), "TLENS_WORKSPACE_DIR": str(workspace)}


def test_a_click_on_a_model_line_opens_the_kernel_that_computes_it(page):
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_be_visible(timeout=240_000)
    # every launch compiled (the step's table is drawn once the result is whole): a click on a line
    # while launches still stream in may land on a panel the next poll redraws
    expect(page.get_by_text("The step: 9 launches")).to_be_visible(timeout=240_000)
    # the first launch: the inference graph's LayerNorm, from line 12
    expect(page.get_by_text("torch.compile · inference graph · fuses h")).to_be_visible(timeout=30_000)
    model = page.locator(".tlens-panel", has_text="Your model")
    expect(model).to_be_visible(timeout=30_000)
    expect(model.locator(".l.heat").first).to_contain_text("h = self.norm(x)")
    expect(ptx).to_contain_text(".entry triton_per_fused_native_layer_norm_0")

    # line 13 (Linear + GELU + residual add): its kernel opens, its line lit
    # (the first launch's panels may stay a moment while the page redraws: the new one by its text)
    opened_ptx = page.locator('.tlens-panel[data-stage="ptx"]', has_text=".entry triton_poi_fused_add_addmm_gelu_1")
    model.locator(".l[data-py]", has_text="gelu(self.proj(h))").first.click()
    expect(opened_ptx).to_be_visible(timeout=30_000)
    expect(page.get_by_text("fuses linear, gelu, add")).to_be_visible(timeout=30_000)
    expect(model.locator(".l.heat", has_text="gelu(self.proj(h))")).to_have_count(1, timeout=30_000)
    # the step table lights the rows that compute line 13: its kernels and its cuBLAS matmuls
    lit = page.get_by_text("Line 13 of block.py (clicked in Your model) is computed by the lit rows")
    expect(lit).to_be_visible(timeout=30_000)
    expect(lit).to_contain_text("triton_poi_fused_add_addmm_gelu_1")
    expect(lit).to_contain_text("aten.mm (cuBLAS) × 3")
    expect(model.locator(".l.heat", has_text="self.norm(x)")).to_have_count(0, timeout=30_000)
    # the generated kernel file is the kernel's Python panel
    py = page.locator('.tlens-panel[data-stage="source"]', has_text="@triton.jit").first
    expect(py).to_contain_text("def triton_poi_fused_add_addmm_gelu_1(")
    page.screenshot(path=str(SHOTS / "compiled_model_line.png"), full_page=True)


def test_the_step_table_lists_every_launch_and_a_row_opens_it(page):
    """Issue 57's step at a glance: every launch of the step in one table above the panels (its
    graph, kernel, config, lines, ATen ops); a row picked opens that launch's stages."""
    step = page.get_by_text("The step: 9 launches · 3 inference, 3 forward, 3 backward")
    expect(step).to_be_visible(timeout=240_000)
    grid = page.locator('[data-testid="stDataFrame"]').first
    expect(grid).to_be_visible(timeout=30_000)
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(SHOTS / "step_table.png"), full_page=False)
    box = grid.bounding_box()
    # the row-marker column of the 7th row (the backward graph's GELU-backward reduction); the
    # header and each row are ~35 px tall
    page.mouse.click(box["x"] + 16, box["y"] + 35 + 35 * 6 + 17)
    expect(page.locator('.tlens-panel[data-stage="ptx"]', has_text=".entry triton_per_fused_gelu_gelu_backward_sum_0")
           ).to_be_visible(timeout=60_000)
    expect(page.get_by_text("torch.compile · backward graph")).to_be_visible(timeout=30_000)


def test_the_step_table_estimates_each_launchs_time_on_a_gpu_the_user_picks(page):
    """Issue 57's estimates: the step's time on the target's first GPU in the table's title, each
    row's share; another GPU of the target picked, the estimate is its."""
    on_h200 = page.get_by_text("µs on H200 SXM 141GB (estimated)")
    expect(on_h200).to_be_visible(timeout=240_000)
    before = on_h200.inner_text()
    page.get_by_text("H100 SXM 80GB", exact=True).click()
    on_h100 = page.get_by_text("µs on H100 SXM 80GB (estimated)")
    expect(on_h100).to_be_visible(timeout=30_000)

    def total(text):
        return float(text.split("≈ ")[1].split(" µs")[0].replace(",", ""))
    assert total(on_h100.inner_text()) > total(before)          # the same bytes, at 3.35 TB/s instead of 4.8
    page.screenshot(path=str(SHOTS / "step_table_estimates.png"), full_page=False)


def test_the_step_as_a_picture_joins_lines_to_their_kernels(page):
    """The picture: the model's lines, each graph's kernels and its calls outside Triton."""
    page.get_by_text("The step as a picture", exact=False).click()
    svg = page.locator('[data-testid="stGraphVizChart"] svg')
    expect(svg).to_be_visible(timeout=60_000)
    expect(svg).to_contain_text("13: return x + torch.nn.functional.gelu(self.proj(h))")
    expect(svg).to_contain_text("aten.addmm (cuBLAS)")
    expect(svg).to_contain_text("backward · ")
    svg.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "step_picture.png"), full_page=False)
