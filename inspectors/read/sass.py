"""SASS from a cubin, with the disassembler shipped in the triton wheel, found without
importing triton (so the Streamlit server can disassemble on demand).

`nvdisasm -c -gi` prints `//## File "vector_add.py", line 27` before the instructions
of each source line (Triton passes -lineinfo to ptxas). It costs ~0.35 s even for a tiny
cubin (measured here, most of it in nvdisasm itself), which is why the app asks for SASS
only when a SASS panel is open, and the worker starts one per kernel in the background.
"""
from __future__ import annotations

import base64
import importlib.util
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from inspectors.base import sandbox


@lru_cache(maxsize=None)
def nvidia_tool(name: str) -> Path | None:
    """`cuobjdump`, `nvdisasm`, `ptxas` from triton/backends/nvidia/bin, or None."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "backends" / "nvidia" / "bin" / name
    return path if path.exists() else None


class SassError(RuntimeError):
    """nvdisasm failed on a cubin (or took too long). `command` reproduces it: the cubin is
    kept at the path it names."""

    def __init__(self, message: str, command: str):
        super().__init__(message)
        self.message, self.command = message, command


class Disassembly:
    """Starts nvdisasm at once; `result()` waits for the text, or raises SassError."""

    def __init__(self, cubin: bytes, flags: tuple[str, ...] = ("-c", "-gi")):
        self.proc = None
        self.path = None
        tool = nvidia_tool("nvdisasm")
        if tool is None:
            self.missing = "// nvdisasm is not in this triton wheel: SASS unavailable"
            return
        self.missing = ""
        folder = Path(tempfile.mkdtemp(prefix="tlens-sass-"))
        self.path = str(folder / "kernel.cubin")
        Path(self.path).write_bytes(cubin)
        self.argv = [str(tool), *flags, self.path]
        self.proc = subprocess.Popen(sandbox.tool_argv(self.argv, folder), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, errors="replace", env=sandbox.popen_env())

    def result(self, timeout: float = 120) -> str:
        if self.proc is None:
            return self.missing
        command = " ".join(self.argv)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise SassError(f"nvdisasm took longer than {timeout:g} s on the cubin", command) from None
        if self.proc.returncode != 0:       # the cubin stays where the command names it
            rc = self.proc.returncode
            how = f"was killed by signal {-rc}" if rc < 0 else f"failed (exit status {rc})"
            raise SassError(f"nvdisasm {how} on the cubin: {err.strip()[-2000:]}", command)
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        return out


def disassemble(cubin: bytes) -> str:
    return Disassembly(cubin).result()


def disassemble_b64(cubin_b64: str) -> str:
    return disassemble(base64.b64decode(cubin_b64))


def encodings_b64(cubin_b64: str) -> str:
    """`nvdisasm -c -hex`: each instruction with its encoding (inspectors.read.sasscontrol reads
    the scheduling controls out of it)."""
    return Disassembly(base64.b64decode(cubin_b64), ("-c", "-hex")).result()


def life_ranges_b64(cubin_b64: str) -> str:
    """`nvdisasm -c -plr -lrm count`: each instruction with the live registers after it, in a
    trailing `// | GPR | PRED | UGPR | UPRED |` column (inspectors.read.liveregs reads it)."""
    return Disassembly(base64.b64decode(cubin_b64), ("-c", "-plr", "-lrm", "count")).result()
