"""Each target GPU's figures for estimating a kernel's time without a GPU: its SMs, its memory
bandwidth, its peak dense FLOP/s per operand type and its clock, from the vendors' data sheets
(dense: half of the figures quoted "with sparsity"; the clock, where a sheet does not quote it,
from its fp32 peak: 132 SMs × 128 lanes × 2 FLOPs × 1.98 GHz = 67 TFLOP/s for H100). Several GPUs share a target (H100 and H200 are
both sm_90: same SMs and peaks, not the same memory); the step view lets the user pick.

    for_target("cuda:90")         # (H200, H100): the first is the default
    H200.peak("bf16")             # 989.0 TFLOP/s
"""
from __future__ import annotations

from dataclasses import dataclass, field

_HOPPER = {"fp8": 1979.0, "int8": 1979.0, "fp16": 989.0, "bf16": 989.0, "tf32": 495.0, "fp32": 67.0, "fp64": 67.0}


@dataclass(frozen=True)
class GpuSpec:
    name: str
    target: str                  # the compile target it runs (inspectors.base.targets)
    sms: int                     # SMs (NVIDIA), compute units (AMD)
    bandwidth_tbs: float         # HBM, TB/s (10^12 bytes/s)
    peaks: dict = field(default_factory=dict)   # TFLOP/s, dense, by the dot's operand type; "fp32": without tensor cores
    source: str = ""
    clock_ghz: float = 0.0       # boost clock: its fp32 peak ÷ (SMs × fp32 lanes × 2) where not quoted

    def peak(self, dtype: str) -> float:
        return self.peaks.get(dtype) or self.peaks["fp32"]


H200 = GpuSpec("H200 SXM 141GB", "cuda:90", 132, 4.8, _HOPPER,
               "NVIDIA H200 Tensor Core GPU data sheet (SXM; compute as H100 SXM)", 1.98)
H100 = GpuSpec("H100 SXM 80GB", "cuda:90", 132, 3.35, _HOPPER, "NVIDIA H100 Tensor Core GPU data sheet (SXM5)", 1.98)
B200 = GpuSpec("B200", "cuda:100", 148, 8.0,
               {"fp8": 4500.0, "int8": 4500.0, "fp16": 2250.0, "bf16": 2250.0, "tf32": 1100.0, "fp32": 75.0,
                "fp64": 37.0}, "NVIDIA HGX B200 data sheet (per GPU, one eighth of the eight-GPU board)", 1.98)
A100 = GpuSpec("A100 SXM 80GB", "cuda:80", 108, 2.039,
               {"int8": 624.0, "fp16": 312.0, "bf16": 312.0, "tf32": 156.0, "fp32": 19.5, "fp64": 19.5},
               "NVIDIA A100 Tensor Core GPU data sheet (SXM, 80GB)", 1.41)
MI300X = GpuSpec("MI300X", "hip:gfx942", 304, 5.3,
                 {"fp8": 2615.0, "int8": 2615.0, "fp16": 1307.0, "bf16": 1307.0, "tf32": 654.0, "fp32": 163.0,
                  "fp64": 163.0}, "AMD Instinct MI300X data sheet (matrix cores, dense)", 2.1)
GPUS = (H200, H100, B200, A100, MI300X)


def for_target(target: str) -> tuple[GpuSpec, ...]:
    """The GPUs with figures that run `target` ("cuda:90"), the default first; () for a target
    without figures here (sm_89, sm_120, gfx950)."""
    return tuple(g for g in GPUS if g.target == target)


def named(name: str) -> GpuSpec | None:
    """The GPU `name` starts ("H100", "h200 sxm", "MI300X"), blanks and case aside; None if none."""
    want = "".join(name.lower().split())
    return next((g for g in GPUS if want and "".join(g.name.lower().split()).startswith(want)), None)
