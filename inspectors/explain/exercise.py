"""Figures of a compile that a lesson can quote and an exercise can check: memory operations
by width, instruction families, registers, shared memory, occupancy. All from the compiled
PTX and cubin, never from the source text.

    m = metrics(result.kernels)                 # {"load_vector_min": 4.0, "registers": 26.0, ...}
    verdict = check(exercise.checks, m)         # each check with the value it saw
"""
from __future__ import annotations

import base64
from dataclasses import dataclass

from inspectors.base.result import KernelResult
from inspectors.base.targets import parse as parse_target
from inspectors.explain import insight
from inspectors.read import memops, ptxops, resources, tma, warpspec
from inspectors.read.lessonfile import Check

# name -> what it is (README lists these for lesson writers)
METRICS: dict[str, str] = {
    "kernels": "distinct @triton.jit kernels compiled (fused = 1)",
    "global_loads": "global load instructions in the PTX (cp.async and TMA copies count as loads)",
    "global_stores": "global store instructions in the PTX",
    "load_vector_min": "narrowest global load, in elements (1 = scalar, 4 = v4)",
    "load_vector_max": "widest global load, in elements",
    "store_vector_min": "narrowest global store, in elements",
    "store_vector_max": "widest global store, in elements",
    "load_bytes_min": "bytes moved by the narrowest global load instruction",
    "store_bytes_min": "bytes moved by the narrowest global store instruction",
    "shared_loads": "ld.shared and ldmatrix instructions",
    "shared_stores": "st.shared and stmatrix instructions",
    "registers": "registers per thread (cuobjdump -res-usage; the largest over the kernels)",
    "spill_bytes": "bytes of registers spilled to local memory",
    "shared_bytes": "shared memory per program, bytes",
    "shared_kib": "shared memory per program, KiB",
    "blocks_per_sm": "programs resident per SM (the fewest over the kernels)",
    "warps_per_sm": "warps resident per SM",
    "occupancy_pct": "resident warps / the SM's maximum, in %",
    "instructions": "PTX instructions",
    **{f"count_{name}": f"{desc}: instructions in the PTX" for name, desc in ptxops.DESCRIBE.items()},
    "loop_wait_group": "the cp.async.wait_group argument in the main loop (-1 without one)",
    "tma_loads": "TMA copies global → shared (cp.async.bulk.tensor) in the PTX",
    "tma_stores": "TMA copies shared → global in the PTX",
    "tma_tile_bytes": "bytes of the largest tile one TMA load moves (the descriptor's block shape, from the TTGIR)",
    "compiled_warps": "warps a program runs as compiled (.reqntid): num_warps plus a warp-specialized loop's partitions",
    "partitions": "partitions of a warp-specialized loop besides the default one (0: none)",
    # a step of several launches (a torch.compile'd block, a library op): inspectors/explain/step.py
    "launches": "launches the compile recorded (an autotuner's configs after the first not counted)",
    "forward_kernels": "launches of torch.compile's forward graphs (not an inference graph's: a no_grad call's, a compiled optimizer's; configs after the first not counted)",
    "backward_kernels": "launches of torch.compile's backward graph (configs after the first not counted)",
    "fused_aten_ops": "ATen ops the Triton kernels fuse, summed over the launches (eager PyTorch runs a kernel for most)",
    "outside_calls": "calls the compiled graphs make outside Triton (cuBLAS matmuls, attention kernels)",
    "eager_calls": "ATen ops the step's modules and backward run eagerly, outside torch.compile (each a CUDA kernel)",
    "step_us": "the step's time estimated on the target's first GPU without one, µs (each launch and call once per call)",
    "outside_pct": "the share of that time in the compiled graphs' calls outside Triton, in %",
}
_NAMES = frozenset(METRICS)


def names() -> frozenset[str]:
    return _NAMES


def kernel_metrics(kernel: KernelResult) -> dict[str, float]:
    """Every metric of one compiled kernel that its stages allow (CUDA: all of them)."""
    ptx = kernel.stages.get("ptx", "")
    out: dict[str, float] = {"kernels": 1.0}
    ops = [m for m in memops.ptx_memops(ptx) if m.space == "global"]
    loads = [m for m in ops if m.kind == "load"]
    stores = [m for m in ops if m.kind == "store"]
    out["global_loads"], out["global_stores"] = float(len(loads)), float(len(stores))
    for name, group in (("load", loads), ("store", stores)):
        if group:
            out[f"{name}_vector_min"] = float(min(m.vector for m in group))
            out[f"{name}_vector_max"] = float(max(m.vector for m in group))
            out[f"{name}_bytes_min"] = float(min(m.bytes for m in group))
    fam = ptxops.families(ptx)
    for name, n in fam.items():
        out[f"count_{name}"] = float(n)
    out["shared_loads"] = float(fam["ld_shared"] + fam["ldmatrix"])
    out["shared_stores"] = float(fam["st_shared"] + fam["stmatrix"])
    out["instructions"] = float(sum(1 for _ in ptxops._instructions(ptx)))
    loop = ptxops.main_loop(ptx)
    out["loop_wait_group"] = float(loop.waits[0]) if loop and loop.waits else -1.0
    tma_ops = [m for m in ops if m.role == "tma"]
    out["tma_loads"] = float(sum(m.kind == "load" for m in tma_ops))
    out["tma_stores"] = float(sum(m.kind == "store" for m in tma_ops))
    tiles = [c.bytes for c in tma.tma_copies(kernel.stages.get("ttgir", "")) if c.kind == "load"]
    out["tma_tile_bytes"] = float(max(tiles, default=0))
    asked = int(kernel.options.get("num_warps", 4) or 4)
    out["compiled_warps"] = float(insight.compiled_warps(ptx, asked))
    out["partitions"] = float(sum(p.name != "default" for ws in warpspec.warp_specializations(kernel.stages.get("ttgir", ""))
                                  for p in ws.partitions))
    out.update(_resources(kernel))
    return out


