"""Compare two compiles: each stage's text side by side, and a table of what changed in
the figures that matter (vector widths, registers, spills, shared memory, counts).

Pure functions from text (and `insight.Insight`) to frozen dataclasses; the app renders
them, the CLI prints them.

    d = diff_stage("ptx", before, after)                 # noise ignored by default
    d.changed, d.added, d.removed, d.rows[0].kind        # 'equal' | 'change' | 'add' | 'remove'
    t = delta_table(figures(k_a, insight_a), figures(k_b, insight_b))
    t.headline                                           # 'loads v1 → v4, registers 10 → 18'

"Noise" is what changes when nothing the kernel does changes: register and SSA value
numbers, debug line directives and location aliases, label numbers, hashes, SASS
addresses. With `ignore_noise`, lines are compared after `normalize_line` (and lines that
are all noise are left out), so renumbering `%r12` to `%r14` throughout makes no diff.

Cost: lines (and the words of a changed line) are aligned by `inspectors.explain.align`,
whose work is bounded whatever the text; a text over `MAX_DIFF_BYTES` or `MAX_DIFF_LINES`
is not aligned at all: its StageDiff has no rows and says `too large to diff here (… MB)`.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from inspectors.base import stages as stage_table
from inspectors.explain import align
from inspectors.explain.delta import (  # noqa: F401 - re-exported: diff.delta_table(...)
    DeltaRow, DeltaTable, Figures, delta_table, figures, headline, width_label)
from inspectors.explain.insight import Insight
from inspectors.base.result import KernelResult

# ---------------------------------------------------------------------------- noise rules

# Lines that are all noise, per stage family; each regex quotes what it drops.
_DROP = {
    # `	.loc	1 27 9                          // vector_add.py:27:9`, `	.file	1 "vector_add.py"`,
    # `$L__tmp3:` / `$L__func_begin0:` (debug labels); AMDGCN's `; %bb.3:` comment lines too
    "ptx": re.compile(r"^\s*(?:\.loc\b|\.file\b|\$L__(?:tmp|func_begin|func_end|info_string)\d*:)"),
    "amdgcn": re.compile(r"^\s*(?:\.loc\b|\.file\b|\.Ltmp\d+:|\.Lfunc_end\d+:|;)"),
    # `	//## File "vector_add.py", line 27` (nvdisasm -g line info)
    "sass": re.compile(r"^\s*//##"),
    # `#loc23 = loc("x"(#loc7))`
    "mlir": re.compile(r"^\s*#loc\d*\s*=\s*loc\("),
    # `!21 = !DILocation(line: 27, column: 9, scope: !4)` (metadata definitions)
    "llir": re.compile(r"^\s*!\d+\s*=|^\s*!llvm\.(?:dbg|module)"),
}

# PTX DWARF data after `	.section	.debug_abbrev` (`.b8 116 // DW_AT_producer`): all noise.
_PTX_DEBUG_SECTION_RE = re.compile(r"^\s*\.section\s+\.debug_")

# Substitutions per family, in order: (pattern, replacement). Each quotes what it rewrites.
_HASH = (re.compile(r"\b[0-9a-fA-F]{16,}\b"), "<hash>")           # cache keys, e.g. 5b2f6e0c9d4a1b7e…
_SUBS = {
    "ptx": (
        (re.compile(r"%([a-z]+)\d+\b"), r"%\1#"),                     # %r12, %rd7, %p1 (not %ctaid.x)
        (re.compile(r"%([a-z]+)<\d+>"), r"%\1<#>"),                    # .reg .b32 %r<33>;
        (re.compile(r"(\$L__[A-Za-z_]+?)\d+(?:_\d+)?\b"), r"\1#"),    # $L__BB0_2
        _HASH,
    ),
    "sass": (
        (re.compile(r"/\*[0-9a-f]{4,}\*/"), "/*#*/"),                  # /*0180*/ instruction address
        (re.compile(r"\b(U?R)\d+\b"), r"\1#"),                         # R16, UR4
        (re.compile(r"\b(U?P)\d+\b"), r"\1#"),                         # P0, UP1 (not PT)
        (re.compile(r"\.reuse\b"), ""),                                # R9.reuse: operand cache hint
        (re.compile(r"\.L_x_\d+"), ".L_x_#"),                          # .L_x_1 branch labels
        _HASH,
    ),
    "mlir": (
        (re.compile(r"%\d+\b"), "%#"),                                 # %12
        (re.compile(r"%([A-Za-z_][\w$.]*?)_\d+\b"), r"%\1"),           # %offsets_3 -> %offsets, %c0_i32_1
        (re.compile(r"\^bb\d+"), "^bb#"),                              # ^bb1
        (re.compile(r"#loc\d*"), "#loc"),                              # any stray alias
        _HASH,
    ),
    "llir": (
        (re.compile(r",\s*!dbg\s+!\d+"), ""),                          # , !dbg !20
        (re.compile(r"%\d+\b"), "%#"),                                 # %12
        (re.compile(r"^(\s*)\d+:"), r"\1#:"),                          # `5:` basic block label
        (re.compile(r"!\d+\b"), "!#"),                                 # !dbg !4 on a define
        (re.compile(r"#\d+\b"), "#"),                                  # attribute groups #0
        _HASH,
    ),
    "amdgcn": (
        (re.compile(r"\b([vs])\[\d+:\d+\]"), r"\1[#]"),                # v[2:5], s[8:11]
        (re.compile(r"\b([vs])\d+\b"), r"\1#"),                        # v12, s4
        (re.compile(r"\.LBB\d+_\d+"), ".LBB#"),                        # .LBB0_2
        (re.compile(r";.*$"), ""),                                     # trailing assembler comments
        _HASH,
    ),
}
# `loc(...)` anywhere in an MLIR line, nested parentheses included: loc("x"(#loc7))
# (`(?<!\s)`: a match starts where its blanks start; from inside a long run of blanks, `\s*`
# rescanned the run each time: quadratic)
_MLIR_LOC_RE = re.compile(r"(?<!\s)\s*\bloc\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")
_SPACE_RE = re.compile(r"[ \t]+")


def is_noise_line(stage: str, line: str) -> bool:
    """True for lines that say nothing about what the kernel does, e.g. PTX
    `\t.loc\t1 27 9 // vector_add.py:27:9` or TTGIR `#loc23 = loc("x"(#loc7))`."""
    family = stage_table.family_of(stage)
    drop = _DROP.get(family) if family else None
    return bool(drop and drop.match(line)) or not line.strip()


def normalize_line(stage: str, line: str) -> str:
    """The line as compared with noise ignored, e.g. PTX
    `@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];` ->
    `@%p# ld.global.v4.b32 { %r#, %r#, %r#, %r# }, [ %rd# + 0 ];`."""
    family = stage_table.family_of(stage)
    if family == "mlir":
        line = _MLIR_LOC_RE.sub("", line)
    for pattern, repl in _SUBS.get(family, ()):
        line = pattern.sub(repl, line)
    return _SPACE_RE.sub(" ", line).strip()


def normalize(stage: str, text: str) -> tuple[tuple[int, str], ...]:
    """Lines kept for comparison with noise ignored: (1-based line, normalized text).
    Blank lines, noise lines, and the PTX's DWARF sections are left out."""
    kept, ptx = [], stage_table.family_of(stage) == "ptx"
    for n, line in enumerate(text.splitlines(), 1):
        if ptx and _PTX_DEBUG_SECTION_RE.match(line):
            break
        if is_noise_line(stage, line):
            continue
        norm = normalize_line(stage, line)
        if norm:
            kept.append((n, norm))
    return tuple(kept)


