"""Untrusted text in a Markdown body: shown as itself (app/render/text.py)."""
import re

from app.render.text import code_span, plain


def test_code_span_fences_past_any_backtick_run():
    span = code_span("a ``` b ` ![](http://x/y.png)")
    fence = re.match(r"`+", span).group(0)
    assert len(fence) == 4 and span.endswith(" " + fence)
    assert "![](http://x/y.png)" in span
    assert "\n" not in code_span("one\ntwo")
    assert len(code_span("x" * 10_000)) < 220


def test_plain_escapes_every_markdown_character():
    hostile = "![img](http://h/x.png) <b>x</b> **b** :red[c] $x$ www.h.com | `code` # h"
    out = plain(hostile)
    # every ASCII punctuation character is preceded by a backslash: CommonMark shows it as itself
    for i, ch in enumerate(out):
        if ch in "!$*<>[]`{|}~":
            assert out[i - 1] == "\\", (i, out)
    assert "http://" not in out and "www." not in out and "\\(" not in out    # no autolink; ( as written
    assert plain("add_kernel in k.py:27") == "add_kernel in k.py:27"
    assert plain("no @triton.jit kernel") == "no @triton.jit kernel" and "\u2060@" in plain("mail a@h.org")
    assert plain("# h\n_em_") == "\\# h\n\\_em\\_"
    assert re.sub(r"\\(.)", r"\1", out).replace("\u2060", "") == hostile
