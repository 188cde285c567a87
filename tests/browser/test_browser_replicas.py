"""Two Streamlit processes behind nginx (`make serve-class REPLICAS=2`, deploy/serve_class.py),
in Chromium: a student's file saved through one process opens through the other, and a result
compiled by one process is served by the other without a second compile. The test picks the
process through the proxy's own sticky cookie (`tlens_route`) and checks which one answered
from the proxy's X-Tlens-Replica header."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from browser import free_port, require_chromium
from conftest import ROOT
from editor_helpers import editor_text, fill_editor

require_chromium()

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MARKER = "SAVED_ON_ONE_REPLICA_51c2"


@contextlib.contextmanager
def class_server(root: Path, replicas: int = 2):
    """`deploy/serve_class.py --replicas N` on a free port; its whole process group killed after."""
    if not Path(NGINX).exists():
        pytest.fail("nginx is needed for the replicated class server: apt-get install nginx-light")
    port = free_port()
    state = Path(tempfile.mkdtemp(prefix="tlens-replicas-"))
    env = {**os.environ, "TLENS_WORKSPACE_DIR": str(root / "ws"), "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"),
           "TLENS_WORKERS": str(replicas), "TLENS_CLASS": "1"}
    log = open(state / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "serve_class.py"), "--replicas", str(replicas),
                             "--port", str(port), "--first-port", "0", "--state-dir", str(state)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 240
        while b"Triton Lens class server:" not in (state / "serve.log").read_bytes():
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"serve_class did not start: {(state / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()
        shutil.rmtree(state, ignore_errors=True)


def replica_of(url: str, route: str) -> str:
    """Which process the proxy sends a browser with this route cookie to."""
    req = urllib.request.Request(url + "/", headers={"Cookie": f"tlens_route={route}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers["X-Tlens-Replica"]


def routes_to_each(url: str) -> dict[str, str]:
    """A route cookie for each of the processes: replica address -> route."""
    out: dict[str, str] = {}
    for i in range(200):
        out.setdefault(replica_of(url, f"route-{i}"), f"route-{i}")
        if len(out) == 2:
            return out
    pytest.fail(f"the proxy sent 200 routes to {list(out)} only")


def goto(page, ctx, url: str, route: str, path: str) -> str:
    """Open `path` pinned to the process of `route`; returns that process's address."""
    ctx.add_cookies([{"name": "tlens_route", "value": route, "url": url}])
    response = page.goto(url + path)
    page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=120_000)
    return response.headers["x-tlens-replica"]


@pytest.fixture(scope="module")
def served(browser):
    """The replicated class server (not conftest.py's server) and the shared Chromium."""
    root = Path(tempfile.mkdtemp(prefix="tlens-replicas-root-"))
    with class_server(root) as url:
        yield url, routes_to_each(url), browser, root
    shutil.rmtree(root, ignore_errors=True)


def test_a_file_saved_through_one_process_opens_through_the_other(served):
    url, routes, browser, root = served
    (first, route_a), (second, route_b) = sorted(routes.items())
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    assert goto(page, ctx, url, route_a, "/?kernel=vector_add") == first
    source = editor_text(page)
    fill_editor(page, f"# {MARKER}\n" + source)            # an edited library kernel: saved as a copy
    deadline = time.time() + 60
    while not [f for f in (root / "ws").rglob("*.py") if MARKER in f.read_text()]:
        assert time.time() < deadline, "the edit was not saved in the workspace"
        page.wait_for_timeout(300)
    saved = [f for f in (root / "ws").rglob("*.py") if MARKER in f.read_text()][0]
    # The same browser (its workspace cookie) reloads, and the proxy now sends it to the other process.
    assert goto(page, ctx, url, route_b, f"/?kernel=ws%3A{saved.name}") == second
    page.locator(".tl-editor .cm-content", has_text=MARKER).first.wait_for(state="attached", timeout=60_000)
    assert MARKER in editor_text(page)
    ctx.close()


def done_count(page, ctx, url: str, route: str) -> int:
    """The compiles this process's pool has finished, from its Caches page."""
    ctx.add_cookies([{"name": "tlens_route", "value": route, "url": url}])
    page.goto(url + "/caches")
    line = page.get_by_text("warm compile workers").first          # in a folded expander
    line.wait_for(state="attached", timeout=120_000)
    text = line.text_content()
    return int(text.split(" done")[0].rsplit("·", 1)[1].strip())


def wait_for_ptx(page) -> None:
    """The compile's panels are drawn: the PTX panel (open by default at 1280 px; softmax on
    sm_80 opens at its first global load, a `cp.async.ca.shared.global`)."""
    ptx = page.locator('.tlens-panel[data-stage="ptx"] .l', has_text="cp.async.ca.shared.global").first
    ptx.wait_for(timeout=120_000)


def test_a_result_compiled_by_one_process_is_served_by_the_other(served):
    url, routes, browser, _ = served
    (first, route_a), (second, route_b) = sorted(routes.items())
    link = "/?kernel=softmax&target=cuda%3A80&num_warps=2&run=1"
    a_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    a = a_ctx.new_page()
    assert goto(a, a_ctx, url, route_a, link) == first
    wait_for_ptx(a)
    b_ctx = browser.new_context(viewport={"width": 1280, "height": 720})      # another student
    b = b_ctx.new_page()
    before_b = done_count(b, b_ctx, url, route_b)
    assert goto(b, b_ctx, url, route_b, link) == second
    wait_for_ptx(b)
    assert done_count(a, a_ctx, url, route_a) >= 1                 # compiled there
    assert done_count(b, b_ctx, url, route_b) == before_b          # and not again here
    a_ctx.close()
    b_ctx.close()
