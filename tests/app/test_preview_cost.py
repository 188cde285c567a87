"""The streamed preview's work is in proportion to what changed (issue 56's preview bomb): a job
that answers a 15 MB launch and then a tiny launch every third of a second had the server
highlight the big one's stages again at each; now the stages are drawn when another launch is
shown, and at most PREVIEW_CHARS of each (the finished page draws it whole)."""
from streamlit.testing.v1 import AppTest


def _script():
    import streamlit as st

    from app.render import stage_html
    from app.widgets import streaming
    from inspectors.base.result import KernelResult
    from inspectors.compile.journal import Progress

    drawn = []
    real = stage_html.render_stage_html       # (this process's module: put back whatever happens)
    stage_html.render_stage_html = lambda name, text, **kw: drawn.append((name, len(text))) or real(name, text[:200], **kw)
    try:
        big = KernelResult("big", "cuda:90", {}, (), {"source": "x = 1\n" * 400_000, "ptx": "mov.u32 %r1, 0;\n" * 1_000_000})
        progress = Progress(labels=tuple(f"launch {i}" for i in range(30)))
        progress._kernels[0], progress.done[0] = big, 0.1
        preview = streaming.Preview("k.py")
        preview.started -= 5                       # a compile running for a while: the preview is drawn
        preview(progress)
        for i in range(1, 20):                      # a tiny launch done after another
            progress._kernels[i] = KernelResult(f"k{i}", "cuda:90", {}, (), {"source": "y = 2\n", "ptx": "ret;\n"},
                                                launch=i)
            progress.done[i] = 0.1 + i
            preview(progress)
    finally:
        stage_html.render_stage_html = real
    st.session_state["drawn"] = drawn


def test_a_big_launch_is_drawn_once_and_only_its_first_part():
    from app.render import stage_html
    real = stage_html.render_stage_html
    at = AppTest.from_function(_script, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    drawn = at.session_state["drawn"]
    from app.widgets.streaming import PREVIEW_CHARS
    assert [name for name, _ in drawn] == ["source", "ptx"], drawn        # once, not once per launch done
    assert all(n <= PREVIEW_CHARS for _, n in drawn)
    assert any("the finished page shows all" in c.value for c in at.caption)
    assert stage_html.render_stage_html is real           # the renderer put back for the tests after this one
