"""The settings of one lesson step (the TOML of its ```step block) -> frozen specs, checked
key by key; a mistake raises LessonFileError with the file line of the key at fault. Used by
inspectors.read.lessonfile, which splits a lesson into steps; the format is documented there."""
from __future__ import annotations

import re
from dataclasses import dataclass

OPS = (">=", "<=", "==", "!=", ">", "<")
COMPILE_KEYS = {"name", "kernel", "target", "function", "launch", "num_warps", "num_stages", "constexprs",
                "signature"}
SHOW_KEYS = {"compile", "stage", "match", "python_lines", "limit", "title", "region"}
EXERCISE_KEYS = {"goal", "starter", "target", "function", "check", "hint"}
CHECK_KEYS = {"metric", "op", "value", "label"}


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


@dataclass
class Chunk:
    title: str
    line: int                                  # 1-based line of `## title`
    lines: list[tuple[int, str]]               # (1-based line, text) after the heading


def table_list(settings: dict, key: str, chunk: Chunk, file: str, line: int, where: str) -> list[dict]:
    value = settings.get(key, [])
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise LessonFileError(file, line_of(chunk, key, line), f"{where}: `{key}` must be a table ([[{key}]])")
    return value


def compile_spec(d: dict, chunk: Chunk, file: str, line: int, where: str, known: Known, index: int) -> CompileSpec:
    no_unknown(d, COMPILE_KEYS, file, line_of(chunk, "[[compile]]", line), f"{where}, [[compile]]")
    kernel = _kernel_ref(d.get("kernel"), chunk, file, line, where, known, "kernel")
    constexprs = d.get("constexprs", {})
    if not isinstance(constexprs, dict):
        raise LessonFileError(file, line_of(chunk, "constexprs", line), f"{where}: constexprs must be a table, "
                                                                         "e.g. constexprs = {{ BLOCK_K = 32 }}")
    return CompileSpec(
        name=str(d.get("name") or ("main" if index == 0 else f"compile{index + 1}")), kernel=kernel,
        target=_target(d.get("target", "cuda:90"), chunk, file, line, where),
        function=_opt_str(d, "function", chunk, file, line, where),
        launch=_int(d, "launch", None, chunk, file, line, where, minimum=1),
        num_warps=_int(d, "num_warps", None, chunk, file, line, where, minimum=1),
        num_stages=_int(d, "num_stages", None, chunk, file, line, where, minimum=1),
        constexprs=tuple(sorted(constexprs.items())), signature=_opt_str(d, "signature", chunk, file, line, where))


def show_spec(d: dict, chunk: Chunk, file: str, line: int, where: str, known: Known, names: list[str]) -> ShowSpec:
    no_unknown(d, SHOW_KEYS, file, line_of(chunk, "[[show]]", line), f"{where}, [[show]]")
    if not names:
        raise LessonFileError(file, line_of(chunk, "[[show]]", line), f"{where}: [[show]] needs a [[compile]]")
    target = d.get("compile", names[0])
    if target not in names:
        raise LessonFileError(file, line_of(chunk, "compile =", line),
                              f"{where}: [[show]] names compile {target!r}; this step compiles {names}")
    stage = d.get("stage", "ptx")
    if known.stages is not None and stage not in known.stages:
        raise LessonFileError(file, line_of(chunk, "stage", line), f"{where}: unknown stage {stage!r}"
                                                                    + choices(known.stages))
    match = _opt_str(d, "match", chunk, file, line, where)
    if match is not None:
        try:
            re.compile(match)
        except re.error as e:
            raise LessonFileError(file, line_of(chunk, "match", line), f"{where}: match is not a regex: {e}") from None
    py = d.get("python_lines", [])
    if not isinstance(py, list) or not all(isinstance(n, int) and n > 0 for n in py):
        raise LessonFileError(file, line_of(chunk, "python_lines", line),
                              f"{where}: python_lines must be a list of line numbers, e.g. [30, 31]")
    region = d.get("region", "all")
    if region not in ("all", "loop") or (region == "loop" and stage != "ptx"):
        raise LessonFileError(file, line_of(chunk, "region", line),
                              f'{where}: region is "all", or "loop" for a ptx stage (got {region!r})')
    return ShowSpec(compile=target, stage=stage, match=match, python_lines=tuple(py),
                    limit=_int(d, "limit", 24, chunk, file, line, where, minimum=1),
                    title=str(d.get("title", "")), region=region)


