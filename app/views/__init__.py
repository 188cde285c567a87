"""The pages: one file each, listed in app/main.py (`st.Page("views/NAME.py", url_path=...)`;
tests switch to them by that path, and a shared link names the url_path: keep both). Each file
is functions with a short top level that calls the page's function; Streamlit runs the file as
a script on every rerun. A new page is a file here and a line in main.py.

May import: every other room of app/, inspectors/, kernels, streamlit. Nothing imports a page.
"""
