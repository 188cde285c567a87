"""Stage text -> highlighted HTML, one function for every stage. Pure (no Streamlit),
so it is tested directly. Every piece of user or compiler text goes through
pygments, which escapes it: markup in a kernel is shown, never run."""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass

from pygments import highlight
from pygments.formatters import HtmlFormatter

from inspectors.read import memops
from inspectors.base import stages
from inspectors.read.lexers import lexer_for

# Line classes, shown in the legend: what the colour of a line means.
LEGEND = {
    "mem-vec": "vectorized global access (ld/st.global.v2/.v4, LDG/STG.64/.128, cp.async)",
    "mem-scalar": "scalar global access (one element per instruction)",
    "mem-shared": "shared-memory access",
    "sreg": "reads %ctaid / %tid (program and thread ids)",
    "tc": "tensor-core instruction (mma.sync, wgmma, tcgen05.mma; HMMA/HGMMA/UTC*MMA in SASS) or TMEM access",
    "hit": "matches the search",
    "errline": "the line the error names",
    "sel": "comes from the selected Python line",
}

# A tensor-core or tensor-memory instruction, e.g. `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`,
# `tcgen05.mma.cta_group::1.kind::f16`, `tcgen05.ld.sync.aligned.32x32b.x64.b32`, `mma.sync.aligned.m16n8k16`,
# SASS `HGMMA.64x128x16.F32`, `UTCHMMA`, `HMMA.16816.F32`; MLIR `ttng.warp_group_dot`, `ttng.tc_gen5_mma`
_TENSOR_CORE_RE = re.compile(r"^\s*(?:@!?%\w+\s+|/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?)?"
                             r"(?:wgmma\.mma_async|mma\.sync|tcgen05\.(?:mma|ld|st|cp)|HGMMA|HMMA|UTC\w*MMA|IMMA)\b"
                             r"|\bttng\.(?:warp_group_dot|tc_gen5_mma\w*|tmem_load|tmem_store)\b|\btt\.dot\b")

_SPECIAL_REGS = ("%ctaid", "%tid", "%nctaid", "%ntid", "SR_CTAID", "SR_TID", "tt.get_program_id",
                 "llvm.nvvm.read.ptx.sreg")


@dataclass(frozen=True)
class PanelSummary:
    lines: int
    vector_ops: int
    scalar_ops: int
    shared_ops: int
    widest: str          # e.g. "v4 × 32-bit"
    hits: int
    tensor_core: int = 0  # lines of the "tc" class


# Whitespace and punctuation keep their text but lose their <span>: a 10,000-line SASS
# panel is half the HTML without them (the line number is drawn from data-line by CSS).
_PLAIN_SPAN_RE = re.compile(r'<span class="(?:w|p)">([^<]*)</span>')


class _LineFormatter(HtmlFormatter):
    """One `<div class="l CLASSES" data-line="N">` per source line, with its number."""

    def __init__(self, line_classes: dict[int, str], only: set[int] | None, py_lines: dict[int, int], **kw):
        super().__init__(**kw)
        self.line_classes = line_classes
        self.only = only
        self.py_lines = py_lines

    CHUNK = 200   # lines per block; off-screen blocks skip layout (content-visibility: auto)

    def wrap(self, source):
        n = shown = 0
        for t, piece in source:
            if t != 1:
                yield t, piece
                continue
            n += 1
            if self.only is not None and n not in self.only:
                continue
            if shown % self.CHUNK == 0:
                yield 0, ("</div>" if shown else "") + '<div class="chunk">'
            shown += 1
            cls = self.line_classes.get(n, "")
            py = self.py_lines.get(n)
            data_py = f' data-py="{py}" tabindex="0"' if py else ""
            code = _PLAIN_SPAN_RE.sub(r"\1", piece.rstrip("\n"))
            yield 1, f'<div class="l {cls}" data-line="{n}"{data_py}>{code}</div>'
        if shown:
            yield 0, "</div>"


def line_classes(stage: str, text: str, query: str = "", error_line: int | None = None,
                 selected: frozenset[int] = frozenset(), ops: tuple | None = None) -> dict[int, str]:
    """`ops`: the text's memory operations, when the caller has them already."""
    classes: dict[int, set[str]] = {n: {"sel"} for n in selected}
    for op in memops.memops_for(stage, text) if ops is None else ops:
        if op.space == "global":
            classes.setdefault(op.line, set()).add("mem-vec" if op.vectorized else "mem-scalar")
        elif op.space == "shared":
            classes.setdefault(op.line, set()).add("mem-shared")
    needle = query.lower()
    for n, line in enumerate(text.splitlines(), 1):
        if any(r in line for r in _SPECIAL_REGS):
            classes.setdefault(n, set()).add("sreg")
        if _TENSOR_CORE_RE.search(line):
            classes.setdefault(n, set()).add("tc")
        if needle and needle in line.lower():
            classes.setdefault(n, set()).add("hit")
    if error_line:
        classes.setdefault(error_line, set()).add("errline")
    return {n: " ".join(sorted(c)) for n, c in classes.items()}


