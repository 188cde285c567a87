"""A stage diff as HTML: two columns, aligned rows, changed lines and the words that
changed in them marked. Pure (no Streamlit), tested directly. Every piece of text goes
through pygments or html.escape: markup in a kernel or compiler output is shown, never run."""
from __future__ import annotations

import html

from pygments import highlight
from pygments.formatters import HtmlFormatter

from app.render import stage_html
from inspectors.base import stages
from inspectors.explain.diff import StageDiff, inline_spans
from inspectors.read.lexers import lexer_for

# Row classes: what the colour of a row means.
LEGEND = {
    "d-change": "changed line (the changed words are darker)",
    "d-add": "only in B",
    "d-remove": "only in A",
    "d-noise": "the same up to noise (register/SSA numbers, labels)",
}


def highlighted_lines(stage_name: str, text: str) -> list[str]:
    """One HTML string per line of `text`, highlighted with the stage's lexer (escaped)."""
    lexer = lexer_for(stages.get(stage_name).lexer)
    lexer.stripnl = False          # keep leading blank lines: line numbers must match the text
    out = highlight(text, lexer, HtmlFormatter(nowrap=True)).split("\n")
    n = len(text.splitlines())
    return (out + [""] * n)[:n]


def _inline(spans) -> str:
    return "".join(f'<span class="dx">{html.escape(t)}</span>' if diff else html.escape(t) for t, diff in spans)


def _mem_classes(stage_name: str, text: str) -> dict[int, str]:
    """mem-vec / mem-scalar / mem-shared of each line, as in the explorer's panels."""
    return {n: " ".join(c for c in cls.split() if c.startswith("mem-"))
            for n, cls in stage_html.line_classes(stage_name, text).items()}


def render_diff_html(d: StageDiff, a_text: str, b_text: str, context: int | None = 3,
                     a_label: str = "A", b_label: str = "B", max_height: int = 720) -> str:
    """The side-by-side table. With `context`, runs of equal rows further than `context`
    rows from a change fold into one `⋯ N unchanged lines ⋯` row. A diff too large to
    align (`d.too_large`) is its message alone: neither text is highlighted."""
    if d.too_large:
        return (f'<div class="tlens-diff" data-stage="{html.escape(d.stage)}" style="padding:8px 12px">'
                f'{html.escape(d.too_large)}</div>')
    ha, hb = highlighted_lines(d.stage, a_text), highlighted_lines(d.stage, b_text)
    ma, mb = _mem_classes(d.stage, a_text), _mem_classes(d.stage, b_text)
    show = _visible(d, context)
    body, folded = [], 0
    for i, row in enumerate(d.rows):
        if not show[i]:
            folded += 1
            continue
        if folded:
            body.append(_fold(folded))
            folded = 0
        if row.kind == "change":
            sa, sb = inline_spans(row.a_text, row.b_text, d.stage if d.ignore_noise else None)
            left, right = _inline(sa), _inline(sb)
        else:
            left = ha[row.a - 1] if row.a else ""
            right = hb[row.b - 1] if row.b else ""
        cls = row.kind + (" d-noise" if row.noise_only else "")
        title = ' title="the same up to noise"' if row.noise_only else ""
        body.append(
            f'<tr class="d-{cls}"{title}>'
            f'<td class="ln">{row.a or ""}</td><td class="c a {ma.get(row.a, "") if row.a else ""}">{left}</td>'
            f'<td class="ln">{row.b or ""}</td><td class="c b {mb.get(row.b, "") if row.b else ""}">{right}</td></tr>')
    if folded:
        body.append(_fold(folded))
    head = (f'<thead><tr><th colspan="2">{html.escape(a_label)}</th>'
            f'<th colspan="2">{html.escape(b_label)}</th></tr></thead>')
    return (f'<div class="tlens-diff" data-stage="{html.escape(d.stage)}" style="max-height:{int(max_height)}px">'
            f'<table class="src"><colgroup><col class="ln"><col><col class="ln"><col></colgroup>{head}<tbody>{"".join(body)}</tbody></table></div>')


