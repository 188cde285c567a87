"""Panel HTML: highlighting classes, search, escaping of user/compiler text."""
from app.render import stage_html

PTX = "\tmov.u32 %r1, %ctaid.x;\n\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];\n" \
      "\t@%p2 ld.global.b32 { %r5 }, [ %rd2 + 4 ];\n\tret;\n"


def test_line_classes_mark_vector_scalar_and_special_registers():
    classes = stage_html.line_classes("ptx", PTX)
    assert classes == {1: "sreg", 2: "mem-vec", 3: "mem-scalar"}


def test_render_has_one_numbered_div_per_line():
    html = stage_html.render_stage_html("ptx", PTX)
    assert html.count('<div class="l') == 4
    assert 'data-line="2"' in html and 'class="l mem-vec"' in html


def test_search_marks_and_filters():
    html = stage_html.render_stage_html("ptx", PTX, query="LD.GLOBAL")
    assert html.count(" hit") == 2
    only = stage_html.render_stage_html("ptx", PTX, query="ld.global", only_hits=True)
    assert only.count('<div class="l') == 2 and 'data-line="4"' not in only


def test_markup_in_source_is_escaped():
    src = 'x = "<script>alert(1)</script>"  # <img src=x onerror=alert(2)>\n'
    html = stage_html.render_stage_html("source", src)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_error_context_keeps_line_numbers():
    src = "\n".join(f"line{i}" for i in range(1, 21))
    html = stage_html.render_stage_html("source", src, error_line=10, context=2)
    assert [f'data-line="{n}"' in html for n in (7, 8, 10, 12, 13)] == [False, True, True, True, False]
    assert 'class="l errline"' in html


def test_summary_counts():
    classes = stage_html.line_classes("ptx", PTX, "ret")
    s = stage_html.summarize("ptx", PTX, classes)
    assert (s.vector_ops, s.scalar_ops, s.widest, s.hits) == (1, 1, "v4 × 32-bit", 1)
