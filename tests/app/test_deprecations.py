"""Streamlit's deprecations fail the suite: the class-mode cookie is set through a
components-v2 element (not the removed `components.v1.html`), the guard in conftest.py listens
where Streamlit reports a deprecation, and the browser tests' log check (tests/browser/__init__.py)
recognises Streamlit's wording."""
import json
import logging

import pytest
from streamlit.testing.v1 import AppTest

from browser import deprecation_lines
from conftest import _Collect


def _cookie_app():
    import streamlit as st
    from app.state import keys, workspace
    st.session_state[keys.NEW_TOKEN] = "A" * 43
    workspace.draw_cookie()


def test_cookie_is_set_by_a_v2_element_without_deprecation():
    at = AppTest.from_function(_cookie_app).run(timeout=30)
    assert not at.exception
    found = [el for el in at.get("bidi_component") if el.key == "tlens-cookie-tlens_token"]
    assert len(found) == 1
    assert json.loads(found[0].proto.json) == {"name": "tlens_token", "value": "A" * 43}
    # the autouse no_streamlit_deprecation fixture fails this test if Streamlit logged one


def _removed_api_app():
    import streamlit.components.v1 as components
    components.html("<p>x</p>", height=0)


@pytest.mark.allow_streamlit_deprecation
def test_the_guard_hears_a_removed_api():
    logger = logging.getLogger("streamlit.deprecation_util")
    heard = _Collect()
    logger.addHandler(heard)
    try:
        AppTest.from_function(_removed_api_app).run(timeout=30)
    finally:
        logger.removeHandler(heard)
    assert any("components.v1.html" in m and "will be removed" in m for m in heard.messages), heard.messages
    log = "2026-11-24 13:00:00.000 " + "\n".join(heard.messages) + "\n2026-11-24 13:00:01.000 compiled add_kernel\n"
    assert deprecation_lines(log) and not any("compiled add_kernel" in line for line in deprecation_lines(log))
