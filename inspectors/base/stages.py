"""The stage table: one row per compiler stage. Everything that lists, names,
highlights or saves a stage reads it from here (tabs, lexers, file names, CLI keys).

`asm_key` is the key of `CompiledKernel.asm` the text comes from; SASS has none
because it is disassembled from the cubin.
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


STAGES: tuple[Stage, ...] = (
    Stage("source", "Python", 0, "python-panel", "py", None),
    Stage("ttir", "TTIR", 1, "mlir", "ttir", "ttir"),
    Stage("ttgir", "TTGIR", 2, "mlir", "ttgir", "ttgir"),
    Stage("llir", "LLVM IR", 3, "llvm", "ll", "llir"),
    Stage("ptx", "PTX", 4, "ptx", "ptx", "ptx", ("cuda",)),
    Stage("sass", "SASS", 5, "sass", "sass", None, ("cuda",)),
    Stage("amdgcn", "AMDGCN", 6, "amdgpu", "amdgcn", "amdgcn", ("hip",)),
)

BY_NAME: dict[str, Stage] = {s.name: s for s in STAGES}


def stages_for(backend: str) -> tuple[Stage, ...]:
    """Stages a target of this backend produces, in display order."""
    return tuple(s for s in sorted(STAGES, key=lambda s: s.order) if backend in s.backends)


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
