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

OPS = (">=", "<=", "==", "!=", ">", "<")
STEP_KEYS = {"look", "panel", "options", "compile", "show", "exercise"}
COMPILE_KEYS = {"name", "kernel", "target", "function", "launch", "num_warps", "num_stages", "constexprs",
                "signature"}
SHOW_KEYS = {"compile", "stage", "match", "python_lines", "limit", "title", "region"}
EXERCISE_KEYS = {"goal", "starter", "target", "function", "check", "hint"}
CHECK_KEYS = {"metric", "op", "value", "label"}
FRONT_KEYS = {"title", "order", "summary"}


class LessonFileError(ValueError):
    """A malformed lesson file: `file` and 1-based `line` say where."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}, line {line}: {message}")
        self.file, self.line, self.message = file, line, message

    def __reduce__(self):      # pickled by the page's cache: rebuild from the three parts
        return type(self), (self.file, self.line, self.message)


@dataclass(frozen=True)
class Known:
    """What a file may name; None leaves that kind unchecked (the parser stays pure: the
    caller says which panels, metrics, library kernels and stages exist)."""
    panels: frozenset[str] | None = None
    metrics: frozenset[str] | None = None
    kernels: frozenset[str] | None = None
    stages: frozenset[str] | None = None


@dataclass(frozen=True)
class CompileSpec:
    name: str                        # how shows and facts refer to it ("main" when not named)
    kernel: str                      # library slug ("matmul") or a .py path relative to the lesson file
    target: str = "cuda:90"
    function: str | None = None      # only the kernels of this @triton.jit function (default: every one)
    launch: int | None = None        # only this launch of example(), 1-based (default: every launch)
    num_warps: int | None = None
    num_stages: int | None = None
    constexprs: tuple[tuple[str, int | float | str], ...] = ()
    signature: str | None = None


@dataclass(frozen=True)
class ShowSpec:
    compile: str
    stage: str
    match: str | None = None         # a regex: the stage lines it finds
    python_lines: tuple[int, ...] = ()   # or: the lines the source map ties to these Python lines
    limit: int = 24
    title: str = ""
    region: str = "all"              # "loop": only the lines of the main loop (PTX: the K loop of a matmul)


@dataclass(frozen=True)
class Check:
    metric: str
    op: str
    value: float
    label: str = ""

    def passes(self, got: float | None) -> bool:
        if got is None:
            return False
        return {">=": got >= self.value, "<=": got <= self.value, "==": got == self.value,
                "!=": got != self.value, ">": got > self.value, "<": got < self.value}[self.op]

    def describe(self) -> str:
        value = int(self.value) if float(self.value).is_integer() else self.value
        return self.label or f"{self.metric} {self.op} {value}"


@dataclass(frozen=True)
class Exercise:
    goal: str
    starter: str                     # library slug or .py path relative to the lesson file
    checks: tuple[Check, ...]
    target: str = "cuda:90"
    function: str | None = None      # the kernel the checks read (default: every compiled kernel)
    hint: str = ""


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
    _no_unknown(front, FRONT_KEYS, file, first + 1, "settings")
    return front, end + 1


@dataclass
class _Chunk:
    title: str
    line: int                                  # 1-based line of `## title`
    lines: list[tuple[int, str]]               # (1-based line, text) after the heading


def _step_chunks(lines: list[str], start: int, file: str) -> list[_Chunk]:
    chunks: list[_Chunk] = []
    fence = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = _FENCE_RE.match(line.strip())
        if m and (fence is None or m["fence"].startswith(fence) and not m["info"]):
            fence = m["fence"][:3] if fence is None else None
        elif fence is None and (h := _STEP_RE.match(line)):
            chunks.append(_Chunk(h["title"], i + 1, []))
            continue
        if chunks:
            chunks[-1].lines.append((i + 1, line))
    if fence is not None:
        raise LessonFileError(file, len(lines), "a ``` code block is never closed")
    return chunks


def _step(chunk: _Chunk, file: str, known: Known) -> Step:
    where = f'step "{chunk.title}"'
    settings, settings_line, rest = _settings_block(chunk, file, where)
    prose_lines, questions = _split_questions(rest)
    _no_unknown(settings, STEP_KEYS, file, settings_line, where)
    look = settings.get("look")
    if not isinstance(look, str) or not look.strip():
        raise LessonFileError(file, settings_line, f"{where}: `look` (what the class should look at) is required")
    panel = settings.get("panel")
    if panel is not None and (not isinstance(panel, str) or (known.panels is not None and panel not in known.panels)):
        raise LessonFileError(file, _line_of(chunk, "panel", settings_line),
                              f"{where}: unknown panel {panel!r}" + _choices(known.panels))
    options = settings.get("options", {})
    if not isinstance(options, dict):
        raise LessonFileError(file, _line_of(chunk, "options", settings_line), f"{where}: `options` must be a table")
    compiles = tuple(_compile(c, chunk, file, settings_line, where, known, i)
                     for i, c in enumerate(_table_list(settings, "compile", chunk, file, settings_line, where)))
    names = [c.name for c in compiles]
    if len(set(names)) != len(names):
        raise LessonFileError(file, settings_line, f"{where}: two compiles share a name: {names}")
    shows = tuple(_show(s, chunk, file, settings_line, where, known, names)
                  for s in _table_list(settings, "show", chunk, file, settings_line, where))
    exercise = None
    if "exercise" in settings:
        exercise = _exercise(settings["exercise"], chunk, file, settings_line, where, known)
    prose = "\n".join(prose_lines).strip("\n")
    return Step(title=chunk.title, look=look.strip(), prose=prose, line=chunk.line, questions=tuple(questions),
                panel=panel, options=options, compiles=compiles, shows=shows, exercise=exercise)


def _settings_block(chunk: _Chunk, file: str, where: str) -> tuple[dict, int, list[tuple[int, str]]]:
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


def _table_list(settings: dict, key: str, chunk: _Chunk, file: str, line: int, where: str) -> list[dict]:
    value = settings.get(key, [])
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise LessonFileError(file, _line_of(chunk, key, line), f"{where}: `{key}` must be a table ([[{key}]])")
    return value


def _compile(d: dict, chunk: _Chunk, file: str, line: int, where: str, known: Known, index: int) -> CompileSpec:
    _no_unknown(d, COMPILE_KEYS, file, _line_of(chunk, "[[compile]]", line), f"{where}, [[compile]]")
    kernel = _kernel_ref(d.get("kernel"), chunk, file, line, where, known, "kernel")
    constexprs = d.get("constexprs", {})
    if not isinstance(constexprs, dict):
        raise LessonFileError(file, _line_of(chunk, "constexprs", line), f"{where}: constexprs must be a table, "
                                                                         "e.g. constexprs = {{ BLOCK_K = 32 }}")
    return CompileSpec(
        name=str(d.get("name") or ("main" if index == 0 else f"compile{index + 1}")), kernel=kernel,
        target=_target(d.get("target", "cuda:90"), chunk, file, line, where),
        function=_opt_str(d, "function", chunk, file, line, where),
        launch=_int(d, "launch", None, chunk, file, line, where, minimum=1),
        num_warps=_int(d, "num_warps", None, chunk, file, line, where, minimum=1),
        num_stages=_int(d, "num_stages", None, chunk, file, line, where, minimum=1),
        constexprs=tuple(sorted(constexprs.items())), signature=_opt_str(d, "signature", chunk, file, line, where))


def _show(d: dict, chunk: _Chunk, file: str, line: int, where: str, known: Known, names: list[str]) -> ShowSpec:
    _no_unknown(d, SHOW_KEYS, file, _line_of(chunk, "[[show]]", line), f"{where}, [[show]]")
    if not names:
        raise LessonFileError(file, _line_of(chunk, "[[show]]", line), f"{where}: [[show]] needs a [[compile]]")
    target = d.get("compile", names[0])
    if target not in names:
        raise LessonFileError(file, _line_of(chunk, "compile =", line),
                              f"{where}: [[show]] names compile {target!r}; this step compiles {names}")
    stage = d.get("stage", "ptx")
    if known.stages is not None and stage not in known.stages:
        raise LessonFileError(file, _line_of(chunk, "stage", line), f"{where}: unknown stage {stage!r}"
                                                                    + _choices(known.stages))
    match = _opt_str(d, "match", chunk, file, line, where)
    if match is not None:
        try:
            re.compile(match)
        except re.error as e:
            raise LessonFileError(file, _line_of(chunk, "match", line), f"{where}: match is not a regex: {e}") from None
    py = d.get("python_lines", [])
    if not isinstance(py, list) or not all(isinstance(n, int) and n > 0 for n in py):
        raise LessonFileError(file, _line_of(chunk, "python_lines", line),
                              f"{where}: python_lines must be a list of line numbers, e.g. [30, 31]")
    region = d.get("region", "all")
    if region not in ("all", "loop") or (region == "loop" and stage != "ptx"):
        raise LessonFileError(file, _line_of(chunk, "region", line),
                              f'{where}: region is "all", or "loop" for a ptx stage (got {region!r})')
    return ShowSpec(compile=target, stage=stage, match=match, python_lines=tuple(py),
                    limit=_int(d, "limit", 24, chunk, file, line, where, minimum=1),
                    title=str(d.get("title", "")), region=region)


def _exercise(d, chunk: _Chunk, file: str, line: int, where: str, known: Known) -> Exercise:
    at = _line_of(chunk, "[exercise]", line)
    if not isinstance(d, dict):
        raise LessonFileError(file, at, f"{where}: `exercise` must be a table ([exercise])")
    _no_unknown(d, EXERCISE_KEYS, file, at, f"{where}, [exercise]")
    goal = d.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise LessonFileError(file, at, f"{where}: the exercise needs a goal = \"...\"")
    checks = []
    for c in _table_list(d, "check", chunk, file, at, where):
        _no_unknown(c, CHECK_KEYS, file, _line_of(chunk, "[[exercise.check]]", at), f"{where}, [[exercise.check]]")
        metric, op, value = c.get("metric"), c.get("op", ">="), c.get("value")
        if not isinstance(metric, str) or (known.metrics is not None and metric not in known.metrics):
            raise LessonFileError(file, _line_of(chunk, "metric", at), f"{where}: unknown metric {metric!r}"
                                                                       + _choices(known.metrics))
        if op not in OPS:
            raise LessonFileError(file, _line_of(chunk, "op", at), f"{where}: op must be one of {', '.join(OPS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LessonFileError(file, _line_of(chunk, "value", at), f"{where}: value must be a number")
        checks.append(Check(metric, op, float(value), str(c.get("label", ""))))
    if not checks:
        raise LessonFileError(file, at, f"{where}: the exercise needs at least one [[exercise.check]]")
    return Exercise(goal=goal.strip(), starter=_kernel_ref(d.get("starter"), chunk, file, at, where, known, "starter"),
                    checks=tuple(checks), target=_target(d.get("target", "cuda:90"), chunk, file, at, where),
                    function=_opt_str(d, "function", chunk, file, at, where), hint=str(d.get("hint", "")))


def _kernel_ref(value, chunk: _Chunk, file: str, line: int, where: str, known: Known, key: str) -> str:
    at = _line_of(chunk, key, line)
    if not isinstance(value, str) or not value.strip():
        raise LessonFileError(file, at, f"{where}: `{key}` names a library kernel or a .py file next to the lesson")
    if value.endswith(".py"):
        if value.startswith("/") or ".." in value.replace("\\", "/").split("/"):
            raise LessonFileError(file, at, f"{where}: {value!r} must be a path inside the lessons folder")
    elif known.kernels is not None and value not in known.kernels:
        raise LessonFileError(file, at, f"{where}: no library kernel {value!r}" + _choices(known.kernels)
                              + " (or give a .py file next to the lesson)")
    return value


def _target(value, chunk: _Chunk, file: str, line: int, where: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"(cuda:\d+|hip:gfx[0-9a-f]+)", value):
        raise LessonFileError(file, _line_of(chunk, "target", line),
                              f"{where}: target must look like \"cuda:90\" or \"hip:gfx942\" (got {value!r})")
    return value


def _opt_str(d: dict, key: str, chunk: _Chunk, file: str, line: int, where: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise LessonFileError(file, _line_of(chunk, key, line), f"{where}: {key} must be text")
    return value


def _int(d: dict, key: str, default, chunk: _Chunk, file: str, line: int, where: str, minimum: int = 0):
    value = d.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise LessonFileError(file, _line_of(chunk, key, line), f"{where}: {key} must be a whole number ≥ {minimum}")
    return value


def _no_unknown(d: dict, allowed: set[str], file: str, line: int, where: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise LessonFileError(file, line, f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")


def _line_of(chunk: _Chunk, needle: str, default: int) -> int:
    """The first line of the step that starts with `needle` (a key, `[[show]]`), for messages."""
    for n, text in chunk.lines:
        if text.strip().startswith(needle):
            return n
    return default


def _choices(names: frozenset[str] | None) -> str:
    return f" (known: {', '.join(sorted(names))})" if names else ""


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
