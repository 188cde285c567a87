"""A lesson file (Markdown with TOML settings) -> a frozen `Lesson`. Pure: text in, data out.

The format, in full (assets/lessons/_TEMPLATE.md is a commented example)::

    +++
    title = "Kernel fusion"          # shown in the lesson picker
    order = 3                        # position in the picker (then the title)
    +++

    Text before the first step is a note for teachers; it is not shown.

    ## Bytes each version must move            <- a step: its title

    ```step
    look = "The 'bytes' column."     # required: what the class should look at
    panel = "fusion.bytes"           # optional: a built-in display (README lists them)
    [options]                        # optional: passed to the panel
    [[compile]]                      # optional: compiles whose stages the step shows
    name = "sm90"
    kernel = "matmul"                # a library kernel, or a .py file next to the lesson
    target = "cuda:90"
    [[show]]                         # optional: lines of a stage of one of the compiles
    compile = "sm90"
    stage = "ptx"
    match = 'wgmma|cp\\.async'
    region = "loop"                  # optional: only the main loop's lines
    [exercise]                       # optional: the student edits a kernel toward a goal
    goal = "Make every global load a v4 load."
    starter = "exercises/fuse_me.py"
    [[exercise.check]]
    metric = "load_vector_min"
    op = ">="
    value = 4
    ```

    Prose in Markdown. {{sm90.registers}} is a figure from the step's compile named sm90
    (any exercise metric), {{name}} one the panel provides. A line holding only {{panel}}
    or {{show}} places the panel or the stage lines there (default: panel, lines, prose).

    ### Ask the class
    - A question per item.

A mistake raises `LessonFileError` naming the file and the line, e.g.
`fusion.md, line 14: step "Bytes": unknown key 'lok' (known: compile, exercise, look, ...)`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from inspectors.read.lessonsettings import (  # noqa: F401 - re-exported: lessonfile.Check, ...
    Check, Chunk, CompileSpec, Exercise, Known, LessonFileError, ShowSpec, choices, compile_spec, exercise_spec,
    line_of, no_unknown, show_spec, table_list)

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# `## Bytes each version must move` (a step); `### Ask the class` (its questions)
_STEP_RE = re.compile(r"^##\s+(?P<title>\S.*?)\s*$")
_QUESTIONS_RE = re.compile(r"^###\s+(ask the class|questions)\s*:?\s*$", re.I)
_FENCE_RE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<info>[\w.-]*)\s*$")
# `- Why does ...?`, `* Why ...`, `1. Why ...`
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
# tomllib's messages end with "(at line 3, column 7)"
_TOML_LINE_RE = re.compile(r"\(at line (\d+), column \d+\)")
# {{sm90.registers}} {{bytes_ratio}}; a line of its own {{panel}} / {{show}}
# (a backslash keeps them literal: \{{name}} shows {{name}})
FACT_RE = re.compile(r"(?<!\\)\{\{\s*(?P<name>[A-Za-z_][\w.]*)\s*\}\}")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

STEP_KEYS = {"look", "panel", "options", "compile", "show", "exercise"}
FRONT_KEYS = {"title", "order", "summary"}


@dataclass(frozen=True)
class Step:
    title: str
    look: str
    prose: str
    line: int                        # the `## title` line
    questions: tuple[str, ...] = ()
    panel: str | None = None
    options: dict = field(default_factory=dict)
    compiles: tuple[CompileSpec, ...] = ()
    shows: tuple[ShowSpec, ...] = ()
    exercise: Exercise | None = None

    def compile_named(self, name: str) -> CompileSpec:
        return next(c for c in self.compiles if c.name == name)


@dataclass(frozen=True)
class Lesson:
    slug: str                        # the file name without .md: `?lesson=fusion`
    title: str
    steps: tuple[Step, ...]
    file: str                        # the path it was read from (for messages)
    order: int = 100
    summary: str = ""


def parse(text: str, file: str, slug: str, known: Known = Known()) -> Lesson:
    """The lesson in `text` (read from `file`, shown in messages)."""
    if not SLUG_RE.match(slug):
        raise LessonFileError(file, 1, f"the file name must be lower case letters, digits, _ or - (got {slug!r})")
    lines = text.replace("\r\n", "\n").split("\n")
    front, body_start = _front_matter(lines, file)
    steps = [_step(chunk, file, known) for chunk in _step_chunks(lines, body_start, file)]
    if not steps:
        raise LessonFileError(file, len(lines), "no steps: a step starts with a line `## Its title`")
    order = front.get("order", 100)
    if not isinstance(order, int):
        raise LessonFileError(file, 1, f"order must be a whole number, got {order!r}")
    return Lesson(slug=slug, title=str(front.get("title") or slug), steps=tuple(steps), file=file, order=order,
                  summary=str(front.get("summary", "")))


def _toml(text: str, file: str, first_line: int, what: str) -> dict:
    """`text` parsed as TOML; an error names the file line (`first_line` is the text's first)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = _TOML_LINE_RE.search(str(e))
        line = first_line + int(m.group(1)) - 1 if m else first_line
        raise LessonFileError(file, line, f"{what}: {_TOML_LINE_RE.sub('', str(e)).strip()}") from None
    except RecursionError:      # tomllib recurses per nested array/table: `look = [[[[...`
        raise LessonFileError(file, first_line, f"{what}: nested too deeply") from None


def _front_matter(lines: list[str], file: str) -> tuple[dict, int]:
    """The `+++`-fenced TOML at the top, and the index of the first line after it."""
    first = next((i for i, l in enumerate(lines) if l.strip()), None)
    if first is None or lines[first].strip() != "+++":
        raise LessonFileError(file, (first or 0) + 1, "a lesson starts with its settings between two `+++` lines "
                                                       "(title = \"...\")")
    end = next((i for i in range(first + 1, len(lines)) if lines[i].strip() == "+++"), None)
    if end is None:
        raise LessonFileError(file, first + 1, "the `+++` settings block is never closed")
    front = _toml("\n".join(lines[first + 1:end]), file, first + 2, "settings")
    no_unknown(front, FRONT_KEYS, file, first + 1, "settings")
    return front, end + 1


def _step_chunks(lines: list[str], start: int, file: str) -> list[Chunk]:
    chunks: list[Chunk] = []
    fence = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = _FENCE_RE.match(line.strip())
        if m and (fence is None or m["fence"].startswith(fence) and not m["info"]):
            fence = m["fence"][:3] if fence is None else None
        elif fence is None and (h := _STEP_RE.match(line)):
            chunks.append(Chunk(h["title"], i + 1, []))
            continue
        if chunks:
            chunks[-1].lines.append((i + 1, line))
    if fence is not None:
        raise LessonFileError(file, len(lines), "a ``` code block is never closed")
    return chunks


def _step(chunk: Chunk, file: str, known: Known) -> Step:
    where = f'step "{chunk.title}"'
    settings, settings_line, rest = _settings_block(chunk, file, where)
    prose_lines, questions = _split_questions(rest)
    no_unknown(settings, STEP_KEYS, file, settings_line, where)
    look = settings.get("look")
    if not isinstance(look, str) or not look.strip():
        raise LessonFileError(file, settings_line, f"{where}: `look` (what the class should look at) is required")
    panel = settings.get("panel")
    if panel is not None and (not isinstance(panel, str) or (known.panels is not None and panel not in known.panels)):
        raise LessonFileError(file, line_of(chunk, "panel", settings_line),
                              f"{where}: unknown panel {panel!r}" + choices(known.panels))
    options = settings.get("options", {})
    if not isinstance(options, dict):
        raise LessonFileError(file, line_of(chunk, "options", settings_line), f"{where}: `options` must be a table")
    compiles = tuple(compile_spec(c, chunk, file, settings_line, where, known, i)
                     for i, c in enumerate(table_list(settings, "compile", chunk, file, settings_line, where)))
    names = [c.name for c in compiles]
    if len(set(names)) != len(names):
        raise LessonFileError(file, settings_line, f"{where}: two compiles share a name: {names}")
    shows = tuple(show_spec(s, chunk, file, settings_line, where, known, names)
                  for s in table_list(settings, "show", chunk, file, settings_line, where))
    exercise = None
    if "exercise" in settings:
        exercise = exercise_spec(settings["exercise"], chunk, file, settings_line, where, known)
    prose = "\n".join(prose_lines).strip("\n")
    return Step(title=chunk.title, look=look.strip(), prose=prose, line=chunk.line, questions=tuple(questions),
                panel=panel, options=options, compiles=compiles, shows=shows, exercise=exercise)


def _settings_block(chunk: Chunk, file: str, where: str) -> tuple[dict, int, list[tuple[int, str]]]:
    """The ```step block (TOML) of a step, its first line, and the step's other lines."""
    start = next((k for k, (_, l) in enumerate(chunk.lines) if (m := _FENCE_RE.match(l.strip())) and m["info"] == "step"),
                 None)
    if start is None:
        raise LessonFileError(file, chunk.line, f"{where}: no ```step block (it holds look = \"...\" at least)")
    fence = _FENCE_RE.match(chunk.lines[start][1].strip())["fence"]
    end = next((k for k in range(start + 1, len(chunk.lines)) if chunk.lines[k][1].strip() == fence), None)
    if end is None:
        raise LessonFileError(file, chunk.lines[start][0], f"{where}: the ```step block is never closed")
    body = [l for _, l in chunk.lines[start + 1:end]]
    first = chunk.lines[start][0] + 1
    settings = _toml("\n".join(body), file, first, where)
    for n, l in chunk.lines[end + 1:]:
        m = _FENCE_RE.match(l.strip())
        if m and m["info"] == "step":
            raise LessonFileError(file, n, f"{where}: a second ```step block (one per step)")
    return settings, first, chunk.lines[:start] + chunk.lines[end + 1:]


def _split_questions(lines: list[tuple[int, str]]) -> tuple[list[str], list[str]]:
    """Prose lines, and the items under `### Ask the class` (up to the next heading)."""
    prose: list[str] = []
    questions: list[str] = []
    in_questions = False
    for _, line in lines:
        if _QUESTIONS_RE.match(line.strip()):
            in_questions = True
            continue
        if in_questions and line.startswith("#"):
            in_questions = False
        if not in_questions:
            prose.append(line)
        elif m := _ITEM_RE.match(line):
            questions.append(m["text"].strip())
        elif line.strip() and questions:
            questions[-1] += " " + line.strip()
    return prose, questions


def facts_in(text: str) -> list[str]:
    """The {{names}} a prose text uses, in order."""
    return [m["name"] for m in FACT_RE.finditer(text)]


def fill(text: str, facts: dict[str, str]) -> tuple[str, list[str]]:
    """`text` with each {{name}} replaced by facts[name]; the names that had no value."""
    missing: list[str] = []

    def sub(m: re.Match) -> str:
        name = m["name"]
        if name in facts:
            return str(facts[name])
        missing.append(name)
        return f"⟨{name}?⟩"
    return FACT_RE.sub(sub, text).replace("\\{{", "{{"), missing


def prose_parts(prose: str) -> list[tuple[str, str]]:
    """The prose cut at lines holding only {{panel}} or {{show}}: [("md", text) | ("panel", "") |
    ("show", "")], with the panel and the stage lines first when the prose does not place them."""
    parts: list[tuple[str, str]] = []
    buf: list[str] = []
    for line in prose.split("\n"):
        m = re.fullmatch(r"\s*\{\{\s*(panel|show)\s*\}\}\s*", line)
        if m:
            if buf:
                parts.append(("md", "\n".join(buf).strip("\n")))
                buf = []
            parts.append((m.group(1), ""))
        else:
            buf.append(line)
    if buf and "\n".join(buf).strip():
        parts.append(("md", "\n".join(buf).strip("\n")))
    placed = {kind for kind, _ in parts}
    head = [(k, "") for k in ("panel", "show") if k not in placed]
    return head + [p for p in parts if p[0] != "md" or p[1].strip()]
