"""An attention with dropout traced in the view as the GPU traces it (inspectors/target/attention.py):
the GPU's own memory-efficient op, whose philox seed and offset the forward saves for the backward
(AOTAutograd's partitioner on a GPU: GPT-2's backward had 4 donated buffers fewer here before, and
Inductor ordered its kernels otherwise), and a CPU graph that still runs."""
import pytest

torch = pytest.importorskip("torch")


def test_dropout_attention_saves_the_gpus_philox_state_and_runs_on_the_cpu():
    import torch.nn.functional as F
    from functorch.compile import make_boxed_func
    from torch._functorch.aot_autograd import aot_function

    from inspectors.target import attention
    aten = torch.ops.aten
    undo = []

    def set_(obj, name, value):
        old = getattr(obj, name)
        setattr(obj, name, value)
        undo.append(lambda: setattr(obj, name, old))

    graphs = {}

    def compiler(which):
        def compile_(gm, example_inputs):
            graphs[which] = ([n.target for n in gm.graph.nodes], [n for n in gm.graph.nodes if n.op == "placeholder"])
            attention.without_dropout(gm)       # the graph that runs here: the CPU's flash kernel
            return make_boxed_func(gm.forward)
        return compile_
    attention.traced_as_on_gpu(set_, 9)
    try:
        f = aot_function(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1),
                         fw_compiler=compiler("forward"), bw_compiler=compiler("backward"))
        q, k, v = (torch.randn(2, 4, 64, 32, requires_grad=True) for _ in range(3))
        f(q, k, v).sum().backward()
    finally:
        for back in reversed(undo):
            back()
    forward, _ = graphs["forward"]
    backward, inputs = graphs["backward"]
    assert aten._scaled_dot_product_efficient_attention.default in forward
    assert aten._scaled_dot_product_efficient_attention_backward.default in backward
    # the seed and offset are the backward's inputs, int64, as the GPU's forward saves them
    assert sum(p.meta["val"].dtype == torch.int64 for p in inputs) == 2, [(p.name, p.meta["val"]) for p in inputs]
    assert q.grad is not None and q.grad.shape == q.shape and torch.isfinite(q.grad).all()