def exercise_spec(d, chunk: Chunk, file: str, line: int, where: str, known: Known) -> Exercise:
    at = line_of(chunk, "[exercise]", line)
    if not isinstance(d, dict):
        raise LessonFileError(file, at, f"{where}: `exercise` must be a table ([exercise])")
    no_unknown(d, EXERCISE_KEYS, file, at, f"{where}, [exercise]")
    goal = d.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise LessonFileError(file, at, f"{where}: the exercise needs a goal = \"...\"")
    checks = []
    for c in table_list(d, "check", chunk, file, at, where):
        no_unknown(c, CHECK_KEYS, file, line_of(chunk, "[[exercise.check]]", at), f"{where}, [[exercise.check]]")
        metric, op, value = c.get("metric"), c.get("op", ">="), c.get("value")
        if not isinstance(metric, str) or (known.metrics is not None and metric not in known.metrics):
            raise LessonFileError(file, line_of(chunk, "metric", at), f"{where}: unknown metric {metric!r}"
                                                                       + choices(known.metrics))
        if op not in OPS:
            raise LessonFileError(file, line_of(chunk, "op", at), f"{where}: op must be one of {', '.join(OPS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LessonFileError(file, line_of(chunk, "value", at), f"{where}: value must be a number")
        checks.append(Check(metric, op, float(value), str(c.get("label", ""))))
    if not checks:
        raise LessonFileError(file, at, f"{where}: the exercise needs at least one [[exercise.check]]")
    return Exercise(goal=goal.strip(), starter=_kernel_ref(d.get("starter"), chunk, file, at, where, known, "starter"),
                    checks=tuple(checks), target=_target(d.get("target", "cuda:90"), chunk, file, at, where),
                    function=_opt_str(d, "function", chunk, file, at, where), hint=str(d.get("hint", "")))


def _kernel_ref(value, chunk: Chunk, file: str, line: int, where: str, known: Known, key: str) -> str:
    at = line_of(chunk, key, line)
    if not isinstance(value, str) or not value.strip():
        raise LessonFileError(file, at, f"{where}: `{key}` names a library kernel or a .py file next to the lesson")
    if value.endswith(".py"):
        if value.startswith("/") or ".." in value.replace("\\", "/").split("/"):
            raise LessonFileError(file, at, f"{where}: {value!r} must be a path inside the lessons folder")
    elif known.kernels is not None and value not in known.kernels:
        raise LessonFileError(file, at, f"{where}: no library kernel {value!r}" + choices(known.kernels)
                              + " (or give a .py file next to the lesson)")
    return value


def _target(value, chunk: Chunk, file: str, line: int, where: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"(cuda:\d+|hip:gfx[0-9a-f]+)", value):
        raise LessonFileError(file, line_of(chunk, "target", line),
                              f"{where}: target must look like \"cuda:90\" or \"hip:gfx942\" (got {value!r})")
    return value


def _opt_str(d: dict, key: str, chunk: Chunk, file: str, line: int, where: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise LessonFileError(file, line_of(chunk, key, line), f"{where}: {key} must be text")
    return value


def _int(d: dict, key: str, default, chunk: Chunk, file: str, line: int, where: str, minimum: int = 0):
    value = d.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise LessonFileError(file, line_of(chunk, key, line), f"{where}: {key} must be a whole number ≥ {minimum}")
    return value


def no_unknown(d: dict, allowed: set[str], file: str, line: int, where: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise LessonFileError(file, line, f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")


def line_of(chunk: Chunk, needle: str, default: int) -> int:
    """The first line of the step that starts with `needle` (a key, `[[show]]`), for messages."""
    for n, text in chunk.lines:
        if text.strip().startswith(needle):
            return n
    return default


def choices(names: frozenset[str] | None) -> str:
    return f" (known: {', '.join(sorted(names))})" if names else ""
