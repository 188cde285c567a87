"""Compile targets, written `cuda:90` (sm_90) or `hip:gfx942`.

Parsing is pure; which targets the *installed* Triton can compile for is asked
of the worker (it owns the Triton import), see `inspectors.compile.worker_main`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# cuda:90, cuda:100, hip:gfx942
_TARGET_RE = re.compile(r"^(cuda|hip):(\d+|gfx[0-9a-f]+)$")

# Offered in the UI; each must compile with the installed Triton (checked in tests).
KNOWN = ("cuda:80", "cuda:89", "cuda:90", "cuda:100", "cuda:120", "hip:gfx942", "hip:gfx950")

NAMES = {
    "cuda:80": "sm_80 · A100", "cuda:89": "sm_89 · L40S/RTX 4090", "cuda:90": "sm_90 · H100/H200",
    "cuda:100": "sm_100 · B200", "cuda:120": "sm_120 · RTX 5090", "hip:gfx942": "gfx942 · MI300X",
    "hip:gfx950": "gfx950 · MI355X",
}


class TargetError(ValueError):
    pass


@dataclass(frozen=True)
class Target:
    backend: str          # "cuda" | "hip"
    arch: int | str       # 90 | "gfx942"
    warp_size: int

    @property
    def key(self) -> str:
        return f"{self.backend}:{self.arch}"

    @property
    def label(self) -> str:
        return NAMES.get(self.key, self.key)


def parse(text: str) -> Target:
    """`"cuda:90"` -> Target("cuda", 90, 32); `"hip:gfx942"` -> Target("hip", "gfx942", 64)."""
    m = _TARGET_RE.match(text.strip().lower())
    if not m:
        raise TargetError(f"unsupported target {text!r}: write cuda:<sm> (e.g. cuda:90) or hip:<gfx> "
                          f"(e.g. hip:gfx942); known: {', '.join(KNOWN)}")
    backend, arch = m.groups()
    if backend == "cuda":
        if not arch.isdigit() or int(arch) < 75:
            raise TargetError(f"unsupported target {text!r}: Triton needs sm_75 or newer")
        return Target("cuda", int(arch), 32)
    if not arch.startswith("gfx"):
        raise TargetError(f"unsupported target {text!r}: an AMD target is hip:gfx<N>, e.g. hip:gfx942")
    # gfx9 data-centre parts (CDNA) run wave64; RDNA (gfx10+, gfx11, gfx12) wave32.
    return Target("hip", arch, 64 if arch.startswith("gfx9") else 32)
