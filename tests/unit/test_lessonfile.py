"""Lesson files: the loader (text -> frozen dataclasses), its errors (file and line), a teacher's
folder beside the bundled lessons, and the page drawing a teacher's lesson and reporting a
malformed one while the others still load."""
import os
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from inspectors.explain import exercise
from inspectors.read.lessonfile import Known, LessonFileError, fill, parse, prose_parts
from inspectors.store import lessons as store

BUNDLED = ROOT / "assets" / "lessons"
APP = str(ROOT / "app" / "main.py")


def _known() -> Known:
    from app.lessons import PANELS
    from app.lessons.common import LIBRARY
    return Known(panels=frozenset(PANELS), metrics=exercise.names(), kernels=frozenset(LIBRARY),
                 stages=frozenset({"source", "ttir", "ttgir", "llir", "ptx", "sass", "amdgcn"}))


TEACHER = textwrap.dedent('''\
    +++
    title = "Loads in one picture"
    order = 7
    +++

    ## Scalar or vector

    ```step
    look = "The ld.global lines."
    [[compile]]
    name = "k"
    kernel = "my_add.py"
    target = "cuda:90"
    [[show]]
    compile = "k"
    stage = "ptx"
    match = 'ld\\.global'
    ```

    This kernel has {{k.global_loads}} global loads, the narrowest {{k.load_vector_min}} wide.

    ### Ask the class
    - Why is it scalar?
      (think of the block size)
    ''')

MY_ADD = textwrap.dedent('''\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def my_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    def example():
        x, y = torch.randn(4096), torch.randn(4096)
        out = torch.empty_like(x)
        my_add_kernel[(32,)](x, y, out, 4096, BLOCK=128)
    ''')


def test_the_bundled_lessons_and_the_template_load():
    found = store.load_all([BUNDLED], _known())
    assert not found.errors, found.errors
    assert [(l.slug, len(l.steps)) for l in found.lessons] == [("coarsening", 7), ("coalescing", 6), ("fusion", 7),
                                                                ("tiling", 8), ("hopper", 5),
                                                                ("torch_compile", 5)]
    assert not any(p.name.startswith("_") for p in store.lesson_files(BUNDLED))       # the template stays out
    template = parse((BUNDLED / "_TEMPLATE.md").read_text(), "_TEMPLATE.md", "template", _known())
    assert template.steps[1].exercise.checks[0].metric == "load_vector_min"
    fusion = found.get("fusion")
    ex = next(s.exercise for s in fusion.steps if s.exercise)
    assert [c.metric for c in ex.checks] == ["kernels", "load_vector_min"] and ex.starter.endswith(".py")
    assert store.kernel_path(fusion, ex.starter).is_file()


def test_a_step_parses_into_settings_prose_and_questions():
    lesson = parse(TEACHER, "t.md", "loads")
    (step,) = lesson.steps
    assert (lesson.title, lesson.order, step.title, step.line) == ("Loads in one picture", 7, "Scalar or vector", 6)
    assert step.compiles[0].name == "k" and step.compiles[0].launch is None and step.shows[0].match == r"ld\.global"
    assert step.questions == ("Why is it scalar? (think of the block size)",)
    assert "Ask the class" not in step.prose and "```" not in step.prose
    assert prose_parts(step.prose)[:2] == [("panel", ""), ("show", "")]
    assert fill("{{k.global_loads}} and \\{{kept}}", {"k.global_loads": "2"}) == ("2 and {{kept}}", [])
    assert fill("{{nobody}}", {})[1] == ["nobody"]


