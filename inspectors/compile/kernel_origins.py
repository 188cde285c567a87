"""Where a torch.compile kernel came from: the graph it is in (forward, backward, inference),
the FX nodes and ATen ops it fuses (the wrapper's comment blocks), and the user's lines those
nodes were traced from (their stack traces, inside the job's folder). Pure functions of
Inductor's wrapper source, an FX graph and the job's folder; torch_compile_target calls them
for each graph Inductor compiles.
"""
from __future__ import annotations

import re

from inspectors.read.inductor import parse_wrapper

# "File "/tmp/tlens-x/job-3/model.py", line 12, in forward"
_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')

def graph_kind(inner_kwargs: dict) -> str:
    """"forward", "backward" or "inference", from Inductor's compile_fx_inner arguments. A graph
    compiled autograd traced (`torch._dynamo.config.compiled_autograd`: the autograd engine's
    backward as one graph, compiled by Dynamo as an inference graph) is the step's backward."""
    if inner_kwargs.get("is_backward"):
        return "backward"
    if not inner_kwargs.get("is_inference"):
        return "forward"
    import torch
    compile_id = torch._guards.CompileContext.current_compile_id()
    return "backward" if getattr(compile_id, "compiled_autograd_id", None) is not None else "inference"


def _in_job(path: str, job_dir: str) -> str | None:
    """The path of a frame's file in the job's folder, or None for a file outside it."""
    if path.startswith(job_dir + "/"):
        return path[len(job_dir) + 1:]
    if "/" not in path and not path.startswith("<"):      # the user's file, compiled under its bare name
        return path
    return None


def lines_of(stack_trace: str, job_dir: str) -> list[tuple[str, int]]:
    """(file in the job, line) of each frame of a node's stack trace inside the job's folder."""
    return [(file, int(m["line"])) for m in _FRAME_RE.finditer(stack_trace or "")
            if (file := _in_job(m["file"], job_dir)) is not None]


def call_site(job_dir: str) -> tuple[str, int] | None:
    """(file in the job, line) of the innermost frame of the user's code running now: the line
    whose call compiles a graph (a compiled call, a `.backward()`), for kernels whose nodes' stack
    traces name only a library's lines (a compiled library function: FlexAttention)."""
    import sys
    frame = sys._getframe(1)
    while frame is not None:
        if (file := _in_job(frame.f_code.co_filename, job_dir)) is not None:
            return file, frame.f_lineno
        frame = frame.f_back
    return None


def origins(wrapper_source: str, graph, job_dir: str, which: str, by_seq: dict) -> dict[str, dict]:
    """Kernel name -> where it came from, from the wrapper's comment blocks (the FX nodes and
    ATen ops each kernel fuses) and the graph's nodes (their stack traces: the user's lines).
    `by_seq`: stack traces by autograd sequence number, from the graphs seen so far (a backward
    node without a trace of its own has its forward node's)."""
    for n in graph.nodes:
        if n.meta.get("stack_trace") and n.meta.get("seq_nr") is not None:
            by_seq.setdefault(n.meta["seq_nr"], n.meta["stack_trace"])
    traces = {n.name: n.meta.get("stack_trace") or by_seq.get(n.meta.get("seq_nr"), "") for n in graph.nodes}
    out = {}
    for k in parse_wrapper(wrapper_source):
        lines: dict[str, set[int]] = {}
        for node in k.graph_nodes or k.source_nodes:        # a template's block has no mapping
            for file, line in lines_of(traces.get(node, ""), job_dir):
                lines.setdefault(file, set()).add(line)
        out[k.name] = {"kernel": k.name, "category": k.category, "graph": which,
                       "source_nodes": list(k.source_nodes), "aten_ops": list(k.aten_ops),
                       "lines": {f: sorted(v) for f, v in lines.items()}}
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table
    for n in graph.nodes:       # a user's Triton kernel the graph calls: the lines of its call
        if "triton_kernel_wrapper" in str(n.target) and "kernel_idx" in n.kwargs:
            fn = kernel_side_table.get_kernel(n.kwargs["kernel_idx"])
            name = getattr(getattr(fn, "fn", fn), "__name__", "")
            lines = sorted(set(lines_of(traces.get(n.name, ""), job_dir)))
            entry = out.setdefault(name, {"kernel": name, "category": "other", "graph": which, "source_nodes": [],
                                          "aten_ops": []})
            if not entry.get("lines"):      # it fuses nothing: the card names only its line
                entry["lines"] = {f: [ln for g, ln in lines if g == f] for f, _ in lines}
    return out
