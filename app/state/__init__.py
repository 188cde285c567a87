"""What a session keeps: every session key, named once (keys.py); the one way a widget's value
survives a visit to another page (keep.py); the explorer's kernel files and their callbacks
(kernel_files.py); whose workspace and its folder (workspace.py); compile records
(records.py); the explorer's state in the URL (urlstate.py, pure).

May import: app.render, app.components, app.backend, inspectors/, streamlit. Draws nothing of
its own (a cookie-setting element aside).
"""
