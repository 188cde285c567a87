"""A class server that stops must not leave its sandboxes' scratch mounts, folders and cgroups on
the host (inspectors/process/leftovers.py). Before, a server stopped with SIGTERM, or killed,
left a tmpfs mounted for every sandbox it had started: a day of test runs left 100+ mounts.
A server stopped with SIGTERM removes them on its way out; one that was killed has them removed
at the next engine's start; a live server's are never touched."""
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, until
from inspectors.process import leftovers, sandbox

pytestmark = [pytest.mark.skipif(sandbox.check() is not None, reason=f"no sandbox here: {sandbox.check()}"),
              pytest.mark.skipif(os.geteuid() != 0, reason="only root mounts a tmpfs scratch folder")]

# A class server's engine (sandboxed, a tmpfs per sandbox's folder) that prints its folder once its
# workers are warm, then waits; SIGTERM ends it as Streamlit's handler does (the loop stops, Python exits).
SERVER = textwrap.dedent("""
    import dataclasses, signal, sys, time
    from inspectors.base import settings as settings_mod
    from inspectors.compile.engine import Engine
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    s = dataclasses.replace(settings_mod.load(), workers=2)
    assert s.sandbox and s.class_mode
    engine = Engine(s)
    assert engine.wait_ready()
    print(engine.scratch, flush=True)
    while True:
        time.sleep(0.2)
""")


def _server(tmp_path):
    env = {**os.environ, "TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(tmp_path / "ws"),
           "TLENS_TRITON_CACHE_DIR": str(tmp_path / "cache"), "TLENS_SCRATCH_MB": "64", "TLENS_OWN_SANDBOXES": "0",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", SERVER], cwd=str(ROOT), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    folder = Path(proc.stdout.readline().strip())
    assert folder.name.startswith(leftovers.PREFIX), folder
    assert until(lambda: len(leftovers.mounts_under(folder)) >= 2, 60), "the sandboxes' tmpfs mounts were not made"
    return proc, folder


def test_a_server_stopped_with_sigterm_takes_its_mounts_and_folder_with_it(tmp_path):
    proc, folder = _server(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    assert leftovers.mounts_under(folder) == [] and not folder.exists()


def test_a_killed_servers_leftovers_go_at_the_next_start_and_a_live_ones_stay(tmp_path):
    dead, dead_folder = _server(tmp_path / "a")
    live, live_folder = _server(tmp_path / "b")
    try:
        dead.kill()
        dead.wait(30)
        mounted = leftovers.mounts_under(dead_folder)
        assert mounted, "a killed server's mounts outlive it (what the next start must remove)"
        swept = leftovers.sweep()               # what every engine's start does
        assert swept["mounts"] >= len(mounted) and swept["folders"] >= 1
        assert leftovers.mounts_under(dead_folder) == [] and not dead_folder.exists()
        # the live server's folder and mounts are its own: untouched, and it still compiles there
        assert live.poll() is None and live_folder.exists() and len(leftovers.mounts_under(live_folder)) >= 2
    finally:
        live.send_signal(signal.SIGTERM)
        live.wait(60)
    assert not live_folder.exists()
