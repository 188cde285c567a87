"""`python -m inspectors compile` end to end, in a subprocess, as scripts will call it."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, SNIPPETS

# every test here starts a compile worker or the CLI (tests/conftest.py)
pytestmark = pytest.mark.workers


def cli(*args, timeout=180):
    p = subprocess.run([sys.executable, "-m", "inspectors", *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def test_vector_add_json_has_v4_loads():
    code, out, err = cli("compile", ROOT / "kernels" / "vector_add.py", "--target", "cuda:90", "--json")
    assert code == 0, err
    data = json.loads(out)
    first = data["kernels"][0]
    assert set(first) >= {"name", "target", "options", "stages"}
    assert set(first["stages"]) == {"source", "ttir", "ttgir", "llir", "ptx", "sass"}
    assert first["target"] == "cuda:90"
    assert "ld.global.v4.b32" in first["stages"]["ptx"]
    # the example also launches on a misaligned slice: the JIT's scalar loads show up
    assert any("ld.global.v4" not in k["stages"]["ptx"] and "ld.global.b32" in k["stages"]["ptx"]
               for k in data["kernels"][1:])


def test_text_output_prints_the_stage():
    code, out, _ = cli("compile", SNIPPETS / "vadd.py", "--kernel", "add_kernel", "--stage", "ttgir",
                       "--num-warps", "2", "--constexpr", "BLOCK=512")
    assert code == 0
    assert '"ttg.num-warps" = 2' in out and "BLOCK = 512" in out


def test_hip_target_has_amdgcn():
    code, out, err = cli("compile", SNIPPETS / "vadd.py", "--target", "hip:gfx942", "--json")
    assert code == 0, err
    k = json.loads(out)["kernels"][0]
    assert "amdgcn" in k["stages"] and "ptx" not in k["stages"]


@pytest.mark.parametrize("name,args,kind,line", [
    ("syntax_error.py", [], "syntax", 7),
    ("dot_mismatch.py", [], "compile", 11),
    ("launcher_raises.py", [], "runtime", 12),
    ("forever.py", ["--timeout", "5"], "timeout", None),
    ("no_kernels.py", [], "usage", None),
    ("vadd.py", ["--target", "cuda:61"], "usage", None),
    ("vadd.py", ["--target", "nvidia"], "usage", None),
    ("nosig.py", ["--signature", "*fp32, i32"], "usage", None),
])
def test_bad_input_json(name, args, kind, line):
    code, out, _ = cli("compile", SNIPPETS / name, "--json", *args)
    assert code == 1
    err = json.loads(out)["error"]
    assert err["kind"] == kind
    assert err["line"] == line
    assert err["message"]
    assert set(err) >= {"kind", "message", "file", "line"}


def test_missing_file():
    code, out, _ = cli("compile", ROOT / "nope.py", "--json")
    assert code == 1 and json.loads(out)["error"]["kind"] == "usage"


def test_bad_flag_is_exit_2():
    code, _, err = cli("compile", SNIPPETS / "vadd.py", "--constexpr", "BLOCK")
    assert code == 2 and "NAME=VALUE" in err


def test_text_error_names_file_and_line():
    code, _, err = cli("compile", SNIPPETS / "dot_mismatch.py")
    assert code == 1 and "dot_mismatch.py:11: compile error" in err


def test_a_step_of_no_triton_kernel_prints_its_calls_outside_triton(tmp_path):
    """torch.compile of a matmul alone: exit 0, the step table of its one cuBLAS call (text without
    --summary), and in --json no kernels beside the call, its FLOPs 2·M·N·K."""
    model = tmp_path / "mm_only.py"
    model.write_text("import torch\n\n\ndef example():\n    a = torch.randn(256, 512, device='cuda')\n"
                     "    b = torch.randn(512, 128, device='cuda')\n    torch.compile(torch.mm)(a, b)\n")
    code, out, err = cli("compile", model, "--target", "cuda:90")
    assert code == 0, err
    assert "aten.mm (cuBLAS) [256×512 · 512×128 fp32]" in out
    assert "no Triton launch: Inductor made no Triton kernel; 1 call(s) outside Triton (-): 1 cuBLAS" in out
    code, out, err = cli("compile", model, "--target", "cuda:90", "--json")
    data = json.loads(out)
    assert code == 0 and data["kernels"] == [], err
    assert [(c["op"], c["flops"]) for c in data["outside"]] == [("aten.mm", 2 * 256 * 512 * 128)]


def test_a_compiled_graph_run_three_times_counts_three_calls(tmp_path):
    """A compiled function called three times (a layer after a graph break, micro-batches): its
    graph's Triton kernel and its cuBLAS call each count 3 calls in the step, not 1."""
    model = tmp_path / "thrice.py"
    model.write_text("import torch\n\n\ndef example():\n    a = torch.randn(256, 512, device='cuda')\n"
                     "    b = torch.randn(512, 128, device='cuda')\n    f = torch.compile(lambda a, b: (a @ b).relu())\n"
                     "    for _ in range(3):\n        f(a, b)\n")
    code, out, err = cli("compile", model, "--target", "cuda:90", "--json")
    data = json.loads(out)
    assert code == 0, err
    assert {k["workload"]["calls"] for k in data["kernels"]} == {3}
    assert [(c["op"], c["calls"]) for c in data["outside"]] == [("aten.mm", 3)]
