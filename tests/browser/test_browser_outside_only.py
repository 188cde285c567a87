"""`tlens app matmul.py` on a step of no Triton kernel (a compiled matmul alone: cuBLAS's), no GPU:
the page shows the step table of its one call outside Triton and says that there are no stages,
with no error and no stage panel."""
import pytest

from browser import SHOTS, require_chromium
from editor_helpers import editor_text

require_chromium()

from playwright.sync_api import expect  # noqa: E402

MATMUL_ALONE = ("import torch\n\n\ndef example():\n    a = torch.randn(256, 512, device='cuda')\n"
                "    b = torch.randn(512, 128, device='cuda')\n    torch.compile(torch.mm)(a, b)\n")


@pytest.fixture(scope="module")
def server_env(tmp_path_factory, workspace):
    path = tmp_path_factory.mktemp("outside") / "matmul.py"
    path.write_text(MATMUL_ALONE)
    return {"TLENS_OPEN": str(path), "TLENS_WORKSPACE_DIR": str(workspace)}


def test_a_step_of_no_triton_kernel_shows_its_calls_outside_triton(page):
    """Its one call's row and a note that there are no stages, no stage panel, the file's text in
    the editor. (Opened by itself: after a compile that had stage panels, CI kept that compile's
    PTX panel on the page in stops 70 and 71, a local full run once; not reproduced in this module
    or the module before it alone: see the results' slot, app/widgets/results.py.)"""
    expect(page.get_by_text("The step: no Triton launch · 1 call outside Triton · ≈ ")).to_be_visible(timeout=240_000)
    expect(page.get_by_text("torch.compile made no Triton kernel of this step")).to_be_visible(timeout=30_000)
    expect(page.locator('.tlens-panel[data-stage="ptx"]')).to_have_count(0, timeout=10_000)
    assert editor_text(page) == MATMUL_ALONE
    page.screenshot(path=str(SHOTS / "step_outside_only.png"), full_page=False)
