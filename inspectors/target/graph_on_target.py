"""A graph AOTAutograd traced on the view's CPU tensors, made the one Inductor gets on the target.

AOTAutograd hands Inductor each graph (inference, forward, backward) traced on CPU tensors.
`on_target` copies it with every device argument `cuda:0` and fake tensors on that device for
its inputs and node values (their shapes, strides and dtypes kept), its attention the GPU's
(inspectors/target/attention.py), the values propagated again where the ops allow.

Not every tensor of a GPU's graph is on the GPU. Dynamo makes a Python float it does not
specialize (`specialize_float` off: a float argument that changed between calls, a module's float
attribute) a 0-dim float64 CPU tensor, on a GPU too; Inductor passes such a scalar to a kernel by
value, and what the forward computes from it alone (its float32 conversion) stays a CPU scalar,
saved for the backward as one. Put on `cuda:0`, it would be a pointer, with a kernel of its own
converting it (Gemma 2's attention scaling on an H200: benchmarks/results/gpu_drivers.txt). So
those inputs stay on the CPU, and a backward's input saved by a forward as a CPU value too: the
forward's saved values are the backward's placeholders of the same names (`on_cpu`). A tensor the
code makes on the CPU inside the step and moves to the GPU (`torch.tensor(32).to(x.device)`)
stays on the CPU up to its copy (inductor_choices.cpu_born): a GPU's copy is a kernel of its own.
"""
from __future__ import annotations

import contextlib
import copy

from inspectors.target import attention, inductor_choices


def input_device(t, name: str, on_cpu: set):
    """The device of a graph's input `t` (placeholder `name`) on the target: `cuda:0`, but the
    CPU for Dynamo's float scalars and for values a forward left on the CPU (`on_cpu`: names)."""
    import torch
    scalar = t.dim() == 0 and t.dtype == torch.float64 and t.device.type == "cpu"
    return torch.device("cpu") if scalar or name in on_cpu else torch.device("cuda", 0)


def _subgraphs_on(module, device, mode) -> None:
    """A higher-order op's subgraphs (flex_attention's mask_mod and score_mod, a scan's combine,
    cond's branches) as copies on `device` too: their placeholders' values are checked against
    the arguments the op passes them (Inductor's FakeTensorUpdater)."""
    import torch
    for name, child in list(module.named_children()):
        if isinstance(child, torch.fx.GraphModule):
            graph = copy.deepcopy(child.graph)
            inductor_choices.devices_on(graph, device)
            inductor_choices.values_on(graph, device, mode)
            moved = torch.fx.GraphModule(child, graph)
            _subgraphs_on(moved, device, mode)
            setattr(module, name, moved)


def on_target(gm, example_inputs, view=None, on_cpu: set | None = None):
    """A copy of `gm` whose devices are `cuda:0`, and fake tensors of its inputs there: (the copy,
    the fakes). `on_cpu`: the names of the values the graph's forward left on the CPU, one set for
    a forward and its backward; the forward adds its own to it. `view`: the TargetView traced in."""
    import torch
    from torch._guards import detect_fake_mode
    from torch._subclasses.fake_tensor import FakeTensorMode
    on_cpu = set() if on_cpu is None else on_cpu
    cuda = torch.device("cuda", 0)
    graph = copy.deepcopy(gm.graph)
    stay = inductor_choices.cpu_born(graph)          # a CPU constant moved to the GPU: made on the CPU
    inductor_choices.devices_on(graph, cuda)
    target_gm = torch.fx.GraphModule(gm, graph)
    placeholders = [n for n in target_gm.graph.nodes if n.op == "placeholder"]
    # AOTAutograd's own fake mode where it has one (its shape environment: dynamic shapes)
    mode = detect_fake_mode(example_inputs) or FakeTensorMode(allow_non_fake_inputs=True)
    fakes = []
    with mode:
        for t, node in zip(example_inputs, placeholders):
            if isinstance(t, torch.Tensor):
                fake = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype,
                                           device=input_device(t, node.name, on_cpu))
                fakes.append(fake.requires_grad_(False))
            else:
                fakes.append(t)
    # each node's value as AOTAutograd traced it, moved to the target; then propagated again where
    # the ops allow (some need a CUDA device guard a CPU-only build has not: their traced values stay)
    inductor_choices.values_on(target_gm.graph, cuda, mode, stay=stay)
    _subgraphs_on(target_gm, cuda, mode)
    for node, fake in zip(placeholders, fakes):
        node.meta["val"] = fake
    if view is not None:
        attention.as_on_gpu(target_gm, fakes, view.target.backend, view.device.major)
    with torch.no_grad(), contextlib.suppress(RuntimeError):
        attention.propagate(target_gm, mode, fakes)
    output = target_gm.graph.output_node()
    on_cpu.update(n.name for n in output.all_input_nodes
                  if isinstance(v := n.meta.get("val"), torch.Tensor) and v.device.type == "cpu")
    return target_gm, fakes
