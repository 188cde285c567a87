"""Occupancy: how many blocks of a kernel fit on one SM, and what limits it, from its
registers, shared memory and warps (the CUDA occupancy calculator's arithmetic, per
architecture; checked against the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor on an
H100, see inspectors.read.resources for the shared-memory reserve)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SmLimits:
    max_warps: int               # resident warps per SM
    max_blocks: int              # resident blocks per SM
    smem_per_sm: int             # max shared memory per SM (largest carveout), bytes
    smem_per_block: int          # max shared memory per block (opt-in), bytes
    reserved_smem: int           # shared memory the driver reserves per block
    smem_granularity: int        # shared memory allocation unit, bytes
    registers: int = 65536       # 32-bit registers per SM (and per block)
    reg_granularity: int = 256   # registers are allocated per warp in units of 256
    max_regs_per_thread: int = 255
    sub_partitions: int = 4      # register file split in 4 (one per warp scheduler)


KB = 1024
# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
# (max resident warps/blocks per SM, 64K 32-bit registers per SM and per block,
# 255 registers per thread, shared memory per SM and per block, 1 KB "reserved shared
# memory per block" from 8.0), with the allocation granularities of the CUDA occupancy
# calculator (cuda_occupancy.h: cudaOccSMemAllocationGranularity 256 B on 7.x, 128 B
# from 8.x; cudaOccRegAllocationGranularity 256 per warp; 4 sub-partitions). The same
# per-SM numbers are in CCCL's cuda::arch::traits (libcudacxx/include/cuda/__device/
# arch_traits.h), which lists sm_103 and sm_110 with sm_100's values.
SM_LIMITS: dict[int, SmLimits] = {
    75: SmLimits(max_warps=32, max_blocks=16, smem_per_sm=64 * KB, smem_per_block=64 * KB,
                 reserved_smem=0, smem_granularity=256),
    80: SmLimits(max_warps=64, max_blocks=32, smem_per_sm=164 * KB, smem_per_block=163 * KB,
                 reserved_smem=1 * KB, smem_granularity=128),
    86: SmLimits(max_warps=48, max_blocks=16, smem_per_sm=100 * KB, smem_per_block=99 * KB,
                 reserved_smem=1 * KB, smem_granularity=128),
    89: SmLimits(max_warps=48, max_blocks=24, smem_per_sm=100 * KB, smem_per_block=99 * KB,
                 reserved_smem=1 * KB, smem_granularity=128),
    90: SmLimits(max_warps=64, max_blocks=32, smem_per_sm=228 * KB, smem_per_block=227 * KB,
                 reserved_smem=1 * KB, smem_granularity=128),
    100: SmLimits(max_warps=64, max_blocks=32, smem_per_sm=228 * KB, smem_per_block=227 * KB,
                  reserved_smem=1 * KB, smem_granularity=128),
    120: SmLimits(max_warps=48, max_blocks=32, smem_per_sm=100 * KB, smem_per_block=99 * KB,
                  reserved_smem=1 * KB, smem_granularity=128),
}
SM_LIMITS[103] = SM_LIMITS[110] = SM_LIMITS[100]

LIMITERS = ("threads/warps", "blocks", "registers", "shared memory")


@dataclass(frozen=True)
class Occupancy:
    warps_per_sm: int            # resident warps per SM at this launch
    max_warps_per_sm: int
    blocks_per_sm: int
    limiter: str                 # "registers" | "shared memory" | "threads/warps" | "blocks"
    explanation: str             # one sentence naming the limit, with the numbers
    limits: dict[str, int] = field(default_factory=dict)   # blocks per SM each resource alone allows

    @property
    def fraction(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm if self.max_warps_per_sm else 0.0


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def sm_limits(arch: int) -> SmLimits:
    if arch not in SM_LIMITS:
        raise ValueError(f"no occupancy limits for sm_{arch} (known: {', '.join(f'sm_{a}' for a in SM_LIMITS)})")
    return SM_LIMITS[arch]


def _occupancy_shared(lim: SmLimits, shared_bytes: int) -> int:
    """Bytes one block takes from the SM: the kernel's shared memory plus the driver's
    per-block reserve, rounded up to the allocation unit (cudaOccMaxBlocksPerSMSmemLimit)."""
    return _round_up(shared_bytes + lim.reserved_smem, lim.smem_granularity)


def occupancy(arch: int, registers: int, shared_bytes: int, num_warps: int) -> Occupancy:
    """Resident blocks and warps per SM for a kernel using `registers` per thread and
    `shared_bytes` of shared memory per block (static + dynamic, *without* the
    driver's 1 KB reserve, which is added here), launched with `num_warps` warps per
    block; the arithmetic of NVIDIA's occupancy calculator (cuda_occupancy.h,
    cudaOccMaxActiveBlocksPerMultiprocessor) with the default shared-memory carveout:

    * warps: max_warps // num_warps;  blocks: the per-SM block limit;
    * registers: regs/thread * 32 rounded up to 256 per warp; each of the 4
      sub-partitions holds 16384 // that many warps; blocks = 4 * that // num_warps
      (0 when a block cannot fit: more than 255 per thread or 65536 per block);
    * shared memory: (shared + reserve) rounded up to 128 B (256 B on 7.x);
      blocks = smem_per_sm // that, or 0 above the per-block maximum.

    On a tie the limiter named is the first of threads/warps, blocks, registers,
    shared memory: a kernel that fills every warp slot is not "limited by
    registers" even if its registers would allow no more. (Hopper also limits blocks by
    named barriers, 64 per SM; Triton kernels use one, which never binds.)
    
    One function on purpose: the steps of NVIDIA's occupancy calculator, in its order.
    """
    lim = sm_limits(arch)
    if num_warps < 1:
        raise ValueError("num_warps must be at least 1")
    limits: dict[str, int] = {}
    limits["threads/warps"] = lim.max_warps // num_warps if num_warps * 32 <= 1024 else 0
    limits["blocks"] = lim.max_blocks

    regs_per_warp = _round_up(max(registers, 0) * 32, lim.reg_granularity)
    if regs_per_warp == 0:
        limits["registers"] = lim.max_blocks
    elif (registers > lim.max_regs_per_thread
          or regs_per_warp * _round_up(num_warps, lim.sub_partitions) > lim.registers):
        limits["registers"] = 0
    else:
        warps_by_regs = (lim.registers // lim.sub_partitions) // regs_per_warp * lim.sub_partitions
        limits["registers"] = warps_by_regs // num_warps

    smem_alloc = _occupancy_shared(lim, shared_bytes)
    if smem_alloc > lim.smem_per_block + lim.reserved_smem:
        limits["shared memory"] = 0
    else:
        limits["shared memory"] = lim.smem_per_sm // smem_alloc if smem_alloc else lim.max_blocks

    blocks = min(limits.values())
    limiter = next(k for k in LIMITERS if limits[k] == blocks)
    warps = blocks * num_warps
    head = (f"{blocks} block{'s' if blocks != 1 else ''} of {num_warps} warp{'s' if num_warps != 1 else ''} "
            f"per SM = {warps} of {lim.max_warps} warps ({100 * warps // lim.max_warps}%)")
    if limiter == "threads/warps":
        why = (f"a block of {num_warps * 32} threads exceeds the 1024-thread limit" if blocks == 0 else
               f"the SM holds at most {lim.max_warps} resident warps")
    elif limiter == "blocks":
        why = f"sm_{arch} holds at most {lim.max_blocks} resident blocks per SM"
    elif limiter == "registers":
        if blocks == 0:
            why = (f"{registers} registers per thread cannot fit: a block needs "
                   f"{regs_per_warp * _round_up(num_warps, lim.sub_partitions):,} of the {lim.registers:,}")
        else:
            why = (f"{registers} registers per thread take {regs_per_warp:,} per warp (allocated in units of "
                   f"{lim.reg_granularity}), so the {lim.registers:,}-register file holds "
                   f"{(lim.registers // lim.sub_partitions) // regs_per_warp * lim.sub_partitions} warps")
    else:
        reserve = f" + {lim.reserved_smem:,} reserved by the driver" if lim.reserved_smem else ""
        if blocks == 0:
            why = (f"{shared_bytes:,} bytes of shared memory per block{reserve} exceed the "
                   f"{lim.smem_per_block + lim.reserved_smem:,} a block may use")
        else:
            why = (f"each block takes {smem_alloc:,} bytes of shared memory ({shared_bytes:,}{reserve}, "
                   f"in units of {lim.smem_granularity} B) of the {lim.smem_per_sm:,} per SM")
    also = [k for k in LIMITERS if k != limiter and limits[k] == blocks and k in ("registers", "shared memory")]
    if also and blocks:
        why += f" ({' and '.join(also)} would allow no more either)"
    explanation = f"Limited by {limiter}: {head}, because {why}."
    return Occupancy(warps, lim.max_warps, blocks, limiter, explanation, limits)
