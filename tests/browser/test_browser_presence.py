"""A class server in Chromium: a student's own sandbox lives while one of their tabs is open and
is gone within 30 s of the last one closing (app/backend/presence.py); a browser the proxy does
not name (a cookie) gets none by opening the page, only when it compiles."""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import userproxy
from browser import require_chromium, running_app
from conftest import until
from editor_helpers import fill_editor

require_chromium()

HEADER = "X-Forwarded-User"


def _server_pid(url: str) -> int:
    port = url.rsplit(":", 1)[1].encode()
    for pid in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(cmd) and b"--server.port" in cmd and port in cmd:
            return int(pid)
    raise AssertionError(f"no server process for {url}")


def own_sandboxes(server: int) -> int:
    """The students' own sandboxes the server runs: its children started with TLENS_WORKER_FORK."""
    n = 0
    for pid in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == server and b"TLENS_WORKER_FORK" in cmd:
            n += 1
    return n


def _open(browser, url: str):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=90_000)
    return ctx, page


def test_a_students_sandbox_goes_when_their_tabs_close(browser):
    root = Path(tempfile.mkdtemp(prefix="tlens-presence-"))
    env = {"TLENS_WORKSPACE_DIR": str(root), "TLENS_USER_HEADER": HEADER, "TLENS_WORKERS": "1"}
    with running_app(env) as url:
        server = _server_pid(url)
        proxies = userproxy.start(url, HEADER, ["alice"])
        ctx, _ = _open(browser, proxies["alice"])                    # named by the proxy: started now
        ctx2, _ = _open(browser, proxies["alice"])                   # her second tab
        assert until(lambda: own_sandboxes(server) == 1, 60)
        ctx.close()
        time.sleep(20)
        assert own_sandboxes(server) == 1                             # one tab still open: kept
        ctx2.close()
        closed = time.monotonic()
        assert until(lambda: own_sandboxes(server) == 0, 30), "her sandbox outlived her tabs by 30 s"
        print(f"\nFIGURE sandbox gone {time.monotonic() - closed:.1f} s after the last tab closed")


def test_a_cookie_gets_a_sandbox_only_when_it_compiles(browser):
    root = Path(tempfile.mkdtemp(prefix="tlens-presence-"))
    env = {"TLENS_WORKSPACE_DIR": str(root), "TLENS_CLASS": "1", "TLENS_WORKERS": "1"}
    with running_app(env) as url:
        server = _server_pid(url)
        contexts = [_open(browser, url)[0] for _ in range(3)]       # three new browsers open the page
        time.sleep(5)
        assert own_sandboxes(server) == 0
        page = contexts[0].pages[0]
        fill_editor(page, (Path(__file__).parents[1] / "snippets" / "vadd.py").read_text() + "\n# mine\n")
        page.get_by_role("button", name="Compile", exact=True).click()     # their own file: their sandbox
        assert until(lambda: own_sandboxes(server) == 1, 90)
        for ctx in contexts:
            ctx.close()
        assert until(lambda: own_sandboxes(server) == 0, 30)
