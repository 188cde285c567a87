"""The explorer's state in the URL: a link reproduces the page; what a link says is checked."""
import re

import pytest
from streamlit.testing.v1 import AppTest

from app.state import urlstate
from apptest_panels import page_state, panels, selected
from conftest import ROOT

APP = str(ROOT / "app" / "main.py")
KERNELS = ["vector_add", "softmax", "ws:mine.py"]
TARGETS = ["cuda:80", "cuda:90", "hip:gfx942"]
WARPS = [None, 1, 2, 4, 8]
STAGES = [None, 1, 2, 3]


def test_parse_and_encode_round_trip():
    params = {"kernel": "ws:mine.py", "target": "cuda:80", "num_warps": "8", "num_stages": "2",
              "constexprs": "BLOCK_SIZE=512", "panels": "source,ptx", "launch": "2", "line": "27", "run": "1"}
    state = urlstate.parse(params, KERNELS, TARGETS, WARPS, STAGES)
    assert state == urlstate.UrlState(kernel="ws:mine.py", target="cuda:80", num_warps=8, num_stages=2,
                                      constexprs="BLOCK_SIZE=512", panels=("source", "ptx"), launch=1, line=27,
                                      run=True)
    again = urlstate.encode({"kernel": state.kernel, "target": state.target, "num_warps": state.num_warps,
                             "num_stages": state.num_stages, "constexprs": state.constexprs,
                             "panels": list(state.panels), "launch": state.launch, "line": state.line, "run": True})
    assert again == params


@pytest.mark.parametrize("key,value", [
    ("kernel", "../../etc/passwd"), ("kernel", "ws:../x.py"), ("target", "sm_61"), ("num_warps", "3"),
    ("num_warps", "eight"), ("num_stages", "99"), ("panels", "ptx,<script>"), ("panels", "a,b,c,d"),
    ("panels", "source,ttir,ttgir,ptx"), ("launch", "0"), ("line", "-4"), ("constexprs", "A=1\nB=2"),
    ("signature", "x" * 600),
])
def test_hostile_values_are_ignored_and_said(key, value):
    state = urlstate.parse({key: value}, KERNELS, TARGETS, WARPS, STAGES)
    assert getattr(state, key) is None
    assert len(state.ignored) == 1 and state.ignored[0].startswith(f"{key}=")


def test_link_reproduces_the_page():
    source = (ROOT / "kernels" / "softmax.py").read_text().splitlines()
    load_line = next(i for i, l in enumerate(source, 1) if "tl.load(" in l)
    link = {"kernel": "softmax", "target": "cuda:80", "num_warps": "8", "panels": "source,ptx",
            "line": str(load_line), "run": "1"}
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update(link)
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert at.selectbox(key="picker").value == "softmax"
    assert at.selectbox(key="target").value == "cuda:80"
    assert at.selectbox(key="num_warps").value == 8
    assert at.multiselect(key="stages-cuda").value == ["source", "ptx"]
    assert at.selectbox(key="follow").value == load_line
    ptx = panels(at)["ptx"]
    assert any(re.search(r"\.target\s+sm_80", line) for line in ptx["lines"])
    assert page_state(at) == {"follow": load_line, "present": False} and selected(ptx, load_line)
    assert at.query_params == {**link, "launch": "1"}   # the page writes back what it shows

    # change the page: the URL follows
    at.selectbox(key="target").set_value("cuda:90").run()
    at.multiselect(key="stages-cuda").set_value(["ttgir", "ptx"]).run()
    assert at.query_params["target"] == "cuda:90" and at.query_params["panels"] == "ttgir,ptx"

    # and that URL, opened anew (another browser), gives the same page
    again = AppTest.from_file(APP, default_timeout=240)
    again.query_params.update(at.query_params)
    again.run()
    assert not again.exception
    assert again.selectbox(key="target").value == "cuda:90"
    assert again.multiselect(key="stages-cuda").value == ["ttgir", "ptx"]
    assert again.selectbox(key="follow").value == load_line
    assert any(re.search(r"\.target\s+sm_90", line) for line in panels(again)["ptx"]["lines"])


def test_present_in_the_link():
    assert urlstate.parse({"present": "1"}, KERNELS, TARGETS, WARPS, STAGES).present
    assert not urlstate.parse({"present": "yes"}, KERNELS, TARGETS, WARPS, STAGES).present
    assert urlstate.encode({"kernel": "softmax", "present": True}) == {"kernel": "softmax", "present": "1"}
    assert urlstate.encode({"kernel": "softmax", "present": False}) == {"kernel": "softmax"}


def test_present_link_opens_two_panels_in_presentation_mode():
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update({"kernel": "vector_add", "present": "1", "run": "1"})
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert list(panels(at)) == ["source", "ptx"] and page_state(at)["present"] is True
    assert at.query_params["present"] == "1"
    at.button(key="present-exit").click().run()
    assert page_state(at)["present"] is False and "present" not in at.query_params
    assert list(panels(at)) == ["source", "ttgir", "ptx"]


def test_bad_link_warns_and_still_works():
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update({"kernel": "../../etc/passwd", "target": "sm_61"})
    at.run()
    assert not at.exception
    assert at.warning and "kernel='../../etc/passwd'" in at.warning[0].value
    assert at.selectbox(key="picker").value == "vector_add"


def test_a_link_whose_compile_fails_compiles_once(monkeypatch):
    """A link with run=1 whose compile times out: the page reruns to show the error (the editor
    reopens), and that rerun must not compile the link again. It did: a class's hanging kernel
    took two time limits (126 s for a 60-s limit) to report."""
    from app.backend import services
    from inspectors.base.result import CompileError, CompileResult
    calls = []

    def timed_out(request, timeout, on_progress=None):
        calls.append(request.filename)
        return CompileResult(error=CompileError("timeout", f"compile took longer than {timeout:g} s and was "
                                                "stopped", request.filename, None))

    monkeypatch.setattr(services, "compile_kernel", timed_out)
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update({"kernel": "vector_add", "run": "1"})
    at.run()
    assert not at.exception, at.exception
    assert any("took longer than" in e.value for e in at.error), [e.value for e in at.error]
    assert calls == ["vector_add.py"]
    at.run()                                             # any later rerun: still one
    assert calls == ["vector_add.py"]


def test_a_links_values_are_shown_as_text_not_markdown():
    """A link whose values are Markdown (an image from the student's host, a link of theirs)
    is answered with the values as literal text: inside code spans, nothing drawn of them."""
    import re
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params.update({"kernel": "![](http://host.invalid/k.png)",
                            "target": "[Session expired: sign in](http://host.invalid/)"})
    at.run()
    assert not at.exception
    body = at.warning[0].value
    assert "host.invalid/k.png" in body and "Session expired" in body
    outside = re.sub(r"(`+) .*? \1", "", body)          # the text outside the code spans
    assert "host.invalid" not in outside and "![" not in outside and "](" not in outside, body
