"""The replicated class server's pieces (deploy/serve_class.py): the machine's compile workers
split over the processes, and the nginx configuration it writes from the committed template,
checked by nginx itself. The processes behind a running nginx: tests/browser/test_browser_replicas.py."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, load_script

serve_class = load_script(ROOT / "deploy" / "serve_class.py")


def test_the_machines_workers_are_split_over_the_processes():
    assert serve_class.split_workers(16, 4) == [4, 4, 4, 4]
    assert serve_class.split_workers(16, 3) == [6, 5, 5]
    assert serve_class.split_workers(16, 8) == [2] * 8
    assert serve_class.split_workers(2, 4) == [1, 1, 1, 1]       # at least one each


def test_the_config_names_every_process_and_nginx_accepts_it(tmp_path):
    conf = serve_class.nginx_config(tmp_path, "127.0.0.1:18555", [18601, 18602, 18603])
    assert not [f for f in ("@PREFIX@", "@LISTEN@", "@SERVERS@") if f in conf]     # every field filled in
    for port in (18601, 18602, 18603):
        assert f"server 127.0.0.1:{port} max_fails=0;" in conf
    assert "hash $tlens_route consistent;" in conf and "listen 127.0.0.1:18555;" in conf
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        if os.environ.get("CI"):
            raise RuntimeError("CI needs nginx: apt-get install nginx-light")
        pytest.skip("nginx is not installed")
    (tmp_path / "tmp").mkdir()
    (tmp_path / "nginx.conf").write_text(conf)
    r = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                        "-e", str(tmp_path / "error.log")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
