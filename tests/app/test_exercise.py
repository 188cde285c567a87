"""Exercise mode: a goal is checked from the compile (PTX memory operations, instruction
families, registers and occupancy), never from the source text. A correct edit passes and a
wrong one fails, through the engine and through the Lessons page's Check button."""
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, SNIPPETS
from editor_helpers import editor
from inspectors.base.result import CompileRequest
from inspectors.explain import exercise
from inspectors.read.lessonfile import Check
from inspectors.store import lessons as store
import kernels

APP = str(ROOT / "app" / "main.py")
STARTER = ROOT / "assets" / "lessons" / "exercises" / "fuse_bias_relu.py"


def _exercise(slug: str):
    lesson = store.read_lesson(ROOT / "assets" / "lessons" / f"{slug}.md")
    return next((i + 1, s.exercise) for i, s in enumerate(lesson.steps) if s.exercise)


def _verdict(engine, source: str, slug: str, filename: str):
    _, ex = _exercise(slug)
    result = engine.compile(CompileRequest(source=source, filename=filename, target=ex.target, sass=False))
    assert result.ok, result.error
    return (exercise.check(ex.checks, exercise.metrics(result.kernels, ex.function, result.outside)),
            exercise.metrics(result.kernels, outside=result.outside))


def test_fusion_exercise_passes_a_fused_v4_kernel_and_fails_the_others(engine):
    start, m = _verdict(engine, STARTER.read_text(), "fusion", STARTER.name)
    assert not start.passed and (m["kernels"], m["load_vector_min"]) == (2, 1)
    ok, m = _verdict(engine, (SNIPPETS / "lesson_fused_v4.py").read_text(), "fusion", STARTER.name)
    assert ok.passed, [r.describe() for r in ok.results]
    assert (m["kernels"], m["global_loads"], m["global_stores"], m["load_vector_min"]) == (1, 2, 1, 4)
    narrow, _ = _verdict(engine, (SNIPPETS / "lesson_fused_scalar.py").read_text(), "fusion", STARTER.name)
    assert [r.passed for r in narrow.results] == [True, False]          # fused, but XBLOCK 128: scalar loads


def test_torch_compile_exercise_passes_a_fused_forward_and_fails_the_graph_break(engine):
    """The sixth lesson's exercise: the starter's `if` on a tensor breaks the forward graph (5
    Triton kernels); a clamp kept as a tensor op fuses again (3); dropping the Linear layers
    would fuse too, but the check on their cuBLAS calls fails it."""
    starter = ROOT / "assets" / "lessons" / "exercises" / "compile_block_break.py"
    text = starter.read_text()
    start, m = _verdict(engine, text, "torch_compile", starter.name)
    assert not start.passed and m["forward_kernels"] == 5 and m["outside_calls"] == 6
    fixed = text.replace("        if h.abs().max() > 1e4:          # a guard against overflow, on the tensor's value\n"
                         "            h = h.clamp(-1e4, 1e4)\n", "        h = h.clamp(-1e4, 1e4)\n")
    assert fixed != text
    ok, m = _verdict(engine, fixed, "torch_compile", starter.name)
    assert ok.passed, [r.describe() for r in ok.results]
    assert m["forward_kernels"] <= 3 and m["backward_kernels"] >= 1 and m["step_us"] > 0
    gutted = fixed.replace("return x + self.down(h)", "return x + h[:, :512]").replace("h = self.up(h)", "h = h * 2")
    cheat, _ = _verdict(engine, gutted, "torch_compile", starter.name)
    assert not cheat.passed and [r.passed for r in cheat.results][2] is False


def test_the_check_reads_the_compile_not_the_text(engine):
    """The same source text with and without a comment claiming v4; and a comment-only
    'solution': only the compiled widths decide."""
    text = STARTER.read_text()
    fake = text.replace('"""Exercise', '"""XBLOCK=512 v4 fused one kernel\nExercise', 1)
    verdict, _ = _verdict(engine, fake, "fusion", STARTER.name)
    assert not verdict.passed


