"""torch.compile in a job without a GPU (inspectors/compile/compiled.py): Dynamo and AOTAutograd
trace the code, Inductor lowers each graph for the target, every kernel config is a launch."""

import pytest

from inspectors.base.result import CompileRequest


def _compile(engine, snippet, name, target="cuda:90"):
    r = engine.compile(CompileRequest(source=snippet(f"compiled/{name}"), filename=name, target=target,
                                      sass=False), timeout=300)
    assert r.ok, r.error
    return r


def test_a_compiled_block_shows_its_inference_forward_and_backward_kernels(engine, snippet):
    r = _compile(engine, snippet, "block.py")
    by_graph = {}
    for k in r.kernels:
        by_graph.setdefault(k.origin["graph"], []).append(k)
    assert set(by_graph) == {"inference", "forward", "backward"}, by_graph.keys()
    for k in r.kernels:
        assert k.name.startswith("triton_") and k.origin["kernel"] == k.name
        assert ".target sm_90" in k.stages["ptx"] and f".entry {k.name}" in k.stages["ptx"]
        # the Python panel is Inductor's generated file, written in the job's folder
        assert k.source_path.startswith("inductor/") and "@triton.jit" in k.stages["source"]
        assert f"def {k.name}(" in k.stages["source"]
    # which of the user's lines each kernel computes: LayerNorm on line 12, Linear + GELU + add on 13
    norm = [k for k in r.kernels if "native_layer_norm" in k.name]
    gelu = [k for k in r.kernels if "gelu" in k.name and "layer_norm" not in k.name]
    assert norm and all(k.origin["lines"] == {"block.py": [12]} for k in norm), [k.origin for k in norm]
    assert gelu and all(k.origin["lines"] == {"block.py": [13]} for k in gelu), [k.origin for k in gelu]
    assert any("aten.gelu_backward" in k.origin["aten_ops"] for k in by_graph["backward"])
    # Inductor's candidate configs, each a launch: the pointwise kernel has two (XBLOCK 256 and 128)
    fwd = [k for k in by_graph["forward"] if k.origin["category"] == "pointwise"]
    assert [k.label.split(" · ")[1].split(":")[0] for k in fwd] == ["config 1 of 2", "config 2 of 2"]
    assert {a.value for k in fwd for a in k.args if a.name == "XBLOCK"} == {"256", "128"}
    # the JIT's specialization as Inductor states it: every pointer 16-byte aligned
    assert all("16-byte aligned" in a.describe() for k in r.kernels for a in k.args if a.type.startswith("*"))


def test_flex_attention_compiles_its_template(engine, snippet):
    r = _compile(engine, snippet, "flex.py")
    [k] = r.kernels
    assert k.name.startswith("triton_tem_fused_flex_attention") and k.origin["category"] == "template"
    assert k.options["num_stages"] == 3 and k.options["num_warps"] == 4
    assert "mma" in k.stages["ptx"]          # the tensor-core dot products of the attention


def test_the_decorator_and_a_mode(engine, snippet):
    """`@torch.compile(mode="reduce-overhead")` at import: CUDA graphs left out (they replay the same
    kernels), the softmax kernel recorded with the line it computes."""
    r = _compile(engine, snippet, "decorated.py")
    assert any("softmax" in k.name for k in r.kernels), [k.name for k in r.kernels]
    assert all(k.origin["lines"] == {"decorated.py": [7]} for k in r.kernels)


def test_a_compiled_block_on_an_amd_target(engine, snippet):
    r = _compile(engine, snippet, "block.py", target="hip:gfx942")
    assert {k.origin["graph"] for k in r.kernels} == {"inference", "forward", "backward"}
    assert all("amdgcn" in k.stages and "ptx" not in k.stages for k in r.kernels)


def test_a_tracing_error_names_the_users_line(engine):
    src = ("import torch\n\n\ndef f(x):\n    return x @ x.T[:3]\n\n\n"
           "def example():\n    torch.compile(f)(torch.randn(4, 8, device='cuda'))\n")
    r = engine.compile(CompileRequest(source=src, filename="bad.py"), timeout=300)
    assert not r.ok and r.error.kind == "runtime"
    assert r.error.line == 9 and "example() raised" in r.error.message
    with pytest.raises(AssertionError):
        assert r.kernels
