"""The code's comments cannot point at what moved: every repo path a comment or docstring of the
.py files names (`inspectors/compile/engine.py`, `tests/unit/test_layering.py`, `docs/09-...md`,
`assets/gpu/...`) exists, and so does every module a dotted name names (`inspectors.read.occupancy`,
`inspectors.compile.engine.Engine`), the way tests/unit/test_docs.py checks the docs' links. The
docs' code spans (`app/state/kernel_files.py`) are checked the same way. Pure text (tokenize and
ast): no torch, no Triton, no Streamlit.

Placeholders are no path: anything with `*`, `<`, `{`, `[`, `...` or `NAME` in it is skipped, and
so is a path under another folder (`/tmp/app/k.py`, `$OUT/tests/x`, `~/.cache/...`)."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the folders whose .py files are read
CODE_DIRS = ("app", "inspectors", "kernels", "deploy", "benchmarks", "tests")
# a path is one that starts with a top-level folder of the repo
TOP = ("app", "inspectors", "kernels", "deploy", "benchmarks", "tests", "docs", "assets", ".ci")
PATH = re.compile(r"(?<![\w./~$-])((?:%s)/[\w./*<>{}\[\]-]*)" % "|".join(re.escape(t) for t in TOP))
# a dotted module name in prose: inspectors.compile.engine, app.backend.services.compile_kernel
DOTTED = re.compile(r"(?<![\w./-])((?:inspectors|app|kernels|deploy|benchmarks)(?:\.[A-Za-z_]\w*)+)")
PLACEHOLDER = re.compile(r"[*<>{\[]|\.\.\.|…|NAME")
FILE_SUFFIXES = {"py", "md", "txt", "json", "jsonl", "toml", "sh", "gz", "png", "csv", "html", "js"}


def _py_files():
    for d in CODE_DIRS:
        for p in sorted((ROOT / d).rglob("*.py")):
            if "node_modules" not in p.parts and "__pycache__" not in p.parts:
                yield p


def _prose(path: Path):
    """(line, text) for every comment and every line of every docstring of a .py file; nothing
    for a file that is not Python (tests/snippets/ holds broken ones on purpose)."""
    src = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(src, str(path))
        tokens = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (SyntaxError, tokenize.TokenError):
        return
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.add((first.value.lineno, first.value.col_offset))
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
        elif tok.type == tokenize.STRING and tok.start in docstrings:
            for i, line in enumerate(tok.string.splitlines()):
                yield tok.start[0] + i, line


def _path_exists(path: str) -> bool:
    if (ROOT / path).exists():
        return True
    # module.attribute written as a path: app/backend/services.compile_kernel
    stem, dot, _ = path.rpartition(".")
    return bool(dot) and "/" in stem and (ROOT / f"{stem}.py").is_file()


def _top_names(file: Path) -> set[str]:
    """The names a module defines or imports at its top level."""
    names = set()
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _module_exists(dotted: str) -> bool:
    """inspectors.read.occupancy: a module or package; inspectors.compile.engine.Engine: a module
    and a name it defines (only the first name past the module is checked)."""
    parts = dotted.split(".")
    if parts[-1] in FILE_SUFFIXES:                      # a file name: app.py, kernel.json
        return True
    found, module = 1, None
    for i in range(2, len(parts) + 1):
        base = ROOT.joinpath(*parts[:i])
        if base.with_suffix(".py").is_file():
            found, module = i, base.with_suffix(".py")
            break
        if base.is_dir():
            found, module = i, (base / "__init__.py" if (base / "__init__.py").is_file() else None)
        else:
            break
    if found == 1:
        return False
    if found == len(parts):
        return True
    return module is not None and parts[found] in _top_names(module)


def _named_paths(text: str):
    """The repo paths a line names, placeholders and trailing punctuation left out."""
    for m in PATH.finditer(text):
        path = m.group(1).rstrip(".,;:")
        if "]" in path and "[" not in path:              # [--out benchmarks/results/NAME.txt]
            path = path[:path.index("]")].rstrip(".,;:")
        if not PLACEHOLDER.search(path):
            yield path


def stale_references(files) -> list[str]:
    """`file:line: path` for every path or dotted module a comment or docstring names that is not
    in the repo."""
    stale = []
    for file in files:
        where = file.relative_to(ROOT) if file.is_relative_to(ROOT) else file
        for line, text in _prose(file):
            for path in _named_paths(text):
                if not _path_exists(path):
                    stale.append(f"{where}:{line}: {path}")
            for m in DOTTED.finditer(text):
                if not _module_exists(m.group(1).rstrip(".")):
                    stale.append(f"{where}:{line}: {m.group(1)}")
    return stale


def test_every_path_a_comment_names_exists():
    stale = stale_references(_py_files())
    assert not stale, ("comments and docstrings name paths or modules that are not in the repo "
                       "(point them where the thing lives now):\n" + "\n".join(stale))


def test_the_check_sees_paths():
    """The scan finds the paths the code's comments do name (a scan that finds nothing passes all)."""
    named = {p for f in _py_files() for _, text in _prose(f) for p in _named_paths(text)}
    assert {"tests/unit/test_layering.py", "docs/05-sandbox-and-threat-model.md"} <= named, sorted(named)[:20]
    assert len(named) > 50, len(named)