def summarize(stage: str, text: str, classes: dict[int, str], ops: tuple | None = None) -> PanelSummary:
    all_ops = memops.memops_for(stage, text) if ops is None else ops
    ops = [o for o in all_ops if o.space == "global"]
    widest = max(ops, key=lambda o: o.bytes, default=None)
    return PanelSummary(
        lines=text.count("\n") + (0 if text.endswith("\n") else 1),
        vector_ops=sum(o.vectorized for o in ops),
        scalar_ops=sum(not o.vectorized for o in ops),
        shared_ops=sum(o.space == "shared" for o in all_ops),
        widest=f"v{widest.vector} × {widest.bits}-bit" if widest else "",
        hits=sum("hit" in c for c in classes.values()),
        tensor_core=sum("tc" in c.split() for c in classes.values()),
    )


def render_stage_html(stage_name: str, text: str, query: str = "", only_hits: bool = False,
                      error_line: int | None = None, max_height: int = 640, context: int | None = None,
                      py_lines: dict[int, int] | None = None, selected_py: int | None = None) -> str:
    """The panel body: highlighted, numbered lines in a scrolling box. With `context`,
    only the lines within `context` of `error_line` are shown (keeping their numbers).
    `py_lines` maps lines to the Python line they come from (`data-py`, used by the
    click-to-follow script); lines from `selected_py` are marked `sel`."""
    stage = stages.get(stage_name)
    py_lines = py_lines or {}
    selected = frozenset(n for n, p in py_lines.items() if p == selected_py) if selected_py else frozenset()
    classes = line_classes(stage_name, text, query, error_line, selected)
    only = {n for n, c in classes.items() if "hit" in c} if (only_hits and query) else None
    if context is not None and error_line:
        only = set(range(error_line - context, error_line + context + 1))
    body = highlight(text, lexer_for(stage.lexer), _LineFormatter(classes, only, py_lines, nowrap=False, cssclass="src"))
    return (f'<div class="tlens-panel" data-stage="{html.escape(stage_name)}" '
            f'style="max-height:{int(max_height)}px">{body}</div>')


@functools.lru_cache(maxsize=1)
def page_css() -> str:
    """Styles of the page and of the server-drawn panels (the error's context; the stage
    panels are a component with their own styles: app/components/stage_panel/panel.css)."""
    pyg = HtmlFormatter(style="default").get_style_defs(".tlens-panel .src")
    return f"""<style>
{pyg}
.block-container {{ padding: 4.3rem 1rem 2rem 1rem; max-width: 100%; }}
.st-key-tlens-page-state {{ display: none; }}
/* the sidebar's num_warps / num_stages sit side by side: no room for a clear (×) button */
.st-key-num_warps [aria-label="Clear value"], .st-key-num_stages [aria-label="Clear value"] {{ display: none; }}
.tlens-panel {{ position: relative; overflow: auto; border: 1px solid #d0d4da; border-radius: 6px; background: #fbfbfc;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; line-height: 1.45; }}
.tlens-panel .src, .tlens-panel pre {{ margin: 0; padding: 0; background: transparent; }}
.tlens-panel .l {{ white-space: pre; padding-right: 12px; }}
.tlens-panel .chunk {{ content-visibility: auto; contain-intrinsic-size: auto 3700px; }}
.tlens-panel .l::before {{ content: attr(data-line); display: inline-block; min-width: 3.6em; padding-right: .8em;
  text-align: right; color: #9aa0a6; user-select: none; }}
.tlens-panel .mem-vec {{ background: #dcf5e3; box-shadow: inset 3px 0 #1a9e49; }}
.tlens-panel .mem-scalar {{ background: #fdecd2; box-shadow: inset 3px 0 #e08a00; }}
.tlens-panel .mem-shared {{ background: #e3ecfb; box-shadow: inset 3px 0 #3b6fd8; }}
.tlens-panel .tc {{ background: #fbe3ef; box-shadow: inset 3px 0 #c2185b; }}
.tlens-panel .sreg {{ background: #f1e6fb; box-shadow: inset 3px 0 #8a3fd1; }}
.tlens-panel .hit {{ background: #fff6a8 !important; }}
.tlens-panel .src .err {{ border: none; }}
.tlens-panel .l[data-py] {{ cursor: pointer; }}
.tlens-panel .l[data-py]:hover {{ outline: 1px dotted #8a8f98; }}
.tlens-panel .l.sel {{ background: #ffe08a !important; box-shadow: inset 4px 0 #d48806; }}
.tlens-panel .errline {{ background: #fbd5d5 !important; box-shadow: inset 3px 0 #c62828; }}
.tlens-chip {{ display: inline-block; padding: 1px 8px; margin: 0 4px 4px 0; border-radius: 10px; font-size: 12px; }}
.tlens-chip.mem-vec {{ background: #dcf5e3; }} .tlens-chip.mem-scalar {{ background: #fdecd2; }}
.tlens-chip.mem-shared {{ background: #e3ecfb; }} .tlens-chip.sreg {{ background: #f1e6fb; }}
.tlens-chip.hit {{ background: #fff6a8; }}
</style>"""
