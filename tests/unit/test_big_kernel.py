"""A flash-attention-sized kernel through the engine, the insight and the renderer.

With UNROLL=8 (launch 2) the PTX of Triton 3.6, 3.7 and 3.8 makes the CUDA 12.8/12.9 ptxas
those versions run for sm_90 die of SIGSEGV; the CUDA 13.x ptxas compiles the same PTX
(255 registers), and Triton 3.9 runs CUDA 13.4's for sm_90 (benchmarks/results/ptxas_crash.txt
has the whole matrix). So which outcome is right depends on the ptxas the installed Triton
runs, and each is checked in full: the SASS and its rendering, or every stage up to PTX with
the crash reported in the SASS stage and a command that reproduces it."""
import re
import subprocess

from app.render import stage_html
from inspectors.base import triton_support
from inspectors.base.result import CompileRequest
from inspectors.explain.insight import analyze
from inspectors.read.resources import ptxas_for


def _ptxas_release() -> tuple[int, int]:
    out = subprocess.run([str(ptxas_for(90)), "--version"], capture_output=True, text=True).stdout
    major, minor = re.search(r"release (\d+)\.(\d+)", out).groups()
    return int(major), int(minor)


def _render_checks(stage: str, text: str) -> None:
    html = stage_html.render_stage_html(stage, text)
    assert html.count('<div class="l') == text.count("\n") + (0 if text.endswith("\n") else 1)
    assert html.count('<div class="chunk">') == -(-html.count('<div class="l') // 200)


def test_flash_attention_compiles_and_renders(engine, snippet):
    r = engine.compile(CompileRequest(source=snippet("flash_attention.py"), filename="flash_attention.py",
                                      target="cuda:90"), timeout=240)
    small, big = r.kernels                                  # UNROLL = 1, UNROLL = 8
    assert small.error is None and small.stages["sass"].count("\n") > 1000
    assert big.stages["ttgir"].count("\n") > 1500
    insight = analyze(big, big.stages, "flash_attention.py")
    assert any(m.op.startswith("cp.async") for m in insight.memory_ops)
    if _ptxas_release() < (13, 0):
        # the crash: everything up to PTX is there, the SASS stage says what happened
        assert r.partial and r.error == big.error and big.error.stage == "sass"
        assert big.error.message.startswith("ptxas crashed (SIGSEGV)")
        assert {"ttir", "ttgir", "llir", "ptx"} <= set(big.stages) and "sass" not in big.stages
        assert "--gpu-name=sm_90a" in big.error.command and big.error.command.split()[0] == str(ptxas_for(90))
        assert triton_support.ptxas_tool(90) == "ptxas"           # 3.6-3.8: the CUDA 12 one
        _render_checks("ptx", big.stages["ptx"])
        return
    assert r.ok, r.error
    assert big.stages["sass"].count("\n") > 10_000
    assert insight.resources.registers == 255 and insight.resources.spills > 0   # it spills, and says so
    _render_checks("sass", big.stages["sass"])