# ---------------------------------------------------------------------------- aligned diff

@dataclass(frozen=True)
class DiffRow:
    """One row of the side-by-side view. `a`/`b` are 1-based lines of each text, None on
    the side that has no line (an added or removed line)."""
    kind: str                  # equal | change | add | remove
    a: int | None
    b: int | None
    a_text: str = ""
    b_text: str = ""

    @property
    def noise_only(self) -> bool:
        """An `equal` row whose raw texts differ: they differ only in noise."""
        return self.kind == "equal" and self.a_text.strip() != self.b_text.strip()


@dataclass(frozen=True)
class StageDiff:
    stage: str
    rows: tuple[DiffRow, ...]
    ignore_noise: bool
    hidden_a: int = 0          # noise lines of each text left out of the rows
    hidden_b: int = 0
    too_large: str = ""        # set (and no rows) when a text is over the size limits: the message

    @property
    def changed(self) -> int:
        return sum(r.kind == "change" for r in self.rows)

    @property
    def added(self) -> int:
        return sum(r.kind == "add" for r in self.rows)

    @property
    def removed(self) -> int:
        return sum(r.kind == "remove" for r in self.rows)

    @property
    def identical(self) -> bool:
        return not self.too_large and all(r.kind == "equal" for r in self.rows)

    def summary(self) -> str:
        """`3 changed, 20 added, 1 removed`, `no difference`, or the `too_large` message."""
        if self.too_large:
            return self.too_large
        if self.identical:
            return "no difference" + (" (noise ignored)" if self.ignore_noise else "")
        return f"{self.changed} changed, {self.added} added, {self.removed} removed"

    def to_json(self) -> dict:
        out = {"changed": self.changed, "added": self.added, "removed": self.removed,
               "identical": self.identical, "ignore_noise": self.ignore_noise}
        return out | ({"too_large": self.too_large} if self.too_large else {})


