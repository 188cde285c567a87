"""The FX graph Inductor prints above each kernel in its wrapper module ("Graph fragment"):
the ops the kernel fuses, each with its output's dtype and shape. Pure text -> dataclasses.

    # Graph fragment:
    #   %arg0_1 : Tensor "f32[8192, 1024][1024, 1]cuda:0" = PlaceHolder[target=arg0_1]
    #   %arg1_1 : Tensor "f32[1024][1]cuda:0" = PlaceHolder[target=arg1_1]
    #   %add : Tensor "f32[8192, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg0_1, %arg1_1), kwargs = {})
    #   %relu : Tensor "f32[8192, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%add,), kwargs = {})
    #   return %relu
    triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''

(torch 2.11 writes this block; older wrappers without it give no graph.)
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

# `%add : Tensor "f32[8192, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg0_1, %arg1_1), kwargs = {})`
_NODE_RE = re.compile(r"^%(?P<name>\w+) : (?:Tensor \"(?P<type>[^\"]*)\")?\s*(?:\[num_users=\d+\])?\s*= "
                      r"(?P<kind>PlaceHolder|call_function)\[target=(?P<target>[^\]]+)\](?:\(args = \((?P<args>.*)\), kwargs)?")
# `f32[8192, 1024][1024, 1]cuda:0`
_TYPE_RE = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]")
_RETURN_RE = re.compile(r"^return (?P<outs>.*)$")
_DEFINE_RE = re.compile(r"^(?P<var>\w+) = async_compile\.triton\('(?P<name>\w+)',", re.M)
_REF_RE = re.compile(r"%(\w+)")

ELEMENT_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "b8": 1,
                 "f8e4m3fn": 1, "f8e5m2": 1}


@dataclass(frozen=True)
class FxNode:
    name: str                      # "add"
    kind: str                      # "placeholder" | "call_function"
    target: str                    # "aten.add.Tensor" (call_function), "arg0_1" (placeholder)
    dtype: str | None = None       # "f32"; None when the fragment gives no tensor type (a tuple output)
    shape: tuple[int, ...] = ()
    inputs: tuple[str, ...] = ()   # names of the nodes it reads, in argument order

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.dtype else 0

    @property
    def nbytes(self) -> int | None:
        if self.dtype is None or self.dtype not in ELEMENT_BYTES:
            return None
        return self.numel * ELEMENT_BYTES[self.dtype]

    @property
    def op(self) -> str:
        """`aten.add.Tensor` -> `add`."""
        parts = self.target.split(".")
        return parts[1] if len(parts) > 2 and parts[0] == "aten" else self.target


@dataclass(frozen=True)
class FxGraph:
    kernel: str                    # the Triton kernel defined right after the fragment
    nodes: tuple[FxNode, ...]
    outputs: tuple[str, ...]       # names after `return`

    def node(self, name: str) -> FxNode | None:
        return next((n for n in self.nodes if n.name == name), None)


def parse_node(line: str) -> FxNode | None:
    """One fragment line (without the leading `#   `), or None if it is not a node."""
    m = _NODE_RE.match(line.strip())
    if not m:
        return None
    dtype, shape = None, ()
    if m["type"] and (t := _TYPE_RE.match(m["type"])):
        dtype = t["dtype"]
        shape = tuple(int(x) for x in t["shape"].replace(" ", "").split(",") if x)
    target = m["target"].removeprefix("torch.ops.")
    return FxNode(name=m["name"], kind="placeholder" if m["kind"] == "PlaceHolder" else "call_function",
                  target=target, dtype=dtype, shape=shape, inputs=tuple(_REF_RE.findall(m["args"] or "")))


def graph_fragments(wrapper: str) -> list[FxGraph]:
    """Every `# Graph fragment:` block of a wrapper module, named by the kernel defined after it."""
    lines = wrapper.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "# Graph fragment:":
            i += 1
            continue
        nodes, outputs = [], ()
        i += 1
        while i < len(lines) and lines[i].startswith("#"):
            body = lines[i].lstrip("#").strip()
            if r := _RETURN_RE.match(body):
                outputs = tuple(_REF_RE.findall(r["outs"]))
            elif node := parse_node(body):
                nodes.append(node)
            i += 1
        rest = "\n".join(lines[i:i + 3])
        d = _DEFINE_RE.search(rest)
        out.append(FxGraph(kernel=d["name"] if d else "", nodes=tuple(nodes), outputs=outputs))
    return out
