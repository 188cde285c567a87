"""A result's launches as one table, the step at a glance: for each launch its graph (forward,
backward, inference: a torch.compile'd step's; "" for a library op's or a file's own launch), its
kernel, warps and stages, the lines of the user's file it computes and the ATen ops it fuses.
Read from the launches' headers only (base/launches.py): a step of 500 launches is listed
without reading one launch's stages.

    found = rows(result.headers, "my_block_train.py")
    print(text(found))                     # `tlens compile FILE --summary`
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


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

    def to_json(self) -> dict:
        return {**asdict(self), "lines": list(self.lines), "aten_ops": list(self.aten_ops)}


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def rows(headers, filename: str) -> list[StepRow]:
    """One row per launch, in launch order, from each launch's header (KernelResult)."""
    out = []
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
            failed=str(k.error.stage or "a stage") if k.error is not None else ""))
    return out


def text(found: list[StepRow], width: int = 60) -> str:
    """The rows as a plain text table, with a count by graph under it."""
    head = ("#", "graph", "kernel", "warps", "stages", "lines", "fuses (ATen)")
    body = [(str(r.launch), r.graph or "-",
             _cut(r.kernel + (f" [{r.config}]" if r.config else "") + (f" (stopped at {r.failed})" if r.failed else ""), width),
             "" if r.warps is None else str(r.warps), "" if r.stages is None else str(r.stages),
             ",".join(map(str, r.lines)) or "-", _cut(", ".join(r.aten_ops), width) or "-") for r in found]
    widths = [max(len(row[c]) for row in [head, *body]) for c in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [head, *body]]
    lines.append(f"{len(found)} launch(es): " + ", ".join(f"{n} {g}" for g, n in graphs(found, "launches").items()))
    return "\n".join(lines)


def graphs(found: list[StepRow], outside: str = "") -> dict[str, int]:
    """Launches per graph, in the order met; those outside torch.compile under `outside` ("": left out)."""
    out: dict[str, int] = {}
    for r in found:
        if r.graph or outside:
            out[r.graph or outside] = out.get(r.graph or outside, 0) + 1
    return out


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"
