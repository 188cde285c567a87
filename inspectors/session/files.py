"""Files the pages read that are not compiles: lesson files (the bundled ones and a teacher's
folder), committed Nsight Compute profiles, and the export zip of one compile (every stage,
SASS disassembled in a job, and the report made from the one insight policy).

    found = lessons((bundled, teacher_folder), known)
    zip_bytes = export(request, result, "vector_add.py")
"""
from __future__ import annotations

from pathlib import Path

from inspectors.base.result import CompileRequest, CompileResult
from inspectors.explain.profile import Profile
from inspectors.read.lessonfile import Known, Lesson
from inspectors.session import insights
from inspectors.store import export as export_mod
from inspectors.store import lessons as lesson_store
from inspectors.store import profiles
from inspectors.store.lessons import Found  # noqa: F401 - the loaded lessons, for the callers
from inspectors.store import workspace as _workspace
from inspectors.store.project import package_root, project_of  # noqa: F401 - a file's package, importable
from inspectors.store.workspace import Workspace, WorkspaceError, user_folder  # noqa: F401 - the user's kernel files

MAX_FILE_BYTES = _workspace.MAX_BYTES     # a workspace file larger than this is not read


def lesson_files(folder: Path) -> list[Path]:
    return lesson_store.lesson_files(folder)


def lessons(folders, known: Known = Known()) -> Found:
    """Every lesson file of `folders` read (a teacher's file with a bundled one's name replaces it)."""
    return lesson_store.load_all(folders, known)


def lesson_kernel(lesson: Lesson, ref: str) -> Path | None:
    """A `.py` a lesson names, next to the lesson file (None if there is none)."""
    return lesson_store.kernel_path(lesson, ref)


def profile(path: Path) -> tuple[Profile, str | None]:
    """A committed profile and its raw CSV (ValueError when it cannot be read)."""
    return profiles.load(Path(path))


def export(request: CompileRequest, result: CompileResult, filename: str) -> bytes:
    """The zip of one compile: every stage of every launch, SASS disassembled in a job, the
    insight of each launch, and report.md."""
    return export_mod.bundle(request, result, filename,
                             stage_texts=[insights.all_stages(k) for k in result.kernels],
                             insights=[insights.insight(k, filename, with_sass=True) for k in result.kernels])