def _fold(n: int) -> str:
    return f'<tr class="d-fold"><td colspan="4">⋯ {n} unchanged line{"s" if n != 1 else ""} ⋯</td></tr>'


def _visible(d: StageDiff, context: int | None) -> list[bool]:
    if context is None:
        return [True] * len(d.rows)
    show = [False] * len(d.rows)
    for i, row in enumerate(d.rows):
        if row.kind != "equal":
            for k in range(max(0, i - context), min(len(d.rows), i + context + 1)):
                show[k] = True
    if not any(show):                     # identical: show the start, not an empty box
        show[:2 * context + 1] = [True] * min(len(show), 2 * context + 1)
    return show


def legend_html(d: StageDiff) -> str:
    if d.too_large:
        return f'<span class="tlens-chip">{html.escape(d.too_large)}</span>'
    chips = [("d-change", f"{d.changed} changed"), ("d-add", f"{d.added} added"),
             ("d-remove", f"{d.removed} removed")]
    hidden = (f'<span class="tlens-chip">{d.hidden_a} / {d.hidden_b} noise lines hidden</span>'
              if d.ignore_noise and (d.hidden_a or d.hidden_b) else "")
    return "".join(f'<span class="tlens-chip {c}" title="{html.escape(LEGEND[c])}">{html.escape(t)}</span>'
                   for c, t in chips) + hidden


def diff_css() -> str:
    """Styles of the diff table (the panels' styles come from stage_html.page_css)."""
    pyg = HtmlFormatter(style="default").get_style_defs(".tlens-diff .src")
    return f"""<style>
{pyg}
.tlens-diff {{ overflow: auto; border: 1px solid #d0d4da; border-radius: 6px; background: #fbfbfc;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; line-height: 1.45; }}
.tlens-diff table {{ border-collapse: collapse; width: 100%; table-layout: fixed; margin: 0; }}
.tlens-diff th {{ position: sticky; top: 0; background: #eef0f3; text-align: left; padding: 2px 8px;
  font-family: sans-serif; font-size: 13px; z-index: 1; border-bottom: 1px solid #d0d4da; }}
.tlens-diff td {{ padding: 0 8px 0 4px; vertical-align: top; white-space: pre-wrap; overflow-wrap: anywhere;
  border: none; }}
.tlens-diff td.ln {{ width: 3.6em; text-align: right; color: #9aa0a6; user-select: none; }}
.tlens-diff col.ln {{ width: 3.6em; }}
.tlens-diff tr.d-change td.c.a {{ background: #fdecec; }} .tlens-diff tr.d-change td.c.b {{ background: #e6f6ea; }}
.tlens-diff tr.d-remove td.c.a {{ background: #fbd9d9; }} .tlens-diff tr.d-add td.c.b {{ background: #d2f1db; }}
.tlens-diff tr.d-remove td.c.b, .tlens-diff tr.d-add td.c.a {{ background: repeating-linear-gradient(
  135deg, #f3f4f6, #f3f4f6 4px, #fbfbfc 4px, #fbfbfc 8px); }}
.tlens-diff .src .err {{ border: none; }}
.tlens-diff tr.d-change .dx {{ border-radius: 2px; }}
.tlens-diff tr.d-change td.a .dx {{ background: #f5b5b5; }} .tlens-diff tr.d-change td.b .dx {{ background: #9fdfb0; }}
.tlens-diff tr.d-noise td.c {{ color: #555; }}
.tlens-diff tr.d-noise td.ln {{ color: #c29b00; }}
.tlens-diff tr.d-fold td {{ text-align: center; color: #6b7280; background: #f1f3f5; font-style: italic; }}
.tlens-diff td.c.mem-vec {{ box-shadow: inset 3px 0 #1a9e49; }}
.tlens-diff td.c.mem-scalar {{ box-shadow: inset 3px 0 #e08a00; }}
.tlens-diff td.c.mem-shared {{ box-shadow: inset 3px 0 #3b6fd8; }}
.tlens-chip.d-change {{ background: #fdf1d6; }} .tlens-chip.d-add {{ background: #d2f1db; }}
.tlens-chip.d-remove {{ background: #fbd9d9; }}
</style>"""
