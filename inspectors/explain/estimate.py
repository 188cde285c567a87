"""Where a step's time would go on a GPU, without one: each launch's time estimated from its
workload (the bytes it moves and FLOPs it does, its grid, its occupancy) and the target GPU's
figures (inspectors/base/gpu_specs.py). The model, stated so anyone can check it:

    memory   bytes ÷ (MEMORY_EFFICIENCY × the GPU's bandwidth)
    dots     FLOPs ÷ (DOT_EFFICIENCY × its peak for the dots' operand type)
    issue    instructions its warps issue ÷ (SMs × 4 a clock × the GPU's clock)
    waits    rounds × the times a program waits on global loads × LOAD_WAIT_US, where
             rounds = programs ÷ (SMs × programs per SM), at least 1
    time     the largest of the four (the first three ÷ the share of the GPU the grid keeps
             busy), + FLOOR_US

The share: a grid of fewer programs than SMs keeps that fraction of the SMs pulling memory;
a dot-bound grid runs in waves of (SMs × programs per SM), its last wave partly empty.
The issue: the instructions one warp issues, counted in its SASS with each loop's body once
a trip (inspectors/read/sass_work.py), times its warps and programs; an SM's four schedulers
issue one instruction each a clock. It is what bounds a kernel with much math per byte (an
online softmax's accurate `expf` over a long row). A combo kernel, whose programs each run one
of its parts, and a target without SASS (AMD) are not counted this way.
The waits: a loop the compiler kept (a trip count known only at the call) uses each trip's
loads in that trip, so a program waits for memory once a trip; a grid of one program an SM
(a persistent kernel over rows) is bound by that latency, not by the bandwidth. Straight
code, an unrolled loop's included, waits once. LOAD_WAIT_US, the latency of DRAM under
load, was fitted to Liger's RMSNorm backward on an H200 (176 µs over 124 trips a program).
Other stalls (layout conversions through shared memory) are not modelled. benchmarks/time_estimates.py checks the model against an H200's times
(docs/09-benchmark-results.md quotes the misses).

`workload_of` (run in the worker, where the stages are) fills a launch's workload from what
the launch was called with (inspectors/compile/launch_call.py), its TTIR and its analysis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from inspectors.base.gpu_specs import GpuSpec
from inspectors.read import sass_work, ttir_work

MEMORY_EFFICIENCY = 0.85   # of the data sheet's bandwidth a streaming kernel reaches
DOT_EFFICIENCY = 0.7       # of the data sheet's dense peak a well-tiled matmul reaches
FLOOR_US = 2.0             # a launch's own cost on the GPU's timeline, however little it does
ISSUE_PER_CLOCK = 4        # warp instructions an SM issues a clock (four schedulers, NVIDIA since Volta)
LOAD_WAIT_US = 1.4         # one wait of a program on its global loads (see the module's docstring)


@dataclass(frozen=True)
class Estimate:
    us: float | None         # None: nothing to estimate from (no sizes recorded)
    bound: str               # "memory", "dots", "launch" (the floor dominates), "" when unknown
    how: str                 # the derivation, in figures


def workload_of(kernel) -> dict:
    """A launch's workload (KernelResult.workload as the worker completes it): its call's grid
    and sizes, the arguments its TTIR loads and stores, its dots' FLOPs and type, registers,
    shared memory and programs per SM from its analysis. JSON-plain, a few hundred bytes."""
    call = dict(kernel.workload or {})
    out = {k: call[k] for k in ("from", "grid", "bytes", "flops", "calls", "tensors", "ints") if k in call}
    grid = out.get("grid")
    programs = math.prod(grid) if isinstance(grid, list) and grid else None
    if isinstance(kernel.options.get("num_warps"), int):
        out["warps"] = kernel.options["num_warps"]
    ttir = kernel.stages.get("ttir", "")
    if ttir:
        names = tuple(a.name for a in kernel.args if a.type != "constexpr" and a.value is None)
        work = ttir_work.program_work(ttir, call.get("ints", {}), programs or 1, names, tuple(grid or ()))
        out["reads"], out["writes"] = list(work.reads), list(work.writes)
        if work.reductions:
            out["reductions"] = round(work.reductions, 2)
        ttgir, sass = kernel.stages.get("ttgir", ""), kernel.stages.get("sass", "")
        if ttgir and sass and not ttir_work.branches_by_program(ttgir):
            trips = ttir_work.loop_trips(ttgir, call.get("ints", {}), programs or 1, names, tuple(grid or ()))
            issued, waits = sass_work.issued(sass, trips), sass_work.waits(sass, trips)
            if issued is not None:
                out["issued"] = int(issued)
            if waits is not None:
                out["waits"] = round(waits, 2)
        if work.dots:
            out["dot_dtype"] = work.dtype
            if "flops" not in out and work.flops is not None and programs:
                out["flops"] = work.flops * programs
            elif "flops" not in out:
                out["flops_unknown"] = work.why or "the grid is not known"
        if "bytes" not in out and out.get("tensors"):
            touched = set(work.reads) | set(work.writes)
            out["bytes"] = sum(t["bytes"] * ((t["arg"] in work.reads) + (t["arg"] in work.writes) if touched else 1)
                               for t in out["tensors"])
    analysis = kernel.analysis if isinstance(kernel.analysis, dict) else {}
    res, occ = analysis.get("resources") or {}, analysis.get("occupancy") or {}
    for key, value in (("registers", res.get("registers")), ("shared_bytes", res.get("shared_bytes")),
                       ("spills", res.get("spills")), ("blocks_per_sm", occ.get("blocks_per_sm"))):
        if isinstance(value, int):
            out[key] = value
    return out


def estimate(workload: dict, gpu: GpuSpec) -> Estimate:
    """One launch's time on `gpu`, with its derivation."""
    nbytes, flops = workload.get("bytes"), workload.get("flops")
    if not isinstance(nbytes, int) and not isinstance(flops, int):
        return Estimate(None, "", "no sizes were recorded for this launch")
    steps = []
    t_mem = t_dot = 0.0
    if isinstance(nbytes, int):
        t_mem = nbytes / (MEMORY_EFFICIENCY * gpu.bandwidth_tbs * 1e12) * 1e6
        steps.append(f"{_size(nbytes)} ÷ {MEMORY_EFFICIENCY:g} × {gpu.bandwidth_tbs:g} TB/s = {t_mem:.2f} µs")
    dtype = workload.get("dot_dtype") or "fp32"
    if isinstance(flops, int) and flops:
        peak = gpu.peak(dtype)
        t_dot = flops / (DOT_EFFICIENCY * peak * 1e12) * 1e6
        steps.append(f"{flops / 1e9:.3g} GFLOP {dtype} ÷ {DOT_EFFICIENCY:g} × {peak:g} TFLOP/s = {t_dot:.2f} µs")
    elif workload.get("flops_unknown"):
        steps.append(f"dots not counted ({workload['flops_unknown']})")
    grid = workload.get("grid")
    programs = math.prod(grid) if isinstance(grid, list) and grid else None
    t_issue = 0.0
    issued, warps = workload.get("issued"), workload.get("warps")
    if isinstance(issued, int) and isinstance(warps, int) and programs and gpu.clock_ghz:
        t_issue = issued * warps * programs / (gpu.sms * ISSUE_PER_CLOCK * gpu.clock_ghz * 1e3)
        if t_issue > max(t_mem, t_dot):
            steps.append(f"{issued:,} instructions a warp × {warps} warps × {programs} programs ÷ ({gpu.sms} SMs × "
                         f"{ISSUE_PER_CLOCK} × {gpu.clock_ghz:g} GHz) = {t_issue:.2f} µs")
    bound, t = max((("memory", t_mem), ("dots", t_dot), ("issue", t_issue)), key=lambda bt: bt[1])
    busy = 1.0
    if programs:
        if bound in ("memory", "issue"):
            busy = min(1.0, programs / gpu.sms)
            if busy < 1:
                steps.append(f"{programs} programs keep {programs} of {gpu.sms} SMs busy: ÷ {busy:.2f}")
        else:
            wave = gpu.sms * max(1, int(workload.get("blocks_per_sm") or 1))
            waves = math.ceil(programs / wave)
            busy = programs / (waves * wave)
            if busy < 1:
                steps.append(f"{programs} programs in {waves} wave(s) of {wave}: ÷ {busy:.2f}")
    t = t / busy
    waits = workload.get("waits")
    if programs and isinstance(waits, (int, float)) and waits > 1:
        per_sm = gpu.sms * max(1, int(workload.get("blocks_per_sm") or 1))
        rounds = max(1.0, programs / per_sm)
        t_wait = rounds * waits * LOAD_WAIT_US
        if t_wait > t:
            bound, t = "latency", t_wait
            steps.append(f"{waits:g} waits on loads a program × {rounds:.3g} round(s) of {per_sm} programs × "
                         f"{LOAD_WAIT_US:g} µs = {t_wait:.2f} µs (more than the above)")
    if t < FLOOR_US:
        bound = "launch"
    steps.append(f"+ {FLOOR_US:g} µs a launch")
    return Estimate(t + FLOOR_US, bound, "; ".join(steps))


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"
