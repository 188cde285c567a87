"""The thread-coarsening sweep: one kernel compiled at many (BLOCK, num_warps), and what
each compile gives a thread — elements, vector width of its loads and stores, how many
of them, registers, occupancy — read from the compiled stages (no GPU).

    request = sweep_request(source, block=1024, num_warps=4)      # -> Engine.compile
    row = sweep_row(result.kernels[0], block=1024, num_warps=4)   # pure

The kernel is compiled from an explicit signature (`*fp32:16, *fp32:16, *fp32:16, i32:16,
BLOCK`), i.e. exactly as the JIT specializes a launch on 16-byte-aligned tensors whose length
is divisible by 16 (kernels/coarsening.py's example() makes such launches)."""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from inspectors.explain import layout_view
from inspectors.read import layouts
from inspectors.read import memops
from inspectors.read import mlir
from inspectors.read import resources
from inspectors.base.result import CompileRequest, KernelResult
from inspectors.base.targets import parse as parse_target

KERNEL = "coarse_add_kernel"
SIGNATURE = "*fp32:16, *fp32:16, *fp32:16, i32:16, {block}"
BLOCKS = (128, 256, 512, 1024, 2048, 4096, 8192)
WARPS = (1, 2, 4, 8, 16)
# The default, coarse grid: BLOCK at 4 warps, then num_warps at BLOCK = 1024 (11 compiles).
DEFAULT = tuple((b, 4) for b in BLOCKS) + tuple((1024, w) for w in WARPS if w != 4)


def sweep_request(source: str, block: int, num_warps: int, target: str = "cuda:90",
                  filename: str = "coarsening.py") -> CompileRequest:
    return CompileRequest(source=source, filename=filename, target=target, kernel=KERNEL, num_warps=num_warps,
                          signature=SIGNATURE.format(block=block), sass=False)


@dataclass(frozen=True)
class SweepRow:
    block: int
    num_warps: int
    threads: int
    elements_per_thread: int           # registers per thread for one input tensor (layout)
    copies: int                        # threads holding each element (> 1 when BLOCK < threads)
    load_vector: int                   # elements per ld.global (1, 2, 4)
    store_vector: int
    loads_per_thread: int              # ld.global instructions per thread, both inputs
    stores_per_thread: int
    registers: int | None              # ptxas's allocation, from the cubin
    occupancy_warps: int | None        # resident warps per SM
    max_warps: int | None
    limiter: str | None
    ptx_accesses: tuple[str, ...]      # the ld/st.global lines of the PTX

    @property
    def width(self) -> str:
        return f"v{self.load_vector}" if self.load_vector > 1 else "scalar"

    @property
    def occupancy(self) -> float | None:
        return self.occupancy_warps / self.max_warps if self.occupancy_warps is not None and self.max_warps else None


def sweep_row(kernel: KernelResult, block: int, num_warps: int) -> SweepRow:
    ptx = kernel.stages.get("ptx", "")
    ops = [m for m in memops.ptx_memops(ptx) if m.space == "global"]
    loads = [m for m in ops if m.kind == "load"]
    stores = [m for m in ops if m.kind == "store"]
    threads = 32 * num_warps
    per_thread, copies = _layout_share(kernel.stages.get("ttgir", ""), block)
    regs = occ_warps = max_warps = limiter = None
    target = parse_target(kernel.target)
    if target.backend == "cuda" and kernel.cubin:
        try:
            res = resources.resource_usage(base64.b64decode(kernel.cubin), dynamic_shared=int(kernel.metadata.get("shared", 0) or 0),
                                           arch=int(target.arch), kernel=kernel.name)
            occ = resources.occupancy(int(target.arch), res.registers, res.shared_bytes, num_warps)
            regs, occ_warps, max_warps, limiter = res.registers, occ.warps_per_sm, occ.max_warps_per_sm, occ.limiter
        except (ValueError, OSError, RuntimeError):
            pass
    return SweepRow(block, num_warps, threads, per_thread, copies,
                    max((m.vector for m in loads), default=0), max((m.vector for m in stores), default=0),
                    len(loads), len(stores), regs, occ_warps, max_warps, limiter, tuple(m.text for m in ops))


def _layout_share(ttgir: str, block: int) -> tuple[int, int]:
    """(elements each thread holds, threads holding each element) for the loaded tensor."""
    module = mlir.parse(ttgir)
    for op in module.ops_named("tt.load"):
        tensor = layouts.parse_tensor_type(op.type)
        layout = layout_view.parse_layout(tensor.layout, module.aliases) if tensor and tensor.layout else None
        if isinstance(layout, layouts.Blocked):
            own = layout_view.ownership(layout, tensor.shape)
            return own.registers, own.replication
    return 0, 0


# `@%p1 ld.global.v4.b32 { ... }` -> "v4"; `ld.global.b32` -> "v1"
_WIDTH_RE = re.compile(r"\b(?:ld|st)\.global(?:\.\w+)*?\.v(\d)\.")


def widths_in_ptx(ptx: str, kind: str = "ld") -> list[int]:
    """Vector widths of the global loads (`kind="ld"`) or stores in the PTX text, read with a
    regex independent of inspectors.read.memops (the tests compare the two)."""
    out = []
    for line in ptx.splitlines():
        if re.search(rf"\b{kind}\.global\.", line):
            m = _WIDTH_RE.search(line)
            out.append(int(m.group(1)) if m else 1)
    return out
