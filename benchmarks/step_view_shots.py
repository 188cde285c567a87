"""Screenshots of the step view in Chromium (issue 57's "looked at"), not a test: a training step
of our own (the sixth lesson's MLP block: forward, backward, compiled AdamW) and a library op of
122 launches (fla-core's chunk_gla, benchmarks/drivers/fla_chunk_gla.py), each opened with
`tlens app FILE` (TLENS_OPEN), the table and its picture photographed into artifacts/screenshots/.

    .venv/bin/python benchmarks/step_view_shots.py [step_control_flow ...]   # some only
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from browser import CHROMIUM, SHOTS, open_app, running_app  # noqa: E402

FILES = {"step_block": ROOT / "assets" / "lessons" / "exercises" / "compile_block.py",
         "step_fla_chunk_gla": ROOT / "benchmarks" / "drivers" / "fla_chunk_gla.py",
         # torch.cond, while_loop and an invoke_subgraph block: the block's kernel and matmuls twice a step
         "step_control_flow": ROOT / "tests" / "snippets" / "compiled" / "control_flow.py",
         # torchao's int8 weight-only model: its matmuls CUDA's _weight_int8pack_mm, outside Triton
         "step_int8_weight_only": ROOT / "tests" / "snippets" / "compiled" / "int8_weight_only.py",
         # nn.RMSNorm as a CUDA build traces it: its kernels named after _fused_rms_norm
         "step_rms_norm": ROOT / "tests" / "snippets" / "compiled" / "rms_norm_train.py"}


def main() -> int:
    from playwright.sync_api import expect, sync_playwright
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM)
        for name, path in FILES.items():
            if sys.argv[1:] and name not in sys.argv[1:]:
                continue
            with running_app({"TLENS_OPEN": str(path)}) as url:
                page = open_app(browser, url)
                title = page.get_by_text("The step:", exact=False).first
                expect(title).to_be_visible(timeout=600_000)
                page.wait_for_timeout(3000)
                print(name, "·", title.inner_text(), flush=True)
                page.locator('[data-testid="stDataFrame"]').first.scroll_into_view_if_needed()
                page.screenshot(path=str(SHOTS / f"{name}.png"))
                page.get_by_text("The step as a picture", exact=False).click()
                svg = page.locator('[data-testid="stGraphVizChart"] svg')
                expect(svg).to_be_visible(timeout=120_000)
                svg.scroll_into_view_if_needed()
                page.screenshot(path=str(SHOTS / f"{name}_picture.png"))
                page.close()
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
