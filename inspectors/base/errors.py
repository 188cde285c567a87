"""Errors cross the worker boundary as values: a kind, a message and the source line.

The kinds are a stable contract (CLI JSON, scripts): syntax, compile, runtime, timeout, usage,
crash (the worker died: killed for memory, a segfault in user code), busy (the session already
has as many compiles queued or running as the server allows; nothing was run).

A stage that fails after others were made (ptxas crashes on the PTX, nvdisasm fails on the
cubin, LLVM aborts while making LLVM IR) names itself in `stage` (a key of the stage table:
`sass` for ptxas/nvdisasm, `llir`, `ptx`, ...), and `command` holds a shell command that
reproduces the failure outside Triton Lens when a tool failed (ptxas with Triton's flags on
the saved PTX file).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

KINDS = ("syntax", "compile", "runtime", "timeout", "usage", "crash", "busy")


@dataclass(frozen=True)
class CompileError:
    kind: str
    message: str
    file: str | None = None
    line: int | None = None
    detail: str = ""        # traceback or compiler log, shown folded
    stage: str | None = None    # the stage that failed, when the ones before it were made
    command: str = ""           # reproduces a tool's failure by hand (ptxas ... k.ptx -o k.cubin)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "CompileError":
        return cls(**{k: d.get(k) for k in ("kind", "message", "file", "line", "stage")},
                   detail=d.get("detail") or "", command=d.get("command") or "")

    def headline(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        stage = f" in stage {self.stage}" if self.stage else ""
        return f"{self.kind} error{stage}{where}: {self.message.splitlines()[0] if self.message else ''}"
