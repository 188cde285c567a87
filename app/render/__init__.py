"""Pure renderers: compiler output -> HTML strings and data (stage text with classes, the diff
table, the lessons' layout grids and graphs). Nothing here draws: no `streamlit` import
(tests/unit/test_layering.py), so every function is testable with plain asserts.

May import: inspectors/, pygments, graphviz, the standard library; nothing else of app/.
"""
