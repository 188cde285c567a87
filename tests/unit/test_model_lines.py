"""The launch card's torch.compile line (app/widgets/model_lines.py): the graph, what the kernel
fuses, the user's lines; a line found only as the call that ran the compiled code says so."""
from app.widgets import model_lines
from inspectors.base.result import CompileResult, KernelResult


def _kernel(origin: dict) -> KernelResult:
    return KernelResult("triton_x", "cuda:90", {}, (), {}, origin=origin)


def test_the_caption_names_graph_nodes_ops_and_lines():
    k = _kernel({"graph": "forward", "source_nodes": ["linear", "gelu"], "aten_ops": ["aten.addmm", "aten.gelu"],
                 "lines": {"block.py": [13]}})
    assert model_lines.caption(k, "block.py") == ("torch.compile · forward graph · fuses linear, gelu "
                                                  "(aten.addmm, aten.gelu) · block.py line 13")
    assert model_lines.caption(k, "other.py").endswith("(aten.addmm, aten.gelu)")     # no line of that file


def test_a_line_from_the_call_says_so():
    k = _kernel({"graph": "inference", "source_nodes": ["flex_attention"], "lines": {"flex.py": [14]},
                 "lines_from": "call"})
    text = model_lines.caption(k, "flex.py")
    assert text.endswith("flex.py line 14 (the line that ran the compiled code: its graph's nodes name no line "
                         "of this file)")
    assert model_lines.launches_by_line(CompileResult(kernels=(k,)), "flex.py") == {14: [0]}
