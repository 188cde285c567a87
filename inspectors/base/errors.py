"""Errors cross the worker boundary as values: a kind, a message and the source line.

The kinds are a stable contract (CLI JSON, scripts): syntax, compile, runtime, timeout, usage,
crash (the worker died: killed for memory, a segfault in user code), busy (the session already
has as many compiles queued or running as the server allows; nothing was run).
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

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "CompileError":
        return cls(**{k: d.get(k) for k in ("kind", "message", "file", "line")}, detail=d.get("detail") or "")

    def headline(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind} error{where}: {self.message}"
