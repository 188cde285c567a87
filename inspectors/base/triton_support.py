"""The Triton versions Triton Lens supports, and what differs between them, as data.

Supported: 3.6 to 3.9 (every release the registry has in that range: 3.6.0, 3.7.0, 3.7.1,
3.8.0, 3.9.0; all compile, map and annotate the library and the tests' kernels). The GPU
machine's torch 2.11 pins 3.6.0; this CPU box installs 3.9.0.

Workarounds that touch Triton itself live in `inspectors.compile.triton_shim`; this module
holds only the facts that the pure layers need to read a version's output right (which
ptxas and which flags it runs, how it lays out a small tensor). Every fact names the
versions it was checked on and the Triton source it mirrors. The installed version is
read from the package metadata, without importing triton (the server never imports it).
"""
from __future__ import annotations

import re
from functools import lru_cache

OLDEST = (3, 6)
NEWEST = (3, 9)
RANGE = ">=3.6,<3.10"          # requirements.txt says the same


def parse(version: str) -> tuple[int, int]:
    """`"3.6.0"` -> (3, 6); `"3.9.0+git1234"` -> (3, 9)."""
    m = re.match(r"(\d+)\.(\d+)", version or "")
    if not m:
        raise ValueError(f"not a Triton version: {version!r}")
    return int(m.group(1)), int(m.group(2))


@lru_cache(maxsize=None)
def installed() -> str:
    """The installed triton's version string, or "" without triton."""
    from importlib import metadata
    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        return ""


def supported(version: str) -> bool:
    return OLDEST <= parse(version) <= NEWEST


def _v(version: str | None) -> tuple[int, int]:
    return parse(version or installed() or "%d.%d" % NEWEST)


def ptxas_tool(arch: int, version: str | None = None) -> str:
    """Which of the wheel's two ptxas binaries Triton runs for sm_`arch`.

    `get_ptxas(arch)` in triton/backends/nvidia/compiler.py: 3.6, 3.7 and 3.8 run
    `ptxas-blackwell` (the wheel's newer CUDA) only from sm_100 on and the older `ptxas`
    (CUDA 12.8 or 12.9) for sm_90 and below; 3.9 runs `ptxas-blackwell` (CUDA 13.4)
    from sm_90 on."""
    first = 90 if _v(version) >= (3, 9) else 100
    return "ptxas-blackwell" if arch >= first else "ptxas"


def ptxas_extra_flags(version: str | None = None) -> tuple[str, ...]:
    """Flags `make_cubin` adds besides -lineinfo, -v, --fmad and --gpu-name: 3.7 and later
    pass `--regAllocOptLevel=2` ("to work around ptxas 13.x bug", their comment); 3.6 does not."""
    return ("--regAllocOptLevel=2",) if _v(version) >= (3, 7) else ()


def blocked_keeps_small_registers(version: str | None = None) -> bool:
    """A blocked layout on a tensor smaller than sizePerThread (sizePerThread [4] on 2
    elements): 3.6, 3.7 and 3.8 keep all 4 registers per thread, the last 2 copies of the
    first 2 (LinearLayout register bases [[1], [0]]); 3.9 keeps only 2 ([[1]]). Checked
    with `to_linear_layout` of each version (tests/unit/test_layouts_view.py)."""
    return _v(version) < (3, 9)


def interpreter_index_needs_squeeze(version: str | None = None) -> bool:
    """Triton 3.6's interpreter turns a scalar tensor into an int with `int(array)` on a
    1-element 1-D array (`range(n_rows)`, `for k in range(tl.cdiv(K, BLOCK_K))`), which
    numpy 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars");
    3.7 and later call `.squeeze()` first."""
    return _v(version) < (3, 7)