# Either text over this many bytes (UTF-8) or lines: not aligned, "too large to diff here".
MAX_DIFF_BYTES = 8_000_000
MAX_DIFF_LINES = 50_000
# Pairing lines inside a replaced block costs O(n*m) ratios: above this, pair by position.
_FANCY_LIMIT = 4000
_PAIR_CUTOFF = 0.55
# Similarity of two lines is measured on their first _PAIR_CHARS characters, and all the
# pairing of one diff may take _PAIR_STEPS steps (a pair looked at: 1 + its length / 8;
# a full ratio: its length more); past that, blocks are zipped by position.
_PAIR_CHARS = 160
_PAIR_STEPS = 1_000_000
# The words of two changed lines: a fixed allowance of steps and so many per word.
_INLINE_FIXED_STEPS = 20_000
_INLINE_STEPS_PER_WORD = 8


def too_large(a: str, b: str) -> str:
    """'' if both texts may be aligned, else the message, e.g. `too large to diff here (12.3 MB)`."""
    size = max(len(a), len(b))
    if size > MAX_DIFF_BYTES // 4:              # a character is 1 to 4 bytes: count bytes only here
        size = max(len(a.encode("utf-8", "surrogatepass")), len(b.encode("utf-8", "surrogatepass")))
    if size > MAX_DIFF_BYTES:
        return f"too large to diff here ({size / 1e6:.1f} MB)"
    return ""


def diff_stage(stage: str, a: str, b: str, ignore_noise: bool = True) -> StageDiff:
    """Align two texts of one stage line by line. Lines of a replaced block are paired
    with their most similar counterpart (so a scalar `ld.global.b32` sits next to the
    `ld.global.v4.b32` that replaced it), the rest side by side in order. Over the size
    limits, no rows and the `too_large` message instead."""
    big = too_large(a, b)
    if big:
        return StageDiff(stage, (), ignore_noise, too_large=big)
    a_lines, b_lines = a.splitlines(), b.splitlines()
    if max(len(a_lines), len(b_lines)) > MAX_DIFF_LINES:
        size = max(len(a.encode("utf-8", "surrogatepass")), len(b.encode("utf-8", "surrogatepass")))
        return StageDiff(stage, (), ignore_noise, too_large=f"too large to diff here ({size / 1e6:.1f} MB, "
                         f"{max(len(a_lines), len(b_lines)):,} lines)")
    if ignore_noise:
        ka, kb = normalize(stage, a), normalize(stage, b)
    else:
        ka = tuple((n, l.rstrip()) for n, l in enumerate(a_lines, 1))
        kb = tuple((n, l.rstrip()) for n, l in enumerate(b_lines, 1))
    keys_a, keys_b = [k for _, k in ka], [k for _, k in kb]
    opcodes = align.opcodes(keys_a, keys_b, align.Budget.for_items(len(keys_a) + len(keys_b)))
    pairing = align.Budget(_PAIR_STEPS)
    sim_a, sim_b = [k[:_PAIR_CHARS] for k in keys_a], [k[:_PAIR_CHARS] for k in keys_b]
    rows: list[DiffRow] = []

    def row(kind: str, i: int | None, j: int | None) -> DiffRow:
        na = ka[i][0] if i is not None else None
        nb = kb[j][0] if j is not None else None
        return DiffRow(kind, na, nb, a_lines[na - 1] if na else "", b_lines[nb - 1] if nb else "")

    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            rows.extend(row("equal", i1 + k, j1 + k) for k in range(i2 - i1))
        else:
            for i, j in _pair_block(sim_a, sim_b, i1, i2, j1, j2, pairing):
                rows.append(row("change" if i is not None and j is not None else
                                "remove" if i is not None else "add", i, j))
    return StageDiff(stage, tuple(rows), ignore_noise,
                     len(a_lines) - len(ka), len(b_lines) - len(kb))


