"""The compiler's own diagnostics: what libtriton prints to stderr while compiling with
`MLIR_ENABLE_DIAGNOSTICS=warnings,remarks` (the compile worker sets it for one compile at a time),
e.g.

    /job/kernel.py:14:20: remark: Warning: vectorization fails vec = 1 origin vec = 1 numElems = 32 mask is -1
    <blank line, the source line, a caret>
    /job/kernel.py:22:5: warning: Failed to pipeline loop
    /job/kernel.py:22:5: note: see current operation: ...

Pure: text in, frozen dataclasses out; one pass, linear in the text. Only the first line of each
diagnostic is kept (the source line and caret that follow repeat what the page shows)."""
from __future__ import annotations

import re
from dataclasses import dataclass

# `file.py:LINE:COL: severity: message` (a file name has no newline; the message is one line)
_DIAG_RE = re.compile(r"^(?P<file>[^\n:]{1,400}\.py):(?P<line>\d{1,7}):(?P<col>\d{1,7}): "
                      r"(?P<sev>remark|warning|note|error): (?P<msg>[^\n]{0,2000})$", re.M)
MAX_DIAGNOSTICS = 500


@dataclass(frozen=True)
class Diagnostic:
    file: str          # as the compiler printed it (a path in the job's folder, or a library's)
    line: int
    column: int
    severity: str      # remark | warning | note | error
    message: str

    @property
    def basename(self) -> str:
        return self.file.rsplit("/", 1)[-1]


def diagnostics(text: str) -> tuple[Diagnostic, ...]:
    """Every diagnostic, in order, duplicates dropped (a pattern applied twice says it twice);
    `note`s that only print the current operation are left out."""
    out, seen = [], set()
    for m in _DIAG_RE.finditer(text):
        msg = m["msg"].strip()
        if m["sev"] == "note" and msg.startswith("see current operation"):
            continue
        key = (m["file"], int(m["line"]), m["sev"], msg)
        if key in seen:
            continue
        seen.add(key)
        out.append(Diagnostic(m["file"], int(m["line"]), int(m["col"]), m["sev"], msg))
        if len(out) >= MAX_DIAGNOSTICS:
            break
    return tuple(out)
