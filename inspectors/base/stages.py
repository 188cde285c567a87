"""The stage table: one row per compiler stage. Everything that lists, names, orders,
highlights, maps, diffs or saves a stage reads it from here (tabs, lexers, file names, CLI keys,
URL keys, the Triton cache's file suffixes, the worker's keys of `CompiledKernel.asm`).

A row's fields (docs/08-architecture.md, "The stage table: adding a stage"):

    name      the stable key: CLI JSON, URLs, file names in a zip, the Triton cache's suffix
    label     what the UI shows
    order     its place in pickers and tabs, left to right
    lexer     a pygments alias or one of ours (inspectors/read/lexers.py)
    ext       the file extension of a download or an export
    asm_key   the key of `CompiledKernel.asm` the text comes from (SASS has none: it is
              disassembled from the cubin)
    backends  the backends that make it
    family    the kind of text: python | mlir | llir | ptx | sass | amdgcn. Every reader that
              works per kind of text keys its table by family: the line reader (READERS,
              inspectors/read/sourcemap.py), the diff's noise rules (inspectors/explain/diff.py),
              the instruction counter (inspectors/explain/insight.py), the memory-op parsers
              (inspectors/read/memops.py), the panel's function and load finders
              (app/components/stage_panel/payload.py); MACHINE_FAMILIES says which is the
              target's assembly
    optional  made for some kernels only, so its absence from a cache folder is no sign of a
              failed compile (TTIR: Triton kernels; Gluon IR: Gluon kernels on Triton 3.9+)

Adding a stage is its row here, plus its family's line reader in sourcemap.READERS when the
family is new (tests/unit/test_stage_table.py does both). Gluon IR was added that way:

    Stage("glir", "Gluon IR", 1, "mlir", "glir", "glir", family="mlir", optional=True)
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str       # stable key: CLI JSON, URLs, file names
    label: str      # shown in the UI
    order: int      # position in pickers, left to right
    lexer: str      # pygments alias or one of ours (see inspectors.read.lexers)
    ext: str        # file extension for downloads
    asm_key: str | None  # key in CompiledKernel.asm
    backends: tuple[str, ...] = ("cuda", "hip")
    family: str = ""     # kind of text: python | mlir | llir | ptx | sass | amdgcn (readers key on it)
    optional: bool = False   # made for some kernels only (no sign of a failed compile when absent)

    @property
    def machine(self) -> bool:
        """The target's own assembly, what the memory-op tables and the first panels show."""
        return self.family in MACHINE_FAMILIES


MACHINE_FAMILIES = ("ptx", "amdgcn")

STAGES: tuple[Stage, ...] = (
    Stage("source", "Python", 0, "python-panel", "py", None, family="python"),
    # what a Gluon kernel's author wrote, before any pass (Triton 3.9: `stages["glir"]`)
    Stage("glir", "Gluon IR", 1, "mlir", "glir", "glir", family="mlir", optional=True),
    # a Gluon kernel has none (it starts at Gluon IR, or at TTGIR before Triton 3.9)
    Stage("ttir", "TTIR", 2, "mlir", "ttir", "ttir", family="mlir", optional=True),
    Stage("ttgir", "TTGIR", 3, "mlir", "ttgir", "ttgir", family="mlir"),
    Stage("llir", "LLVM IR", 4, "llvm", "ll", "llir", family="llir"),
    Stage("ptx", "PTX", 5, "ptx", "ptx", "ptx", ("cuda",), family="ptx"),
    Stage("sass", "SASS", 6, "sass", "sass", None, ("cuda",), family="sass"),
    Stage("amdgcn", "AMDGCN", 7, "amdgpu", "amdgcn", "amdgcn", ("hip",), family="amdgcn"),
)

BY_NAME: dict[str, Stage] = {s.name: s for s in STAGES}
# the binary each backend assembles (its file in a Triton cache folder; SASS is read from the cubin)
BINARY = {"cuda": "cubin", "hip": "hsaco"}


def stages_for(backend: str) -> tuple[Stage, ...]:
    """Stages a target of this backend produces, in display order."""
    return tuple(s for s in sorted(STAGES, key=lambda s: s.order) if backend in s.backends)


def family_of(name: str) -> str:
    """The family of stage `name` ("" for a name the table does not have)."""
    row = BY_NAME.get(name)
    return row.family if row else ""


def ordered(names) -> list[str]:
    """`names` in the table's order (names the table does not have last, as given)."""
    rank = {s.name: s.order for s in STAGES}
    return sorted(names, key=lambda n: rank.get(n, float("inf")))


def machine_stage(names) -> str | None:
    """The target's assembly among `names` (PTX, or AMDGCN for AMD), None without one."""
    return next((n for n in ordered(names) if n in BY_NAME and BY_NAME[n].machine), None)


def get(name: str) -> Stage:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown stage {name!r}; known: {', '.join(BY_NAME)}") from None


def texts_from_asm(asm, backend: str) -> dict[str, str]:
    """The stage texts among Triton's `asm` (`CompiledKernel.asm`, or what a failed compile made
    before it failed): every row of the backend with an `asm_key` that `asm` holds as text, in
    the table's order. The cubin (bytes) is not a text: SASS is disassembled from it."""
    return {s.name: asm[s.asm_key] for s in stages_for(backend)
            if s.asm_key and isinstance(asm.get(s.asm_key), str)}


def from_triton(ext: str) -> str:
    """Our stage for one of Triton's pipeline stages (the keys of `CompiledKernel.asm`):
    `cubin` (made by ptxas) is shown as SASS; `hsaco` (AMD's linked binary) has no panel
    and keeps its name."""
    for s in STAGES:
        if s.asm_key == ext:
            return s.name
    return {"cubin": "sass"}.get(ext, ext)
