"""An attention with dropout traced in the view as the GPU traces it (inspectors/target/attention.py):
the GPU's own memory-efficient op, whose philox seed and offset the forward saves for the backward
(AOTAutograd's partitioner on a GPU: GPT-2's backward had 4 donated buffers fewer here before, and
Inductor ordered its kernels otherwise), and a CPU graph that still runs."""
import pytest

torch = pytest.importorskip("torch")


def _traced(fn, *inputs):
    """fn's forward and backward traced in the view's way (sm_90), run with the CPU graph's
    stand-ins: ({graph: (its ops, its placeholders)}, fn's output)."""
    from functorch.compile import make_boxed_func
    from torch._functorch.aot_autograd import aot_function

    from inspectors.target import attention, attention_cpu
    undo, graphs = [], {}

    def set_(obj, name, value):
        old = getattr(obj, name)
        setattr(obj, name, value)
        undo.append(lambda: setattr(obj, name, old))

    def compiler(which):
        def compile_(gm, example_inputs):
            graphs[which] = ([n.target for n in gm.graph.nodes], [n for n in gm.graph.nodes if n.op == "placeholder"])
            attention_cpu.without_dropout(gm)       # the graph that runs here: the CPU's flash kernel
            return make_boxed_func(gm.forward)
        return compile_
    attention.traced_as_on_gpu(set_, 9)
    try:
        out = aot_function(fn, fw_compiler=compiler("forward"), bw_compiler=compiler("backward"))(*inputs)
        out.float().sum().backward()
    finally:
        for back in reversed(undo):
            back()
    return graphs, out


def test_dropout_attention_saves_the_gpus_philox_state_and_runs_on_the_cpu():
    import torch.nn.functional as F
    aten = torch.ops.aten
    q, k, v = (torch.randn(2, 4, 64, 32, requires_grad=True) for _ in range(3))
    graphs, _ = _traced(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1), q, k, v)
    forward, _ = graphs["forward"]
    backward, inputs = graphs["backward"]
    assert aten._scaled_dot_product_efficient_attention.default in forward
    assert aten._scaled_dot_product_efficient_attention_backward.default in backward
    # the seed and offset are the backward's inputs, int64, as the GPU's forward saves them
    assert sum(p.meta["val"].dtype == torch.int64 for p in inputs) == 2, [(p.name, p.meta["val"]) for p in inputs]
    assert q.grad is not None and q.grad.shape == q.shape and torch.isfinite(q.grad).all()


def test_cudnn_attention_is_traced_as_the_gpus_and_its_stand_ins_compute_it():
    """bf16 with grouped heads and a boolean mask: cuDNN's op forward and backward (sm_90's choice),
    and the CPU graph's stand-ins for them give the values and gradients eager attention gives."""
    import torch.nn.functional as F
    aten = torch.ops.aten
    torch.manual_seed(0)
    made = [torch.randn(2, n, 16, 32, dtype=torch.bfloat16) for n in (4, 2, 2)]
    keep = torch.rand(16, 16) > 0.3
    keep[:, 0] = True

    def attend(q, k, v, keep):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True)
    q, k, v = (t.clone().requires_grad_() for t in made)
    graphs, out = _traced(attend, q, k, v, keep)
    assert aten._scaled_dot_product_cudnn_attention.default in graphs["forward"][0]
    assert aten._scaled_dot_product_cudnn_attention_backward.default in graphs["backward"][0]
    eq, ek, ev = (t.clone().requires_grad_() for t in made)
    want = attend(eq, ek, ev, keep)
    want.float().sum().backward()
    torch.testing.assert_close(out, want, atol=2e-2, rtol=2e-2)
    for got, ref in ((q, eq), (k, ek), (v, ev)):
        torch.testing.assert_close(got.grad, ref.grad, atol=5e-2, rtol=5e-2)