def test_tiling_exercise_passes_a_smaller_tile_and_fails_fewer_stages(engine):
    source = kernels.get("matmul").source()
    start, m = _verdict(engine, source, "tiling", "matmul.py")
    assert not start.passed and m["blocks_per_sm"] == 1 and m["count_wgmma"] > 0
    ok, m = _verdict(engine, source.replace("BLOCK_N: int = 256", "BLOCK_N: int = 128"), "tiling", "matmul.py")
    assert ok.passed and m["blocks_per_sm"] >= 2
    stages, m = _verdict(engine, source.replace("num_stages: int = 3", "num_stages: int = 2"), "tiling", "matmul.py")
    assert not stages.passed and m["shared_kib"] < 144 and m["blocks_per_sm"] == 1     # registers still limit


@pytest.mark.parametrize("op, value, got, passes", [(">=", 4, 4, True), (">=", 4, 2, False), ("==", 1, 1, True),
                                                     ("<", 2, 2, False), ("!=", 0, 1, True), (">", 1, None, False)])
def test_a_check_compares(op, value, got, passes):
    assert Check("m", op, value).passes(got) is passes


def _page(step: int) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.switch_page("views/lessons.py")
    at.query_params.update({"lesson": "fusion", "step": str(step)})
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.workers
def test_the_page_checks_an_edit_and_keeps_it():
    step, _ = _exercise("fusion")
    at = _page(step)
    key = f"ex_src_fusion_{step}"
    assert editor(at, key).value == STARTER.read_text()
    at.button(key=f"ex_check_fusion_{step}").click().run()
    assert "Not yet." in at.warning[0].value and "**not met** · one kernel — this compile: 2" in at.warning[0].value
    editor(at, key).input((SNIPPETS / "lesson_fused_v4.py").read_text()).run()
    at.button(key=f"ex_check_fusion_{step}").click().run()
    assert "Goal reached." in at.success[0].value and "**met** · every global load is v4 or wider — this compile: 4" in at.success[0].value
    editor(at, key).input("def broken(:\n").run()
    at.button(key=f"ex_check_fusion_{step}").click().run()
    assert "did not compile" in at.error[0].value and "line 1" in at.error[0].value
    assert editor(at, key).value == "def broken(:\n"                 # nothing typed is lost
    assert editor(at, key).data()["errorLine"] == 1                  # and its editor marks the line
    # an answer torch.compile leaves whole to cuBLAS: no Triton kernel, said with what it calls
    editor(at, key).input("import torch\n\n\ndef example():\n    torch.compile(torch.mm)(torch.randn(64, 64, "
                          "device='cuda'), torch.randn(64, 64, device='cuda'))\n").run()
    at.button(key=f"ex_check_fusion_{step}").click().run()
    assert not at.exception and "no Triton kernel was compiled: torch.compile's graphs call only aten.mm, outside " \
        "Triton" in at.error[0].value, [e.value for e in at.error]
    at.button(key=f"ex_reset_fusion_{step}").click().run()
    assert editor(at, key).value == STARTER.read_text()


def test_hopper_exercise_passes_tma_and_fails_pointers_or_a_pointer_store(engine):
    """The Hopper lesson's exercise: the starter (cp.async loads, st.global store) fails every
    check; the TMA matmul passes; TMA loads with the store left as pointers fail only the store."""
    hopper = ROOT / "assets" / "lessons" / "hopper"
    start, m = _verdict(engine, (hopper / "ptr_matmul.py").read_text(), "hopper", "ptr_matmul.py")
    assert [r.passed for r in start.results] == [False, False, False]
    assert m["count_cp_async"] > 0 and m["tma_loads"] == 0 and m["global_stores"] > 0
    ok, m = _verdict(engine, (hopper / "tma_matmul.py").read_text(), "hopper", "ptr_matmul.py")
    assert ok.passed, [r.describe() for r in ok.results]
    assert m["tma_tile_bytes"] == 128 * 64 * 2 and m["tma_stores"] == 1
    half = (hopper / "tma_matmul.py").read_text().replace(
        "    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))",
        "    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
        "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16))")
    verdict, m = _verdict(engine, half, "hopper", "ptr_matmul.py")
    assert [r.passed for r in verdict.results] == [True, True, False] and m["tma_stores"] == 0
