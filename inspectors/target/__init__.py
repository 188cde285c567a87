"""Layer target: the GPU the user compiles for, as their code, torch, Dynamo, Inductor and Triton
see it on a machine without it. Imports base only (tests/unit/test_layering.py).

The product's promise is "compile for a GPU you do not have": a library asks the GPU's SM count
before it picks a kernel, Inductor and AOTAutograd pick their lowering by the tensors' device,
autocast casts only CUDA tensors. Each module answers one of those questions as the target would.
The worker enters the view around a job (inspectors.compile.worker_main); torch.compile for the
target (inspectors.compile.torch_compile_target) installs the Inductor, attention and dtype rules. On a
machine with a GPU nothing here is entered: the real GPU answers.

    gpus              the targets' figures: what each GPU says about itself (name, capability,
                      SMs, memory, shared memory, registers, clocks), from vendor data.
    tensor_view       TargetView: torch.cuda's device queries answered as the target's, tensors
                      that say they are on `cuda:0` while their memory is the CPU's.
    jagged            a jagged NestedTensor in the view: made on the target, one ragged-size
                      symbol for its offsets, whatever alias of them a compiled backward hands back.
    cuda_probes       the small CUDA probes libraries make: streams, events, device contexts,
                      generators, the device-properties object, torch.version.cuda.
    library_ops       a library's own ops in the view: custom ops' kernels, ATen CUDA registrations.
    cuda_dtypes       ops whose CUDA kernel takes dtypes the CPU's refuses (histc on integers),
                      answered as CUDA's: eager, while traced, and in the CPU graph that runs.
    fused_ops         ops a CUDA build keeps whole where the CPU's decomposes them (F.rms_norm's
                      _fused_rms_norm), traced as CUDA's: forward, backward and their kernels' names.
    autocast          torch.autocast("cuda") casting the view's tensors by CUDA autocast's policy.
    sdpa_backend      which attention kernel the GPU picks (cuDNN's, flash, memory-efficient, math)
                      for an attention's inputs, by the CUDA build's rules.
    attention         attention as the GPU runs it: SDPA's cuDNN / flash / memory-efficient op in a
                      compiled graph, the backend questions libraries ask (can_use_flash_attention).
    attention_cpu     the CPU's stand-ins for those ops: in the graph that runs on the CPU, and as the
                      CPU kernels of the variable-length ones while the view lasts (eager jagged attention).
    flex              FlexAttention's kernel options and output strides, traced as the target's.
    inductor_device   TargetCudaInterface, Inductor's `cuda` device interface asking the view;
                      the device index swaps of Dynamo's and Inductor's device guards, torch.device(0).
    graph_on_target   a graph AOTAutograd traced on CPU tensors made the target's for Inductor: devices,
                      input fakes (Dynamo's float scalars left on the CPU, as a GPU's are), attention.
    inductor_choices  Inductor's decompositions and joint-graph passes decided as on the target.
    cuda_guard        a CUDA device guard built for a CPU-only torch (Inductor's fake tensors).

Triton's side of the target (its `driver.active` naming the target, the device properties a
kernel's launcher reads) touches Triton's internals, so it stays with the shim:
inspectors.compile.triton_shim_driver, fed by tensor_view.driver_properties.
"""