def test_the_check_catches_a_wrong_path(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Compiles through inspectors/compile/no_such_module.py (see\n'
                     'inspectors.compile.no_such_module and inspectors.nowhere.engine)."""\n'
                     "# and tests/unit/test_layering.py, [docs/09-benchmark-results.md], which exist;\n"
                     "# a placeholder: assets/gpu/NAME.json, a temp file: /tmp/app/k.py\n"
                     "x = 'inspectors/compile/also_missing.py'   # a string, not prose\n")
    stale = stale_references([probe])
    assert stale == [f"{probe}:1: inspectors/compile/no_such_module.py",
                     f"{probe}:2: inspectors.compile.no_such_module",
                     f"{probe}:2: inspectors.nowhere.engine"], stale


# One run's before and after in a comment ("45 -> 27 ms", "0.47 s -> ~0.1 s", "was 10 % of a
# click"): the comment states the rule and points at docs/09-benchmark-results.md, where the figure
# lives with the commit that measured it. A limit or a default ("8 MB", "3 s by default") is a rule.
_UNIT = r"(?:ms|µs|us|s|MiB|MB|KB|KiB|GiB|GB|%|CPU-s)"
_NUM = r"~?\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)?"
ONE_RUN = re.compile(rf"{_NUM} ?(?:{_UNIT} ?)?(?:->|→) ?{_NUM} ?{_UNIT}(?!\w)|\bwas {_NUM} ?{_UNIT}(?!\w)")
# (not kernels/: the committed H100 profiles pin each library kernel's source by its sha256)
NO_RUN_FIGURES = ("app", "inspectors", "deploy")


def test_comments_state_rules_not_one_runs_figures():
    found = [f"{p.relative_to(ROOT)}:{line}: {text.strip()}"
             for d in NO_RUN_FIGURES for p in sorted((ROOT / d).rglob("*.py")) if "node_modules" not in p.parts
             for line, text in _prose(p) if ONE_RUN.search(text)]
    assert not found, ("comments quote one run's before/after; state the rule and point at "
                       "docs/09-benchmark-results.md instead:\n" + "\n".join(found))


def test_the_figure_check_tells_a_run_from_a_rule():
    for run in ("45 -> 27 ms", "0.47 s -> ~0.1 s", "2.0 → 1.1–1.4 CPU-s", "was 10 % of a click", "was 3.7 CPU-s"):
        assert ONE_RUN.search(run), run
    for rule in ("registers 40 → 56", "loads v1 → v4", "3 s by default", "at most 8 MB", "`k.py` -> `k-copy.py`"):
        assert not ONE_RUN.search(rule), rule


def test_every_path_a_doc_code_span_names_exists():
    """`inspectors/session/lens.py` in a doc's prose, not only its links, names a real file."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    stale = []
    for page in pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for span in re.findall(r"`([^`\n]+)`", line):
                stale += [f"{page.relative_to(ROOT)}:{number}: {p}" for p in _named_paths(span)
                          if not _path_exists(p)]
    assert not stale, "docs name paths that are not in the repo:\n" + "\n".join(stale)
