"""Lesson files on disk: the bundled ones (assets/lessons/) and a teacher's folder
(`TLENS_LESSONS_DIR`). Each `*.md` is parsed on its own, so a malformed file costs only
itself: it is reported (file, line, message) and the others load.

    found = load_all([BUNDLED, settings.lessons_dir], known)
    found.lessons       # sorted by (order, title); a teacher's file replaces a bundled one of the same name
    found.errors        # LessonFileError per file that did not parse
    path = kernel_path(lesson, "exercises/fuse_me.py")     # a kernel file next to the lesson
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspectors.read.lessonfile import Known, Lesson, LessonFileError, parse

MAX_BYTES = 512_000           # a lesson file larger than this is not a lesson


@dataclass(frozen=True)
class Found:
    lessons: tuple[Lesson, ...]
    errors: tuple[LessonFileError, ...]
    replaced: tuple[str, ...] = ()      # bundled lessons a teacher's file of the same name replaced

    def get(self, slug: str) -> Lesson | None:
        return next((l for l in self.lessons if l.slug == slug), None)


def lesson_files(folder: Path) -> list[Path]:
    """The lesson files of a folder: `*.md` regular files, not starting with `_` or `.`
    (`_TEMPLATE.md` is the example to copy) and not README.md."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.md")
                  if p.is_file() and not p.name.startswith(("_", ".")) and p.name.lower() != "readme.md")


def read_lesson(path: Path, known: Known = Known()) -> Lesson:
    """One file, parsed; LessonFileError (line 1 for I/O and encoding problems) otherwise.
    Each .py file the lesson names must exist next to it."""
    name = str(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise LessonFileError(name, 1, f"larger than {MAX_BYTES:,} bytes")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise LessonFileError(name, 1, f"not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LessonFileError(name, 1, f"cannot be read: {e.strerror or e}") from None
    lesson = parse(text, name, path.stem, known)
    for step in lesson.steps:
        refs = [c.kernel for c in step.compiles] + ([step.exercise.starter] if step.exercise else [])
        for ref in refs:
            if ref.endswith(".py") and kernel_path(lesson, ref) is None:
                line = next((i for i, l in enumerate(text.splitlines(), 1) if ref in l), step.line)
                raise LessonFileError(name, line, f'step "{step.title}": no kernel file {ref!r} in {path.parent}')
    return lesson


def kernel_path(lesson: Lesson, ref: str) -> Path | None:
    """The .py file `ref` names, relative to the lesson's folder; None when it is missing or
    outside the folder (symlinks out of it included)."""
    folder = Path(lesson.file).parent.resolve()
    path = (folder / ref).resolve()
    if folder not in path.parents or not path.is_file() or path.suffix != ".py":
        return None
    return path


def load_all(folders, known: Known = Known()) -> Found:
    """Every lesson of the folders, in order; later folders replace earlier ones' lessons of
    the same name (a teacher's copy of a bundled lesson wins)."""
    by_slug: dict[str, Lesson] = {}
    errors: list[LessonFileError] = []
    replaced: list[str] = []
    for i, folder in enumerate(f for f in folders if f is not None):
        for path in lesson_files(Path(folder)):
            try:
                lesson = read_lesson(path, known)
            except LessonFileError as e:
                errors.append(e)
                continue
            if lesson.slug in by_slug and i > 0:
                replaced.append(lesson.slug)
            by_slug[lesson.slug] = lesson
    lessons = sorted(by_slug.values(), key=lambda l: (l.order, l.title.lower()))
    return Found(tuple(lessons), tuple(errors), tuple(replaced))
