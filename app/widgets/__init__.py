"""Streamlit pieces that pages share: stage panels and what they mean (panels.py), the
benchmark's tables and charts (bench_view.py), a measured profile's heat (profile_view.py),
presentation mode's toggle and styles (present.py), the explorer's compile options
(compile_options.py), a result's launches in one table (step_table.py). A new panel or chart goes here; its HTML, if it is pure, goes to
app/render/.

May import: app.render, app.components, app.backend, app.state, inspectors/, streamlit.
"""
