"""Triton Lens's Streamlit app: `streamlit run app/main.py`. The rooms, lowest first; a module
imports from its own room and the rooms before it, never from one after it
(tests/unit/test_layering.py), and `inspectors/` never imports `app`.

    render/      pure HTML and data from compiler output: no streamlit    (a new reader's HTML)
    components/  custom Streamlit components with a JS frontend            (a new browser element)
    backend/     the doorway to the engine: compiles, insights, workers     (a new engine call)
    state/       the session: every key (keys.py), values kept across pages (keep.py), kernel
                 files and the workspace, compile records, the URL          (a new piece of state)
    widgets/     Streamlit pieces that pages share: panels, charts, toggles (a new panel)
    lessons/     the Lessons page's step renderer and lesson panels         (a new lesson panel)
    views/       the pages, one file each (st.navigation in main.py): functions and a
                 one-line top level                                         (a new page)
    main.py      the page list
"""
