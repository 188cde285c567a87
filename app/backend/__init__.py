"""The doorway to the engine (inspectors/compile): services.py starts the compile workers,
compiles with a per-session queue and shared result cache, and analyses stages (insight) under
a time budget. Pages and widgets compile through here, never through inspectors.compile directly.

May import: app.render, app.components, inspectors/, streamlit (its caches and script context).
"""
