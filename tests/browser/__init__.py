"""What every browser test file shares: Debian's Chromium (Playwright's own download does not
work here), and a real `streamlit run app/main.py` on a free port (the fixtures built on these are
in conftest.py beside this file). The server's output goes
to artifacts/streamlit-<port>.log (a pipe nobody reads would fill and stall the server)."""
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# What Streamlit writes when an API is on its way out (streamlit/deprecation_util.py:
# "`st.x` will be removed after <date>", "... is deprecated ...").
DEPRECATION = re.compile(r"will be removed after|\bdeprecat", re.IGNORECASE)
SHOTS = ROOT / "artifacts" / "screenshots"
WIDE = {"width": 1600, "height": 1000}          # the explorer's default window in these tests


def require_chromium() -> None:
    """Skip the calling module without Chromium, except in CI where that is a failure."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            raise RuntimeError("CI needs Chromium for the browser tests: apt-get install chromium")
        pytest.skip("Chromium is not installed", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app(env: dict | None = None):
    """Yields the URL of a fresh server; kills its whole process group afterwards."""
    port = free_port()
    log_path = ROOT / "artifacts" / f"streamlit-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
                                 "--server.port", str(port), "--server.headless", "true"],
                                cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 120
            while True:
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                        break
                except OSError:
                    if time.time() > deadline:
                        pytest.fail(f"streamlit did not start (log: {log_path})")
                    time.sleep(0.5)
            yield url
        finally:
            os.killpg(proc.pid, 9)
            proc.wait()
    deprecations = deprecation_lines(log_path.read_text(errors="replace"))
    assert not deprecations, f"the server logged deprecation warning(s) ({log_path}):\n" + "\n".join(deprecations)


def open_app(browser, url: str, viewport: dict | None = None, timeout: int = 60_000):
    """A new page of `browser` (Playwright's) on `url`, once the explorer's Compile button is there."""
    page = browser.new_page(viewport=viewport or WIDE)
    page.goto(url)
    page.get_by_role("button", name="Compile", exact=True).wait_for(timeout=timeout)
    return page


def idle(page, timeout: int = 120_000) -> None:
    """Until the page's script run has ended (Streamlit's running icon is gone)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')", timeout=timeout)


def switch_on(page, name: str) -> None:
    """Turn on the toggle `name` as a user would, once the page is idle, and wait until it shows
    checked. A click during a run (a Compile still finishing) was once lost in CI (stop 52): the
    switch stayed off and its bars never came. One more click after 15 s unchecked; a toggle that
    still does not turn on fails the test."""
    from playwright.sync_api import expect
    switch = page.get_by_role("switch", name=name)
    for timeout in (15_000, 30_000):
        idle(page)
        page.get_by_text(name, exact=True).click()      # its label: the input is drawn under it
        try:
            expect(switch).to_be_checked(timeout=timeout)
            return
        except AssertionError:
            if timeout == 30_000:
                raise


def deprecation_lines(log: str) -> list[str]:
    """The lines of a server log that announce a deprecated API."""
    return [line for line in log.splitlines() if DEPRECATION.search(line)]

