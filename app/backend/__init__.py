"""The Streamlit glue around the one door (inspectors/session): services.py holds the server's
one Lens (`st.cache_resource`), who is asking, a compile's bookkeeping in the session and the
spinners of the jobs a panel starts; queue_line.py the line a waiting compile shows; presence.py
who is on a class server (a student's tabs, their sandbox stopped when the last closes) and what
each costs the server; gate.py the refusal to serve users' code unsandboxed. Pages reach
compiles, insights, the history and the jobs through `inspectors.session`, never through
inspectors/compile, bench or store (tests/unit/test_layering.py).

May import: app.render, app.components, inspectors/ (session and the pure base/read/explain),
streamlit (its caches and script context).
"""
