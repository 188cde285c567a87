"""Pictures for the Layouts and Lessons pages: who owns each element (HTML grid), the
sectors a warp's request touches (HTML strip), program → warps → threads → registers →
elements (a graphviz graph), and the projector's large type. Pure functions of inspector
data, no Streamlit: every text that reaches HTML is escaped."""
from __future__ import annotations

import html
import math

import graphviz

from inspectors.explain import coalescing
from inspectors.explain import layout_view

# One light colour per warp (16 warps at most in a program; more repeat).
WARP_COLOURS = ("#cfe8ff", "#ffe0b3", "#d5f5d5", "#f9d0e4", "#e6dcff", "#fff4a8", "#c8f0ee", "#ffd6cc",
                "#dfe8c8", "#e0e0f8", "#f5e1c8", "#d0ecf7", "#f0d8f0", "#e8f5c8", "#fde2e2", "#d8e4ec")

CSS = """
<style>
.tl-scroll { overflow-x: auto; max-width: 100%; }
.tl-grid { border-collapse: collapse; font: 11px/1.1 ui-monospace, monospace; margin: 4px 0 8px 0; }
.tl-grid td { border: 1px solid #fff; padding: 2px 3px; text-align: center; min-width: 22px; }
.tl-grid th { font-weight: normal; color: #666; padding: 0 3px; font-size: 10px; }
.tl-grid td.hl { outline: 2px solid #d33; outline-offset: -2px; }
.tl-legend span { display: inline-block; padding: 1px 6px; margin: 2px; border-radius: 3px; font: 12px monospace; }
.tl-strip { display: flex; flex-wrap: wrap; gap: 2px; margin: 4px 0; }
.tl-sector { width: 26px; height: 30px; border: 1px solid #888; position: relative; background: #f4f4f4;
             font: 9px monospace; color: #333; }
.tl-sector .used { position: absolute; bottom: 0; left: 0; right: 0; background: #3a9a5b; }
.tl-sector .lbl { position: absolute; top: 1px; left: 2px; z-index: 1; }
.tl-step { font-size: 1.05rem; border-left: 4px solid #f63; padding: 6px 12px; background: #fff7f2; margin: 6px 0; }
.tl-questions { border-left: 4px solid #36c; padding: 6px 12px; background: #f2f6ff; margin: 10px 0; }
.tl-questions ul { margin: 4px 0 0 0; }
.stTextArea textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace !important; }
</style>
"""

BIG_TYPE_CSS = """
<style>
html { font-size: 22px !important; }
.stMarkdown p, .stMarkdown li, .stCaption, .stAlert p { font-size: 1.15rem !important; line-height: 1.45 !important; }
.tl-grid { font-size: 15px !important; }
.tl-grid td { min-width: 30px !important; }
.tl-step { font-size: 1.35rem !important; }
.tl-questions { font-size: 1.2rem !important; }
.tl-sector { width: 40px !important; height: 42px !important; font-size: 14px !important; }
[data-testid="stDataFrame"] { font-size: 1.1rem !important; }
[data-testid="stMainBlockContainer"] { padding-left: 1.2rem !important; padding-right: 1.2rem !important;
                                       max-width: 100% !important; }
[data-testid="stTable"] table { font-size: 0.8rem !important; }
[data-testid="stTable"] th, [data-testid="stTable"] td { padding: 0.2rem 0.45rem !important; }
.stCode code, .stCode pre { font-size: 0.8rem !important; }
</style>
"""


def warp_colour(warp: int) -> str:
    return WARP_COLOURS[warp % len(WARP_COLOURS)]


def legend_html(num_warps: int) -> str:
    items = "".join(f'<span style="background:{warp_colour(w)}">warp {w}</span>' for w in range(min(num_warps, 16)))
    return f'<div class="tl-legend">{items} &nbsp;cell text: <b>lane·register</b></div>'


def ownership_html(own: layout_view.Ownership, max_rows: int = 32, max_cols: int = 64,
                   highlight: tuple[int, int] | None = None) -> tuple[str, str]:
    """An HTML table of the tensor (the first `max_rows` × `max_cols` of it; a 1-D tensor is
    wrapped 32 per row), each cell coloured by the warp owning the element and labelled
    `lane·register`; `highlight` = (warp, lane) outlines one thread's cells. Returns
    (html, a sentence saying what is shown)."""
    shape = own.layout.shape
    if len(shape) == 1:
        cols = min(32, shape[0])
        rows_total = math.ceil(shape[0] / cols)
        index = lambda r, c: (r * cols + c,)  # noqa: E731
        row_label = lambda r: str(r * cols)  # noqa: E731
    elif len(shape) == 2:
        cols, rows_total = shape[1], shape[0]
        index = lambda r, c: (r, c)  # noqa: E731
        row_label = str
    else:
        return "", f"{len(shape)}-D tensors are not drawn."
    rows, cols_shown = min(rows_total, max_rows), min(cols, max_cols)
    head = "".join(f"<th>{c}</th>" for c in range(cols_shown)) if len(shape) == 2 else \
        "".join(f"<th>+{c}</th>" for c in range(cols_shown))
    body = []
    for r in range(rows):
        cells = []
        for c in range(cols_shown):
            owners = own.owners.get(index(r, c), [])
            if not owners:
                cells.append("<td>·</td>")
                continue
            warp, lane, reg = owners[0]
            more = f" (+{len(owners) - 1} copies)" if len(owners) > 1 else ""
            hl = ' class="hl"' if highlight and any((w, l) == highlight for w, l, _ in owners) else ""
            title = html.escape(f"element {index(r, c)}: warp {warp}, lane {lane}, register {reg}{more}")
            cells.append(f'<td{hl} style="background:{warp_colour(warp)}" title="{title}">{lane}·{reg}</td>')
        body.append(f"<tr><th>{row_label(r)}</th>{''.join(cells)}</tr>")
    table = f'<div class="tl-scroll"><table class="tl-grid"><tr><th></th>{head}</tr>{"".join(body)}</table></div>'
    total = math.prod(shape)
    shown = rows * cols_shown if len(shape) == 2 else min(total, rows * cols_shown)
    if shown < total:
        note = (f"Showing {rows} of {rows_total} rows and {cols_shown} of {cols} columns "
                f"({shown:,} of {total:,} elements); the rest repeats the same pattern.")
    else:
        note = f"All {total:,} elements."
    return table, note


