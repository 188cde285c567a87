"""A torch.compile job's kernels by the lines of the user's model (KernelResult.origin, made by
inspectors/compile/torch_compile_target.py): the launch card says where the shown kernel came from, and
the file itself is a panel whose lines each open the kernel that computes them."""
from __future__ import annotations

import functools

import streamlit as st

from app.components.stage_panel import payload, stage_panel
from app.state import keys
from inspectors.base.result import CompileResult, KernelResult

LAUNCH_KEY = "launch"          # the launch picker's (app/widgets/panels.py pick_launch)


def caption(kernel: KernelResult, filename: str) -> str:
    """`torch.compile · forward graph · fuses linear, gelu, add (aten.addmm, ...) · block.py line 13`."""
    o = kernel.origin
    if not o:
        return ""
    text = f"torch.compile · {o.get('graph', '?')} graph"
    if o.get("source_nodes"):
        text += f" · fuses {', '.join(o['source_nodes'][:12])}"
        if o.get("aten_ops"):
            text += f" ({', '.join(o['aten_ops'][:12])})"
    lines = o.get("lines", {}).get(filename)
    if lines:
        text += f" · {filename} line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
        if o.get("lines_from") == "call":
            text += " (the line that ran the compiled code: its graph's nodes name no line of this file)"
    return text


def launches_by_line(result: CompileResult, filename: str) -> dict[int, list[int]]:
    """Line of `filename` -> the launches (indices) whose kernel computes it."""
    out: dict[int, list[int]] = {}
    for i, k in enumerate(result.headers):
        for line in k.origin.get("lines", {}).get(filename, ()):
            if isinstance(line, int):
                out.setdefault(line, []).append(i)
    return out


def next_launch(choices: list[int], shown: int) -> int:
    """The launch a click on a line opens: the first that computes it, or, when the shown one
    does, the next one that does (a click again walks the graphs: forward, then backward)."""
    if shown in choices:
        return choices[(choices.index(shown) + 1) % len(choices)]
    return choices[0]


@functools.lru_cache(maxsize=64)
def _payload(source: str, filename: str, clickable: tuple, lit: tuple, marks: tuple) -> bytes:
    return payload.encode(payload.build(
        "source", source, filename, {n: n for n in clickable},
        label=f"Your model · {filename} · click a line for the kernel that computes it",
        heat={n: 1.0 for n in lit}, marks=dict(marks)))


def render(result: CompileResult, kernel: KernelResult, source: str, filename: str,
           launch_key: str = LAUNCH_KEY) -> None:
    """The model's panel, when some kernel of `result` names lines of `filename`: every such
    line clickable and marked with its kernels, the shown kernel's lines lit. A click sets the
    launch picker `launch_key`."""
    by_line = launches_by_line(result, filename)
    if not by_line or not source:
        return
    heads = result.headers
    names = {line: list(dict.fromkeys(heads[i].name for i in launches)) for line, launches in by_line.items()}
    outside: dict[int, list[str]] = {}          # what a line runs outside Triton (cuBLAS, attention kernels)
    for call in result.outside:
        for line in call.get("lines", {}).get(filename, ()):
            outside.setdefault(line, []).append(f"{call.get('op', '')} ({call.get('kind', '')})")
    marks = tuple((line, "; ".join(part for part in (
        "computed by " + ", ".join(names[line]) if line in names else "",
        "outside Triton: " + ", ".join(dict.fromkeys(outside[line])) if line in outside else "") if part))
        for line in sorted(set(names) | set(outside)))
    lit = tuple(sorted(kernel.origin.get("lines", {}).get(filename, ())))
    shown = next((i for i, k in enumerate(heads) if (k.launch, k.name) == (kernel.launch, kernel.name)), 0)

    def follow(line: int) -> None:
        st.session_state[keys.STEP_LINE] = line          # the step table lights the rows that compute it
        if line in by_line:
            st.session_state[launch_key] = next_launch(by_line[line], shown)

    st.caption("Each line torch.compile turned into Triton kernels, or into calls outside Triton (cuBLAS, attention "
               "kernels), is marked (its tooltip names them); the lines of the kernel shown are lit. A click opens "
               "a kernel of the line and lights its rows in the step's table.")
    stage_panel(_payload(source, filename, tuple(sorted(set(by_line) | set(outside))), lit, marks),
                key=f"panel-model-{launch_key}",
                on_follow=follow)
