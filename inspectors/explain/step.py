"""A result's launches as one table, the step at a glance: for each launch its graph (forward,
backward, inference: a torch.compile'd step's; "" for a library op's or a file's own launch), its
kernel, warps and stages, the lines of the user's file it computes and the ATen ops it fuses,
its grid, registers, the bytes it moves and FLOPs it does, and its time on a target GPU as
estimated without one (inspectors/explain/estimate.py). Read from the launches' headers only
(base/launches.py): a step of 500 launches is listed without reading one launch's stages.

    found = rows(result.headers, "my_block_train.py")           # estimated on the target's first GPU
    print(text(found))                     # `tlens compile FILE --summary`
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from inspectors.base import gpu_specs
from inspectors.explain import estimate as estimate_mod


@dataclass(frozen=True)
class StepRow:
    launch: int                 # 1-based, as the launch picker numbers it
    graph: str                  # forward / backward / inference, or "" outside torch.compile
    kernel: str
    config: str                 # what tells the launch apart: an autotune config, a specialization's label
    warps: int | None
    stages: int | None
    lines: tuple[int, ...]      # lines of the user's file it computes
    aten_ops: tuple[str, ...]   # the ATen ops it fuses (a torch.compile kernel's)
    failed: str = ""            # the stage it stopped at, if one failed
    grid: tuple[int, ...] = ()  # programs along x, y, z; () when not known
    registers: int | None = None
    blocks_per_sm: int | None = None
    bytes: int | None = None    # moved to and from global memory, once each (L2 reuse assumed)
    flops: int | None = None    # of its dots
    estimate_us: float | None = None    # on `gpu`, with `how` it was derived
    bound: str = ""
    how: str = ""
    gpu: str = ""
    alternative: bool = False   # an autotune config or candidate after the first: the GPU runs one of them
    calls: int = 1              # how many times the step launches it (a layer's kernel: once per layer)
    outside: str = ""           # not a Triton launch: what runs it (cuBLAS, flash attention, cuDNN; launch is 0)
    measured_us: float | None = None    # on this machine's GPU, the median call of its kernel's name (bench/step_times)
    issued: int | None = None   # instructions one warp of a program issues (estimate.py's issue term)
    waits: float | None = None  # times a program waits on global loads (estimate.py's waits term)

    @property
    def step_us(self) -> float | None:
        """Its estimated time in the step: each of its calls (at the first call's sizes)."""
        return None if self.estimate_us is None else self.estimate_us * self.calls

    def to_json(self) -> dict:
        return {**asdict(self), "lines": list(self.lines), "aten_ops": list(self.aten_ops), "grid": list(self.grid)}


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def outside_ops(outside) -> str:
    """The ATen ops a step's calls outside Triton are (CompileResult.outside), named once each."""
    return ", ".join(sorted({str(c.get("op")) for c in outside}))


def gpus(headers, target: str = "") -> tuple:
    """The GPUs the step's time can be estimated on: those of its launches' target (`target`: a
    step of no Triton launch, only calls outside Triton)."""
    target = headers[0].target if len(headers) else target
    return gpu_specs.for_target(target) if target else ()


def rows(headers, filename: str, gpu: gpu_specs.GpuSpec | None = None, outside=(), measured=None,
         target: str = "") -> list[StepRow]:
    """One row per launch, in launch order, from each launch's header (KernelResult), then one
    per call the step makes outside Triton (`outside`: CompileResult.outside); times estimated on
    `gpu` (default: the target's first GPU, none for a target without figures); `measured`: a
    GPU's times by kernel name (bench.step_times.per_call), beside each Triton launch's estimate;
    `target`: the request's, for a step of no Triton launch."""
    out = []
    gpu = gpu or next(iter(gpus(headers, target)), None)
    for i, k in enumerate(headers):
        origin = k.origin if isinstance(k.origin, dict) else {}
        lines = origin.get("lines", {}).get(filename, ()) if isinstance(origin.get("lines"), dict) else ()
        label = str(k.label or k.name)
        config = label.split(" · ", 1)[1] if " · " in label else ("" if label == k.name else label)
        if not config:           # a file's own launches: how the JIT specialized their arguments
            config = ", ".join(a.describe() for a in k.args if a.type != "constexpr" or a.value is not None)[:200]
        out.append(StepRow(
            launch=i + 1, graph=str(origin.get("graph", "")), kernel=str(k.name), config=config,
            warps=_int(k.options.get("num_warps")), stages=_int(k.options.get("num_stages")),
            lines=tuple(n for n in lines if isinstance(n, int)),
            aten_ops=tuple(str(op) for op in origin.get("aten_ops", ()) if isinstance(op, str)),
            failed=str(k.error.stage or "a stage") if k.error is not None else "", **_workload(k.workload, gpu),
            alternative=bool((m := _ALTERNATIVE_RE.search(label)) and int(m.group(1)) > 1),
            measured_us=_measured(measured, str(k.name))))
    for c in outside:
        shapes = " · ".join("×".join(map(str, sh)) for sh in c.get("shapes", ()) if sh)
        lines = c.get("lines", {}).get(filename, ()) if isinstance(c.get("lines"), dict) else ()
        out.append(StepRow(
            launch=0, graph=str(c.get("graph", "")), kernel=f"{c.get('op', '')} ({c.get('kind', '')})",
            config=f"{shapes} {c.get('dtype', '')}".strip(), warps=None, stages=None,
            lines=tuple(n for n in lines if isinstance(n, int)), aten_ops=(str(c.get("op", "")),),
            outside=str(c.get("kind", "")),
            **_workload({k: c[k] for k in ("bytes", "flops", "calls") if k in c} | {"dot_dtype": c.get("dtype") or "fp32"},
                        gpu)))
    return out


# "… · config 2 of 4: XBLOCK=…", "autotune config 2/4: …", "max-autotune candidate 2 of 3 …"
_ALTERNATIVE_RE = re.compile(r"\b(?:config|candidate) (\d+)(?: of |/)\d+")


def _workload(w: dict, gpu) -> dict:
    w = w if isinstance(w, dict) else {}
    grid = w.get("grid") if isinstance(w.get("grid"), list) else []
    found = estimate_mod.estimate(w, gpu) if gpu is not None else None
    return {"grid": tuple(grid), "registers": _int(w.get("registers")), "blocks_per_sm": _int(w.get("blocks_per_sm")),
            "bytes": _int(w.get("bytes")), "flops": _int(w.get("flops")),
            "estimate_us": None if found is None or found.us is None else round(found.us, 2),
            "bound": found.bound if found else "", "how": found.how if found else "", "gpu": gpu.name if gpu else "",
            "calls": max(1, _int(w.get("calls")) or 1),
            "issued": _int(w.get("issued")),
            "waits": w["waits"] if isinstance(w.get("waits"), (int, float)) else None}


def _measured(measured, name: str) -> float | None:
    got = (measured or {}).get(name)
    return round(float(got["median_us"]), 2) if isinstance(got, dict) and "median_us" in got else None


def counted(found: list[StepRow]) -> list[StepRow]:
    """The rows the step's time is the sum of: estimated, and not an autotune alternative (the
    first config stands for the one the GPU's timing would choose)."""
    return [r for r in found if r.estimate_us is not None and not r.alternative]


def shares(found: list[StepRow]) -> list[float | None]:
    """Each counted row's share of the step's estimated time; None for the others."""
    total = sum(r.step_us for r in counted(found))
    return [None if r.estimate_us is None or r.alternative or not total else r.step_us / total for r in found]


def grid_text(grid: tuple[int, ...]) -> str:
    """(97, 1, 1) -> "97"; (8, 4, 1) -> "8×4"; () -> ""."""
    dims = list(grid)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return "×".join(map(str, dims)) + (f" = {math.prod(dims)}" if len(dims) > 1 else "")


def text(found: list[StepRow], width: int = 60) -> str:
    """The rows as a plain text table, with a count by graph and the estimated total under it."""
    head = ("#", "graph", "kernel", "warps", "stages", "grid", "regs", "MB", "GFLOP", "est. µs", "calls", "%", "lines",
            "fuses (ATen)")
    share = shares(found)
    measured = any(r.measured_us is not None for r in found)
    if measured:
        head = head[:10] + ("meas. µs",) + head[10:]
    body = [(str(r.launch) if r.launch else "-", r.graph or "-",
             _cut(r.kernel + (f" [{r.config}]" if r.config else "") + (f" (stopped at {r.failed})" if r.failed else ""), width),
             "" if r.warps is None else str(r.warps), "" if r.stages is None else str(r.stages),
             grid_text(r.grid), "" if r.registers is None else str(r.registers),
             "" if r.bytes is None else f"{r.bytes / 1e6:.3g}", f"{r.flops / 1e9:.3g}" if r.flops else "",
             "" if r.estimate_us is None else f"{r.estimate_us:.1f}", str(r.calls), "" if s is None else f"{100 * s:.0f}",
             ",".join(map(str, r.lines)) or "-", _cut(", ".join(r.aten_ops), width) or "-") for r, s in zip(found, share)]
    if measured:
        body = [row[:10] + ("" if r.measured_us is None else f"{r.measured_us:.1f}",) + row[10:]
                for row, r in zip(body, found)]
    widths = [max(len(row[c]) for row in [head, *body]) for c in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [head, *body]]
    launches = [r for r in found if not r.outside]
    lines.append((f"{len(launches)} launch(es): " if launches else "no Triton launch: Inductor made no Triton kernel")
                 + ", ".join(f"{n} {g}" for g, n in graphs(launches, "launches").items())
                 + (f"; {len(found) - len(launches)} call(s) outside Triton (-): " +
                    ", ".join(f"{n} {k}" for k, n in _count(r.outside for r in found if r.outside).items())
                    if len(found) > len(launches) else ""))
    timed, others = counted(found), sum(r.alternative for r in found)
    if timed:
        lines.append(f"estimated on {timed[0].gpu}: {sum(r.step_us for r in timed):.1f} µs for "
                     f"{sum(r.calls for r in timed)} call(s) of {len(timed)} kernel(s)" +
                     (f", {others} autotune alternative(s) not counted" if others else "") +
                     f" (memory at {estimate_mod.MEMORY_EFFICIENCY:g} of the bandwidth, dots at "
                     f"{estimate_mod.DOT_EFFICIENCY:g} of the peak, SASS instructions at 4 a clock an SM, waits on "
                     f"loads at {estimate_mod.LOAD_WAIT_US:g} µs, + {estimate_mod.FLOOR_US:g} µs a launch)")
    return "\n".join(lines)


def graphs(found: list[StepRow], outside: str = "") -> dict[str, int]:
    """Launches per graph, in the order met; those outside torch.compile under `outside` ("": left out)."""
    out: dict[str, int] = {}
    for r in found:
        if r.graph or outside:
            out[r.graph or outside] = out.get(r.graph or outside, 0) + 1
    return out


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"
