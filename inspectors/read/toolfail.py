"""What Triton says when ptxas fails, read into a value.

Triton 3.6-3.9 raise `PTXASError` with this text (`make_cubin` in
triton/backends/nvidia/compiler.py)::

    PTXAS error: `ptxas` failed with error code -11
    `ptxas` stderr:
    ptxas /tmp/tmpsf9ldot0.ptx, line 5; fatal   : Unsupported .version 9.4; current version is '8.7'
    Repro command: /…/bin/ptxas -lineinfo -v --gpu-name=sm_90a /tmp/tmpsf9ldot0.ptx -o /tmp/tmpsf9ldot0.ptx.o

The first line is "Internal Triton PTX codegen error" for exit status 255 and "`ptxas` raised
SIGSEGV" for 128 + 11 (a shell's way of saying it); a process killed by a signal has a
negative code (-11: SIGSEGV).
"""
from __future__ import annotations

import re
import signal
from dataclasses import dataclass

_CODE_RE = re.compile(r"error code (-?\d+)")
_REPRO_RE = re.compile(r"^Repro command: (?P<cmd>.+)$", re.M)


@dataclass(frozen=True)
class PtxasFailure:
    returncode: int | None
    signal: str | None          # "SIGSEGV" when ptxas was killed by a signal
    stderr: str                 # what ptxas printed
    command: str                # Triton's repro command, "" if absent
    ptx_path: str | None        # the PTX file the command names

    @property
    def crashed(self) -> bool:
        return self.signal is not None

    def message(self) -> str:
        if self.crashed:
            head = (f"ptxas crashed ({self.signal}) turning this kernel's PTX into a cubin: a crash is a bug in "
                    "ptxas (it should report an error, not die). The stages up to PTX are complete; "
                    "the command below reproduces the crash outside Triton.")
        else:
            head = f"ptxas failed (exit status {self.returncode}) on this kernel's PTX."
        return head + (f"\nptxas said:\n{self.stderr[-3000:]}" if self.stderr else "")


def parse_ptxas_error(text: str) -> PtxasFailure | None:
    """The failure in Triton's PTXASError text, or None if the text is not one."""
    if "ptxas" not in text.lower():
        return None
    code = _CODE_RE.search(text)
    rc = int(code.group(1)) if code else None
    if rc is None and "Internal Triton PTX codegen error" in text:
        rc = 255
    elif rc is None and "raised SIGSEGV" in text:
        rc = -int(signal.SIGSEGV)
    sig = None
    if rc is not None and (rc < 0 or 128 < rc < 255):
        num = -rc if rc < 0 else rc - 128
        try:
            sig = signal.Signals(num).name
        except ValueError:
            sig = f"signal {num}"
    stderr = ""
    if "`ptxas` stderr:" in text:
        stderr = text.split("`ptxas` stderr:", 1)[1].split("Repro command:", 1)[0].strip()
    m = _REPRO_RE.search(text)
    command = m.group("cmd").strip() if m else ""
    ptx = next((w for w in command.split() if w.endswith(".ptx")), None)
    return PtxasFailure(rc, sig, stderr, command, ptx)
