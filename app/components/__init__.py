"""Custom Streamlit components, each a folder with its JS/CSS frontend: the kernel editor
(code_editor/) and the stage panel (stage_panel/). A browser-side element goes here; a piece
made of Streamlit's own widgets goes to app/widgets/.

May import: app.render, inspectors/, streamlit.
"""