@pytest.mark.parametrize("edit, line, words", [
    (lambda t: t.replace("+++\ntitle", "title", 1), 1, "between two `+++` lines"),
    (lambda t: t.replace('look = "The ld.global lines."', 'look = "unclosed'), 9, "step \"Scalar or vector\""),
    (lambda t: t.replace('look = "The ld.global lines."', 'lok = "typo"'), 9, "unknown key 'lok'"),
    (lambda t: t.replace('look = "The ld.global lines."', 'look = "x"\npanel = "fusion.nope"'), 10, "unknown panel 'fusion.nope'"),
    (lambda t: t.replace("match = 'ld\\.global'", "match = '(['"), 17, "match is not a regex"),
    (lambda t: t.replace('stage = "ptx"', 'stage = "cubin"'), 16, "unknown stage 'cubin'"),
    (lambda t: t.replace('kernel = "my_add.py"', 'kernel = "../../etc/x.py"'), 12, "inside the lessons folder"),
    (lambda t: t.replace('kernel = "my_add.py"', 'kernel = "nope"'), 12, "no library kernel 'nope'"),
    (lambda t: t.replace("## Scalar or vector", "no step heading"), 25, "no steps"),
    (lambda t: t + "\n## Two\n\n```step\nlook = \"x\"\n[exercise]\ngoal = \"g\"\nstarter = \"gelu\"\n"
                   "[[exercise.check]]\nmetric = \"speed\"\nvalue = 1\n```\n", 34, "unknown metric 'speed'"),
    (lambda t: t + "\n## Three\n\ntext but no settings\n", 26, "no ```step block"),
])
def test_a_malformed_file_names_the_line(edit, line, words):
    with pytest.raises(LessonFileError) as e:
        parse(edit(TEACHER), "teacher/t.md", "t", _known())
    assert e.value.file == "teacher/t.md" and e.value.line == line, str(e.value)
    assert words in e.value.message and str(e.value).startswith(f"teacher/t.md, line {line}: ")


def test_a_teachers_folder_adds_replaces_and_reports(tmp_path):
    (tmp_path / "loads.md").write_text(TEACHER)
    (tmp_path / "my_add.py").write_text(MY_ADD)
    (tmp_path / "broken.md").write_text(TEACHER.replace('look = "The ld.global lines."', 'look = "x"\nlook = "twice"'))
    (tmp_path / "coalescing.md").write_text(TEACHER.replace("Loads in one picture", "Our coalescing"))
    (tmp_path / "missing.md").write_text(TEACHER.replace("my_add.py", "gone.py"))
    found = store.load_all([BUNDLED, tmp_path], _known())
    assert [l.slug for l in found.lessons] == ["coarsening", "fusion", "tiling", "hopper", "torch_compile", "loads",
                                                    "coalescing"]   # by order
    assert found.get("coalescing").title == "Our coalescing" and found.replaced == ("coalescing",)
    errors = {os.path.basename(e.file): (e.line, e.message) for e in found.errors}
    assert errors["broken.md"][0] == 10 and "step \"Scalar or vector\"" in errors["broken.md"][1]
    assert errors["missing.md"] == (12, f"step \"Scalar or vector\": no kernel file 'gone.py' in {tmp_path}")
    assert store.kernel_path(found.get("loads"), "my_add.py") == tmp_path / "my_add.py"


@pytest.mark.workers
def test_the_page_draws_a_teachers_lesson_and_reports_a_broken_file(tmp_path, monkeypatch):
    (tmp_path / "loads.md").write_text(TEACHER)
    (tmp_path / "my_add.py").write_text(MY_ADD)
    (tmp_path / "broken.md").write_text("+++\ntitle = 'b'\n+++\n## S\n```step\nlook = 'x'\npanel = 3\n```\n")
    monkeypatch.setenv("TLENS_LESSONS_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=240)
    at.switch_page("views/lessons.py")
    at.query_params.update({"lesson": "loads", "step": "1"})
    at.run()
    assert not at.exception, at.exception
    text = "\n".join(m.value for m in at.markdown)
    assert "Loads in one picture · step 1 of 1: Scalar or vector" in text
    assert "This kernel has 2 global loads, the narrowest 1 wide." in text          # from the compile
    assert "ld.global.b32" in "\n".join(c.value for c in at.code)
    errors = [e.value for e in at.error]
    assert any("broken.md, line 7:" in e and "unknown panel 3" in e for e in errors), errors
    assert "Ask the class" in "\n".join(el.proto.body for el in at.get("html"))
    at.radio(key="lesson").set_value("coarsening").run()                             # the others still load
    assert "Thread coarsening · step 1 of 7" in "\n".join(m.value for m in at.markdown)


def test_the_lessons_doc_lists_every_metric_and_panel():
    from app.lessons import PANELS
    doc = (ROOT / "docs" / "02-lessons-for-teachers.md").read_text()
    missing = [m for m in exercise.names() if f"`{m}`" not in doc] + [p for p in PANELS if f"`{p}`" not in doc]
    assert not missing, f"docs/02-lessons-for-teachers.md does not list: {missing}"
