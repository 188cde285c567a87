"""torch.compile in a job without a GPU (inspectors/compile/torch_compile_target.py): Dynamo and AOTAutograd
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
    # AOTAutograd donates the saved activation to the backward: the GELU backward overwrites it in
    # place (in_out_ptr0), as on the GPU (benchmarks/results/gpu_drivers.txt)
    [gelu_bw] = [k for k in by_graph["backward"] if "gelu_backward" in k.name]
    assert f"def {gelu_bw.name}(in_out_ptr0, in_ptr0, out_ptr0," in gelu_bw.stages["source"]
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
    # the target's kernel: with grad on, the logsumexp is written for a backward (traced on CPU
    # tensors as they are, FlexAttention would leave it out, CPU being inference only)
    assert "OUTPUT_LOGSUMEXP : tl.constexpr = True" in k.stages["source"]
    # its nodes' stack traces are torch's own lines: the model line is the one that ran the compiled call
    call = next(n for n, line in enumerate(snippet("compiled/flex.py").splitlines(), 1) if "attention(q, k, v" in line)
    assert k.origin["lines"] == {"flex.py": [call]} and k.origin["lines_from"] == "call", k.origin


def test_flex_with_a_document_mask_a_score_mod_and_gqa_forward_and_backward(engine, snippet):
    """A mask_mod reading a captured tensor (document ids), a tanh score_mod and 8 query heads
    over 2: the higher-order op's subgraphs are put on the target with the graph (they failed
    with "A subgraph argument other than striding has been modified")."""
    r = _compile(engine, snippet, "flex_doc_mask.py")
    forward = [k for k in r.kernels if k.origin["graph"] == "forward"]
    backward = [k for k in r.kernels if k.origin["graph"] == "backward"]
    assert any(k.name.startswith("triton_tem_fused_flex_attention") for k in forward), [k.name for k in r.kernels]
    assert any(k.name.startswith("triton_tem_fused_flex_attention_backward") for k in backward)
    tem = next(k for k in forward if k.name.startswith("triton_tem"))
    assert "GQA_SHARED_HEADS : tl.constexpr = 4" in tem.stages["source"] and "tanh" in tem.stages["source"]
    assert "mma" in tem.stages["ptx"]


@pytest.mark.parametrize("name", ["scan_recurrence.py", "scan_static.py"])
def test_an_associative_scan(engine, snippet, name):
    """torch.compile's associative_scan (a combine subgraph), with mark_dynamic on the batch and at
    fixed sizes: Triton's scan, its combine function Inductor's helper."""
    import torch
    if name == "scan_recurrence.py" and tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 12):
        pytest.skip("torch 2.11's Inductor refuses a scan whose combine graph has lifted symbols "
                    "(an H200 with torch 2.11 raises the same: benchmarks/results/gpu_drivers.txt)")
    r = _compile(engine, snippet, name)
    [k] = [k for k in r.kernels if "tt.scan" in k.stages["ttir"]] or [None]
    assert k is not None, [k.name for k in r.kernels]
    assert k.origin["graph"] == "inference" and "def _triton_helper_fn" in k.stages["source"]


def test_an_exported_model_compiles_for_the_target(engine, snippet):
    """torch.export of a model on the target (it failed: "elem.device.type must be 'meta', got cuda",
    then a worker abort for the CUDA device guard a CPU-only torch lacks), its module compiled."""
    r = _compile(engine, snippet, "export_compiled.py")
    names = [k.name for k in r.kernels]
    assert any("gelu" in n for n in names) and any("softmax" in n for n in names), names


def test_an_aotinductor_package_compiles_its_triton_kernels(engine, snippet):
    """aoti_compile_and_package (it failed: "Could not run 'aten::empty_strided' with arguments
    from the 'CUDA' backend"): the exported program's kernels for inference, as Inductor lowers
    it (a gated MLP: its RMSNorm, its SiLU times the up projection); the package loaded and
    called by example() without an error."""
    r = _compile(engine, snippet, "aoti_package.py")
    names = [k.name for k in r.kernels]
    assert {k.origin["graph"] for k in r.kernels} == {"inference"}, names
    # nn.RMSNorm is aten._fused_rms_norm on a CUDA build, kept whole by autograd (fused_ops.py)
    assert any("_fused_rms_norm" in n for n in names) and any("silu" in n for n in names), names
    assert all("ptx" in k.stages for k in r.kernels)


def test_torch_rms_norm_is_traced_as_cuda_fuses_it(engine, snippet):
    """nn.RMSNorm: a CUDA build runs aten._fused_rms_norm whole and its backward as
    _fused_rms_norm_backward; the CPU's decomposes it first (pow, mean, rsqrt), so the kernels were
    fused and named otherwise. The names below are the H200's (torch 2.11,
    benchmarks/results/gpu_drivers.txt)."""
    r = _compile(engine, snippet, "rms_norm_train.py")
    by_graph = {}
    for k in r.kernels:
        by_graph.setdefault(k.origin["graph"], []).append(k.name)
    assert by_graph == {"inference": ["triton_per_fused__fused_rms_norm_0"],
                        "forward": ["triton_per_fused__fused_rms_norm_0"],
                        "backward": ["triton_per_fused__fused_rms_norm__fused_rms_norm_backward_0",
                                     "triton_per_fused__fused_rms_norm__fused_rms_norm_backward_add_1"]}, by_graph
    assert all(k.origin["aten_ops"] == ["aten._fused_rms_norm"] for k in r.kernels if k.origin["graph"] != "backward")


def test_a_python_float_dynamo_lifts_is_a_scalar_argument(engine, snippet):
    """Dynamo's unspecialized float is a CPU tensor on a GPU too: Inductor passes it to the kernel
    by value, and the forward saves its float32 conversion for the backward as a CPU scalar. Put on
    the target, it was a pointer and a kernel of its own converted it (triton_poi_fused_0)."""
    r = _compile(engine, snippet, "float_scalar.py")
    assert not any(a.type == "*fp64" for k in r.kernels for a in k.args), [k.name for k in r.kernels]
    by_value = {k.origin["graph"] for k in r.kernels for a in k.args if a.type == "fp32"}
    assert by_value == {"forward", "backward"}, [(k.name, [a.type for a in k.args]) for k in r.kernels]


def test_attention_with_an_expanded_mask_takes_the_gpus_math_path(engine, snippet):
    """A mask of last stride 0 (Hugging Face's bidirectional masks): the GPU's fused attention
    kernels refuse it, so its graph has SDPA's math path, the softmax a Triton kernel in the forward
    and the backward and the two products bmm calls. The CPU's flash kernel takes such a mask: traced
    as it, the step had no softmax kernel and one attention call outside Triton."""
    r = _compile(engine, snippet, "expanded_mask_attention.py")
    softmax = {k.origin["graph"] for k in r.kernels if "_safe_softmax" in k.name or "_softmax_backward" in k.name}
    assert softmax == {"forward", "backward"}, [k.name for k in r.kernels]
    assert not [c for c in r.outside if "attention" in c["op"]], r.outside
    assert sum(c["op"] == "aten.bmm" for c in r.outside) == 6, r.outside


def test_float8_training_built_on_meta(engine, snippet):
    """torchao's float8 training as torchtitan sets it up (meta device, to_empty on the GPU,
    convert_to_float8_training, compiled): the casts and scales fused into the forward and the
    backward, the matmuls left to _scaled_mm."""
    pytest.importorskip("torchao.float8", exc_type=ImportError)
    r = _compile(engine, snippet, "float8_train.py")
    graphs = {k.origin["graph"] for k in r.kernels}
    assert graphs == {"forward", "backward"}, graphs
    assert any("aten._scaled_mm" in k.origin.get("aten_ops", ()) or "_scaled_mm" in k.name for k in r.kernels)
    assert any("fp8e4nv" in k.stages["ttir"] or "f8E4M3FN" in k.stages["ttir"] for k in r.kernels)


def test_flex_attention_under_no_grad_writes_no_logsumexp(engine, snippet):
    src = snippet("compiled/flex.py").replace("    out = attention(q, k, v, block_mask=mask)",
                                               "    with torch.no_grad():\n        out = attention(q, k, v, block_mask=mask)")
    r = engine.compile(CompileRequest(source=src, filename="flex.py", sass=False), timeout=600)
    assert r.ok, r.error
    [k] = r.kernels
    assert "OUTPUT_LOGSUMEXP : tl.constexpr = False" in k.stages["source"]


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


def test_a_gpt_training_step(engine, snippet):
    """Embedding, LayerNorm, causal attention, dropout, cross-entropy, AdamW: the forward and
    backward graphs' kernels, dropout's RNG included (its seed ops need a CUDA device guard: on a
    CPU-only torch, inspectors/target/cuda_guard.py)."""
    r = _compile(engine, snippet, "gpt_train.py")
    graphs = {k.origin["graph"] for k in r.kernels}
    assert graphs == {"forward", "backward"}, graphs
    names = {k.name for k in r.kernels}
    assert any("native_dropout" in n for n in names) and any("embedding_dense_backward" in n for n in names), names
    assert any("_log_softmax" in n or "nll_loss" in n for n in names), names
    # attention as the GPU's graph has it (fp32: the memory-efficient kernel), not the CPU's
    assert not any("for_cpu" in n for n in names), names
    # the lines: LayerNorm + QKV (19), the residual after dropout (22), the MLP (23), the embedding
    # (34) and the loss (38)
    lines = {line for k in r.kernels for line in k.origin["lines"].get("gpt_train.py", ())}
    assert {19, 22, 23, 34, 38} <= lines, sorted(lines)


def test_max_autotune_shows_every_template_candidate(engine, snippet):
    """mode="max-autotune": every matmul template candidate is a launch, labelled as one the GPU
    would time; the first stands for the choice, fused with the ReLU."""
    r = _compile(engine, snippet, "max_autotune.py")
    candidates = [k for k in r.kernels if k.origin.get("autotune") == "mm"]
    assert len(candidates) > 4 and all(k.name == "triton_mm" for k in candidates)
    assert all("the GPU times them to choose" in k.label and "BLOCK_M=" in k.label for k in candidates)
    assert [k.origin["candidate"] for k in candidates] == list(range(1, len(candidates) + 1))
    fused = [k for k in r.kernels if k.name.startswith("triton_tem_fused_mm_relu")]
    assert fused and fused[0].origin["lines"] == {"max_autotune.py": [8]}
    assert "mma" in fused[0].stages["ptx"]


def test_autocast_casts_as_the_gpus_autocast(engine, snippet):
    """Under torch.autocast("cuda", bf16) the Linear layers run in bf16 on the GPU: the compiled
    GELU and the Liger RMSNorm after it get bf16 tensors (their signatures, so their PTX), and the
    weights' fp32 -> bf16 casts are kernels of their own; the backward casts back to fp32."""
    r = _compile(engine, snippet, "autocast_train.py")
    sig = {k.name: dict((a.name, a.type) for a in k.args) for k in r.kernels}
    gelu = [n for n in sig if "gelu" in n and "backward" not in n]
    assert gelu and all(sig[n]["in_ptr0"] == "*bf16" and sig[n]["out_ptr0"] == "*bf16" for n in gelu), sig
    casts = [n for n in sig if "_to_copy" in n and "backward" not in n and sig[n]["in_ptr0"] == "*fp32"]
    assert casts and all(sig[n]["out_ptr0"] == "*bf16" for n in casts), sig
    rms = [k for k in r.kernels if k.name == "_rms_norm_forward_kernel"]
    assert rms and dict((a.name, a.type) for a in rms[0].args)["X_ptr"] == "*bf16"
    assert any(k.name == "_rms_norm_backward_kernel" for k in r.kernels)


