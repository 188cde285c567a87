"""What each target GPU says about itself when code asks (torch.cuda's device queries, Triton's
driver utilities): the figures a library reads before it picks a kernel (the SM count, the
capability, shared memory per block). Pure data; inspectors.target.tensor_view answers with it
on a machine without a GPU. Figures of the shipping parts (NVIDIA's and AMD's data sheets and
what torch reports on them; the H100 row is checked against a real one by
benchmarks/gpu_drivers.py)."""
from __future__ import annotations

from dataclasses import dataclass

GIB = 1 << 30


@dataclass(frozen=True)
class Device:
    name: str                      # torch.cuda.get_device_name()
    major: int                     # capability (NVIDIA); 9, 4 for gfx942 as torch reports it
    minor: int
    multi_processor_count: int     # SMs (NVIDIA), compute units (AMD)
    total_memory: int              # bytes
    max_shared_mem: int            # bytes of shared memory a block may use (opt-in), Triton's "max_shared_mem"
    regs_per_multiprocessor: int = 65536
    warp_size: int = 32
    l2_cache_size: int = 0
    gcn_arch_name: str = ""        # AMD: torch's gcnArchName
    sm_clock_khz: int = 0          # Triton's driver utilities (perf models read them); 0 where not measured here
    mem_clock_khz: int = 0
    mem_bus_width: int = 0


DEVICES = {
    "cuda:80": Device("NVIDIA A100-SXM4-80GB", 8, 0, 108, 80 * GIB, 166912, l2_cache_size=40 << 20),
    "cuda:89": Device("NVIDIA L40S", 8, 9, 142, 48 * GIB, 101376, l2_cache_size=96 << 20),
    # measured on the H100 of benchmarks/results/gpu_drivers.txt (torch 2.11, Triton 3.6.0)
    "cuda:90": Device("NVIDIA H100 80GB HBM3", 9, 0, 132, 85017493504, 232448, l2_cache_size=50 << 20,
                      sm_clock_khz=1980000, mem_clock_khz=2619000, mem_bus_width=5120),
    "cuda:100": Device("NVIDIA B200", 10, 0, 148, 178 * GIB, 232448, l2_cache_size=126 << 20),
    "cuda:120": Device("NVIDIA GeForce RTX 5090", 12, 0, 170, 31 * GIB + 600 * (1 << 20), 101376,
                       l2_cache_size=96 << 20),
    "hip:gfx942": Device("AMD Instinct MI300X", 9, 4, 304, 192 * GIB, 65536, warp_size=64,
                         l2_cache_size=4 << 20, gcn_arch_name="gfx942:sramecc+:xnack-"),
    "hip:gfx950": Device("AMD Instinct MI355X", 9, 5, 256, 288 * GIB, 163840, warp_size=64,
                         l2_cache_size=4 << 20, gcn_arch_name="gfx950:sramecc+:xnack-"),
}


def for_target(key: str) -> Device | None:
    """The device a target stands for (None for a target without one in the table)."""
    return DEVICES.get(key)
