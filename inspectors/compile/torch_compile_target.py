"""torch.compile in a job: every Triton kernel Inductor writes for the target, compiled like
the JIT's launches, with no GPU needed.

While `CompiledOnTarget(view)` is entered, `torch.compile` (the decorator, the call,
`nn.Module.compile`) gives a function that, when called:

1. runs Dynamo and AOTAutograd as on any machine: the code is traced on the real tensors
   (CPU memory behind the target view), forward and, at `loss.backward()`, backward graphs;
2. gives each graph to Inductor for the target (inspectors/target/graph_on_target.py): the
   graph's devices become `cuda:0`, its inputs PyTorch's own fake tensors on that device
   (`FakeTensorMode`: shapes, strides and dtypes, no memory), and Inductor's real lowering,
   scheduler and Triton codegen run with the target's properties (SM count, shared memory: the
   view's answers);
3. records each kernel Inductor defines, every candidate config of it, as a Launch
   (the signature, constants, divisibility facts and options Inductor passes to
   `triton.compile`), with its origin: the kernel's name, its graph, the FX nodes and ATen ops
   it fuses and the user's lines they came from (node stack traces);
4. runs the graph eagerly on the CPU, so the code goes on with real values (a training step's
   loss, its gradients) and its later launches are recorded too.

Inductor would time a kernel's candidate configs on the GPU; here each is a launch, "config i of n".

What differs from the target (said in the docs): code that branches on `x.is_cuda` inside the
compiled function is traced on CPU tensors, and ATen ops that pick a kernel by device while
traced (scaled_dot_product_attention's CPU flash variant) are the CPU's in the graph. On a
machine with a GPU the same path is taken (the tensors are the GPU's; nothing runs there).

What this patches, each for one call a CPU-only build of torch cannot answer:
- Inductor's `cuda` device interface binds torch.cuda's functions at import: one that asks at
  call time (the view's answers);
- `torch.cuda._exchange_device` (Inductor's device guard while it compiles, Dynamo's
  `torch.cuda.device(...)` context while it traces: Liger's ops open one);
- `FakeTensorMode.avoid_device_init` and `fake_tensor.init_gpu_context` (they read
  `torch.cuda.is_available()`, True in the view, and would start CUDA);
- FlexAttention's fake implementation copies between fake `cuda` tensors, which needs a CUDA
  device guard this build does not have: the copy's result made without the copy;
- FlexAttention's kernel options, set from its inputs' device while traced (CPU inputs: no
  logsumexp output, so another kernel): asked as for the target's tensors;
- `triton_helpers.set_driver_to_gpu` would replace the compile-only driver with libcuda's;
- `CachingAutotuner.precompile` and `.run`: record, never compile or launch there;
- `torch.accelerator.current_stream`, where it raises (a CUDA build of torch with no GPU).
A CPU-only build of torch also gets a CUDA device guard (inspectors/target/cuda_guard.py):
Inductor's fake-tensor passes open one for many ops.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import SimpleNamespace

from inspectors.compile import aoti_target, journal, launch_call, outside_calls
from inspectors.compile.eager_calls import EagerCalls
from inspectors.compile.kernel_origins import call_site, graph_kind, lines_of, origins
from inspectors.read.inductor import kernel_calls, parse_wrapper
from inspectors.target import attention, attention_cpu, cuda_dtypes, flex, fused_ops, graph_on_target, inductor_choices, inductor_device

# Dynamo's reasons to run code eagerly that are its own rules, not the device's: they hold on a GPU too
_EAGER_ON_A_GPU_TOO = ("Attempted to wrap RNN",)


class CompiledOnTarget:
    def __init__(self, view, job_dir: Path, record):
        """`view`: the entered TargetView, or None on a machine with a GPU; `record(launch)`:
        where each kernel config goes (the job's LaunchRecorder)."""
        self.view, self.job_dir, self.record = view, str(job_dir), record
        self._undo: list = []
        self._graphs = 0
        self._by_seq: dict = {}
        self._on_cpu: dict = {}             # a graph's values left on the CPU: id(fw_metadata) -> (it, names)
        self.guard_missing = ""
        self._recorded_now: list = []       # the launches of the graph Inductor is compiling
        self._workloads: dict = {}          # its kernels' bytes, FLOPs and sizes, by name (launch_call.of_inductor)
        self.outside: list[dict] = []       # what the graphs run outside Triton (outside_calls.of_graph)
        self._breaks_before: dict | None = None     # Dynamo's unsupported-code counts at the first compile

    def not_compiled(self) -> str:
        """Why torch.compile compiled no graph, where it was called and did not ("" otherwise):
        Dynamo ran the code eagerly, for the reasons it counted (nn.LSTM: "Attempted to wrap RNN,
        GRU, or LSTM", one of _EAGER_ON_A_GPU_TOO); "may compile" on the GPU for any other reason."""
        if self._breaks_before is None or self._graphs:
            return ""
        from torch._dynamo.utils import counters
        reasons = [why.split("\n")[0].strip() for why, n in counters["unimplemented"].items()
                   if n > self._breaks_before.get(why, 0)]
        why = f" ({'; '.join(reasons)})" if reasons else ""
        if reasons and all(r.startswith(_EAGER_ON_A_GPU_TOO) for r in reasons):
            return f"torch.compile compiled no graph: Dynamo ran the code eagerly, as it does on a GPU{why}"
        # e.g. a jagged nested tensor's attention: the CPU's math path, where the GPU takes flash's
        return (f"torch.compile compiled no graph: Dynamo ran the code eagerly here{why}; on the GPU it may "
                "compile: Dynamo traced the target's tensors as the CPU's, and a reason may be the CPU's own path")

    def _set(self, obj, name, value):
        had = name in vars(obj) if isinstance(obj, type) else hasattr(obj, name)
        old = vars(obj)[name] if isinstance(obj, type) and had else getattr(obj, name, None)
        setattr(obj, name, value)
        self._undo.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def __enter__(self):
        import torch
        self._saved_env = {k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR",)}
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(self.job_dir, "inductor")
        self._real = torch.compile
        self._set(torch, "compile", self.compile)
        aoti_target.install(self._set, self.compile, self.job_dir)    # AOTInductor's Triton half, a GPU's too
        real_export = torch.export.export

        def export(*args, **kwargs):            # its fake parameters on `cuda` need a device guard (CPU torch)
            if self.view is not None:
                from inspectors.target import cuda_guard
                self.guard_missing = cuda_guard.ensure(for_autograd=True)
            with self.eager.paused():
                return real_export(*args, **kwargs)
        self._set(torch.export, "export", export)
        if self.view is not None:
            # Dynamo asks the accelerator's current stream when it starts tracing (torch 2.11,
            # without asking whether there is one): a CUDA build of torch with no GPU raises
            try:
                torch.accelerator.current_stream()
            except RuntimeError:
                self._set(torch.accelerator, "current_stream", lambda device=None: torch.Stream(device="cpu"))
        self.eager = EagerCalls(self.job_dir, self.view).__enter__()
        return self

    def calls_outside(self) -> list[dict]:
        """What the step runs outside Triton: its compiled graphs' calls, then its eager ones."""
        return self.outside + self.eager.calls()

    def __exit__(self, *exc):
        self.eager.__exit__(*exc)
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
        for k, v in self._saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if self._graphs:
            import torch
            torch._dynamo.reset()          # the next job's code is another file
        return False

    def _node_lines(self, node) -> dict:
        """The user's lines a graph node comes from, as origins() finds them ({file: [line]})."""
        found = lines_of(node.meta.get("stack_trace") or self._by_seq.get(node.meta.get("seq_nr"), "") or "", self.job_dir)
        return {f: sorted({ln for g, ln in found if g == f}) for f, _ in found}

    def _patch_tracing(self):
        """Once, at the first torch.compile: what Dynamo reads while it traces."""
        if getattr(self, "_patched_tracing", False):
            return
        self._patched_tracing = True
        inductor_device.install_device_swaps(self._set)
        flex.options_as_target(self._set)
        if self.view is not None:                 # a tensor's device, read by the traced code: the target's
            inductor_choices.install_tracing(self._set)
            cuda_dtypes.install_tracing(self._undo)     # fake CPU tensors take CUDA's dtypes (histc)
            fused_ops.install_tracing(self._set, self._undo)    # _fused_rms_norm kept whole, as on CUDA
            attention.traced_as_on_gpu(self._set, self.view.device.major)
            inductor_choices.upsampling_as_on_gpu(self._set)     # F.interpolate's memory format

    def _patch_inductor(self):
        """Once, at the first compile (importing Inductor costs a second)."""
        if getattr(self, "_patched", False):
            return
        self._patched = True
        import torch._inductor.config as icfg
        from torch._dynamo import device_interface as di
        from torch._inductor.runtime import triton_heuristics as th, triton_helpers
        from torch._subclasses import fake_tensor

        from inspectors.target import cuda_guard
        self.guard_missing = cuda_guard.ensure()      # "" once a CUDA device guard is registered
        for name, value in (("compile_threads", 1), ("force_disable_caches", True)):
            self._set(icfg, name, value)
        self._set(fake_tensor.FakeTensorMode, "avoid_device_init", property(lambda self: True))
        self._set(fake_tensor, "init_gpu_context", lambda device: None)
        if self.view is not None:             # an op without a meta function runs on the CPU's kernel
            inductor_device.fallback_kernels_on_cpu(self._set)
        di.get_interface_for_device("cuda")              # fills the registry first
        saved = di.device_interfaces["cuda"]
        di.register_interface_for_device("cuda", inductor_device.target_cuda_interface())
        self._undo.append(lambda: di.register_interface_for_device("cuda", saved))
        self._set(triton_helpers, "set_driver_to_gpu", lambda: None)
        if self.view is not None:                 # its decompositions and joint-graph passes: the target's
            inductor_choices.install(self._set)
        flex.strides_without_copy(self._set)
        from torch._inductor import virtualized
        from torch._inductor.codegen.triton import TritonScheduling
        define_kernel = TritonScheduling.define_kernel

        def defined(scheduling, src_code, node_schedule, kernel):     # a kernel's workload, as Inductor sees it
            name = define_kernel(scheduling, src_code, node_schedule, kernel)
            self._workloads[name] = launch_call.of_inductor(kernel, virtualized.V.graph.sizevars)
            return name
        self._set(TritonScheduling, "define_kernel", defined)

        from torch._inductor.runtime import compile_tasks

        def precompile(autotuner, *args, **kwargs):
            # as Inductor on a GPU, in each job (torch caches it a process): a CUDA wheel's own ptxas
            setter = getattr(compile_tasks, "_set_triton_ptxas_path", lambda: None)
            getattr(setter, "__wrapped__", setter)()
            if not getattr(autotuner, "_tlens_recorded", False):   # a template candidate: precompiled twice
                autotuner._tlens_recorded = True
                record_configs(autotuner, self.record, self._workloads.get(autotuner.fn.__name__))
            # what Inductor reads of a compiled launcher (a template candidate's register count)
            autotuner.launchers = [SimpleNamespace(config=cfg, n_regs=0, n_spills=0, shared=0)
                                   for cfg in autotuner.configs]
            autotuner.compile_results = []

        self._set(th.CachingAutotuner, "precompile", precompile)
        # max-autotune: each template candidate is compiled (its precompile records it), and the
        # timing that would choose among them needs the GPU: the first candidate stands for the choice
        from torch._inductor import select_algorithm

        def autotune(selector, name, input_nodes, layout, input_gen_fns, choices, *args, **kwargs):
            templates = [c for c in choices if isinstance(c, select_algorithm.TritonTemplateCaller)]
            by_file = {getattr(c.bmreq, "module_path", None): (j, c) for j, c in enumerate(templates)}

            def tag(launch):                         # a candidate's launch: labelled as one
                code = getattr(getattr(launch.fn, "fn", None), "__code__", None)
                j, choice = by_file.get(getattr(code, "co_filename", None), (None, None))
                if choice is not None:
                    launch.label = (f"{launch.fn.__name__} · max-autotune candidate {j + 1} of {len(templates)} "
                                    f"for {name} (the GPU times them to choose): {choice.description}")
                    launch.origin = {"kernel": launch.fn.__name__, "category": "template", "autotune": name,
                                     "candidate": j + 1, "candidates": len(templates)}
            for launch in self._recorded_now:       # those Inductor precompiled before asking for timings
                tag(launch)
            saved = self.record
            self.record = lambda launch: (tag(launch), saved(launch))
            try:
                for choice in templates:             # each candidate compiled, so recorded
                    choice.precompile()
            finally:
                self.record = saved
            # the choice: the first Triton candidate stands for the one a timing would pick
            first = templates[0] if templates else None
            return {choice: (0.0 if choice is first else float(i + 1)) for i, choice in enumerate(choices)}
        self._set(select_algorithm.AlgorithmSelectorCache, "autotune", autotune)
        # Inductor's table of the candidates' timings: there are none (it would print the order above)
        self._set(select_algorithm.AlgorithmSelectorCache, "log_results", staticmethod(lambda *a, **k: None))
        self._set(th.CachingAutotuner, "run", lambda autotuner, *args, **kwargs: None)

    def compile(self, model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                options=None, disable=False, **rest):
        if model is None:
            return lambda m: self.compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                          options=options, disable=disable, **rest)
        import torch
        real = self._real
        if disable:
            return model
        self._patch_tracing()
        if self._breaks_before is None:
            from torch._dynamo.utils import counters
            self._breaks_before = dict(counters["unimplemented"])
        if backend == "inductor":
            from torch._inductor import list_mode_options
            patches = {**(list_mode_options(mode, dynamic) if mode and mode != "default" else {}), **(options or {})}
            patches["triton.cudagraphs"] = False     # "reduce-overhead": CUDA graphs replay the same kernels
            # fusions max-autotune would decide by timing both ways on the GPU: not fused here
            patches.update({"benchmark_epilogue_fusion": False, "benchmark_fusion": False})
            backend = self._backend(patches)
        compiled = real(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, **rest)
        if isinstance(compiled, torch.nn.Module):
            forward = compiled.forward
            compiled.forward = self._calling(forward)
            return compiled
        return self._calling(compiled)

    def _calling(self, fn):
        view = self.view

        def call(*args, **kwargs):
            with self.eager.paused():      # Dynamo compiles nothing under a dispatch mode
                if view is None:
                    return fn(*args, **kwargs)
                with view.plain():
                    out = fn(*args, **kwargs)
            return view.on_target(out)
        call.__wrapped__ = fn
        return call

    def _backend(self, config_patches: dict):
        def backend(gm, example_inputs):
            import torch._inductor.config as icfg
            if self.view is not None and config_patches.get("freezing", icfg.freezing):
                # its weights would be constants of the GPU's graph; here they are the CPU's tensors
                raise NotImplementedError("Inductor's freezing (torch._inductor.config.freezing) is not supported "
                                          "for a target without its GPU: compile without it to see the kernels")
            self._patch_inductor()
            from torch._inductor.compile_fx import compile_fx
            return compile_fx(gm, example_inputs, inner_compile=self._inner, config_patches=config_patches)
        return backend

    def _inner(self, gm, example_inputs, **kwargs):
        """Inductor on the target for this graph (its kernels recorded); the graph itself run
        eagerly where the code runs."""
        import torch
        from torch._functorch.aot_autograd import make_boxed_func
        from torch._inductor.compile_fx import compile_fx_inner
        which = graph_kind(kwargs)
        journal.graph_begun(self.job_dir, self._graphs, which)      # the job's limit grows with it
        self._graphs += 1
        recorded = self._recorded_now = []
        self._workloads = {}                  # kernel names are the graph's own (a backward has its triton_poi_0 too)
        saved, self.record = self.record, recorded.append
        try:
            # a backward graph is compiled from the autograd engine, inside the view: left here
            with self.view.plain() if self.view is not None else contextlib.nullcontext(), self.eager.paused():
                # a context of its own (the graph's fakes are the target's), with AOTAutograd's
                # metadata of this graph: a backward's donated buffers (saved activations it may
                # overwrite in place, as the GPU's backward does: in_out_ptr arguments)
                outer = torch._guards.TracingContext.try_get()
                meta = getattr(outer, "fw_metadata", None)       # one for a forward and its backward
                on_cpu = self._on_cpu.setdefault(id(meta), (meta, set()))[1] if meta is not None else set()
                target_gm, fakes = graph_on_target.on_target(gm, example_inputs, self.view, on_cpu)
                context = torch._guards.TracingContext(getattr(outer, "fake_mode", None))
                context.fw_metadata = meta
                with torch._guards.tracing(context):
                    try:
                        out = compile_fx_inner(target_gm, fakes, **kwargs)
                    except Exception as e:
                        if self.guard_missing and "not linked with support for cuda" in str(e):
                            raise RuntimeError(f"{e}\n(an op of this graph needs a CUDA device guard: "
                                               f"{self.guard_missing})") from e
                        raise
        finally:
            self.record = saved
        made = origins(getattr(out, "source_code", "") or "", target_gm.graph, self.job_dir, which, self._by_seq)
        site = call_site(self.job_dir)      # the user's line that ran this graph (a call, a .backward())
        wrapper = getattr(out, "source_code", "") or ""
        graph_outside = outside_calls.of_graph(target_gm.graph, wrapper, self._node_lines, which,
                                               {n for k in parse_wrapper(wrapper) for n in k.graph_nodes})
        self.outside += graph_outside
        for launch in recorded:
            launch.origin = {**made.get(launch.fn.__name__, {"kernel": launch.fn.__name__}), "graph": which,
                             **launch.origin}
            if launch.call:                  # the graph's calls of it (a layer's kernel, once per layer)
                launch.call["calls"] = max(1, kernel_calls(wrapper, launch.fn.__name__))
            if not launch.origin.get("lines") and site is not None:     # its nodes name no line of the user's
                launch.origin = {**launch.origin, "lines": {site[0]: [site[1]]}, "lines_from": "call"}
            saved(launch)
        if not torch.cuda.is_available() or self.view is not None:   # the graph runs on the CPU: the GPU's
            attention_cpu.without_dropout(gm)    # attention ops as the CPU's kernels, and no dropout, which they refuse
        if self.view is not None:        # ... and an op whose CUDA kernel takes a dtype the CPU's refuses
            cuda_dtypes.on_cpu_graph(gm)
        return make_boxed_func(_running(gm, recorded, graph_outside, self.eager.paused))


def _running(gm, recorded: list, outside: list, paused):
    """The graph's forward, run here (`paused()`: none of its ops is an eager call; a backward is
    run by the autograd engine): a user's Triton kernel in it (`triton_kernel_wrapper_*`)
    launches through the JIT, where the GPU runs Inductor's compile of it, recorded already.
    Each run after the first (the next layer's block after a graph break, the next micro-batch)
    adds a run's calls to its kernels' and its calls outside Triton's counts."""
    from inspectors.compile import triton_shim
    compiled = {launch.fn.__name__ for launch in recorded}
    per_run = [(launch.call, launch.call.get("calls", 1)) for launch in recorded if launch.call]
    runs = [0]

    def forward(*args):
        runs[0] += 1
        if runs[0] > 1:
            for call, n in per_run:
                call["calls"] = call.get("calls", 1) + n
            for c in outside:
                c["calls"] = c.get("calls", 1) + 1
        with triton_shim.not_recorded(compiled), paused():
            return gm.forward(*args)
    return forward


def record_configs(autotuner, record, workload: dict | None = None) -> None:
    """Each candidate config of an Inductor kernel as a Launch: what `precompile` would pass
    triton.compile for it; `workload`: the kernel's (launch_call.of_inductor), its grid per config."""
    from inspectors.compile.triton_shim import Launch
    n = len(autotuner.configs)
    for i, cfg in enumerate(autotuner.configs):
        meta = autotuner._create_compile_meta(cfg)
        options = autotuner._create_compile_options(cfg, meta)
        names = list(meta["signature"])
        # by position, as the JIT keys them; a name that is no parameter (an AMD tuning value) is
        # an option: left out here, as precompile does
        constants = {(names.index(k),) if isinstance(k, str) else k: v for k, v in meta["constants"].items()
                     if not isinstance(k, str) or k in names}
        shown = ", ".join([*(f"{k}={v}" for k, v in cfg.kwargs.items()),
                           f"num_warps={cfg.num_warps}", f"num_stages={cfg.num_stages}"])
        label = f"{autotuner.fn.__name__} · config {i + 1} of {n}: {shown}" + (    # gpt-fast's setting
            " · coordinate descent: the GPU times neighbouring configs and may compile another"
            if (autotuner.inductor_meta or {}).get("coordinate_descent_tuning") else "")
        call = {k: v for k, v in (workload or {}).items() if k != "numels"}
        if workload and (grid := launch_call.inductor_grid(autotuner.inductor_meta, cfg, workload["numels"])):
            call["grid"] = grid
        record(Launch(autotuner.fn, dict(meta["signature"]), constants, dict(meta["configs"][0]),
                      dict(options), label=label, call=call))