def _pair_block(ka: list[str], kb: list[str], i1: int, i2: int, j1: int, j2: int, budget: align.Budget):
    """(i, j) pairs for a replaced block, in order; None on the side without a line.
    Like difflib.Differ's fancy replace: the most similar pair anchors the block and both
    halves are paired the same way; what cannot be anchored is zipped by position, and so
    is a block whose search would not fit in what is left of `budget`."""
    if i1 >= i2 or j1 >= j2 or (i2 - i1) * (j2 - j1) > _FANCY_LIMIT:
        yield from _zip_block(i1, i2, j1, j2)
        return
    n, m = i2 - i1, j2 - j1
    cost = n * m + (m * sum(len(ka[i]) for i in range(i1, i2)) + n * sum(len(kb[j]) for j in range(j1, j2))) // 8
    if cost > budget.left:
        yield from _zip_block(i1, i2, j1, j2)
        return
    budget.spend(cost)
    best, bi, bj = _PAIR_CUTOFF, None, None
    sm = difflib.SequenceMatcher(autojunk=False)
    for j in range(j1, j2):
        sm.set_seq2(kb[j])
        for i in range(i1, i2):
            sm.set_seq1(ka[i])
            if sm.real_quick_ratio() > best and sm.quick_ratio() > best:
                if budget.left <= 0:               # spent in the middle of this block: zip it
                    yield from _zip_block(i1, i2, j1, j2)
                    return
                budget.spend(len(ka[i]) + len(kb[j]))
                r = sm.ratio()
                if r > best:
                    best, bi, bj = r, i, j
    if bi is None:
        yield from _zip_block(i1, i2, j1, j2)
        return
    yield from _pair_block(ka, kb, i1, bi, j1, bj, budget)
    yield bi, bj
    yield from _pair_block(ka, kb, bi + 1, i2, bj + 1, j2, budget)


def _zip_block(i1: int, i2: int, j1: int, j2: int):
    n, m = i2 - i1, j2 - j1
    for k in range(max(n, m)):
        yield (i1 + k if k < n else None), (j1 + k if k < m else None)


def inline_spans(a: str, b: str, stage: str | None = None
                 ) -> tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, bool], ...]]:
    """Both lines cut into (piece, differs) runs at word boundaries, for highlighting what
    changed inside a changed line: `ld.global.b32` vs `ld.global.v4.b32` marks `v4.`.
    With `stage`, words are compared with noise ignored (`%r5` and `%r26` are the same).
    Aligned by `align.opcodes` within a budget of steps linear in the number of words:
    what it cannot align within it is marked as changed."""
    ta, tb = _WORD_RE.findall(a), _WORD_RE.findall(b)
    memo: dict[str, str] = {}                 # a line repeats its words: normalize each once
    key = (lambda w: memo.get(w) or memo.setdefault(w, normalize_line(stage, w) if w.strip() else " ")
           ) if stage else (lambda w: w)
    budget = align.Budget.for_items(len(ta) + len(tb), _INLINE_FIXED_STEPS, _INLINE_STEPS_PER_WORD)
    out_a: list[tuple[str, bool]] = []
    out_b: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in align.opcodes([key(w) for w in ta], [key(w) for w in tb], budget):
        if i2 > i1:
            out_a.append(("".join(ta[i1:i2]), tag != "equal"))
        if j2 > j1:
            out_b.append(("".join(tb[j1:j2]), tag != "equal"))
    return tuple(out_a), tuple(out_b)


# words, runs of spaces, and single punctuation: `@%p1 ld.global.v4.b32 {` ->
# `@`, `%p1`, ` `, `ld`, `.`, `global`, `.`, `v4`, `.`, `b32`, ` `, `{`
_WORD_RE = re.compile(r"\s+|%?\w+|.")


# ---------------------------------------------------------------------------- whole compiles

@dataclass(frozen=True)
class KernelDiff:
    """One launch of A against the same launch of B."""
    launch: int                                  # 0-based
    a: KernelResult
    b: KernelResult
    delta: DeltaTable
    stages: dict = field(default_factory=dict)   # stage name -> StageDiff


def diff_kernels(launch: int, a: KernelResult, b: KernelResult, a_insight: Insight, b_insight: Insight,
                 a_stages: dict[str, str] | None = None, b_stages: dict[str, str] | None = None,
                 ignore_noise: bool = True) -> KernelDiff:
    """Delta table and per-stage diffs of one pair; `*_stages` may add SASS to `.stages`."""
    sa, sb = a_stages or a.stages, b_stages or b.stages
    stage_diffs = {name: diff_stage(name, sa[name], sb[name], ignore_noise) for name in sa if name in sb}
    return KernelDiff(launch, a, b, delta_table(figures(a, a_insight), figures(b, b_insight)), stage_diffs)
