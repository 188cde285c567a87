"""Configuration in one place: every read of a TLENS_ variable goes through
inspectors/base/settings.py (`settings.load()`), each one a documented row of its docstring's
table and a field its `_load` fills. Writes stay free (the engine puts TLENS_TRITON_CACHE_BASE in
a worker's environment; `tlens app FILE` sets TLENS_OPEN for the server it starts)."""
from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest
from conftest import ROOT

SETTINGS = Path("inspectors") / "base" / "settings.py"
TLENS = re.compile(r"TLENS_[A-Z0-9_]+")
FOLDERS = ("app", "inspectors", "kernels", "deploy")   # not tests/ nor benchmarks/: they set env for what they start
CONFIG_DOC = ROOT / "docs" / "07-configuration.md"
ENVIRON = ("os.environ", "environ")
GETENV = ("os.getenv", "getenv", "os.environ.get", "environ.get")
COPIES = ("dict(os.environ)", "os.environ.copy()", "dict(environ)", "environ.copy()")


def _names(tree: ast.AST) -> tuple[set[str], set[str], dict[str, str]]:
    """The module's spellings of the environment: names bound to the environ mapping (or a copy
    of it: `env = dict(os.environ)`, `env = {**os.environ, ...}`, `from os import environ as E`),
    names bound to a getter (`env = os.environ.get`, `from os import getenv`), and module-level
    string constants (`VAR = "TLENS_X"`), so `os.environ.get(VAR)` is seen too."""
    mappings, getters, consts = {*ENVIRON, *COPIES}, set(GETENV), {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module == "os":
            for a in n.names:
                (mappings if a.name == "environ" else getters if a.name == "getenv" else set()).add(a.asname or a.name)
    for _ in range(2):                                   # an alias of an alias
        for n in ast.walk(tree):
            if not isinstance(n, (ast.Assign, ast.AnnAssign)) or n.value is None:
                continue
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            value = ast.unparse(n.value)
            copy = value in COPIES or value in mappings or (isinstance(n.value, ast.Dict) and any(
                k is None and ast.unparse(v) in mappings for k, v in zip(n.value.keys, n.value.values)))
            getter = value in getters or any(value == f"{m}.get" for m in mappings)
            for t in targets:
                if isinstance(t, ast.Name):
                    if copy:
                        mappings.add(t.id)
                    elif getter:
                        getters.add(t.id)
    for n in getattr(tree, "body", []):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    consts[t.id] = n.value.value
    return mappings, getters, consts


def direct_reads(path: Path) -> list[str]:
    """`line: how` for every read of a TLENS_ variable in `path` that bypasses the settings:
    os.environ.get("TLENS_X"), os.getenv("TLENS_X"), os.environ["TLENS_X"] (read), "TLENS_X" in
    os.environ, os.environ.pop("TLENS_X"), the same through an alias (`env = os.environ.get`,
    `env = dict(os.environ)`), a module constant naming the variable or an f-string starting
    with TLENS_. `os.environ["TLENS_X"] = ...` and `env.setdefault("TLENS_X", ...)` are writes."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    mappings, getters, consts = _names(tree)

    def tlens(node: ast.AST | None) -> bool:
        if isinstance(node, ast.Name):
            return bool(TLENS.fullmatch(consts.get(node.id, "")))
        if isinstance(node, ast.JoinedStr):
            first = node.values[0] if node.values else None
            return isinstance(first, ast.Constant) and str(first.value).startswith("TLENS_")
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(TLENS.fullmatch(node.value))

    out = []
    for n in ast.walk(tree):
        hit = False
        if isinstance(n, ast.Call) and n.args and tlens(n.args[0]):
            f = ast.unparse(n.func)
            hit = f in getters or any(f == f"{m}.{m2}" for m in mappings for m2 in ("get", "pop"))
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and tlens(n.slice):
            hit = ast.unparse(n.value) in mappings
        elif isinstance(n, ast.Compare) and tlens(n.left):
            hit = any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops) and \
                any(ast.unparse(c) in mappings for c in n.comparators)
        if hit:
            out.append((n.lineno, f"{n.lineno}: {ast.unparse(n)[:80]}"))
    return [how for _, how in sorted(out)]


def scan(root: Path) -> list[str]:
    """`path:line: how` for every direct read under root's FOLDERS (settings.py itself excepted)."""
    return [f"{p.relative_to(root)}:{r}" for folder in FOLDERS for p in sorted((root / folder).rglob("*.py"))
            if p.relative_to(root) != SETTINGS and "fixtures" not in p.parts for r in direct_reads(p)]


def test_no_module_reads_a_tlens_variable_but_the_settings():
    bad = scan(ROOT)
    assert not bad, "read these through inspectors.base.settings.load():\n" + "\n".join(bad)


def test_the_checker_sees_every_kind_of_direct_read(tmp_path):
    """The rule above is not vacuous: a module of a probe tree that reads the environment
    directly, in every spelling, is caught, line by line; writes and settings.py are not."""
    probe = tmp_path / "inspectors" / "compile" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(
        'import os\nfrom os import environ\nfrom os import getenv as ge\nenv = os.environ.get\nVAR = "TLENS_K"\n'
        'a = os.environ.get("TLENS_A", "1")\n'           # 6
        'b = os.getenv("TLENS_B")\n'                      # 7
        'c = os.environ["TLENS_C"]\n'                     # 8
        'd = "TLENS_D" in os.environ\n'                   # 9
        'e = env("TLENS_E")\n'                            # 10
        'f = environ.get("TLENS_F")\n'                    # 11
        'g = ge("TLENS_G")\n'                             # 12
        'copy = {**os.environ, "X": "1"}\n'
        'h = copy.get("TLENS_H")\n'                       # 14
        'i = dict(os.environ)["TLENS_I"]\n'               # 15
        'j = os.environ.pop("TLENS_J", None)\n'           # 16
        'k = os.environ.get(VAR)\n'                       # 17
        'n = "1"\nl = os.environ.get(f"TLENS_L{n}")\n'    # 19
        'm = "TLENS_M" not in copy\n'                     # 20
        'os.environ["TLENS_OK"] = "1"\nchild = {"TLENS_OK": "1"}\ncopy["TLENS_OK"] = "1"\n'
        'copy.setdefault("TLENS_OK", "1")\nmsg = "set TLENS_OK=1"\n')
    exempt = tmp_path / SETTINGS
    exempt.parent.mkdir(parents=True)
    exempt.write_text('import os\nx = os.environ.get("TLENS_X")\n')
    assert [r.split(":")[1] for r in scan(tmp_path)] == \
        ["6", "7", "8", "9", "10", "11", "12", "14", "15", "16", "17", "19", "20"]
    assert all(r.startswith("inspectors/compile/probe.py:") for r in scan(tmp_path))


def _rows() -> set[str]:
    from inspectors.base import settings
    return set(re.findall(r"^\| (TLENS_[A-Z0-9_]+)\s", settings.__doc__ or "", re.M))


def _load_function() -> ast.FunctionDef:
    return next(n for n in ast.walk(ast.parse((ROOT / SETTINGS).read_text()))
                if isinstance(n, ast.FunctionDef) and n.name == "_load")


def test_every_variable_is_a_documented_row_and_a_field():
    from inspectors.base import settings
    rows = _rows()
    load = _load_function()
    read = set(TLENS.findall(ast.unparse(load)))
    named = {m for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") for m in TLENS.findall(p.read_text())}
    assert rows == read, f"documented but not read: {sorted(rows - read)}; read but not documented: {sorted(read - rows)}"
    assert named <= rows, f"named in the code but not a setting: {sorted(named - rows)}"
    call = next(n for n in ast.walk(load) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Settings")
    filled = {k.arg for k in call.keywords}
    fields = {f.name for f in dataclasses.fields(settings.Settings)}
    assert filled == fields, f"fields _load leaves at their class default: {sorted(fields - filled)}"


def test_every_variable_the_docs_name_is_a_setting_or_a_script_s():
    """The docs name a TLENS_ variable only if it is a setting (a row of settings.py's table) or
    one of the few that benchmark scripts and tests read for themselves (the configuration doc's
    last table), and none of those is named by the product's code. `TLENS_BENCH_*` stands for
    the settings it prefixes."""
    rows = _rows()
    text = CONFIG_DOC.read_text(encoding="utf-8")
    scripts_table = text[text.index("## Benchmark scripts and tests"):]
    scripts = set(re.findall(r"^\| `(TLENS_[A-Z0-9_]+)`", scripts_table, re.M))
    assert scripts, "the configuration doc's table of the scripts' variables is gone: update this test"
    product = {m for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") for m in TLENS.findall(p.read_text())}
    assert not scripts & product, f"read by the product, so settings, not scripts': {sorted(scripts & product)}"
    assert not scripts & rows, f"both a setting and a script's: {sorted(scripts & rows)}"
    stray = {}
    for doc in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        for name in set(TLENS.findall(doc.read_text(encoding="utf-8"))):
            known = any(r.startswith(name) for r in rows) if name.endswith("_") else name in rows | scripts
            if not known:
                stray.setdefault(name, []).append(doc.name)
    assert not stray, f"the docs name variables that are neither settings nor the scripts': {stray}"


@pytest.mark.parametrize("name,value,field,want", [
    ("TLENS_ANALYSIS_BUDGET_S", None, "analysis_budget_s", 20.0),
    ("TLENS_ANALYSIS_BUDGET_S", "7.5", "analysis_budget_s", 7.5),
    ("TLENS_VERSION_WORKERS", "0", "version_workers", 1),
    ("TLENS_WORKER_PREWARM", None, "worker_prewarm", True),
    ("TLENS_WORKER_PREWARM", "0", "worker_prewarm", False),
    ("TLENS_WORKER_FORK", "1", "worker_fork", True),
    ("TLENS_BENCH_TIMEOUT", None, "bench_timeout_s", 900.0),
    ("TLENS_BENCH_LOCK_WAIT", "5", "bench_lock_wait_s", 5.0),
    ("TLENS_PROFILES_DIR", None, "profiles_dir", None),
    ("TLENS_TRITON_VERSIONS_DIR", "/x/v", "triton_versions_dir", Path("/x/v")),
])
def test_load_reads_the_environment_as_it_is_now(monkeypatch, name, value, field, want):
    """Memoized, yet read at call time: a variable set after a first load() is seen by the next
    (a child process reads what its parent set; a test sets its own)."""
    from inspectors.base import settings
    monkeypatch.delenv(name, raising=False)
    before = getattr(settings.load(), field)
    if value is not None:
        monkeypatch.setenv(name, value)
    assert getattr(settings.load(), field) == want
    monkeypatch.delenv(name, raising=False)
    assert getattr(settings.load(), field) == before