def test_attention_is_the_gpus_attention_kernel(engine, snippet):
    """bf16 causal attention: the graph Inductor compiles calls the GPU's attention kernel forward
    and backward (sm_90's: cuDNN's; their layouts decide the kernels around them), not the CPU's variant."""
    r = _compile(engine, snippet, "attention_bf16.py")
    assert {k.origin["graph"] for k in r.kernels} == {"forward", "backward"}
    assert not any("for_cpu" in k.name or "for_cpu" in " ".join(k.origin.get("aten_ops", ())) for k in r.kernels)
    # the backward takes the forward's output in the GPU kernel's layout: no copy of it before the
    # attention's backward (the CPU's variant needed a transpose kernel the GPU has not:
    # benchmarks/results/gpu_drivers.txt)
    assert not any("attention" in op for k in r.kernels for op in k.origin.get("aten_ops", ()))
    backward = {k.name for k in r.kernels if k.origin["graph"] == "backward"}
    assert len(backward) == 2 and any("select_backward" in n for n in backward), backward


def test_an_attention_mask_is_the_memory_efficient_kernels_bias(engine, snippet):
    """A boolean padding mask: on the GPU the memory-efficient kernel takes it, made additive and
    expanded, as its bias, and the kernels around it are the GPU's (6 of 6 the same PTX on an H200:
    benchmarks/results/gpu_drivers.txt): no attention op left in any, the mask the one forward kernel."""
    r = _compile(engine, snippet, "masked_attention.py")
    assert not any("attention" in op for k in r.kernels for op in k.origin.get("aten_ops", ()))
    forward = {k.name for k in r.kernels if k.origin["graph"] == "forward"}
    assert len(forward) == 1 and "where" in next(iter(forward)), forward


