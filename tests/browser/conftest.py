"""The fixtures every browser test file shares: one real server and one Chromium per module, and
the explorer opened in it. A module changes what its server runs with by overriding `server_env`
(e.g. its own workspace folder: `def server_env(workspace): return {"TLENS_WORKSPACE_DIR": ...}`)
or by parametrizing it indirectly (`@pytest.mark.parametrize("server_env", [{"TLENS_CLASS": "1"}],
indirect=True)`); a module whose page starts elsewhere overrides `page` on top of `browser` and
`server`. The machinery under them (Chromium's path, `running_app`, the log check) is the
package's, tests/browser/__init__.py. Each test file still calls `require_chromium()` first: it
skips the module without Chromium."""
import pytest

from browser import CHROMIUM, SHOTS, open_app, running_app


@pytest.fixture(scope="module")
def server_env(request) -> dict:
    """The environment of this module's server on top of the test session's (none by default)."""
    return dict(getattr(request, "param", None) or {})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A workspace folder of the module's own, for a module whose `server_env` names it."""
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def server(server_env):
    """The URL of a fresh `streamlit run app/main.py` (running_app), killed after the module."""
    with running_app(server_env) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (Debian's), for the module."""
    from playwright.sync_api import sync_playwright
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(browser, server):
    """The explorer at 1600×1000, shared by the module's tests in their order."""
    page = open_app(browser, server)
    yield page
    page.close()
