"""The target GPU as the code sees it (inspectors.target.tensor_view): on a machine without a
GPU, a library that asks torch.cuda or Triton's driver about the device before it picks a
kernel gets the target's answers (inspectors.target.gpus), and tensors say they are on it;
on a GPU machine the real GPU answers, and agrees with the table."""
import pytest
import torch

from inspectors.target import gpus
from inspectors.base.result import CompileRequest
from conftest import SNIPPETS

LIBRARY = '''import torch
import triton
import triton.language as tl
from triton.runtime import driver


@triton.jit
def fill_kernel(out_ptr, N_SM: tl.constexpr, MAJOR: tl.constexpr, SMEM: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 16), tl.full((16,), N_SM * 1000 + MAJOR, tl.int32))


def fill(out):
    # what libraries do before they choose: the device of the tensor, its SM count, the capability
    on_gpu = out.device.type == "cuda" and out.is_cuda and torch.cuda.is_available()
    sms = torch.cuda.get_device_properties(out.device).multi_processor_count if on_gpu else 1
    major = torch.cuda.get_device_capability()[0] if on_gpu else 0
    smem = driver.active.utils.get_device_properties(0)["max_shared_mem"] if on_gpu else 0
    scratch = torch.empty(4, device=out.device)          # a device argument served on the CPU
    assert scratch.device.type == out.device.type
    fill_kernel[(1,)](out, N_SM=sms, MAJOR=major, SMEM=smem)
'''
DRIVER = "import torch\nfrom gpu_lib import fill\n\n\ndef example():\n    fill(torch.empty(16, dtype=torch.int32))\n"


def _constexprs(engine, target):
    r = engine.compile(CompileRequest(source=DRIVER, filename="driver.py", target=target, sass=False,
                                      files={"gpu_lib.py": LIBRARY}))
    assert r.ok, r.error
    return {a.name: a.value for a in r.kernels[0].args if a.value is not None}


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
@pytest.mark.parametrize("target", ["cuda:90", "cuda:80", "cuda:120", "hip:gfx942"])
def test_a_library_sees_the_target(engine, target):
    want = gpus.for_target(target)
    got = _constexprs(engine, target)
    assert got == {"N_SM": str(want.multi_processor_count), "MAJOR": str(want.major), "SMEM": str(want.max_shared_mem)}


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_liger_rms_norm_backward_gets_the_h100s_rows_per_program(engine):
    """On an H100 the JIT compiles Liger's RMSNorm backward with rows_per_program = 1 (132 SMs
    for 4 rows: benchmarks/results/gpu_drivers.txt); without the view it read 1 SM and passed 4."""
    pytest.importorskip("liger_kernel")
    path = SNIPPETS / "liger" / "rms_norm.py"
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target="cuda:90", sass=False))
    assert r.ok, r.error
    backward = {a.name: a.value for a in r.kernels[1].args}
    assert backward["rows_per_program"] == "1"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_the_view_is_left_as_found():
    """Inside: the target's answers and tensors on it; after: torch as it was (the worker's
    next job, its own code)."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    before = (torch.cuda.is_available, torch.cuda.get_device_properties, torch.version.hip)
    assert tensor_view.needed(parse("cuda:90"))
    with tensor_view.TargetView(parse("hip:gfx942")):
        x = torch.ones(4)
        assert torch.cuda.is_available() and x.device == torch.device("cuda", 0) and x.is_cuda
        assert (x + 1).device.type == "cuda" and x.cuda() is x and x.to("cuda").sum().item() == 4
        assert torch.cuda.get_device_properties(x.device).gcnArchName.startswith("gfx942")
        assert torch.version.hip
    assert (torch.cuda.is_available, torch.cuda.get_device_properties, torch.version.hip) == before
    assert not torch.cuda.is_available() and torch.ones(2).device.type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_streams_and_events_are_answered_and_timing_is_refused_by_name():
    """Libraries put work on side streams and record events between them: served in the view;
    an event's elapsed time is what only a GPU gives, refused with a message that says so."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    before = (torch.cuda.Stream, torch.cuda.Event, torch.cuda.stream)
    with tensor_view.TargetView(parse("cuda:90")):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            y = torch.ones(8) * 2
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        end.record(side)
        torch.cuda.current_stream().wait_event(end)
        assert y.is_cuda and end.query() and side.query() and side.record_event().query()
        with pytest.raises(RuntimeError, match="elapsed_time: timing needs a GPU"):
            start.elapsed_time(end)
    assert (torch.cuda.Stream, torch.cuda.Event, torch.cuda.stream) == before


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_a_model_deep_copied_on_the_target_is_a_model_on_the_target():
    """copy.deepcopy of a model (an EMA or reference copy): torch's default refuses a tensor
    subclass whose new_empty gives a plain tensor; in the view the copy is on the target, its
    own memory, leaves with their own gradients, attributes copied."""
    import copy

    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8)).cuda()
        model[0].weight.tag = "first"
        twin = copy.deepcopy(model)
        w, v = model[0].weight, twin[0].weight
        assert v.is_cuda and v.is_leaf and v.requires_grad and torch.equal(v, w) and v.data_ptr() != w.data_ptr()
        assert v.tag == "first"
        twin(torch.randn(4, 8, device="cuda")).sum().backward()
        assert v.grad is not None and w.grad is None
        shared = torch.ones(3, device="cuda")
        pair = copy.deepcopy([shared, shared])           # the memo: one copy of one tensor
        assert pair[0] is pair[1] and pair[0].is_cuda
        w.grad = torch.full_like(w, 2.0)
        again = copy.deepcopy(model)                      # a gradient is copied, as torch copies it
        assert torch.equal(again[0].weight.grad, w.grad) and again[0].weight.grad.data_ptr() != w.grad.data_ptr()