def test_inductor_chooses_by_the_targets_device(engine, snippet):
    """Decompositions, joint-graph passes and the user's code that branch on the device decide as
    for the GPU, though Dynamo and AOTAutograd trace CPU tensors (inspectors/target/inductor_choices.py;
    10 of 10 the same PTX as an H200's: benchmarks/results/gpu_drivers.txt)."""
    r = _compile(engine, snippet, "device_choices.py")
    names = [k.name for k in r.kernels]
    # torch 2.13 and later: an mm with K = 1 is a multiply on a GPU, fused with the relu (torch 2.11:
    # an extern mm on both)
    import torch
    if tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 13):
        assert any(n.startswith("triton_poi_fused_mm_relu") for n in names), names
    # the convolution's bias gradient: a reduction of its own
    bias = [k for k in r.kernels if k.origin["graph"] == "backward"]
    assert bias and all("reduction" in k.origin["category"] for k in bias), [(k.name, k.origin) for k in bias]
    assert "aten.convolution_backward" in bias[0].origin["aten_ops"]
    # the attention written out: its softmax a kernel, no SDPA
    line = next(n for n, text in enumerate(snippet("compiled/device_choices.py").splitlines(), 1)
                if "torch.softmax(" in text)
    soft = [k for k in r.kernels if "_softmax" in k.name]
    assert soft and all(k.origin["lines"] == {"device_choices.py": [line]} for k in soft), [k.origin for k in soft]
    assert not any("attention" in op for k in r.kernels for op in k.origin.get("aten_ops", ()))
    # code that branches on x.is_cuda takes the CUDA branch (Dynamo reads the target's device)
    [branch] = {k.name for k in r.kernels if "sigmoid" in k.name}
    assert "mul" in branch and "sub" not in branch and "arange" in branch, branch


