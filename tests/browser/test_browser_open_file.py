"""`tlens app FILE.py` (TLENS_OPEN): the explorer opens the file from disk and compiles it; the
user edits it in their own editor, saves, and the page recompiles by itself and says what the
edit changed against the previous compile."""
import pytest

from browser import SHOTS, require_chromium
from conftest import SNIPPETS

require_chromium()

from playwright.sync_api import expect  # noqa: E402

# vadd.py's first launch only: aligned, n % 16 == 0 -> ld.global.v4
ALIGNED = (SNIPPETS / "vadd.py").read_text().split("def example():")[0] + (
    "def example():\n    x, y = torch.rand(4096), torch.rand(4096)\n    add(x, y)\n")


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    folder = tmp_path_factory.mktemp("project")
    path = folder / "my_add.py"
    path.write_text(ALIGNED)
    return path


@pytest.fixture(scope="module")
def server_env(opened, workspace):
    return {"TLENS_OPEN": str(opened), "TLENS_WORKSPACE_DIR": str(workspace)}


def test_the_opened_file_recompiles_when_saved(page, opened):
    ptx = page.locator('.tlens-panel[data-stage="ptx"]')
    expect(ptx).to_be_visible(timeout=180_000)                 # compiled on opening, no click
    expect(page.get_by_text("Watching my_add.py")).to_be_visible(timeout=30_000)
    expect(ptx.locator(".l", has_text="ld.global.v4").first).to_be_attached(timeout=30_000)

    # the user's editor saves a misaligned launch: scalar loads
    opened.write_text(ALIGNED.replace("    add(x, y)\n", "    add(x[1:], y[1:])\n"))
    expect(page.get_by_text("Since the previous compile:")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("loads v4 → v1")).to_be_visible(timeout=10_000)
    page.screenshot(path=str(SHOTS / "open_file_recompiled.png"), full_page=True)