def test_a_weight_two_modules_share_stays_one_parameter_on_the_target():
    """Tied weights (GPT-2's embedding and output layer): `.cuda()` and `.to(dtype)` keep them one
    Parameter, as a GPU converts them in place. The view made one per module: the compiled step
    had two weights and returned two gradients where the H200's adds them into one (GPT-2's
    backward: the same kernels in another order, benchmarks/results/gpu_drivers.txt)."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        emb, head = torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10, bias=False)
        head.weight = emb.weight
        model = torch.nn.Sequential(emb, head).cuda()
        assert model[1].weight is model[0].weight and model[0].weight.is_cuda
        assert len(list(model.parameters())) == 1
        model.to(torch.bfloat16)
        assert model[1].weight is model[0].weight and model[0].weight.dtype == torch.bfloat16
        model(torch.tensor([[1, 2]], device="cuda")).float().sum().backward()
        assert model[0].weight.grad is not None


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_the_cuda_runtime_calls_around_a_models_work_are_answered():
    """What training and benchmark code calls around its work: each refused on the CPU wheel (no
    CUDA) or looked for a driver on the CUDA one (nn.LSTM's weight flattening: `device_of`), before
    the view answered it."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        x = torch.randn(8, 8, device="cuda")
        with torch.cuda.device_of(x):
            pass
        torch.cuda.init()
        torch.cuda.reset_peak_memory_stats()
        assert torch.cuda.initial_seed() == torch.initial_seed()
        torch.cuda.nvtx.range_push("step")
        torch.cuda.nvtx.range_pop()
        with torch.cuda.nvtx.range("forward"):
            pass
        pinned = torch.randn(4).pin_memory()
        assert pinned.to("cuda", non_blocking=True).is_cuda
        x.record_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):            # captured: the code runs once, as on a GPU
            y = x * 2
        graph.replay()
        assert torch.equal(y, x * 2)
        rnn = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True).cuda()
        out, _ = rnn(torch.randn(2, 5, 8, device="cuda"))
        assert out.shape == (2, 5, 16) and out.is_cuda
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(6, 2)), batch_size=3,
                                             pin_memory=True)
        assert [b[0].shape for b in loader] == [(3, 2), (3, 2)]
        staging = torch.empty(4, pin_memory=True)             # a host buffer for copies
        assert staging.shape == (4,)
        # activation offloading, its saved tensors sent to the host in the forward and back (compiled:
        # tests/sandbox/test_training_features.py)
        mlp = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU()).cuda()
        inp = torch.randn(4, 8, device="cuda", requires_grad=True)
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            loss = mlp(inp).square().sum()
        loss.backward()
        assert inp.grad.is_cuda and inp.grad.shape == (4, 8)
    assert torch.cuda.CUDAGraph is not tensor_view.cuda_probes.CUDAGraph          # put back
    assert "<lambda>" not in torch.autograd.graph.save_on_cpu.__init__.__qualname__
    assert torch.cuda.nvtx.range_push not in tensor_view.cuda_probes.NVTX_STAND_INS.values()
    assert "record_stream" not in vars(torch.Tensor)