def test_attention_with_dropout_is_the_gpus_kernel(engine, snippet):
    """A training attention with dropout: the GPU's memory-efficient kernel takes the dropout, so
    no softmax or dropout kernel of Inductor's (the CPU's math path) is left in either graph."""
    r = _compile(engine, snippet, "attention_dropout.py")
    ops = {op for k in r.kernels for op in k.origin.get("aten_ops", ())}
    assert not ops & {"aten._safe_softmax", "aten.native_dropout", "aten._softmax"}, ops
    assert {k.origin["graph"] for k in r.kernels} == {"forward", "backward"}


def test_multihead_attention_copies_the_gpus_attention_output(engine, snippet):
    """nn.MultiheadAttention reshapes the attention's output after `.contiguous()`: the CPU's was
    contiguous already (nothing in the graph), the GPU kernel's is not, so the target graph gets the
    clone the GPU's has (it failed with "Cannot view a tensor" before)."""
    r = _compile(engine, snippet, "mha_train.py")
    line = next(n for n, text in enumerate(snippet("compiled/mha_train.py").splitlines(), 1) if "self.mha(" in text)
    forward = [k for k in r.kernels if k.origin["graph"] == "forward" and "clone" in k.name]
    assert forward and any(line in k.origin["lines"].get("mha_train.py", []) for k in forward), \
        [(k.name, k.origin) for k in forward]
    # the backward takes that copy as the forward saved it, as the GPU's does (its joint graph had
    # the clone): no copy kernel of its own (27 kernels named as an H100's: benchmarks/results/drivers_names.txt)
    backward = [k for k in r.kernels if k.origin["graph"] == "backward"]
    assert backward and not any(set(k.origin["aten_ops"]) <= {"aten.permute", "aten.clone"} for k in backward), \
        [(k.name, k.origin["aten_ops"]) for k in backward]


