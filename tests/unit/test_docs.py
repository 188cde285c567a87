"""The docs cannot drift from the code: the lists the code knows (environment variables, stages,
targets) are checked against the pages that list them, the README stays short, and every
relative link in README.md and docs/*.md names a file that exists. Pure text and AST: no torch,
no Triton, no Streamlit."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from urllib.parse import unquote

from inspectors.base import stages, targets

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CONFIG_DOC = DOCS / "07-configuration.md"
USER_GUIDE = DOCS / "01-user-guide.md"
README_MAX_LINES = 160

# Where the code that users and operators configure lives (benchmark scripts and tests name a
# few TLENS_ variables of their own; the doc lists those too, but need not).
CODE_DIRS = ("inspectors", "app", "deploy")
# Where a variable the doc lists may be named.
ANY_CODE = ("inspectors", "app", "deploy", "benchmarks", "tests", ".ci")
TLENS = re.compile(r"TLENS_[A-Z0-9_]+")


def _py_files(dirs):
    for d in dirs:
        yield from sorted((ROOT / d).rglob("*.py"))


def _code_variables() -> dict[str, set[str]]:
    """Every TLENS_ name the code writes as a string of its own (os.environ.get("TLENS_X"),
    env("TLENS_X", ...), env["TLENS_X"] = ..., a tuple of names to pass on) -> the files."""
    found: dict[str, set[str]] = {}
    for path in _py_files(CODE_DIRS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and TLENS.fullmatch(node.value):
                found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
    return found


def _literal_defaults() -> dict[str, set[str]]:
    """TLENS_X -> the literal defaults the code reads it with: os.environ.get("TLENS_X", "60"),
    env("TLENS_X", "60"). Empty strings and placeholders for messages ("?") are no default."""
    out: dict[str, set[str]] = {}
    for path in _py_files(CODE_DIRS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not (isinstance(node, ast.Call) and len(node.args) == 2):
                continue
            func = ast.unparse(node.func)
            if func not in ("env", "os.environ.get"):
                continue
            name, default = node.args
            if (isinstance(name, ast.Constant) and isinstance(name.value, str) and TLENS.fullmatch(name.value)
                    and isinstance(default, ast.Constant) and isinstance(default.value, str)
                    and default.value not in ("", "?")):
                out.setdefault(name.value, set()).add(default.value)
    return out


def _table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row (header and |---| lines left out)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")) or re.fullmatch(r"\|[\s|:-]+\|", line):
            continue
        rows.append([c.strip() for c in line[1:-1].split("|")])
    return rows


def _doc_variables() -> dict[str, list[str]]:
    """TLENS_X -> its row, for every table row of the configuration doc that starts with `TLENS_X`."""
    out = {}
    for row in _table_rows(CONFIG_DOC.read_text(encoding="utf-8")):
        m = re.fullmatch(r"`(TLENS_[A-Z0-9_]+)`", row[0])
        if m:
            assert m.group(1) not in out, f"{m.group(1)} is listed twice in {CONFIG_DOC.name}"
            out[m.group(1)] = row
    return out


def test_every_variable_the_code_reads_is_in_the_configuration_doc():
    code, doc = _code_variables(), _doc_variables()
    assert code, "found no TLENS_ variable in the code: the scan is broken"
    missing = {name: sorted(files) for name, files in code.items() if name not in doc}
    assert not missing, f"{CONFIG_DOC.relative_to(ROOT)} lacks a row for: {missing}"


def test_every_variable_the_configuration_doc_lists_exists_in_code():
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                     for d in ANY_CODE for p in sorted((ROOT / d).rglob("*"))
                     if p.is_file() and p.suffix in (".py", ".sh", "") and "__pycache__" not in p.parts)
    text += (ROOT / "Makefile").read_text(encoding="utf-8")
    named = set(TLENS.findall(text))
    stale = sorted(set(_doc_variables()) - named)
    assert not stale, f"{CONFIG_DOC.relative_to(ROOT)} lists variables no code names: {stale}"


def test_the_configuration_doc_gives_the_defaults_the_code_uses():
    doc = _doc_variables()
    wrong = {}
    for name, defaults in _literal_defaults().items():
        cell = doc.get(name, ["", ""])[1]
        for value in defaults:
            if not re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", cell):
                wrong[name] = (sorted(defaults), cell)
    assert not wrong, f"defaults in {CONFIG_DOC.name} differ from the code's (code, doc): {wrong}"


def test_the_settings_docstring_table_is_in_the_configuration_doc():
    from inspectors.base import settings
    in_docstring = set(TLENS.findall(settings.__doc__ or ""))
    assert in_docstring, "inspectors/base/settings.py's docstring has no table any more"
    missing = sorted(in_docstring - set(_doc_variables()))
    assert not missing, f"{CONFIG_DOC.name} lacks what settings.py documents: {missing}"


def test_the_user_guide_lists_the_stage_table():
    """The user guide's stage table is the code's, row for row (name, label, extension, backends)."""
    text = USER_GUIDE.read_text(encoding="utf-8")
    rows = {}
    for row in _table_rows(text):
        m = re.fullmatch(r"`([a-z]+)`", row[0])
        if m and len(row) == 4 and row[2].startswith("`."):        # | `name` | label | `.ext` | backends |
            rows[m.group(1)] = row
    want = {s.name: [f"`{s.name}`", s.label, f"`.{s.ext}`", ", ".join(s.backends)] for s in stages.STAGES}
    assert rows == want, f"the stage table in {USER_GUIDE.name} differs from inspectors/base/stages.py"
    for s in stages.STAGES:                      # and the prose names each label too
        assert s.label in text and f"`{s.name}`" in text


def test_the_user_guide_lists_every_target_the_app_offers():
    text = USER_GUIDE.read_text(encoding="utf-8")
    rows = {row[0].strip("`"): row[1] for row in _table_rows(text)
            if re.fullmatch(r"`(cuda|hip):[0-9a-z]+`", row[0])}
    want = {key: targets.parse(key).label for key in targets.KNOWN}
    assert rows == want, f"the target table in {USER_GUIDE.name} differs from inspectors/base/targets.py KNOWN/NAMES"
    assert targets.parse("cuda:90").key in text


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move detail into docs/"


def test_the_readme_links_every_chapter():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    chapters = sorted(p.name for p in DOCS.glob("[0-9][0-9]-*.md"))
    assert chapters, "docs/ has no numbered chapters"
    assert not [c for c in chapters if f"docs/{c}" not in readme], "README.md does not link every chapter"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _relative_links(path: Path):
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^(```|````).*?^\1\s*$", "", text, flags=re.S | re.M)   # not inside code blocks
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue                                                       # http:, mailto:, an anchor
        yield target


def test_every_relative_link_resolves():
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    assert len(pages) > 1
    broken = []
    for page in pages:
        for target in _relative_links(page):
            file = unquote(target.split("#", 1)[0])
            if not (page.parent / file).resolve().exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to files that do not exist:\n" + "\n".join(broken)


def test_the_link_check_sees_links():
    """The link pattern finds the README's links (a pattern that finds nothing passes everything)."""
    found = list(_relative_links(ROOT / "README.md"))
    assert any(t.startswith("docs/") for t in found) and any(t.endswith(".png") for t in found), found


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings: lower case, punctuation but - and _ dropped,
    spaces as -, a repeated one numbered."""
    text = re.sub(r"^(```|````).*?^\1\s*$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"[`*]", "", heading).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_every_anchor_a_link_names_is_a_heading():
    """A link to `page.md#anchor` (or `#anchor` in the same page) names a heading of that page."""
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"^(```|````).*?^\1\s*$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for target in LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or "#" not in target:
                continue
            file, anchor = target.split("#", 1)
            linked = (page.parent / unquote(file)).resolve() if file else page
            if linked.suffix == ".md" and linked.exists() and unquote(anchor) not in _anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, "links to headings that do not exist:\n" + "\n".join(broken)


def test_the_anchor_check_sees_a_heading(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Where CI's time goes\n## The `workers` marker\n## Twice\n## Twice\n")
    assert _anchors(page) == {"where-cis-time-goes", "the-workers-marker", "twice", "twice-1"}
