"""Watching a job's scratch folder costs the server the same at 48,000 files as at one
(issue 56's scan bomb): a mounted scratch is read from its filesystem's counts (statvfs), a
plain folder is walked while the job runs at most a twentieth of the time, and at the answer
always."""
import os
import time

import pytest

from inspectors.compile import worker_handle
from inspectors.process import scratch


def test_a_plain_folder_is_walked_a_twentieth_of_the_time_while_the_job_runs(tmp_path, monkeypatch):
    calls = []
    real = worker_handle.folder_usage

    def counted(folder, limit_files):
        calls.append(folder)
        time.sleep(0.01)                     # a walk of many files
        return real(folder, limit_files)
    monkeypatch.setattr(worker_handle, "folder_usage", counted)
    assert scratch.usage(tmp_path) is None
    for _ in range(10):                                   # ten ticks within 0.2 s: one walk
        assert worker_handle.over_allowance(tmp_path, 1024, final=False) == ""
    assert len(calls) == 1
    assert worker_handle.over_allowance(tmp_path, 1024, final=True) == "" and len(calls) == 2   # the answer's


def test_a_folder_over_its_files_is_refused_by_the_walk(tmp_path, monkeypatch):
    monkeypatch.setattr(worker_handle, "SCRATCH_FILES", 50)
    for i in range(60):
        (tmp_path / f"f{i}").touch()
    assert "50 files or more" in worker_handle.over_allowance(tmp_path, 1024)


@pytest.fixture
def tmpfs(tmp_path):
    folder = tmp_path / "scratch"
    if not scratch.make(folder, mb=64, files=60_000):
        pytest.skip("no tmpfs can be mounted here (not root with CAP_SYS_ADMIN)")
    yield folder
    scratch.remove(folder)


def test_a_mounted_scratch_is_counted_by_its_filesystem_not_walked(tmpfs, monkeypatch):
    for i in range(3000):
        (tmpfs / f"f{i}").touch()
    (tmpfs / "data").write_bytes(os.urandom(1 << 20))
    monkeypatch.setattr(worker_handle, "folder_usage", lambda *a, **k: pytest.fail("walked"))
    used, files = scratch.usage(tmpfs)
    assert files == 3001 and used >= 1 << 20
    assert worker_handle.over_allowance(tmpfs, 1024, final=False) == ""
    assert "MB: more than its scratch allowance (0 MB" in worker_handle.over_allowance(tmpfs, 0, final=False)
    monkeypatch.setattr(worker_handle, "SCRATCH_FILES", 2000)
    assert "2,000 files or more" in worker_handle.over_allowance(tmpfs, 1024, final=False)
