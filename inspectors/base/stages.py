"""The stage table: one row per compiler stage. Everything that lists, names, orders,
highlights, maps, diffs or saves a stage reads it from here (tabs, lexers, file names, CLI keys,
URL keys, the Triton cache's file suffixes).

`asm_key` is the key of `CompiledKernel.asm` the text comes from; SASS has none because it is
disassembled from the cubin. `family` names the kind of text: every reader that works per kind
of text — the line reader (inspectors/read/sourcemap.py), the diff's noise rules
(inspectors/explain/diff.py), the instruction counter (inspectors/explain/insight.py), the panel's
function and load finders (app/components/stage_panel/payload.py) — keys its table by family, so a
stage of a known family needs only its row here. A new family needs its line reader (and may add
noise rules); tests/unit/test_stage_table.py shows both.

    Stage("glir", "Gluon IR", 1, "mlir", "glir", "glir", family="mlir", optional=True)

`optional`: made only for some kernels (Gluon IR: a Gluon kernel on Triton 3.9 and later), so its
absence from a cache folder is no sign of a failed compile.
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
    Stage("ttir", "TTIR", 2, "mlir", "ttir", "ttir", family="mlir"),
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
    return sorted(names, key=lambda n: rank.get(n, len(rank)))


def machine_stage(names) -> str | None:
    """The target's assembly among `names` (PTX, or AMDGCN for AMD), None without one."""
    return next((n for n in ordered(names) if n in BY_NAME and BY_NAME[n].machine), None)


def get(name: str) -> Stage:
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown stage {name!r}; known: {', '.join(BY_NAME)}") from None


def from_triton(ext: str) -> str:
    """Our stage for one of Triton's pipeline stages (the keys of `CompiledKernel.asm`):
    `cubin` (made by ptxas) is shown as SASS; `hsaco` (AMD's linked binary) has no panel
    and keeps its name."""
    for s in STAGES:
        if s.asm_key == ext:
            return s.name
    return {"cubin": "sass"}.get(ext, ext)
