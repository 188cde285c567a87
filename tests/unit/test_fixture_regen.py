"""The golden fixtures' regeneration scripts (tests/fixtures/**/regen.py) still work: each
imports (a module renamed or moved under inspectors/ fails here, not the day someone
regenerates), and the two that run in a few seconds run into a temporary folder and give
the committed fixtures back.

Not run here: insight/regen.py (its kernel JSON holds the compile's own seconds, and a
cubin whose line table has the checkout's path, and with ptxas 12 a file time) and
sourcemap/regen.py (four compiles, an AMD one among them: over ten seconds; its stages name
the checkout's Triton install)."""
import importlib.util
import re
from pathlib import Path

import pytest

from conftest import FIXTURES
from inspectors.base import triton_support
from inspectors.read.sass import nvidia_tool

SCRIPTS = sorted(FIXTURES.rglob("regen.py"))
# the Triton the committed fixtures were compiled with (tests/fixtures/resources/regen.py says so)
FIXTURE_TRITON = "3.9.0"


def load(path: Path):
    """The script as a module, from its file, without running its main()."""
    name = "regen_" + ("_".join(path.parent.relative_to(FIXTURES).parts) or "memops")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_script_is_found():
    assert {p.relative_to(FIXTURES).as_posix() for p in SCRIPTS} >= {
        "regen.py", "insight/regen.py", "resources/regen.py", "sourcemap/regen.py"}


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.relative_to(FIXTURES).as_posix() for p in SCRIPTS])
def test_script_imports(path, monkeypatch):
    """Importing it names only what exists, and neither compiles nor writes anything."""
    from inspectors.compile import engine as engine_mod

    def no_engine(*a, **k):
        raise AssertionError(f"importing {path} started a compile engine")
    monkeypatch.setattr(engine_mod.Engine, "__init__", no_engine)
    before = {p: p.stat().st_mtime_ns for p in path.parent.iterdir()}
    module = load(path)
    assert callable(module.main)
    assert {p: p.stat().st_mtime_ns for p in path.parent.iterdir()} == before


def _compiles_like_the_fixtures():
    if triton_support.installed() != FIXTURE_TRITON:
        pytest.skip(f"the fixtures are Triton {FIXTURE_TRITON}'s; this is {triton_support.installed() or 'none'}")
    for tool in ("nvdisasm", "cuobjdump", "ptxas-blackwell"):
        if nvidia_tool(tool) is None:
            pytest.skip(f"{tool} is not in this triton wheel")


def _produced(out: Path, committed: Path, names: list[str]) -> None:
    assert names, f"nothing written into {out}"
    missing = [n for n in names if not (committed / n).exists()]
    assert not missing, f"the script writes files that are not committed: {missing}"


def test_memops_regen_gives_the_committed_fixtures(engine, tmp_path):
    """tests/fixtures/regen.py: vadd's PTX and SASS, and their memory ops, byte for byte."""
    _compiles_like_the_fixtures()
    load(FIXTURES / "regen.py").main(tmp_path, engine)
    names = sorted(p.name for p in tmp_path.iterdir())
    _produced(tmp_path, FIXTURES, names)
    assert names == sorted(p.name for p in FIXTURES.glob("vadd_*"))
    for name in names:
        assert (tmp_path / name).read_text() == (FIXTURES / name).read_text(), name


# what differs between two compiles of the same kernel, in the resources fixtures
_TRITON_DIR = re.compile(r'"[^"\n]*/triton/')              # where Triton is installed (PTX `.file` of its helpers)
_COMPILE_TIME = re.compile(r"^.*Compile time = .*$", re.M)  # ptxas -v's own time


def _same_compile(text: str) -> str:
    return _COMPILE_TIME.sub("", _TRITON_DIR.sub('"<triton>/', text))


def test_resources_regen_gives_the_committed_fixtures(engine, tmp_path):
    """tests/fixtures/resources/regen.py: the same kernels, registers, shared memory and ptxas
    log; the PTX but for where Triton is installed, the log but for ptxas' time. The cubins are
    compared through cuobjdump's report: their line table names the checkout's Triton path
    (and ptxas 12, for sm_80, writes the Python file's time there)."""
    _compiles_like_the_fixtures()
    res = FIXTURES / "resources"
    load(res / "regen.py").main(tmp_path, engine)
    names = sorted(p.name for p in tmp_path.iterdir())
    _produced(tmp_path, res, names)
    assert len(names) == 5 * 4
    for name in names:
        if name.endswith(".cubin"):
            continue
        got, want = (tmp_path / name).read_text(), (res / name).read_text()
        if name.endswith((".ptx", ".ptxas.txt")):
            got, want = _same_compile(got), _same_compile(want)
        assert got == want, name
