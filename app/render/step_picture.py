"""The step as a picture (graphviz): the model's lines on the left, each graph (forward, backward,
inference) a cluster of the kernels its lines were fused into, an edge from a line to each
kernel that computes it; what runs outside Triton (cuBLAS, attention kernels) dashed; a
kernel's box says its estimated time and share of the step, the slowest filled darkest.
Pure: rows of inspectors/explain/step.py and the model's source in, a graphviz.Digraph out."""
from __future__ import annotations

import graphviz

from inspectors.explain import step

MAX_NODES = 150        # kernels and calls drawn; a bigger step is drawn in part, and says so


def picture(rows: list[step.StepRow], source: str, filename: str) -> graphviz.Digraph:
    counted = [r for r in rows if not r.alternative]
    drawn = counted[:MAX_NODES]
    shares = dict(zip(map(id, rows), step.shares(rows)))
    top = max((shares.get(id(r)) or 0 for r in drawn), default=0) or 1
    g = graphviz.Digraph("step", graph_attr={"rankdir": "LR", "fontsize": "11", "nodesep": "0.08", "ranksep": "0.9",
                                             "fontname": "Helvetica"},
                         node_attr={"shape": "box", "style": "rounded,filled", "fontsize": "9", "height": "0.2",
                                    "fontname": "Helvetica", "fillcolor": "#ffffff"},
                         edge_attr={"color": "#9aa5b1", "arrowsize": "0.5"})
    text = source.splitlines()
    lines = sorted({n for r in drawn for n in r.lines})
    with g.subgraph(name="cluster_model") as m:
        m.attr(label=filename, style="rounded", color="#c5ccd3")
        for n in lines:
            code = text[n - 1].strip() if 0 < n <= len(text) else ""
            m.node(f"L{n}", f"{n}: {code if len(code) <= 60 else code[:59] + '…'}", shape="plaintext",
                   fillcolor="#ffffff")
    by_graph: dict[str, list[step.StepRow]] = {}
    for r in drawn:
        by_graph.setdefault(r.graph or "launches", []).append(r)
    for graph, members in by_graph.items():
        with g.subgraph(name=f"cluster_{graph}") as c:
            c.attr(label=f"{graph} · {len(members)}", style="rounded", color="#c5ccd3")
            for r in members:
                node = f"k{id(r)}"
                share = shares.get(id(r))
                timing = "" if r.estimate_us is None else f"\n≈ {r.estimate_us:.1f} µs" + (
                    f" × {r.calls}" if r.calls > 1 else "") + ("" if share is None else f" · {100 * share:.0f} %")
                name = r.kernel if r.outside else f"#{r.launch} {r.kernel}"
                fill = _fill((share or 0) / top, r.outside)
                c.node(node, f"{name[:56]}{timing}", fillcolor=fill, style="rounded,filled,dashed" if r.outside
                       else "rounded,filled", tooltip=r.how or r.kernel)
                for n in r.lines:
                    g.edge(f"L{n}", node)
    if len(counted) > len(drawn):
        g.node("more", f"… {len(counted) - len(drawn)} more kernels and calls (the table lists every one)",
               shape="plaintext")
    return g


def _fill(weight: float, outside: str) -> str:
    """White to a saturated blue (orange outside Triton) as a row's share of the step grows."""
    base = (255, 160, 60) if outside else (70, 130, 220)
    w = 0.15 + 0.85 * max(0.0, min(1.0, weight))
    r, gr, b = (round(255 + (c - 255) * w) for c in base)
    return f"#{r:02x}{gr:02x}{b:02x}"