def sectors_html(access: coalescing.AccessEstimate, warp: int = 0, limit: int = 64) -> str:
    """The 32-byte sectors one warp's request touches, each box filled by the share of its
    bytes some lane asked for (green); gaps between sectors are not drawn."""
    if not access.warps or warp >= len(access.warps):
        return ""
    w = access.warps[warp]
    width = access.vector * access.bits // 8
    used: dict[int, set[int]] = {}
    for off in w.offsets:
        if off is None:
            continue
        for byte in range(off, off + width):
            used.setdefault(byte // coalescing.SECTOR, set()).add(byte % coalescing.SECTOR)
    boxes = []
    for i, sector in enumerate(sorted(used)[:limit]):
        share = len(used[sector]) / coalescing.SECTOR
        boxes.append(f'<div class="tl-sector" title="sector {sector}: {len(used[sector])} of 32 bytes used">'
                     f'<div class="used" style="height:{100 * share:.0f}%"></div><span class="lbl">{i}</span></div>')
    more = f" … {len(used) - limit} more" if len(used) > limit else ""
    return f'<div class="tl-strip">{"".join(boxes)}{more}</div>'


def layout_graph(ll: layout_view.LinearLayout, warps: tuple[int, ...] = (0,), lanes: tuple[int, ...] = (0, 1),
                 max_registers: int = 8, title: str = "program") -> graphviz.Digraph:
    """program → warps → threads → registers → elements, for the chosen warps and lanes
    (the others are folded into one node each, so the graph stays readable)."""
    g = graphviz.Digraph("layout", graph_attr={"rankdir": "LR", "fontsize": "11", "nodesep": "0.12",
                                               "ranksep": "0.5"},
                         node_attr={"shape": "box", "style": "rounded,filled", "fontsize": "10", "height": "0.2",
                                    "fillcolor": "#ffffff", "fontname": "Helvetica"})
    g.node("program", f"{title}\n{ll.num_warps} warps × {ll.warp_size} lanes", fillcolor="#eeeeee")
    regs = ll.size("register")
    for w in range(ll.num_warps):
        if w not in warps:
            continue
        g.node(f"w{w}", f"warp {w}", fillcolor=warp_colour(w))
        g.edge("program", f"w{w}")
        for lane in lanes:
            if lane >= ll.warp_size:
                continue
            t = f"w{w}t{lane}"
            g.node(t, f"lane {lane}\n(tid.x = {w * ll.warp_size + lane})", fillcolor=warp_colour(w))
            g.edge(f"w{w}", t)
            for r in range(min(regs, max_registers)):
                rid = f"{t}r{r}"
                g.node(rid, f"r{r}", shape="ellipse")
                g.edge(t, rid)
                e = ll.apply(r, lane, w)
                eid = "e" + "_".join(map(str, e))
                g.node(eid, str(e if len(e) > 1 else e[0]), shape="plaintext", fillcolor="#ffffff")
                g.edge(rid, eid)
            if regs > max_registers:
                g.node(f"{t}more", f"… {regs - max_registers} more registers", shape="plaintext")
                g.edge(t, f"{t}more", style="dashed")
        others = ll.warp_size - sum(1 for l in lanes if l < ll.warp_size)
        if others:
            g.node(f"w{w}rest", f"{others} more lanes", shape="plaintext")
            g.edge(f"w{w}", f"w{w}rest", style="dashed")
    hidden = ll.num_warps - sum(1 for w in warps if w < ll.num_warps)
    if hidden:
        g.node("wrest", f"{hidden} more warps", shape="plaintext")
        g.edge("program", "wrest", style="dashed")
    return g


def swizzle_html(layout: layout_view.SwizzledShared, rows: int, cols: int, elem_bytes: int = 2,
                 max_rows: int = 16, max_cols: int = 64) -> str:
    """Where each element of a rows × cols tile lands in shared memory: the cell shows its
    4-byte bank (0–31); swizzling makes one column hit different banks."""
    body = []
    for r in range(min(rows, max_rows)):
        cells = []
        for c in range(min(cols, max_cols)):
            bank = (layout.offset(r, c, cols) * elem_bytes // 4) % 32
            cells.append(f'<td style="background:{WARP_COLOURS[bank % len(WARP_COLOURS)]}">{bank}</td>')
        body.append(f"<tr><th>{r}</th>{''.join(cells)}</tr>")
    head = "".join(f"<th>{c}</th>" for c in range(min(cols, max_cols)))
    return f'<div class="tl-scroll"><table class="tl-grid"><tr><th></th>{head}</tr>{"".join(body)}</table></div>'


def step_html(text: str) -> str:
    """The 'what to look at' box of a lesson step (markdown is rendered by the caller)."""
    return f'<div class="tl-step">{html.escape(text)}</div>'


def questions_html(questions) -> str:
    """The 'ask the class' box of a lesson step (plain text, escaped)."""
    items = "".join(f"<li>{html.escape(q)}</li>" for q in questions)
    return f'<div class="tl-questions"><b>Ask the class</b><ul>{items}</ul></div>'
