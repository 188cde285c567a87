"""The tiling and pipelining lesson's models for kernels/matmul.py (pure arithmetic, and the
compiled PTX read through inspectors.read.ptxops):

* a tile's traffic: each program loads (BLOCK_M + BLOCK_N) x BLOCK_K fp16 per K step and does
  2 x BLOCK_M x BLOCK_N x BLOCK_K flops: flops per byte = BLOCK_M * BLOCK_N / (BLOCK_M + BLOCK_N);
  over the whole matmul A is read N / BLOCK_N times and B M / BLOCK_M times from L2;
* the launch order of the grouped ordering (the kernel's own pid arithmetic) and, per wave of
  programs running at once, the distinct A and B tiles it needs: what DRAM must deliver when L2
  keeps a tile for the wave that shares it;
* the configurations the lesson compiles and benchmarks/gpu_lessons.py times (one list).
"""
from __future__ import annotations

from dataclasses import dataclass

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): the tile-size step (kernels/matmul.py's
# default is 128x256x64, 8 warps, 3 stages)
BLOCK_CONFIGS: tuple[tuple[int, int, int, int, int], ...] = (
    (64, 64, 32, 4, 3), (128, 128, 32, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (256, 128, 64, 8, 3))
DEFAULT = (128, 256, 64, 8, 3)
STAGES = (1, 2, 3, 4)                       # num_stages at the default tile
GROUPS = (1, 4, 8, 16)                      # GROUP_SIZE_M at the default tile
SIZE = 4096                                 # M = N = K of the timed runs
GROUP_SIZE = 8192                           # M = N = K of the grouped-ordering runs (B no longer fits in L2)


def key(bm: int, bn: int, bk: int, warps: int, stages: int, group: int = 8, size: int = SIZE) -> str:
    """How the GPU file names a run: `128x256x64 w8 s3 g8 @4096`."""
    return f"{bm}x{bn}x{bk} w{warps} s{stages} g{group} @{size}"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class TileTraffic:
    programs: int
    k_steps: int                    # iterations of the K loop per program
    step_bytes: int                 # bytes of A and B one program loads per K step
    step_flops: int
    flops_per_byte: float           # of one tile (what the tile size buys)
    l2_read_bytes: int              # A and B bytes all programs load (through L2) in the whole matmul
    c_write_bytes: int
    min_bytes: int                  # A, B read once and C written once
    flops: int


def tile_traffic(m: int, n: int, k: int, bm: int, bn: int, bk: int, elem: int = 2) -> TileTraffic:
    programs = cdiv(m, bm) * cdiv(n, bn)
    steps = cdiv(k, bk)
    step_bytes = (bm + bn) * bk * elem
    step_flops = 2 * bm * bn * bk
    return TileTraffic(programs=programs, k_steps=steps, step_bytes=step_bytes, step_flops=step_flops,
                       flops_per_byte=step_flops / step_bytes, l2_read_bytes=programs * steps * step_bytes,
                       c_write_bytes=m * n * elem, min_bytes=(m * k + k * n + m * n) * elem, flops=2 * m * n * k)


def launch_order(m: int, n: int, bm: int, bn: int, group: int) -> list[tuple[int, int]]:
    """(pid_m, pid_n) of program 0, 1, 2, ... exactly as kernels/matmul.py computes them."""
    num_pid_m, num_pid_n = cdiv(m, bm), cdiv(n, bn)
    in_group = group * num_pid_n
    out = []
    for pid in range(num_pid_m * num_pid_n):
        group_id = pid // in_group
        first = group_id * group
        size = min(num_pid_m - first, group)
        out.append((first + (pid % in_group) % size, (pid % in_group) // size))
    return out


@dataclass(frozen=True)
class WaveTraffic:
    wave: int                       # programs resident at once (SMs x programs per SM)
    waves: int
    first_wave_rows: int            # distinct pid_m in the first wave
    first_wave_cols: int            # distinct pid_n in the first wave
    dram_bytes: int                 # sum over waves of the distinct A and B tiles' bytes (full K)
    no_reuse_bytes: int             # every program fetching its own tiles from DRAM
    min_bytes: int                  # A and B once


def wave_traffic(m: int, n: int, k: int, bm: int, bn: int, group: int, wave: int, elem: int = 2) -> WaveTraffic:
    """The model: programs run in waves of `wave`; within a wave a tile of A or B that several
    programs need comes from DRAM once (they load it at about the same K step, and L2 keeps it),
    across waves nothing is kept. A lower bound on reuse a real L2 of 50 MB can beat."""
    order = launch_order(m, n, bm, bn, group)
    total = 0
    first_rows = first_cols = 0
    for w in range(0, len(order), wave):
        part = order[w:w + wave]
        rows, cols = {p[0] for p in part}, {p[1] for p in part}
        if w == 0:
            first_rows, first_cols = len(rows), len(cols)
        total += (len(rows) * bm + len(cols) * bn) * k * elem
    return WaveTraffic(wave=wave, waves=cdiv(len(order), wave), first_wave_rows=first_rows, first_wave_cols=first_cols,
                       dram_bytes=total, no_reuse_bytes=len(order) * (bm + bn) * k * elem,
                       min_bytes=(m * k + k * n) * elem)


# ---------------------------------------------------------------------------- checks against ncu

@dataclass(frozen=True)
class NcuCheck:
    case: str                       # "matmul/128x256x64 w8 s3 g8 @4096"
    figure: str                     # "registers per thread"
    static: float                   # what the compile (or the model) says
    measured: float                 # what ncu counted
    exact: bool                     # a hardware count the static figure must equal (else a model)

    @property
    def difference(self) -> float:
        return (self.static - self.measured) / self.measured if self.measured else float("inf")

    @property
    def agrees(self) -> bool:
        return abs(self.difference) <= (0.0 if self.exact else 0.10)


def ncu_checks(data: dict, occupancy_fn) -> list[NcuCheck]:
    """Static figures of each matmul case the GPU run profiled, beside Nsight Compute's counts.
    `data` is gpu_lessons.json; `occupancy_fn(arch, registers, shared, warps)` is the occupancy
    calculator (inspectors.read.occupancy.occupancy), passed in to keep this module pure."""
    out: list[NcuCheck] = []
    runs = (data.get("matmul") or {}).get("runs", {})
    cases = (data.get("ncu") or {}).get("cases", {})
    arch = int(str((data.get("env") or {}).get("capability", "9.0")).replace(".", ""))
    for name, launches in cases.items():
        if not name.startswith("matmul/") or not launches:
            continue
        run = runs.get(name.split("/", 1)[1])
        k = next((l for l in launches if "matmul_kernel" in l.get("kernel", "")), None)
        if run is None or k is None or "error" in run:
            continue
        bm, bn, bk, warps, stages, group = run["config"]
        size = run["size"]
        if run.get("registers") and k.get("launch__registers_per_thread"):
            out.append(NcuCheck(name, "registers per thread", run["registers"], k["launch__registers_per_thread"], True))
        if run.get("shared") is not None and k.get("launch__shared_mem_per_block_dynamic") is not None:
            out.append(NcuCheck(name, "dynamic shared memory per program (bytes)", run["shared"],
                                k["launch__shared_mem_per_block_dynamic"], True))
        if run.get("registers") and k.get("sm__maximum_warps_per_active_cycle_pct"):
            occ = occupancy_fn(arch, int(run["registers"]), int(run.get("shared") or 0), warps)
            out.append(NcuCheck(name, "theoretical occupancy (%)", 100 * occ.warps_per_sm / occ.max_warps_per_sm,
                                k["sm__maximum_warps_per_active_cycle_pct"], False))
        if k.get("lts__t_sectors_srcunit_tex_op_read.sum"):
            t = tile_traffic(size, size, size, bm, bn, bk)
            out.append(NcuCheck(name, "A and B bytes the SMs read from L2 (tile model)", t.l2_read_bytes,
                                32 * k["lts__t_sectors_srcunit_tex_op_read.sum"], False))
    return out
