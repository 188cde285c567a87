"""The Lessons page's pieces: the step renderer (render.py), the exercise mode
(exercise_ui.py) and the panels each lesson file can name (`panel = "fusion.bytes"`), one
module per lesson. `PANELS` maps every panel name to its function `panel(ctx) -> facts`
(a dict of figures for the prose's {{...}}; None when it has nothing to show).

May import: app.render, app.components, app.backend, app.state, app.widgets, inspectors/,
kernels, streamlit. The page itself is app/views/lessons.py."""
from __future__ import annotations

from app.lessons import coalescing, coarsening, compiled_step, fusion, hopper, tiling

PANELS = {**coarsening.PANELS, **coalescing.PANELS, **fusion.PANELS, **tiling.PANELS, **hopper.PANELS,
          **compiled_step.PANELS}
