"""Which engine folders count as left behind (inspectors/process/leftovers.py): only a marked one
whose process (pid and start time) is gone; the mounts and cgroups themselves are in
tests/sandbox/test_leftovers.py (root, bubblewrap)."""
import os

from inspectors.process import leftovers


def test_a_folder_without_a_mark_or_with_a_reused_pid(tmp_path):
    """An unmarked folder and a live one stay; a mark whose pid now names another process goes."""
    unmarked = tmp_path / "tlens-unmarked"
    unmarked.mkdir()
    reused = tmp_path / "tlens-reused"
    reused.mkdir()
    (reused / leftovers.OWNER).write_text(f"{os.getpid()} 1\n")       # this pid, another start time
    mine = tmp_path / "tlens-mine"
    mine.mkdir()
    leftovers.mark(mine)
    assert leftovers.sweep(tmp_path) == {"folders": 1, "mounts": 0}
    assert unmarked.exists() and mine.exists() and not reused.exists()
