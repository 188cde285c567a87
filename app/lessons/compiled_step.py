"""Panels of the lesson "What torch.compile fuses" (assets/lessons/torch_compile.md): a compiled
step in the step view's table and picture, for each [[compile]] of the step (a block's
forward, backward and optimizer under torch.compile; the same block with a graph break)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app.lessons.common import Ctx, kernel_file, table
from app.render import step_picture
from app.widgets import step_table
from inspectors.explain import step

_COLUMNS = ("#", "graph", "kernel", "est. µs", "% of step", "calls", "bound", "MB", "GFLOP", "lines", "fuses (ATen)")


def _rows(ctx: Ctx, name: str) -> tuple[list, str, str]:
    spec = next(c for c in ctx.step.compiles if c.name == name)
    filename, source = kernel_file(ctx.lesson, spec.kernel)
    return step.rows(ctx.compiled[name], filename, None, ctx.outside.get(name, ())), filename, source


def table_panel(ctx: Ctx):
    """Each compile's step as the Explorer's table shows it (its main columns, every row on the
    page: a projector cannot scroll inside a grid)."""
    for spec in ctx.step.compiles:
        found, filename, _ = _rows(ctx, spec.name)
        found = [r for r in found if not r.alternative]
        rows = [{c: "" if row.get(c) is None else row[c] for c in _COLUMNS} for row in step_table.table_rows(found)]
        total = sum(r.step_us for r in step.counted(found))
        st.markdown(f"**{filename}** · {sum(not r.outside for r in found)} Triton launches, "
                    f"{sum(bool(r.outside) for r in found)} calls outside Triton · ≈ {total:,.1f} µs on "
                    f"{found[0].gpu if found else '—'} (estimated)")
        table(pd.DataFrame(rows))
    return {}


def picture_panel(ctx: Ctx):
    """The first compile's step as a picture: the block's lines → the kernels they became."""
    found, filename, source = _rows(ctx, ctx.step.compiles[0].name)
    st.graphviz_chart(step_picture.picture(found, source, filename), width="stretch")
    return {}


PANELS = {"compile.step": table_panel, "compile.picture": picture_panel}