def test_grouped_query_attention_is_the_gpus_attention_kernel(engine, snippet):
    """8 query heads on 2 key/value heads in bf16: the GPU's fused kernel (sm_90's: cuDNN's) takes
    the shared heads, forward and backward (21 of 21 kernels the same PTX as an H100's:
    benchmarks/results/gpu_drivers.txt, where the view chose flash; the same 21 names with cuDNN);
    the CPU's backward had a copy kernel of its own."""
    r = _compile(engine, snippet, "gqa_attention.py")
    assert {k.origin["graph"] for k in r.kernels} == {"forward", "backward"}
    assert not any("attention" in k.name or "attention" in " ".join(k.origin.get("aten_ops", ())) for k in r.kernels), \
        [k.name for k in r.kernels]


def test_a_users_kernel_in_a_compiled_function_is_one_launch(engine, snippet):
    """A Triton kernel the user launches inside `torch.compile(fullgraph=True)`: Inductor's compile
    of it, once, named by its launch line (the CPU graph's own run of it is not a second launch)."""
    r = _compile(engine, snippet, "user_kernel.py")
    names = [k.name for k in r.kernels]
    assert names.count("add_kernel") == 1 and sum(n.startswith("triton_poi_fused_mul_relu") for n in names) == 2, names
    [user] = [k for k in r.kernels if k.name == "add_kernel"]
    line = next(n for n, text in enumerate(snippet("compiled/user_kernel.py").splitlines(), 1) if "add_kernel[" in text)
    assert user.origin["graph"] == "inference" and user.origin["lines"] == {"user_kernel.py": [line]}, user.origin
    # its pointers aligned, as the JIT's: BLOCK 256 over 128 threads, two fp32 a thread in one load
    assert "ld.global.v2.b32" in user.stages["ptx"] and user.args[0].divisible_by_16


def test_a_liger_op_in_compiled_code_is_one_graph(engine, snippet):
    """Liger's RMSNorm under torch.compile: its `torch.cuda.device` context and the device
    properties its backward reads are traced as on a GPU (a CPU build refused the first, and the
    second was a graph break), so its kernels are the graph's, forward and backward."""
    pytest.importorskip("liger_kernel")
    r = _compile(engine, snippet, "liger_compiled.py")
    graphs = {k.name: k.origin.get("graph") for k in r.kernels}
    assert graphs.get("_rms_norm_forward_kernel") == "forward", graphs
    assert graphs.get("_rms_norm_backward_kernel") == "backward", graphs
    assert {g for g in graphs.values()} == {"forward", "backward"}, graphs


def test_a_moe_routers_step_with_histc_and_a_deep_copy(engine, snippet):
    """A MoE layer routed as Qwen3-MoE routes (tokens per expert counted by histc on int32 ids,
    which CUDA's kernel takes and the CPU's refuses), compiled after a deep copy of the model,
    forward and backward: it compiles, and the router's kernels name its lines."""
    r = _compile(engine, snippet, "moe_routing.py")
    graphs = {k.origin["graph"] for k in r.kernels}
    assert graphs == {"forward", "backward"}, graphs
    softmax = [k for k in r.kernels if "softmax" in k.name and k.origin["graph"] == "forward"]
    assert softmax and all(k.origin["lines"] == {"moe_routing.py": [20]} for k in softmax), [k.origin for k in softmax]
    assert any("eq" in k.name and 22 in k.origin["lines"]["moe_routing.py"] for k in r.kernels)