def _resources(kernel: KernelResult) -> dict[str, float]:
    target = parse_target(kernel.target)
    if target.backend != "cuda" or not kernel.cubin:
        return {}
    try:
        res = resources.resource_usage(base64.b64decode(kernel.cubin), dynamic_shared=int(kernel.metadata.get("shared", 0) or 0),
                                       ptx=kernel.stages.get("ptx"), arch=int(target.arch), kernel=kernel.name)
        occ = resources.occupancy(int(target.arch), res.registers, res.shared_bytes,
                                  int(kernel.options.get("num_warps", 4)))
    except (ValueError, OSError, RuntimeError):
        return {}
    return {"registers": float(res.registers), "spill_bytes": float(res.spills), "shared_bytes": float(res.shared_bytes),
            "shared_kib": res.shared_bytes / 1024, "blocks_per_sm": float(occ.blocks_per_sm),
            "warps_per_sm": float(occ.warps_per_sm),
            "occupancy_pct": 100.0 * occ.warps_per_sm / occ.max_warps_per_sm if occ.max_warps_per_sm else 0.0}


# how the figures of several kernels combine: counts add up, the narrowest stays narrowest
_MIN = ("load_vector_min", "store_vector_min", "load_bytes_min", "store_bytes_min", "blocks_per_sm",
        "warps_per_sm", "occupancy_pct", "loop_wait_group")
_MAX = ("compiled_warps", "partitions", "tma_tile_bytes", "load_vector_max", "store_vector_max", "registers", "spill_bytes", "shared_bytes", "shared_kib")


def metrics(kernels, function: str | None = None, outside=()) -> dict[str, float]:
    """The metrics of a compile: one kernel's, or several combined (sums; min of the narrowest
    widths and of occupancy; max of registers and shared memory). `function` keeps only the
    kernels of that name; `kernels` counts distinct names. Launches of the same kernel with
    the same name count once for `kernels`, and each of their instructions counts. Without a
    `function`, the step's figures too (`outside`: the compile's CompileResult.outside)."""
    chosen = [k for k in kernels if function is None or k.name == function]
    if not chosen:
        return {}
    steps = step_metrics(chosen, outside) if function is None else {}
    per = [kernel_metrics(k) for k in chosen]
    out: dict[str, float] = {}
    for key in {k for m in per for k in m}:
        values = [m[key] for m in per if key in m]
        out[key] = min(values) if key in _MIN else max(values) if key in _MAX else sum(values)
    out["kernels"] = float(len({k.name for k in chosen}))
    return {**out, **steps}


def step_metrics(headers, outside=()) -> dict[str, float]:
    """A step's figures from its launches' headers and its calls outside Triton."""
    from inspectors.explain import step
    rows = step.rows(headers, "", None, outside)
    counted = [r for r in rows if not r.alternative]
    launches = [r for r in counted if not r.outside]
    out = {"launches": float(len(launches)),
           "forward_kernels": float(sum(r.graph == "forward" for r in launches)),
           "backward_kernels": float(sum(r.graph == "backward" for r in launches)),
           "fused_aten_ops": float(sum(len(r.aten_ops) for r in launches)),
           "outside_calls": float(sum(_of_graphs(r) for r in counted)),
           "eager_calls": float(sum(bool(r.outside) and not _of_graphs(r) for r in counted))}
    timed = step.counted(rows)
    if timed:
        total = sum(r.step_us for r in timed)
        out["step_us"] = round(total, 1)
        out["outside_pct"] = round(100 * sum(r.step_us for r in timed if _of_graphs(r)) / total, 1) if total else 0.0
    return out


def _of_graphs(row) -> bool:
    """A compiled graph's call outside Triton (not one run eagerly: inspectors/compile/eager_calls.py)."""
    return bool(row.outside) and not row.graph.startswith("eager")


@dataclass(frozen=True)
class CheckResult:
    check: Check
    got: float | None
    passed: bool

    def describe(self) -> str:
        got = "not measurable here" if self.got is None else _num(self.got)
        return f"{self.check.describe()} — this compile: {got}"


@dataclass(frozen=True)
class Verdict:
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)


def check(checks, values: dict[str, float]) -> Verdict:
    return Verdict(tuple(CheckResult(c, values.get(c.metric), c.passes(values.get(c.metric))) for c in checks))


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def facts(values: dict[str, float], prefix: str) -> dict[str, str]:
    """`{prefix}.{metric}` -> the value as text, for a lesson's {{...}} placeholders."""
    return {f"{prefix}.{k}": _num(v) for k, v in values.items()}
