"""The project as an installed package (pyproject.toml; `make setup` runs pip install -e .): the
`tlens` command, the same requirements as requirements.txt, and no sys.path edits anywhere."""
from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

COMMANDS = ("app", "compile", "diff", "profile")
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".triton-versions", "artifacts", "workspace"}


def _installed() -> bool:
    try:
        importlib.metadata.distribution("triton-lens")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _lists_commands(text: str) -> list[str]:
    return [c for c in COMMANDS if not re.search(rf"^\s+{c}\b", text, re.M)]


@pytest.mark.skipif(not _installed(), reason="the project is not pip-installed here (the GPU machine puts the "
                                             "checkout on PYTHONPATH: benchmarks/gpu_suite.sh)")
@pytest.mark.workers
def test_tlens_help_lists_the_commands():
    tlens = Path(sys.executable).parent / "tlens"
    assert tlens.exists(), f"no tlens beside {sys.executable}: run make setup (pip install -e .)"
    p = subprocess.run([str(tlens), "--help"], capture_output=True, text=True, timeout=120, cwd="/")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: tlens") and not _lists_commands(p.stdout), p.stdout


def test_the_cli_module_lists_the_commands_without_the_ui():
    """inspectors/cli.py itself, installed or not; `tlens app` starts streamlit in its own process."""
    code = ("import sys; from inspectors import cli; rc = cli.main(['--help']); "
            "assert 'streamlit' not in sys.modules, 'inspectors.cli imported streamlit'; sys.exit(rc)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert not _lists_commands(p.stdout), p.stdout
    from inspectors import cli
    cmd = cli.app_command(["--server.port", "8502"])
    assert cmd[1:] == ["-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.port", "8502"]


def test_pyproject_and_requirements_list_the_same_packages():
    try:
        import tomllib
    except ModuleNotFoundError:          # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["dev"]
    def norm(req: str) -> str:
        return re.sub(r"\s+", "", req).replace("'", '"')
    listed = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    assert sorted(map(norm, declared)) == sorted(map(norm, filter(None, listed)))


def _python_files():
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if not (set(rel.parts[:-1]) & SKIP_DIRS) and not rel.parts[0].startswith(".venv"):
            yield path, rel


def test_no_file_edits_sys_path():
    """Scripts, tests and benchmarks import the installed package; nothing puts a folder on
    sys.path by hand (a subprocess's PYTHONPATH, e.g. the sandbox's, is another matter; so is the
    compile worker putting a job's own folder, the user's project, there for the user's imports)."""
    edits = [f"{rel}:{n}" for path, rel in _python_files()
             for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if re.search(r"sys\.path\.(insert|append)\(", line) and "# the user's project" not in line]
    assert not edits, "sys.path edits:\n" + "\n".join(edits)


def test_tlens_app_opens_a_file_from_disk(tmp_path, monkeypatch):
    """`tlens app FILE.py [streamlit options]`: the file is TLENS_OPEN (absolute), the rest goes
    to streamlit; a file that is not there is refused before anything starts."""
    from inspectors import cli
    started = []
    monkeypatch.setattr(cli, "run_app", lambda args: started.append(args) or 0)
    # cli.main sets TLENS_OPEN itself (the app it would start reads it): setenv first, so that
    # monkeypatch restores the variable's absence after the test. delenv(raising=False) of an
    # absent variable records nothing, and the leaked TLENS_OPEN opened driver.py in every later
    # AppTest of the run (test_hip_target_offers_amdgcn and test_bad_link_warns_and_still_works
    # failed wherever tests/unit/test_package.py ran before tests/app: the GPU suite's order).
    monkeypatch.setenv("TLENS_OPEN", "")
    monkeypatch.delenv("TLENS_OPEN")
    assert cli.main(["app", str(tmp_path / "missing.py")]) == 2 and not started
    (tmp_path / "driver.py").write_text("def example():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["app", "driver.py", "--server.port", "8502"]) == 0
    assert started == [["--server.port", "8502"]]
    import os
    assert os.environ["TLENS_OPEN"] == str(tmp_path / "driver.py")
    assert cli.main(["app", "--server.port", "8503"]) == 0 and started[-1] == ["--server.port", "8503"]


def test_the_components_modules_are_static_files_their_loaders_name():
    """The code editor's and the stage panel's elements carry a loader, not their modules (412 KB
    and 23 KB with every run of the page): the modules must be where Streamlit's static serving
    finds them (app/static/), under the names the loaders import, and static serving on."""
    try:
        import tomllib
    except ImportError:                 # Python 3.10
        import tomli as tomllib
    from app.components import code_editor, static_module
    assert code_editor.BUNDLE.parent == ROOT / "app" / "static" and code_editor.BUNDLE.stat().st_size > 100_000
    assert f'"app/static/{code_editor.BUNDLE.name}"' in code_editor.LOADER
    assert '"app/static/stage_panel.js"' in static_module.loader("stage_panel.js", "The panel")
    assert "export default function" in (ROOT / "app" / "static" / "stage_panel.js").read_text()
    with pytest.raises(FileNotFoundError):
        static_module.loader("missing.js", "x")
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableStaticServing"] is True