def test_control_flow_ops_compile_for_the_target(engine, snippet):
    """torch.cond, while_loop and an invoke_subgraph block (nested_compile_region) in one step: every
    subgraph lowered for the target (an invoke_subgraph's was lowered for the CPU: Dynamo's
    `eager_input_vals` on its node), its kernel counted per call of the block, its matmuls
    cuBLAS calls; both of the cond's branches compiled."""
    r = _compile(engine, snippet, "control_flow.py")
    by_graph = {}
    for k in r.kernels:
        by_graph.setdefault(k.origin["graph"], {})[k.name] = k
    assert all(".target sm_90" in k.stages["ptx"] for k in r.kernels)
    block = [k for name, k in by_graph["forward"].items() if "gelu" in k.origin.get("aten_ops", "") or "erf" in name]
    assert block and all(k.workload.get("calls") == 2 for k in block), [(k.name, k.workload) for k in block]
    assert any("relu" in n for n in by_graph["forward"]) and any("sigmoid" in n for n in by_graph["forward"])
    # what the backward may overwrite, as the H200 compiled it (benchmarks/results/gpu_drivers.txt):
    # the block saves w.t(), a view of an input, so AOTAutograd donates none of the block's saved
    # tensors, by index in its subgraph too: the GELU backward writes a new buffer, and the cond's
    # ReLU backward overwrites the tangent, not the saved activation (both were in place here)
    gelu_bw = by_graph["backward"]["triton_poi_fused_add_erf_exp_mul_2"]
    assert "def triton_poi_fused_add_erf_exp_mul_2(in_ptr0, in_ptr1, out_ptr0," in gelu_bw.stages["source"]
    relu_bw = by_graph["backward"]["triton_poi_fused_le_mul_relu_scalar_tensor_where_0"].stages["source"]
    assert "tmp0 = tl.load(in_ptr0 + (x0)" in relu_bw and "tmp5 = tl.load(in_out_ptr0 + (x0)" in relu_bw
    assert any("ones_like" in n for n in by_graph["inference"])        # the while_loop's Newton steps
    mms = [c for c in r.outside if c["graph"] == "forward"]
    assert [c["op"] for c in mms] == ["aten.mm", "aten.mm"] and all(c["kind"] == "cuBLAS" for c in mms), mms


def test_ops_cudas_kernels_take_in_other_dtypes_compile(engine, snippet):
    """nansum of complex, abs, softsign and trace of bool, rrelu of float16 under torch.compile: the
    graph's kernels for the target, and the CPU graph after it computes as CUDA's (example() checks
    the dtypes)."""
    r = _compile(engine, snippet, "cuda_dtype_ops.py")
    names = {k.name for k in r.kernels}
    assert any("rrelu" in n for n in names) and any("trace" in n for n in names), names


def test_an_int8_weight_only_model_compiles_with_cudas_matmul(engine, snippet):
    """torchao's quantize_ makes each weight a tensor subclass in the view (it was refused: "set the
    storage of a tensor on device cpu to a storage on cuda:0"), and the weight says cuda:0;
    Inductor lowers each int8 matmul to `_weight_int8pack_mm`, listed outside Triton with its
    sizes and FLOPs although no node of the graph is that op."""
    r = _compile(engine, snippet, "int8_weight_only.py")
    assert {k.origin["graph"] for k in r.kernels} == {"inference"}
    assert any("silu" in k.name for k in r.kernels), [k.name for k in r.kernels]
    calls = [c for c in r.outside if c["op"] == "aten._weight_int8pack_mm"]
    assert [c["shapes"] for c in calls] == [[[16, 512], [1024, 512], [1024]], [[16, 1024], [512, 1024], [512]]], calls
    assert all(c["flops"] == 2 * 16 * 512 * 1024 and c["kind"] == "ATen weight-only matmul" for c in calls), calls
    assert calls[0]["bytes"] == 16 * 512 * 2 + 1024 * 512 + 1024 * 2 + 16 * 1024 * 2, calls[0]


