"""The page through Streamlit's AppTest: widgets driven by key, assertions on what renders."""
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, SNIPPETS
from editor_helpers import editor

APP = str(ROOT / "app" / "main.py")


def _html(at) -> str:
    return "\n".join(el.proto.body for el in at.get("html"))


def _text(at) -> str:
    """What a reader sees: the panels' HTML without tags."""
    import html
    import re
    return html.unescape(re.sub(r"<[^>]+>", "", _html(at)))


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
    html = _html(at)
    assert 'data-stage="ptx"' in html
    assert "ld.global.v4.b32" in _text(at)
    assert "mem-vec" in html
    assert at.multiselect(key="stages-cuda").value == ["source", "ttgir", "ptx"]


def test_choosing_stages_and_launches(at):
    at.multiselect(key="stages-cuda").set_value(["ptx", "sass"]).run()
    html = _html(at)
    assert "LDG.E.128" in _text(at)
    launches = at.selectbox(key="launch")
    assert len(launches.options) >= 2          # the misaligned launch of example()
    launches.set_value(1).run()
    html = _html(at)
    assert "ld.global.v4" not in _text(at) and "mem-scalar" in html


def test_search_box_marks_lines(at):
    at.multiselect(key="stages-cuda").set_value(["ptx"]).run()
    at.text_input(key="q-ptx-1").input("ld.global").run()
    assert "matching lines" in _html(at)


def test_syntax_error_keeps_text_and_names_line(at):
    broken = (SNIPPETS / "syntax_error.py").read_text()
    editor(at).input(broken).run()
    at.button(key="compile").click().run()
    assert not at.exception
    assert at.error and "line 7" in at.error[0].value and "syntax" in at.error[0].value
    assert editor(at).value == broken
    sent = editor(at).data()                      # the editor marks the line, with the message
    assert sent["doc"] == broken and sent["errorLine"] == 7 and "syntax" in sent["errorMessage"]


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
    assert "buffer_load_dwordx4" in _text(app) or "global_load_dwordx4" in _text(app)
    assert "mem-vec" in _html(app)


def test_follow_python_line_highlights_ptx(at):
    """The keyboard path of the source map: pick a Python line, its PTX lines are marked."""
    import re
    at.selectbox(key="picker").set_value("vector_add").run()
    editor(at).input((ROOT / "kernels" / "vector_add.py").read_text()).run()
    at.button(key="compile").click().run()
    at.selectbox(key="launch").set_value(0).run()
    at.multiselect(key="stages-cuda").set_value(["source", "ttgir", "ptx"]).run()
    source = editor(at).value.splitlines()
    load_line = next(i for i, l in enumerate(source, 1) if "x = tl.load(" in l)
    at.selectbox(key="follow").set_value(load_line).run()
    ptx = next(el.proto.body for el in at.get("html") if 'data-stage="ptx"' in el.proto.body)
    selected = re.findall(r'<div class="l [^"]*\bsel\b[^"]*" data-line="(\d+)" data-py="(\d+)"', ptx)
    assert selected and all(py == str(load_line) for _, py in selected)
    import html as h
    sel_text = [h.unescape(re.sub(r"<[^>]+>", "", d)) for d in ptx.split('<div class="l ')
                if re.match(r'[^"]*\bsel\b', d)]
    assert any("ld.global.v4.b32" in t for t in sel_text)


def test_insight_tabs_show_memory_ops_and_registers(at):
    tables = [d.value for d in at.dataframe]
    mem = tables[0]
    assert {"Python line", "instruction", "width", "why not wider"} <= set(mem.columns)
    assert "ld.global" in set(mem["instruction"]) or any("ld.global" in i for i in mem["instruction"])
    assert any(m.label == "registers / thread" and int(m.value) > 0 for m in at.metric)
