"""A flash-attention-sized kernel through the engine, the insight and the renderer."""
from app import render
from inspectors.explain.insight import analyze
from inspectors.base.result import CompileRequest


def test_flash_attention_compiles_and_renders(engine, snippet):
    r = engine.compile(CompileRequest(source=snippet("flash_attention.py"), filename="flash_attention.py",
                                      target="cuda:90"), timeout=240)
    assert r.ok, r.error
    big = r.kernels[1]                                      # UNROLL = 8
    assert big.stages["ttgir"].count("\n") > 1500
    assert big.stages["sass"].count("\n") > 10_000
    insight = analyze(big, big.stages, "flash_attention.py")
    assert insight.resources.registers == 255 and insight.resources.spills > 0   # it spills, and says so
    assert any(m.op.startswith("cp.async") for m in insight.memory_ops)
    html = render.render_stage_html("sass", big.stages["sass"])
    assert html.count('<div class="l') == big.stages["sass"].count("\n") + (0 if big.stages["sass"].endswith("\n") else 1)
    assert html.count('<div class="chunk">') == -(-html.count('<div class="l') // 200)
