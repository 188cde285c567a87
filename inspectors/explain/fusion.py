"""The bytes a computation must move, unfused (one kernel per op, as eager PyTorch runs it)
and fused (one kernel: read the inputs once, write the outputs once), from the FX graph Inductor
recorded for its fused kernel (inspectors.read.fxgraph).

    t = traffic(graph)
    t.eager_kernels, t.eager_bytes, t.fused_bytes, t.ratio

Model: an eager op reads every tensor argument whole and writes its output whole; a view
(unsqueeze, getitem, expand, ...) launches nothing and moves nothing. A small operand
broadcast over a big one (the bias) is counted once: it stays in cache.
"""
from __future__ import annotations

from dataclasses import dataclass

from inspectors.read.fxgraph import FxGraph

# ops that make a view of their input: no kernel, no traffic
VIEW_OPS = frozenset({"view", "unsqueeze", "squeeze", "expand", "permute", "transpose", "t", "getitem",
                      "reshape", "alias", "slice", "select", "as_strided", "_unsafe_view"})


@dataclass(frozen=True)
class OpTraffic:
    name: str                                  # FX node: "mul_2"
    op: str                                    # "mul"
    reads: tuple[tuple[str, int], ...]         # (input node, bytes) per tensor argument
    write: int                                 # bytes of the output

    @property
    def bytes(self) -> int:
        return sum(b for _, b in self.reads) + self.write


@dataclass(frozen=True)
class Traffic:
    kernel: str
    ops: tuple[OpTraffic, ...]                 # the eager kernels, in graph order
    inputs: tuple[tuple[str, int], ...]        # (placeholder, bytes): what a fused kernel reads
    outputs: tuple[tuple[str, int], ...]       # (returned node, bytes): what it writes
    unknown: tuple[str, ...] = ()              # nodes without a tensor type (not counted)

    @property
    def eager_kernels(self) -> int:
        return len(self.ops)

    @property
    def eager_read(self) -> int:
        return sum(b for op in self.ops for _, b in op.reads)

    @property
    def eager_write(self) -> int:
        return sum(op.write for op in self.ops)

    @property
    def eager_bytes(self) -> int:
        return self.eager_read + self.eager_write

    @property
    def fused_read(self) -> int:
        return sum(b for _, b in self.inputs)

    @property
    def fused_write(self) -> int:
        return sum(b for _, b in self.outputs)

    @property
    def fused_bytes(self) -> int:
        return self.fused_read + self.fused_write

    @property
    def ratio(self) -> float:
        return self.eager_bytes / self.fused_bytes if self.fused_bytes else 0.0

    @property
    def intermediates(self) -> int:
        """Tensors an eager run writes to memory only to read them back."""
        outs = {n for n, _ in self.outputs}
        return sum(1 for op in self.ops if op.name not in outs)


def traffic(graph: FxGraph) -> Traffic:
    ops, unknown = [], []
    for node in graph.nodes:
        if node.kind != "call_function" or node.op in VIEW_OPS:
            continue
        if node.nbytes is None:
            unknown.append(node.name)
            continue
        reads = []
        for name in node.inputs:
            src = _source(graph, name)
            if src is not None and src.nbytes is not None:
                reads.append((name, src.nbytes))
        ops.append(OpTraffic(node.name, node.op, tuple(reads), node.nbytes))
    inputs = tuple((n.name, n.nbytes) for n in graph.nodes if n.kind == "placeholder" and n.nbytes is not None)
    outputs = tuple((name, graph.node(name).nbytes) for name in graph.outputs
                    if graph.node(name) is not None and graph.node(name).nbytes is not None)
    return Traffic(graph.kernel, tuple(ops), inputs, outputs, tuple(unknown))


def _source(graph: FxGraph, name: str):
    """The node whose memory `name` is: views are followed back to what they view."""
    node = graph.node(name)
    while node is not None and node.kind == "call_function" and node.op in VIEW_OPS and node.inputs:
        node = graph.node(node.inputs[0])
    return node
