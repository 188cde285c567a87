"""Hostile and odd input through the real page (AppTest) and the CLI: a clear error or a
correct result, the server keeps serving, the editor keeps the text."""
import json
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from apptest_panels import panels
from conftest import ROOT, SNIPPETS
from editor_helpers import editor

APP = str(ROOT / "app" / "main.py")
VADD = (SNIPPETS / "vadd.py").read_text()
UNICODE = VADD.replace("def example():", "# Ünïcödé: 向量加法 — ∑ 😀\nGREETING = 'привет'\n\n\ndef example():")
LONG = VADD + "\n" + "\n".join(f"def filler_{i}(x):\n    return x + {i}\n" for i in range(1700))
CASES = {
    "empty": ("", "usage", "no @triton.jit kernel"),
    "unicode": (UNICODE, None, None),
    "5000 lines": (LONG, None, None),
    "many megabytes of output": (VADD.replace("def example():", "def example():\n    print('x' * (8 << 20))"),
                                 None, None),
    "never returns": ((SNIPPETS / "forever.py").read_text(), "timeout", "longer than 5 s"),
    "writes files": (VADD.replace("def example():", "def example():\n    open('scribble.txt', 'w').write('x')"),
                     None, None),
}


@pytest.fixture(scope="module")
def app():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.selectbox(key="picker").set_value("my_kernel").run()
    at.number_input(key="timeout").set_value(5).run()
    return at


@pytest.mark.parametrize("case", list(CASES))
def test_page_survives(app, case):
    text, kind, message = CASES[case]
    assert LONG.count("\n") > 5000
    editor(app).input(text).run()
    app.button(key="compile").click().run()
    assert not app.exception, app.exception
    assert editor(app).value == text                                # nothing the user typed is lost
    if kind:
        assert app.error and kind in app.error[0].value and message in app.error[0].value
    else:
        assert not app.error, [e.value for e in app.error]
        assert "ptx" in panels(app)
    assert not (ROOT / "scribble.txt").exists()                    # the worker runs in a scratch folder
    # and it still serves: a plain compile works right after
    editor(app).input(VADD).run()
    app.button(key="compile").click().run()
    assert not app.error


def test_huge_output_is_capped(app):
    editor(app).input(CASES["many megabytes of output"][0]).run()
    app.button(key="compile").click().run()
    shown = "".join(c.value for c in app.code)
    assert "earlier bytes of output dropped" in shown and len(shown) < 200_000


@pytest.mark.parametrize("case", ["empty", "unicode", "5000 lines"])
def test_cli(case, tmp_path):
    text, kind, _ = CASES[case]
    path = tmp_path / "k.py"
    path.write_text(text, encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(path), "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    data = json.loads(p.stdout)
    if kind:
        assert p.returncode == 1 and data["error"]["kind"] == kind
    else:
        assert p.returncode == 0 and "ld.global.v4.b32" in data["kernels"][0]["stages"]["ptx"]
        assert data["kernels"][0]["stages"]["source"] == text
