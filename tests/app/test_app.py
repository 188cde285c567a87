"""The page through Streamlit's AppTest: widgets driven by key, assertions on what renders."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest_panels import kinds, page_state, panels, selected, text
from conftest import ROOT, SNIPPETS
from editor_helpers import editor

# every test here starts a compile worker or the CLI (tests/conftest.py)
pytestmark = pytest.mark.workers

APP = str(ROOT / "app" / "main.py")


@pytest.fixture(scope="module")
def at():
    app = AppTest.from_file(APP, default_timeout=240)
    app.run()
    assert not app.exception, app.exception
    return app


def test_pick_vector_add_compile_shows_v4_in_ptx(at):
    at.selectbox(key="picker").set_value("vector_add").run()
    at.selectbox(key="target").set_value("cuda:90").run()
    at.button(key="compile").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    ptx = panels(at)["ptx"]
    assert any("ld.global.v4.b32" in line for line in ptx["lines"])
    assert "mem-vec" in kinds(ptx)
    assert at.multiselect(key="stages-cuda").value == ["source", "ttgir", "ptx"]


def test_choosing_stages_and_launches(at):
    at.multiselect(key="stages-cuda").set_value(["ptx", "sass"]).run()
    assert "LDG.E.128" in text(at)
    launches = at.selectbox(key="launch")
    assert len(launches.options) >= 2          # the misaligned launch of example()
    launches.set_value(1).run()
    assert "ld.global.v4" not in text(at) and "mem-scalar" in kinds(panels(at)["ptx"])


def test_syntax_error_keeps_text_and_names_line(at):
    broken = (SNIPPETS / "syntax_error.py").read_text()
    editor(at).input(broken).run()
    at.button(key="compile").click().run()
    assert not at.exception
    assert at.error and "line 7" in at.error[0].value and "syntax" in at.error[0].value
    assert editor(at).value == broken
    sent = editor(at).data()                      # the editor marks the line, with the message
    assert sent["doc"] == broken and sent["errorLine"] == 7 and "syntax" in sent["errorMessage"]


def test_kernels_launched_before_example_raised_are_shown(at):
    source = (SNIPPETS / "raises_after_launch.py").read_text()
    editor(at).input(source).run()
    at.button(key="compile").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("line 16" in w.value and "after 2 launches" in w.value for w in at.warning), \
        [w.value for w in at.warning]
    assert "ptx" in panels(at) and len(at.selectbox(key="launch").options) == 2
    assert editor(at).data()["errorLine"] == 16


def test_drafts_survive_switching_kernels(at):
    edited = editor(at).value
    at.selectbox(key="picker").set_value("softmax").run()
    assert "softmax" in editor(at).value
    at.selectbox(key="picker").set_value("vector_add").run()
    assert editor(at).value == edited


def test_hip_target_offers_amdgcn():
    app = AppTest.from_file(APP, default_timeout=240)
    app.run()
    app.selectbox(key="target").set_value("hip:gfx942").run()
    app.button(key="compile").click().run()
    assert not app.exception and not app.error
    stages = app.multiselect(key="stages-hip")
    assert "AMDGCN" in stages.options and "PTX" not in stages.options
    assert stages.value == ["source", "ttgir", "amdgcn"]
    assert "buffer_load_dwordx4" in text(app) or "global_load_dwordx4" in text(app)
    assert "mem-vec" in kinds(panels(app)["amdgcn"])


def test_follow_python_line_highlights_ptx(at):
    """The keyboard path of the source map: pick a Python line, its PTX lines are marked."""
    at.selectbox(key="picker").set_value("vector_add").run()
    editor(at).input((ROOT / "kernels" / "vector_add.py").read_text()).run()
    at.button(key="compile").click().run()
    at.selectbox(key="launch").set_value(0).run()
    at.multiselect(key="stages-cuda").set_value(["source", "ttgir", "ptx"]).run()
    source = editor(at).value.splitlines()
    load_line = next(i for i, l in enumerate(source, 1) if "x = tl.load(" in l)
    at.selectbox(key="follow").set_value(load_line).run()
    assert page_state(at)["follow"] == load_line                 # every panel marks the lines of it
    assert any("ld.global.v4.b32" in line for line in selected(panels(at)["ptx"], load_line))


def test_insight_sections_show_memory_ops_and_registers(at):
    """One section below the panels at a time, picked on its bar: only that one is drawn."""
    bar = at.segmented_control(key="insight")
    assert bar.value == "Why" and not at.metric               # the Why list by default, nothing else drawn
    bar.set_value("Memory operations").run()
    tables = [d.value for d in at.dataframe if d.key != "step-table"]     # (the step's table is above the panels)
    mem = tables[0]
    assert {"Python line", "instruction", "width", "why not wider"} <= set(mem.columns)
    assert "ld.global" in set(mem["instruction"]) or any("ld.global" in i for i in mem["instruction"])
    at.segmented_control(key="insight").set_value("Registers & occupancy").run()
    assert any(m.label == "registers / thread" and int(m.value) > 0 for m in at.metric)
    assert not [d for d in at.dataframe if d.key != "step-table"]     # the memory table is gone with its section
    at.segmented_control(key="insight").set_value("Why").run()      # as the module's later tests expect


def test_two_panels_by_default_in_a_narrow_window():
    """The browser reports its width (app/components/stage_panel viewport_width): below 1500 px
    the default is Python + PTX; the default follows the window until the user picks stages."""
    from app.components.stage_panel import VIEWPORT
    app = AppTest.from_file(APP, default_timeout=240)
    app.session_state[VIEWPORT] = 1280
    app.run()
    app.selectbox(key="picker").set_value("vector_add").run()
    app.button(key="compile").click().run()
    assert not app.exception, app.exception
    assert app.multiselect(key="stages-cuda").value == ["source", "ptx"]
    assert sorted(panels(app)) == ["ptx", "source"]
    app.session_state[VIEWPORT] = 1920
    app.run()
    assert app.multiselect(key="stages-cuda").value == ["source", "ttgir", "ptx"]
    app.multiselect(key="stages-cuda").set_value(["source", "ptx", "sass"]).run()
    app.session_state[VIEWPORT] = 1280
    app.run()
    assert app.multiselect(key="stages-cuda").value == ["source", "ptx", "sass"]      # the user's pick stays


def test_a_step_of_no_triton_kernel_is_its_calls_outside_triton(at):
    """A compiled graph Inductor leaves whole to cuBLAS: no stages to show, the step table of its
    one call (shapes, FLOPs, an estimate on the target), no error, the source kept."""
    source = ("import torch\n\n\ndef example():\n    a = torch.randn(256, 512, device='cuda')\n"
              "    b = torch.randn(512, 128, device='cuda')\n    torch.compile(torch.mm)(a, b)\n")
    editor(at).input(source).run()
    at.button(key="compile").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("made no Triton kernel of this step" in i.value for i in at.info)
    table = next(d for d in at.dataframe if d.key == "step-table")
    assert list(table.value["kernel"]) == ["aten.mm (cuBLAS)"] and table.value["est. µs"][0] > 0
    assert any(e.label.startswith("The step: no Triton launch · 1 call outside Triton · ≈ ") for e in at.expander)
    assert editor(at).value == source


def test_the_torch_compile_page_says_a_function_made_no_triton_kernel():
    """The Caches page's torch.compile mode, without a GPU: a function Inductor leaves to cuBLAS
    says so (what it calls), not a traceback."""
    app = AppTest.from_file(APP, default_timeout=240)
    app.switch_page("views/caches.py").run()
    app.radio(key="caches_mode").set_value("torch.compile").run()
    app.text_area(key="tc_source").input("import torch\n\n\ndef fn(a, b):\n    return a @ b\n\n\n"
                                         "def example_inputs():\n    return torch.randn(64, 128), torch.randn(128, 32)\n").run()
    app.button(key="tc_target_run").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert any(i.value == "torch.compile made no Triton kernel: its graphs call only aten.mm, outside Triton, as the "
               "GPU runs them" for i in app.info)
