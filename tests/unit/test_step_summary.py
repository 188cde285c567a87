"""The step at a glance, first slice (issue 57): every launch of a result in one table from the
launches' headers (inspectors/explain/step.py), and `tlens compile FILE --summary`."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.base.errors import CompileError
from inspectors.base.result import KernelResult
from inspectors.explain import step


def _head(i, name, graph=None, lines=(), aten=(), label="", error=None):
    origin = {"graph": graph, "lines": {"m.py": list(lines)}, "aten_ops": list(aten)} if graph else {}
    return KernelResult(name, "cuda:90", {"num_warps": 4, "num_stages": 1}, (), {}, launch=i,
                        label=label or name, origin=origin, error=error)


def test_rows_say_graph_kernel_lines_and_ops_in_launch_order():
    heads = [_head(0, "triton_poi_fused_gelu_0", "forward", (12,), ("aten.gelu",)),
             _head(1, "triton_red_fused_sum_1", "backward", (12, 13), ("aten.sum", "aten.mul")),
             _head(2, "add_kernel", label="add_kernel · launch 3",
                   error=CompileError("compile", "ptxas crashed", stage="cubin"))]
    found = step.rows(heads, "m.py")
    assert [(r.launch, r.graph, r.kernel, r.lines) for r in found] == [
        (1, "forward", "triton_poi_fused_gelu_0", (12,)), (2, "backward", "triton_red_fused_sum_1", (12, 13)),
        (3, "", "add_kernel", ())]
    assert found[1].aten_ops == ("aten.sum", "aten.mul") and found[2].config == "launch 3" and found[2].failed == "cubin"
    assert found[0].config == ""                      # no args to describe here; a file's own launch describes them
    table = step.text(found)
    assert "triton_red_fused_sum_1" in table and "12,13" in table and "stopped at cubin" in table
    assert table.splitlines()[-1] == "3 launch(es): 1 forward, 1 backward, 1 launches"
    assert json.loads(json.dumps([r.to_json() for r in found]))[1]["lines"] == [12, 13]


@pytest.mark.workers
def test_cli_summary_of_a_compiled_block(tmp_path):
    """A torch.compile'd block's forward and backward: one line per launch, its graph and lines."""
    env = {"TLENS_TRITON_CACHE_DIR": str(tmp_path / "cache")}
    import os
    p = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(SNIPPETS / "compiled" / "block.py"),
                        "--summary", "--json", "--timeout", "600"], cwd=ROOT, capture_output=True, text=True,
                       timeout=900, env={**os.environ, **env})
    assert p.returncode == 0, p.stderr[-2000:]
    data = json.loads(p.stdout)
    rows = [r for r in data["summary"] if not r["outside"]]           # then the calls outside Triton
    assert len(rows) == len(data["kernels"]) and {r["graph"] for r in rows} >= {"forward", "backward"}
    assert all(r["kernel"] == k["name"] for r, k in zip(rows, data["kernels"]))
    assert [r["kernel"] for r in data["summary"][len(rows):]] == [f"{c['op']} ({c['kind']})" for c in data["outside"]]
    assert any(r["lines"] and r["aten_ops"] for r in rows)


def test_a_table_row_picked_opens_its_launch_once():
    from app.widgets.step_table import opened
    assert opened([2], None, 5) == 2                  # a row picked: its launch
    assert opened([2], 2, 5) is None                  # the same pick again: the picker stays the user's
    assert opened([], 2, 5) is None and opened(None, None, 5) is None
    assert opened([7], None, 5) is None and opened([-1], None, 5) is None     # not a launch of this result


def test_a_call_outside_triton_says_what_it_is():
    from app.widgets.step_table import outside_text
    from inspectors.base import gpu_specs
    (row,) = step.rows((), "m.py", gpu_specs.named("H200"), ({"graph": "forward", "op": "aten.mm", "kind": "cuBLAS",
                        "shapes": [[64, 256], [256, 256]], "dtype": "fp32", "bytes": 393216, "flops": 8388608,
                        "lines": {"m.py": [13]}},))
    text = outside_text(row)
    assert "aten.mm (cuBLAS)" in text and "line 13" in text and "64×256 · 256×256 fp32" in text
    assert "0.00839 GFLOP" in text and "runs outside Triton" in text and "TFLOP/s" in text
