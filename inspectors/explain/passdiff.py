"""The diff of two steps of the pass pipeline (the Pass pipeline page): rows for the shared
side-by-side view, from the IR before and after a pass (`inspectors.read.passes` reads the dump).
`_difflib_rows` is the plain line alignment without noise rules, kept for callers that want
the IR exactly as printed."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from inspectors.base import stages as stage_table
from inspectors.explain.diff import diff_stage


@dataclass(frozen=True)
class DiffRow:
    """Same shape as `inspectors.explain.diff.DiffRow`: kind equal | change | add | remove; 1-based
    line numbers, None on the side without a line."""
    kind: str
    a: int | None
    b: int | None
    a_text: str = ""
    b_text: str = ""


# The stage whose lexer and noise rules read an IR the passes rewrite that is no stage of its own
# (the MLIR LLVM dialect reads as TTGIR, machine IR best as LLVM IR).
READS_AS = {"llvm-dialect": "ttgir", "mir": "llir"}


def stage_of(ir: str) -> str:
    """The stage table's row for a pass dump's IR (`ttgir`, `llvm-dialect`, `mir`): the Passes
    page and `diff_rows` read it with that stage's lexer and noise rules."""
    return ir if ir in stage_table.BY_NAME else READS_AS.get(ir, "llir")


def diff_rows(before: str, after: str, stage: str = "", ignore_noise: bool = False) -> tuple:
    """Side-by-side rows between two IR texts. Uses the shared diff view's aligner
    (`inspectors.explain.diff.diff_stage`, which pairs changed lines by similarity and can ignore
    renumbering noise)."""
    return diff_stage(stage_of(stage), before, after, ignore_noise=ignore_noise).rows


def _difflib_rows(before: str, after: str) -> tuple[DiffRow, ...]:
    a, b = before.splitlines(), after.splitlines()
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend(DiffRow("equal", i1 + k + 1, j1 + k + 1, a[i1 + k], b[j1 + k]) for k in range(i2 - i1))
            continue
        n, m = i2 - i1, j2 - j1
        for k in range(max(n, m)):
            ia = i1 + k if k < n else None
            jb = j1 + k if k < m else None
            kind = "change" if ia is not None and jb is not None else "remove" if ia is not None else "add"
            rows.append(DiffRow(kind, None if ia is None else ia + 1, None if jb is None else jb + 1,
                                a[ia] if ia is not None else "", b[jb] if jb is not None else ""))
    return tuple(rows)
