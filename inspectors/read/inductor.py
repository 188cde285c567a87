"""What Inductor's generated code says about its Triton kernels: the wrapper module's comment
block per kernel (its file, the FX nodes and ATen ops it fused) and the kernel file's
`inductor_meta` scalars. Pure text -> dataclasses; running torch.compile is
inspectors.compile.torch_compile_gpu's job (its docstring shows the text read here)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from inspectors.read.brackets import matching


@dataclass(frozen=True)
class InductorKernel:
    """One Triton kernel Inductor generated, with where it came from."""
    name: str                              # triton_poi_fused_add_relu_0
    category: str                          # pointwise | reduction | persistent_reduction | template | other
    fused: str                             # "add_relu": the ops part of the name
    source_nodes: tuple[str, ...] = ()     # ("add", "relu"): the FX nodes it fuses
    aten_ops: tuple[str, ...] = ()         # ("aten.add", "aten.relu")
    kernel_path: str = ""                  # the generated .py, as the wrapper spelled it
    cache_entries: tuple[str, ...] = ()    # Triton cache folders compiled from it (one per config)
    meta: dict = field(default_factory=dict)   # scalars of inductor_meta: num_load, num_reduction, ...
    graph_nodes: tuple[str, ...] = ()      # ("add_3", "erf", ...): the compiled graph's nodes it computes

    @property
    def fused_ops(self) -> str:
        """`add, relu` from the wrapper's source nodes, else from the name."""
        return ", ".join(self.source_nodes) if self.source_nodes else self.fused.replace("_", " ")


# A wrapper's kernel definition, e.g.
#   # kernel path: /tmp/torchinductor_root/ab/cabc123.py
#   # Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
#   ...
#   triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''
_KERNEL_PATH_RE = re.compile(r"^# kernel path: (?P<path>\S+)\s*$", re.M)
_ORIGINS_RE = re.compile(r"^# (?:Topologically Sorted|Unsorted) Source Nodes: \[(?P<nodes>[^\]]*)\], "
                         r"Original ATen: \[(?P<aten>[^\]]*)\]", re.M)
#   gelu => add_2, erf, mul_2, mul_3, mul_4      (under "# Source node to ATen node mapping:")
_MAPPING_RE = re.compile(r"^#   \S+ => (?P<nodes>[\w, ]+)$", re.M)
_DEFINE_RE = re.compile(r"^(?P<var>\w+) = async_compile\.triton\('(?P<name>\w+)', '''", re.M)
# In the kernel file: inductor_meta={'grid_type': 'Grid1D', ..., 'kernel_name': 'triton_poi_fused_add_relu_0', ...}
_META_SCALAR_RE = re.compile(r"'(?P<key>\w+)': (?P<value>'[^']*'|-?\d+(?:\.\d+)?(?:e-?\d+)?|True|False|None)")
# triton_poi_fused_add_relu_0 -> ("poi", "add_relu"); triton_per_fused__softmax_0 -> ("per", "_softmax")
_NAME_RE = re.compile(r"^triton_(?P<cat>[a-z]+)_(?:fused_)?(?P<fused>.*?)(?:_\d+)?$")
_CATEGORIES = {"poi": "pointwise", "red": "reduction", "per": "persistent_reduction", "tem": "template",
               "for": "foreach", "spl": "split_scan", "sca": "scan"}


def split_name(name: str) -> tuple[str, str]:
    """`triton_poi_fused_add_relu_0` -> ("pointwise", "add_relu")."""
    m = _NAME_RE.match(name)
    if not m:
        return "other", name
    return _CATEGORIES.get(m["cat"], m["cat"]), m["fused"]


def parse_wrapper(text: str) -> list[InductorKernel]:
    """The kernels a wrapper module defines, each with its comment block (see the module
    docstring); kernels whose comment block is missing still get their name."""
    out = []
    last_end = 0
    for m in _DEFINE_RE.finditer(text):
        block = text[last_end:m.start()]
        block = block[block.rfind("# kernel path:"):] if "# kernel path:" in block else ""
        path = _KERNEL_PATH_RE.search(block)
        origins = _ORIGINS_RE.search(block)
        category, fused = split_name(m["name"])
        out.append(InductorKernel(
            name=m["name"], category=category, fused=fused,
            source_nodes=_split_list(origins["nodes"]) if origins else (),
            aten_ops=_split_list(origins["aten"]) if origins else (),
            kernel_path=path["path"] if path else "",
            graph_nodes=tuple(dict.fromkeys(n for g in _MAPPING_RE.finditer(block) for n in _split_list(g["nodes"])))))
        end = text.find("'''", m.end())
        last_end = end if end > 0 else m.end()
    return out


def _split_list(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def parse_inductor_meta(kernel_source: str) -> dict:
    """Scalar entries of the `inductor_meta={...}` dict of a generated kernel file, e.g.
    {"kernel_name": "triton_poi_fused_add_relu_0", "num_load": 2, "num_reduction": 0}."""
    start = kernel_source.find("inductor_meta={")
    if start < 0:
        return {}
    i = start + len("inductor_meta=")
    j = matching(kernel_source, i, "{[(", "}])", quotes="")     # (Python's quotes are not read)
    body = kernel_source[i:j + 1] if j >= 0 else kernel_source[i:]
    meta = {}
    for m in _META_SCALAR_RE.finditer(body):
        meta[m["key"]] = _literal(m["value"])
    return meta


def _literal(text: str):
    """`'x'` -> "x", `2` -> 2, `0.5` -> 0.5, `True`/`False`/`None`."""
    if text.startswith("'"):
        return text[1:-1]
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    return float(text) if any(c in text for c in ".e") else int(text)


_SUBGRAPH_DEF_RE = re.compile(r"^def (?P<name>\w+)\(args\):\n(?P<body>(?:[ \t]+.*\n|\n)*)", re.M)


def kernel_calls(wrapper: str, kernel: str) -> int:
    """How many times a graph's wrapper runs `kernel` in one call of the graph: its `.run(` lines,
    those in a subgraph's function (an invoke_subgraph block: compiled once, called per use) times
    that function's calls, nested subgraphs included. A while_loop's body counts once per place it
    is called, not per trip (the trip count is known when it runs)."""
    bodies = {m["name"]: m["body"] for m in _SUBGRAPH_DEF_RE.finditer(wrapper)}
    outside = _SUBGRAPH_DEF_RE.sub("", wrapper)

    def runs(text: str, seen: frozenset) -> int:
        n = len(re.findall(rf"\b{re.escape(kernel)}\.run\(", text))
        for name, body in bodies.items():
            if name not in seen:
                calls = len(re.findall(rf"(?<![\w.]){re.escape(name)}\(", text))
                if calls:
                    n += calls * runs(body, seen | {name})
        return n
    return runs(outside, frozenset())
