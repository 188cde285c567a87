"""Triton Lens: `streamlit run app/main.py` (or `tlens app`). The page list; each page is a file in app/views/."""
from __future__ import annotations

import time

import streamlit as st

# `app` imports from anywhere: `make setup` installs the project (pip install -e .)
from app.backend import gate, presence, services
from app.state import keys, workspace
from app.widgets import panels, present

st.set_page_config(page_title="Triton Lens", layout="wide")
st.session_state[keys.RUN_STARTED] = time.perf_counter()     # a compile's "page" time counts from here
present.init(st.query_params)       # ?present=1: presentation mode, on whichever page a session opens
panels.inject_css()
gate.refuse_unsafe_server()   # a class server runs students' code sandboxed, or not at all
services.lens().engine()   # start the warm compile worker with the first page load
services.prewarm_own(workspace.user())   # a class server: this student's own sandbox, started now
workspace.draw_cookie()    # a new browser's token, as a cookie

PAGES = [
    st.Page("views/explorer.py", title="Explorer", icon=":material/biotech:", default=True, url_path="explorer"),
    st.Page("views/diff.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("views/benchmark.py", title="Benchmark", icon=":material/timer:", url_path="benchmark"),
    st.Page("views/caches.py", title="Caches & torch.compile", icon=":material/folder_open:", url_path="caches"),
    st.Page("views/passes.py", title="Pass pipeline", icon=":material/stairs:", url_path="passes"),
    st.Page("views/layouts.py", title="Layouts", icon=":material/grid_view:", url_path="layouts"),
    st.Page("views/lessons.py", title="Lessons", icon=":material/school:", url_path="lessons"),
]
# the pages in the top bar: the sidebar keeps its height for the explorer's options
# (on the first screen at 1280×720); material icons draw without an emoji font (projectors, CI)
with presence.accounted(services.who()):      # this run's server CPU, charged to its student
    st.navigation(PAGES, position="top").run()
