"""A server for a class, in Chromium: each student's workspace is their own. With the proxy's
user header, alice's file opens for alice and not for bob; without it, each browser gets its own
folder through a cookie that survives a reload."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import userproxy
from browser import require_chromium, running_app
from inspectors.store.workspace import user_folder

require_chromium()

# browser: tests/browser/conftest.py; each test runs a server of its own (its own environment)
MARKER = "ALICE_ONLY_7f3a"
HEADER = "X-Forwarded-User"


@pytest.fixture(scope="module")
def root():
    return Path(tempfile.mkdtemp(prefix="tlens-class-"))


def _users(root: Path) -> list[str]:
    d = root / "users"
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


def _open(browser, url: str, headers: dict | None = None):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, extra_http_headers=headers or {})
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=90_000)
    return ctx, page


def test_the_proxy_user_header_keys_each_workspace(root, browser):
    alice_dir = user_folder(root, "user:alice")
    alice_dir.mkdir(parents=True)
    src = (Path(__file__).parents[1] / "snippets" / "vadd.py").read_text()
    (alice_dir / "secret.py").write_text(f"# {MARKER}\n" + src)
    env = {"TLENS_WORKSPACE_DIR": str(root), "TLENS_USER_HEADER": HEADER}
    with running_app(env) as url:
        # Each student reaches the server through the authenticating proxy, which names them.
        proxies = userproxy.start(url, HEADER, ["alice", "bob"])
        link = "/?kernel=ws%3Asecret.py&run=1"              # opened and compiled
        _, alice = _open(browser, proxies["alice"] + link)
        # her file is open in the editor (its box may be folded after the compile: attached, not visible)
        alice.locator(".tl-editor .cm-content", has_text=MARKER).first.wait_for(state="attached", timeout=90_000)
        _, bob = _open(browser, proxies["bob"] + link)
        bob.wait_for_timeout(3000)
        assert MARKER not in bob.content()
        assert bob.locator(".tl-editor .cm-content", has_text=MARKER).count() == 0
        assert user_folder(root, "user:bob").is_dir()                  # bob got a folder of his own
        assert [f.name for f in user_folder(root, "user:bob").glob("*.py")] == []
        for ctx in browser.contexts:
            ctx.close()


def test_without_a_header_each_browser_gets_its_own_folder(root, browser):
    class_root = root / "noheader"
    env = {"TLENS_WORKSPACE_DIR": str(class_root), "TLENS_CLASS": "1"}
    with running_app(env) as url:
        ctx_a, a = _open(browser, url)
        _open(browser, url)
        a.wait_for_timeout(1500)
        first = _users(class_root)
        assert len(first) == 2 and all(n.startswith("browser-") for n in first), first
        assert any(c["name"] == "tlens_token" for c in ctx_a.cookies())
        a.reload()
        a.get_by_role("button", name="Compile", exact=True).wait_for(timeout=90_000)
        a.wait_for_timeout(1500)
        assert _users(class_root) == first                            # the reload found its folder again
        for ctx in browser.contexts:
            ctx.close()


def _sidebar_choices(page) -> dict[str, str]:
    """Each sidebar selectbox's label -> the value it shows."""
    boxes = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]')
    return {boxes.nth(i).locator("label").first.inner_text().strip(): boxes.nth(i).locator("input").input_value()
            for i in range(boxes.count())}


def test_a_new_browser_on_a_class_server_gets_the_links_options_and_compiles_them(root, browser):
    """A class's first visit (no cookie yet: the token is made, the sandbox started) draws the
    link's target and num_warps, and "default" for the rest, not the selectboxes' first options
    or an empty "Choose an option"; and Compile sends what the sidebar shows."""
    env = {"TLENS_WORKSPACE_DIR": str(root / "links"), "TLENS_CLASS": "1"}
    with running_app(env) as url:
        _, linked = _open(browser, url + "/?kernel=vector_add&target=cuda:90&num_warps=8&run=1")
        _, plain = _open(browser, url + "/?kernel=vector_add")
        for page in (linked, plain):
            page.wait_for_timeout(2000)
        shown = {"Target GPU": "sm_90 · H100/H200", "num_warps": "8", "num_stages": "default"}
        assert {k: _sidebar_choices(linked).get(k) for k in shown} == shown
        assert {k: _sidebar_choices(plain).get(k) for k in shown} == {**shown, "num_warps": "default"}
        linked.get_by_text("for cuda:90 · num_warps=8", exact=False).first.wait_for(timeout=120_000)
        for ctx in browser.contexts:
            ctx.close()
