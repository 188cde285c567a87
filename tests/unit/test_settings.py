"""Configuration in one place: every read of a TLENS_ variable goes through
inspectors/base/settings.py (`settings.load()`), each one a documented row of its docstring's
table and a field its `_load` fills. Writes stay free (the engine puts TLENS_TRITON_CACHE_BASE in
a worker's environment; `tlens app FILE` sets TLENS_OPEN for the server it starts)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

SETTINGS = ROOT / "inspectors" / "base" / "settings.py"
TLENS = re.compile(r"TLENS_[A-Z0-9_]+")
FOLDERS = ("app", "inspectors", "kernels", "deploy")


def _is_environ(node: ast.AST) -> bool:
    """`os.environ` or a bare `environ` (from os import environ)."""
    return ast.unparse(node) in ("os.environ", "environ")


def _tlens(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and TLENS.fullmatch(node.value) else None


def direct_reads(path: Path) -> list[str]:
    """`line: how` for every read of a TLENS_ variable in `path` that bypasses the settings:
    os.environ.get("TLENS_X"), os.getenv("TLENS_X"), os.environ["TLENS_X"] (read),
    "TLENS_X" in os.environ, and the same through an alias (`env = os.environ.get`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    aliases = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
               for t in n.targets if isinstance(t, ast.Name)
               and ast.unparse(n.value) in ("os.environ.get", "os.getenv", "os.environ", "environ")}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.args and _tlens(n.args[0]):
            f = n.func
            if (isinstance(f, ast.Attribute) and f.attr in ("get", "getenv", "pop") and
                    (_is_environ(f.value) or ast.unparse(f.value) == "os" or ast.unparse(f.value) in aliases)) \
                    or (isinstance(f, ast.Name) and f.id in aliases | {"getenv"}):
                out.append(f"{n.lineno}: {ast.unparse(n)[:80]}")
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and _tlens(n.slice) \
                and (_is_environ(n.value) or ast.unparse(n.value) in aliases):
            out.append(f"{n.lineno}: {ast.unparse(n)[:80]}")
        elif isinstance(n, ast.Compare) and _tlens(n.left) and any(
                _is_environ(c) or ast.unparse(c) in aliases for c in n.comparators):
            out.append(f"{n.lineno}: {ast.unparse(n)[:80]}")
    return out


def test_no_module_reads_a_tlens_variable_but_the_settings():
    bad = [f"{p.relative_to(ROOT)}:{r}" for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))
           if p != SETTINGS and "fixtures" not in p.parts for r in direct_reads(p)]
    assert not bad, "read these through inspectors.base.settings.load():\n" + "\n".join(bad)


def test_the_checker_sees_every_kind_of_direct_read(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('import os\nfrom os import environ\nenv = os.environ.get\n'
                     'a = os.environ.get("TLENS_A", "1")\nb = os.getenv("TLENS_B")\nc = os.environ["TLENS_C"]\n'
                     'd = "TLENS_D" in os.environ\ne = env("TLENS_E")\nf = environ.get("TLENS_F")\n'
                     'os.environ["TLENS_OK"] = "1"\nchild = {"TLENS_OK": "1"}\n')
    assert [r.split(":")[0] for r in direct_reads(probe)] == ["4", "5", "6", "7", "8", "9"]


def test_every_variable_is_a_documented_row_and_a_field():
    from inspectors.base import settings
    rows = set(re.findall(r"^\| (TLENS_[A-Z0-9_]+)\s", settings.__doc__ or "", re.M))
    read = set(TLENS.findall(ast.unparse(next(n for n in ast.walk(ast.parse(SETTINGS.read_text()))
                                              if isinstance(n, ast.FunctionDef) and n.name == "_load"))))
    named = {m for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") for m in TLENS.findall(p.read_text())}
    assert rows == read, f"documented but not read: {sorted(rows - read)}; read but not documented: {sorted(read - rows)}"
    assert named <= rows, f"named in the code but not a setting: {sorted(named - rows)}"