def test_torch_accelerator_answers_as_the_gpu_does():
    """PyTorch's tutorials pick the device with `torch.accelerator`: the CPU wheel has none (the
    tutorial's tensors went to the CPU), the CUDA wheel with no GPU raised at the device index;
    torch's own Python asks `torch._C._get_accelerator` where the code names no device (FSDP2's
    default mesh, `torch.get_device_module()`)."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    before = (torch.accelerator.is_available, torch.accelerator.current_accelerator, torch._C._get_accelerator)
    with tensor_view.TargetView(parse("cuda:90")):
        dev = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
        assert dev == torch.device("cuda") and torch.accelerator.device_count() == 1
        assert torch.accelerator.current_device_index() == 0 and torch._C._get_accelerator().type == "cuda"
        assert torch.get_device_module() is torch.cuda
        with torch.accelerator.device_index(0):
            x = torch.ones(4, device=dev)
        assert x.is_cuda and torch.accelerator.memory_allocated() == torch.cuda.memory_allocated()
        torch.accelerator.synchronize()
    assert (torch.accelerator.is_available, torch.accelerator.current_accelerator, torch._C._get_accelerator) == before


def test_a_sparse_gradient_and_its_optimizer_step_run_on_the_target():
    """nn.Embedding(sparse=True) and SparseAdam (recommendation models): its gradient is a sparse
    tensor, which the view's alias of each op's output refused ("Cannot access storage of
    SparseTensorImpl")."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        emb = torch.nn.Embedding(100, 8, sparse=True).cuda()
        opt = torch.optim.SparseAdam(emb.parameters())
        before = emb.weight.detach().clone()
        emb(torch.tensor([[1, 2], [3, 1]], device="cuda")).sum().backward()
        assert emb.weight.grad.is_sparse
        opt.step()
        changed = (emb.weight.detach() != before).any(dim=1).nonzero().flatten().tolist()
        assert changed == [1, 2, 3]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_histc_takes_integers_as_cudas_does():
    """A MoE router counts tokens per expert with histc on int32 ids: CUDA's kernel takes them,
    the CPU's does not ("histogram_cpu" not implemented for 'Int'). In the view: CUDA's answer,
    the counts in the input's dtype; floats as before."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    ids = torch.randint(0, 8, (512,), dtype=torch.int32)
    with pytest.raises(RuntimeError, match="histogram_cpu"):
        torch.histc(ids, bins=8, min=0, max=7)
    want = torch.bincount(ids.long(), minlength=8)
    with tensor_view.TargetView(parse("cuda:90")):
        x = ids.cuda()
        for counts in (torch.histc(x, bins=8, min=0, max=7), x.histc(bins=8, min=0, max=7),
                       torch.ops.aten.histc.default(x, 8, 0, 7)):
            assert counts.dtype == torch.int32 and counts.is_cuda and counts.tolist() == want.tolist()
        f = torch.histc(x.float(), bins=8, min=0, max=7)
        assert f.dtype == torch.float32 and f.tolist() == want.float().tolist()


def test_fake_cpu_tensors_take_histc_on_integers_while_traced():
    """Dynamo's and AOTAutograd's fake tensors are the CPU's: histc's meta function refuses an
    integer input there. While torch.compile traces, the meta answers as CUDA's; after, as before."""
    from torch._dispatch.python import enable_python_dispatcher      # as Dynamo runs fake tensors
    from torch._subclasses.fake_tensor import FakeTensorMode

    from inspectors.target import cuda_dtypes

    def histc_of_fake_ints():
        with enable_python_dispatcher(), FakeTensorMode() as mode:
            return torch.histc(mode.from_tensor(torch.zeros(64, dtype=torch.int32)), bins=8, min=0, max=7)
    undo: list = []
    cuda_dtypes.install_tracing(undo)
    try:
        counts = histc_of_fake_ints()
        assert counts.shape == (8,) and counts.dtype == torch.int32
    finally:
        for back in undo:
            back()
    with pytest.raises(RuntimeError, match="histogram_cpu"):
        histc_of_fake_ints()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_a_tensor_on_the_target_is_no_view_of_its_own_stand_in():
    """Putting a CPU tensor on the target makes an alias of it; that alias is not a view the code
    made: `_is_view()` is False and `_base` None (torch.export walked `_base`, and each access made
    a new alias: a RecursionError). A view the code makes still has its base, on the target."""
    from torch._subclasses.meta_utils import MetaTensorDescriber

    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        x = torch.randn(8, 16, device="cuda")
        assert not x._is_view() and x._base is None
        tail, whole = x[1:], x[:]               # views the code makes, one of them of every element
        for v in (tail, whole):
            assert v._is_view() and v._base.is_cuda and not v._base._is_view() and torch.equal(v._base, x)
        described = MetaTensorDescriber().describe_tensor(tail)       # what export and fakes do
        assert described.base is not None and described.base.base is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_the_real_gpu_agrees_with_the_table():
    props = torch.cuda.get_device_properties(0)
    key = f"cuda:{props.major}{props.minor}"
    want = gpus.for_target(key)
    if want is None or want.name != props.name:
        pytest.skip(f"{props.name} ({key}) is not a row of the table")
    assert (props.multi_processor_count, props.major, props.minor) == \
        (want.multi_processor_count, want.major, want.minor)
    assert abs(props.total_memory - want.total_memory) < 2 * gpus.GIB
    from triton.runtime import driver
    from inspectors.base.targets import parse
    from inspectors.target.tensor_view import driver_properties
    real = driver.active.utils.get_device_properties(0)
    stand_in = driver_properties(parse(key))
    assert real["max_shared_mem"] == stand_in["max_shared_mem"] == want.max_shared_mem
    assert real["multiprocessor_count"] == stand_in["multiprocessor_count"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_half_precision_ops_cudas_kernels_take_and_the_cpus_refuse():
    """torch's OpInfo database lists ops whose CUDA kernels take float16 (and bfloat16) and the
    CPU's do not (benchmarks/cuda_dtype_survey.py): a float16 FFT, avg_pool3d, antialiased
    resizing. In the view each gives CUDA's dtype (an FFT of float16: complex32); a bfloat16 FFT,
    which CUDA refuses too, is still refused."""
    import torch.nn.functional as F

    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    x = torch.randn(2, 16, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        torch.fft.rfft(x)
    with tensor_view.TargetView(parse("cuda:90")):
        xf = torch.fft.rfft(x.cuda())
        assert xf.dtype == torch.complex32 and xf.is_cuda and xf.shape == (2, 9)
        back = torch.fft.irfft(xf, n=16)
        assert back.dtype == torch.float16 and torch.allclose(back.float(), x.float(), atol=1e-2)
        v = torch.randn(1, 2, 4, 4, 4, device="cuda", dtype=torch.bfloat16)
        pooled = F.avg_pool3d(v, 2)
        assert pooled.dtype == torch.bfloat16 and pooled.is_cuda
        assert torch.allclose(pooled.float(), F.avg_pool3d(v.float(), 2), atol=1e-2)
        small = F.interpolate(x.view(1, 1, 2, 16).cuda(), size=(2, 8), mode="bilinear", antialias=True)
        assert small.dtype == torch.float16 and small.is_cuda
        with pytest.raises(RuntimeError, match="BFloat16"):
            torch.fft.rfft(x.cuda().bfloat16())


def test_bool_complex_and_rrelu_ops_cudas_kernels_take_and_the_cpus_refuse():
    """The survey's rest: abs, trace and softsign of bool, nansum and nanmean of complex, rrelu of
    float16. The CPU refuses each; in the view each gives CUDA's dtype and value (a NaN element
    of a complex tensor counts as zero)."""
    import torch.nn.functional as F

    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    b = torch.tensor([[True, False], [True, True]])
    c = torch.tensor([1 + 1j, complex(float("nan"), 0), 2 - 1j])
    with pytest.raises(NotImplementedError, match="Bool"):
        torch.abs(b)
    with pytest.raises(RuntimeError, match="complex"):
        torch.nansum(c)
    with tensor_view.TargetView(parse("cuda:90")):
        bc, cc = b.cuda(), c.cuda()
        assert torch.abs(bc).dtype == torch.bool and torch.equal(torch.abs(bc).cpu(), b)
        assert torch.trace(bc).dtype == torch.int64 and torch.trace(bc).item() == 2
        assert F.softsign(bc).tolist() == [[0.5, 0.0], [0.5, 0.5]]
        assert torch.nansum(cc).item() == 3 + 0j and torch.nanmean(cc).item() == 1.5 + 0j
        assert torch.nansum(cc.view(1, 3), dim=1).tolist() == [3 + 0j]
        h = torch.randn(16, dtype=torch.float16, device="cuda")
        assert F.rrelu(h, training=True).dtype == torch.float16


def test_a_cuda_build_without_a_gpu_gets_the_fake_guard_for_export_only(monkeypatch):
    """A CUDA wheel with no GPU visible (the GPU machine with CUDA_VISIBLE_DEVICES=): CUDA's own
    guard asks the runtime for a stream where torch.export's autograd records a `cuda` fake
    parameter, and the process aborts. torch.export gets the fake guard in its place (here: no
    compiler, so it says why); Inductor keeps CUDA's; with a GPU, nothing is replaced."""
    from inspectors.target import cuda_guard
    monkeypatch.setattr(cuda_guard, "_state", {})
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(cuda_guard.shutil, "which", lambda name: None)
    monkeypatch.setattr(cuda_guard, "_gpus", lambda: 0)
    assert cuda_guard.ensure() == ""
    assert "no C++ compiler" in cuda_guard.ensure(for_autograd=True)
    monkeypatch.setattr(cuda_guard, "_state", {})
    monkeypatch.setattr(cuda_guard, "_gpus", lambda: 1)
    assert cuda_guard.ensure(for_autograd=True) == ""


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_a_jagged_nested_tensor_is_made_and_reshaped_on_the_target():
    """torch.nested's jagged layout passes the wrapper's device by position (it was given twice), and
    its ops make their values inside its dispatch, where the view's mode is not, beside offsets
    made in the view: its one-device check failed on each transpose."""
    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        x = torch.nested.nested_tensor([torch.randn(n, 4, 8) for n in (3, 5)], layout=torch.jagged, device="cuda")
        assert x.is_cuda and x.device == torch.device("cuda", 0) and x.offsets().tolist() == [0, 3, 8]
        t = x.transpose(1, 2)
        assert t.is_cuda and t.shape[:2] == (2, 4) and t.offsets() is x.offsets()
        y = torch.nn.functional.gelu(t).transpose(1, 2)
        torch.testing.assert_close(y.values(), torch.nn.functional.gelu(x.values()))     # (vectorized or not: ulps)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine answers for itself")
def test_attention_under_the_backends_the_code_picks_runs_where_the_gpus_would():
    """`sdpa_kernel` in eager code: the memory-efficient kernel alone, which the CPU has not, runs (on
    the CPU's kernels); the flash kernel alone on float32, which the GPU's refuses, is refused with
    the GPU's words."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from inspectors.base.targets import parse
    from inspectors.target import tensor_view
    with tensor_view.TargetView(parse("cuda:90")):
        q = torch.randn(2, 4, 16, 64, device="cuda", dtype=torch.bfloat16)
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        assert out.is_cuda and out.shape == q.shape
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, q, q, is_causal=True))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]), pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q.float(), q.float(), q.float())


def test_scaled_mm_with_rowwise_scales_is_cudas_where_the_cpus_takes_one_scale():
    """torchao's float8 rowwise recipe calls _scaled_mm with a scale per row of A and per column of
    B: CUDA's kernel takes them, torch 2.11's CPU kernel asserts one scale per tensor. The view's
    answer where the CPU refuses: the product scaled row by row and column by column, plus the bias,
    in out_dtype (compared with float64 arithmetic on the same fp8 values)."""
    from inspectors.target import cuda_dtypes
    a = (torch.randn(16, 32) * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(24, 32) * 4).to(torch.float8_e4m3fn).t()           # column-major, as cuBLAS takes it
    sa, sb = torch.rand(16, 1) + 0.5, torch.rand(1, 24) + 0.5
    bias = torch.randn(24).to(torch.bfloat16)
    want = ((a.double() @ b.double()) * sa.double() * sb.double() + bias.double()).to(torch.bfloat16)

    def cpu_of_torch_2_11(*args, **kwargs):
        raise RuntimeError("(scale_a.numel() == 1 && scale_b.numel() == 1) INTERNAL ASSERT FAILED at Blas.cpp")
    for func in (cpu_of_torch_2_11, torch._scaled_mm):
        try:
            got = cuda_dtypes.scaled_mm_as_cuda(func)(a, b, sa, sb, bias=bias, out_dtype=torch.bfloat16)
        except RuntimeError as e:              # a CPU kernel refusing otherwise: not the view's to answer
            assert func is torch._scaled_mm, e
            continue
        assert got.dtype == torch.bfloat16 and got.shape == (16, 24)
        torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    assert cuda_dtypes._other("_scaled_mm") is cuda_dtypes.scaled_mm_as_cuda