def test_a_dynamic_graph_compiles_once_for_two_lengths(engine, snippet):
    """`dynamic=True`, trained on lengths 17 and 33: one forward and one backward graph, as on the
    GPU. The step's table read the graph's symbolic sizes with int(), which guarded them: the
    second length compiled everything again (twice the GPU's kernels)."""
    r = _compile(engine, snippet, "dynamic_shapes.py")
    assert r.kernels and all(k.origin["graph"] in ("forward", "backward") for k in r.kernels)
    labels = [(k.origin["graph"], k.label) for k in r.kernels]
    assert len(labels) == len(set(labels)), sorted(labels)       # no kernel compiled twice
    # the sizes are symbols the kernels take (ks0, ...), the table shows their first values
    assert any(a.name == "ks0" for k in r.kernels for a in k.args)
    attention = [c for c in r.outside if "attention" in c["op"]]
    assert attention and all(17 in c["shapes"][0] for c in attention), attention


def test_more_torch_compile_features_compile_for_the_target(engine, snippet):
    """A float16 GradScaler step with the fused AdamW, compiled autograd, a triton_op with its own
    backward and vmap(grad): each the H200's kernels at b32b7b5 (benchmarks/results/gpu_drivers.txt)."""
    scaler = _compile(engine, snippet, "grad_scaler_fp16.py")
    assert {k.origin["graph"] for k in scaler.kernels} == {"forward", "backward"}
    # autocast: the Linear layers' matmuls in float16 on the GPU (cuBLAS), GELU's kernel reads them
    assert {c["dtype"] for c in scaler.outside if c["kind"] == "cuBLAS"} == {"fp16"}, scaler.outside
    autograd = _compile(engine, snippet, "compiled_autograd.py")
    assert [k.origin["graph"] for k in autograd.kernels].count("backward") == 6
    op = _compile(engine, snippet, "triton_op_autograd.py")
    scales = [k for k in op.kernels if k.name == "scale_kernel"]
    # the user's kernel once in the forward, once in the backward (its own register_autograd)
    assert [k.origin["graph"] for k in scales] == ["forward", "backward"], [k.origin for k in scales]
    vmapped = _compile(engine, snippet, "vmap_grad.py")
    assert any("tanh_backward" in k.name for k in vmapped.kernels), [k.name for k in vmapped.kernels]


def test_float8_inference_lists_its_scaled_matmuls(engine, snippet):
    """The activation's quantization (amax, scale, cast to float8) is a Triton kernel whose origins
    name the `_scaled_mm` it feeds: the matmuls were left out of the calls outside Triton. Both
    are listed, float8, with their FLOPs."""
    r = _compile(engine, snippet, "fp8_inference.py")
    assert any("amax" in k.name for k in r.kernels), [k.name for k in r.kernels]
    calls = [c for c in r.outside if c["op"] == "aten._scaled_mm"]
    assert len(calls) == 2 and all(c["dtype"] == "fp8" for c in calls), r.outside
    assert [c["flops"] for c in calls] == [2 * 16 * 512 * 1024] * 2, calls


RECURRENT = '''import torch


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(32, 64, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.log_softmax(self.head(self.rnn(x)[0]), -1)


def example():
    torch.compile(Tagger().cuda())(torch.randn(4, 16, 32, device="cuda")).sum().backward()
'''


def test_a_model_dynamo_runs_eagerly_says_why(engine):
    """nn.LSTM: Dynamo does not trace it, and runs the whole forward eagerly (cuDNN, cuBLAS and
    ATen's kernels on a GPU, none of them Triton's). On torch's CUDA wheel without a GPU the LSTM's
    weight flattening looked for a driver ("Found no NVIDIA driver"); the message said only which
    functions example() called."""
    r = engine.compile(CompileRequest(source=RECURRENT, filename="tagger.py", target="cuda:90", sass=False),
                       timeout=300)
    assert r.error is not None and r.error.kind == "usage", r.error
    assert "torch.compile compiled no graph: Dynamo ran the code eagerly, as it does on a GPU " \
        "(Attempted to wrap RNN, GRU, or LSTM)" in r.error.message, r.error.message
