"""Attention as the GPU's SDPA runs it (inspectors/target/attention.py): a mask handed to the
memory-efficient kernel expanded to the attention's shape, and padded first where its rows'
strides are not multiples of 8; the backends the code picks; a graph of attention alone."""
import re
from pathlib import Path

import torch

from inspectors.base.result import CompileRequest
from inspectors.explain import step


def test_a_mask_of_19_positions_is_padded_as_the_gpu_pads_it(engine, snippet):
    """19 positions: the GPU pads the mask to 24 and slices it back before the memory-efficient
    kernel, once: the forward saves the padded mask for the backward (on an H200, 13 kernels: a pad
    kernel of its own in the forward, none in the backward). Left as traced, the CPU's flash
    attention was decomposed into the step's kernels (`..._scaled_dot_product_flash_attention_for_cpu_...`);
    padded per graph, the backward padded again and the forward fused the pad into another kernel."""
    r = engine.compile(CompileRequest(source=snippet("compiled/unaligned_mask_attention.py"),
                                      filename="unaligned_mask_attention.py", target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    names = [k.name for k in r.kernels]
    assert not [n for n in names if "for_cpu" in n], names
    padded = [k for k in r.kernels if "constant_pad_nd" in k.name]
    assert {k.origin["graph"] for k in padded} == {"forward"}, names     # the backward takes the saved padded mask
    assert all(re.fullmatch(r"triton_poi_fused_constant_pad_nd_\d+", k.name) for k in padded), names
    bodies = [k.stages["source"].split("@triton.jit")[1] for k in padded]
    assert all(re.search(r"\b24\b", b) for b in bodies), bodies        # rows of 19 padded to 24
    ops = {c["op"] for c in r.outside}
    assert {"aten._scaled_dot_product_efficient_attention", "aten._scaled_dot_product_efficient_attention_backward"} <= ops, ops


def test_the_attention_backend_the_code_picks_is_the_gpus(engine, snippet):
    """`sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION])`: bf16 attention, flash by default, is the
    memory-efficient kernel, forward and backward; `sdpa_kernel([SDPBackend.MATH])`: the math path,
    its softmax Inductor's kernels. The CPU has no memory-efficient kernel: the first was refused,
    "No viable backend for scaled_dot_product_attention was found"."""
    r = engine.compile(CompileRequest(source=snippet("compiled/sdpa_backends.py"), filename="sdpa_backends.py",
                                      target="cuda:90", sass=False), timeout=300)
    assert r.ok, r.error
    ops = [c["op"] for c in r.outside]
    assert "aten._scaled_dot_product_efficient_attention" in ops and \
        "aten._scaled_dot_product_efficient_attention_backward" in ops, ops
    assert not [op for op in ops if "flash" in op], ops
    softmax = {k.origin["graph"] for k in r.kernels if "softmax" in k.name}
    assert softmax == {"forward", "backward"}, [k.name for k in r.kernels]


ATTENTION_ALONE = '''import torch
import torch.nn.functional as F


def example():
    q, k, v = (torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    torch.compile(F.scaled_dot_product_attention)(q, k, v, is_causal=True).sum().backward()
'''


def test_a_compiled_graph_of_attention_alone_is_a_step_of_its_calls(engine):
    """No Triton kernel at all (the GPU's cuDNN attention forward and backward: sm_90's choice for
    bf16, benchmarks/results/sdpa_choice.txt): the result is the step's two calls outside Triton,
    each with its FLOPs, and the step table estimates them on the target."""
    r = engine.compile(CompileRequest(source=ATTENTION_ALONE, filename="alone.py", target="cuda:90", sass=False),
                       timeout=300)
    assert r.ok and not r.kernels, r.error
    kernel = "cudnn_attention"
    if torch.cuda.is_available():     # the GPU's own pick (an H200 with torch 2.11: cuDNN's)
        from torch.nn.attention import SDPBackend
        q = torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        kernel = {int(SDPBackend.FLASH_ATTENTION): "flash_attention", int(SDPBackend.CUDNN_ATTENTION): "cudnn_attention",
                  int(SDPBackend.EFFICIENT_ATTENTION): "efficient_attention"}[
            torch._fused_sdp_choice(q, q, q, None, 0.0, True)]
    assert [(c["graph"], c["op"]) for c in r.outside] == [
        ("forward", f"aten._scaled_dot_product_{kernel}"), ("backward", f"aten._scaled_dot_product_{kernel}_backward"),
        # .backward()'s seed, and AOTAutograd's copy of sum's expanded gradient into the layout
        # the compiled backward takes: each a CUDA kernel of torch's on the GPU
        ("eager backward", "aten.ones_like"), ("eager backward", "aten.copy_")]
    rows = step.rows(r.headers, "alone.py", None, r.outside, target="cuda:90")
    assert all(row.outside and row.estimate_us for row in rows) and all(row.flops for row in rows[:2])
    assert step.text(rows).splitlines()[-2].startswith("no Triton launch: Inductor made no Triton kernel; 4 call(s)")


JAGGED = Path(__file__).resolve().parents[2] / "benchmarks" / "drivers" / "features" / "jagged_attention.py"


def test_jagged_attention_compiles_as_the_gpus_variable_length_kernels(engine):
    """Nested SDPA asks torch._C's can_use_flash / can_use_efficient of the jagged tensors Dynamo
    traces: answered by the GPU's rules (before, the CPU's answer sent it down the math path and
    Dynamo ran it eagerly). bf16 and causal is flash's variable-length op, float32 the
    memory-efficient kernel's, forward and backward, calls outside Triton; the graph that runs on
    the CPU runs their stand-ins one sequence at a time (the driver checks each sequence's values
    against dense attention), and the gradients' nested sizes are the inputs' (j1)."""
    r = engine.compile(CompileRequest(source=JAGGED.read_text(), filename="jagged_attention.py", target="cuda:90",
                                      sass=False), timeout=300)
    assert r.ok, r.error
    calls = {(c["op"], c["graph"]) for c in r.outside if not c["graph"].startswith("eager")}
    assert calls == {(f"aten._{kind}_attention_{way}", graph) for kind in ("flash", "efficient")
                     for way, graph in (("forward", "forward"), ("backward", "backward"))}, calls


JAGGED_EAGER = '''import torch
import torch.nn.functional as F


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                              is_causal=True).transpose(1, 2)


def example():
    torch.manual_seed(0)
    dense = [[torch.randn(n, 4, 64) for n in (17, 40, 29)] for _ in range(3)]
    q, k, v = (torch.nested.nested_tensor(d, layout=torch.jagged, device="cuda", dtype=torch.bfloat16,
                                          requires_grad=True) for d in dense)
    out = Attention()(q, k, v)
    for i in range(3):
        a, b, c = (x[i].to("cuda", torch.bfloat16).float().transpose(0, 1) for x in dense)
        ref = F.scaled_dot_product_attention(a, b, c, is_causal=True).transpose(0, 1)
        assert torch.allclose(out[i].float(), ref, atol=2e-2), (i, (out[i].float() - ref).abs().max())
    out.values().float().square().sum().backward()
    assert q.grad is not None and q.grad.shape == q.shape
    torch.compile(lambda t: t.values().sin())(out)
'''


def test_jagged_attention_run_eagerly_is_the_gpus_variable_length_flash_kernel(engine):
    """A causal bf16 attention of jagged nested tensors in an eager module: the CPU has no backend
    for it ("No viable backend for scaled_dot_product_attention was found", before); the GPU runs
    flash's variable-length kernel forward and backward, listed as the step's eager calls, its values
    checked against dense attention of each sequence."""
    r = engine.compile(CompileRequest(source=JAGGED_EAGER, filename="jagged_eager.py", target="cuda:90", sass=False),
                       timeout=300)
    assert r.ok, r.error
    calls = {(c["graph"], c["op"], c["kind"]) for c in r.outside}
    assert ("eager", "aten._flash_attention_forward", "flash attention") in calls, calls
    assert ("eager backward", "aten._flash_attention_backward", "flash attention") in calls, calls
    assert not [op for _, op, _ in calls if "nested" in op], calls
