"""The compile engine on real Triton compiles (no GPU): specialization exactly as the
JIT would do it, every target, overrides, and every kind of bad input."""

from pathlib import Path

import pytest

from inspectors.base.result import CompileRequest


def _compile(engine, snippet, name, **kw):
    return engine.compile(CompileRequest(source=snippet(name), filename=name, **kw), timeout=kw.pop("timeout", 60))


def _arg(kernel, name):
    return next(a for a in kernel.args if a.name == name)


def test_vector_add_specializations(engine, snippet):
    r = _compile(engine, snippet, "vadd.py", target="cuda:90")
    assert r.ok, r.error
    # n=4000 specializes exactly like n=4096 (both divisible by 16): the JIT reuses that
    # kernel, so four launches give three compiled kernels.
    aligned, misaligned, n4001 = r.kernels
    # 16-byte aligned pointers, n divisible by 16: vectorized
    assert _arg(aligned, "x_ptr").divisible_by_16 and _arg(aligned, "n").divisible_by_16
    assert "ld.global.v4.b32" in aligned.stages["ptx"]
    # x[1:] is 4 bytes off: the JIT does not mark it, and the loads are scalar
    assert not _arg(misaligned, "x_ptr").divisible_by_16 and not _arg(misaligned, "n").divisible_by_16
    assert "ld.global.v4" not in misaligned.stages["ptx"] and "ld.global.b32" in misaligned.stages["ptx"]
    # aligned pointers but the mask bound is not a multiple of 16: not provably vectorizable
    assert not _arg(n4001, "n").divisible_by_16
    assert "ld.global.v4" not in n4001.stages["ptx"]
    for k in r.kernels:
        assert set(k.stages) == {"source", "ttir", "ttgir", "llir", "ptx", "sass"}
        assert "LDG" in k.stages["sass"]
        assert "tt.divisibility" in k.stages["ttir"] or not any(a.divisible_by_16 for a in k.args)


def test_int_equal_to_one_becomes_constexpr(engine, snippet):
    r = _compile(engine, snippet, "strided.py", target="cuda:90")
    assert r.ok, r.error
    one, three, sixteen = r.kernels
    assert _arg(one, "stride").type == "constexpr" and _arg(one, "stride").value == "1"
    assert _arg(three, "stride").type == "i32" and not _arg(three, "stride").divisible_by_16
    assert _arg(sixteen, "stride").divisible_by_16
    assert "ld.global.v4.b32" in one.stages["ptx"]                 # contiguous
    assert "ld.global.v4" not in three.stages["ptx"]              # runtime stride: scalar


@pytest.mark.parametrize("target,stage,marker", [
    ("cuda:80", "ptx", ".target sm_80"),
    ("cuda:90", "ptx", ".target sm_90a"),
    ("cuda:100", "ptx", ".target sm_100a"),
    ("hip:gfx942", "amdgcn", "gfx942"),
])
def test_targets(engine, snippet, target, stage, marker):
    r = _compile(engine, snippet, "vadd.py", target=target, kernel="add_kernel")
    assert r.ok, r.error
    assert marker in r.kernels[0].stages[stage]
    assert r.kernels[0].target == target


def test_overrides(engine, snippet):
    r = _compile(engine, snippet, "vadd.py", target="cuda:90", num_warps=8, num_stages=2, constexprs={"BLOCK": 256})
    assert r.ok, r.error
    k = r.kernels[0]
    assert k.options["num_warps"] == 8 and k.options["num_stages"] == 2
    assert _arg(k, "BLOCK").value == "256"
    assert '"ttg.num-warps" = 8' in k.stages["ttgir"]
    # 256 elements over 256 threads: one element each, no vector loads left
    assert "ld.global.v4" not in k.stages["ptx"]


def test_compile_from_signature(engine, snippet):
    r = _compile(engine, snippet, "nosig.py", target="cuda:90", signature="*fp32:16, *fp32:16, i32:16, 1024")
    assert r.ok, r.error
    assert "ld.global.v4.b32" in r.kernels[0].stages["ptx"]
    r = _compile(engine, snippet, "nosig.py", target="cuda:90", signature="*fp32, *fp32, i32, 1024")
    assert r.ok and "ld.global.v4" not in r.kernels[0].stages["ptx"]


def test_autotune_compiles_every_config(engine):
    src = '''
import torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=1), triton.Config({"BLOCK": 1024}, num_warps=4)],
                 key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

def example():
    x = torch.zeros(4096)
    k[lambda m: (triton.cdiv(4096, m["BLOCK"]),)](x, 4096)
'''
    r = engine.compile(CompileRequest(source=src, filename="at.py"))
    assert r.ok, r.error
    assert [k.options["num_warps"] for k in r.kernels] == [1, 4]
    assert all("autotune config" in k.label for k in r.kernels)


# ---- bad input: each a clear error naming the line, and the worker keeps serving ----

def test_syntax_error(engine, snippet):
    r = _compile(engine, snippet, "syntax_error.py")
    assert r.error.kind == "syntax" and r.error.line == 7


def test_compile_error_names_the_line(engine, snippet):
    r = _compile(engine, snippet, "dot_mismatch.py")
    assert r.error.kind == "compile"
    assert r.error.line == 11                      # c = tl.dot(a, b)
    assert "dimension" in r.error.message


def test_launcher_exception(engine, snippet):
    r = _compile(engine, snippet, "launcher_raises.py")
    assert r.error.kind == "runtime" and r.error.line == 12     # raise ValueError(...)
    assert "shapes do not match" in r.error.message


def test_example_raising_after_launches_keeps_them(engine, snippet):
    """The launches example() made before it raised are compiled and returned, with the error
    (its line, and how many launches came before it) as the result's."""
    r = _compile(engine, snippet, "raises_after_launch.py")
    assert r.partial and not r.ok
    assert r.error.kind == "runtime" and r.error.line == 16 and "after 2 launches" in r.error.message
    assert [k.name for k in r.kernels] == ["double", "double"]
    assert all(k.error is None and "ptx" in k.stages for k in r.kernels)
    assert "ld.global.v4" in r.kernels[0].stages["ptx"] and "ld.global.v4" not in r.kernels[1].stages["ptx"]


@pytest.mark.parametrize("raised, said", [
    ('ValueError("A" * (150 << 20))', "cut at"),          # an answer of 300 MB, over the server's 128 MB
    ("type('Nasty', (Exception,), {'__str__': lambda self: 1 / 0})()", "its message could not be read"),
])
def test_a_hostile_exception_after_launches_keeps_them(engine, snippet, raised, said):
    """example() raising, after its launches, an exception of 150 MB of text, or one whose message
    itself raises: the launches are still shown, with the error bounded and named."""
    src = snippet("raises_after_launch.py").replace(
        '    raise ValueError("the driver\'s own check failed after two launches")', f"    raise {raised}")
    r = engine.compile(CompileRequest(source=src, filename="hostile.py", sass=False), timeout=120)
    assert r.error.kind == "runtime" and r.error.line == 16 and said in r.error.message, r.error.message[:300]
    assert len(r.kernels) == 2 and len(r.error.message) < 20_000


def test_timing_in_example_is_refused_by_name_after_its_launch(engine, snippet):
    """`triton.testing.do_bench` in example(): the function it times runs once (its launch is
    compiled and shown), then the timing is refused with a message naming do_bench."""
    src = snippet("raises_after_launch.py").replace(
        '    raise ValueError("the driver\'s own check failed after two launches")',
        "    triton.testing.do_bench(lambda: double[(4,)](x, 4096, BLOCK=512))")
    r = engine.compile(CompileRequest(source=src, filename="timed.py", sass=False), timeout=120)
    assert r.partial and r.error.line == 16 and "triton.testing.do_bench: timing needs a GPU" in r.error.message
    assert [k.options.get("num_warps") for k in r.kernels] == [4, 4, 4]
    assert [a.value for k in r.kernels for a in k.args if a.name == "BLOCK"] == ["1024", "1024", "512"]


def test_a_warmed_up_kernels_registers_size_the_grid(engine, snippet):
    """Triton's fused-softmax tutorial compiles its kernel with `warmup()` and reads `n_regs` to
    size its grid: the kernel is compiled there, its registers are the cubin's, and the launch
    after it is the one launch shown."""
    import base64

    from inspectors.read import resources
    r = engine.compile(CompileRequest(source=snippet("warmup_occupancy.py"), filename="warmup_occupancy.py",
                                      target="cuda:90"), timeout=120)
    assert r.ok, r.error
    [k] = r.kernels
    regs = resources.resource_usage(base64.b64decode(k.cubin)).registers
    # the H100's 65536 registers a multiprocessor, 132 of them
    assert f"n_regs={regs} n_spills=0 programs={min(132 * (65536 // (regs * 32 * 8)), 1823)}" in r.output, r.output


def test_a_driver_profiled_with_proton_compiles_its_kernels(engine, snippet):
    """`proton.start(...)` in example() (Triton's profiler needs CUPTI, a GPU): it starts nothing
    and says so in the output; the persistent kernel's grid constant is the target's SM count."""
    r = engine.compile(CompileRequest(source=snippet("proton_persistent.py"), filename="proton_persistent.py",
                                      target="cuda:90", sass=False), timeout=120)
    assert r.ok, r.error
    assert "proton.start('persistent'): profiling needs a GPU" in r.output
    [k] = r.kernels
    assert [a.value for a in k.args if a.name == "NUM_SMS"] == ["132"]


def test_no_kernels(engine, snippet):
    r = _compile(engine, snippet, "no_kernels.py")
    assert r.error.kind == "usage" and r.error.message == (
        "example() ran but launched no Triton kernel; no_kernels.py has no @triton.jit kernel of its own")


def test_unsupported_target(engine, snippet):
    r = _compile(engine, snippet, "vadd.py", target="cuda:52")
    assert r.error.kind == "usage" and "cuda:52" in r.error.message


def test_no_example_without_signature(engine, snippet):
    r = _compile(engine, snippet, "nosig.py")
    assert r.error.kind == "usage" and "example()" in r.error.message


def test_timeout_replaces_worker_and_serves_again(engine, snippet):
    r = engine.compile(CompileRequest(source=snippet("forever.py"), filename="forever.py"), timeout=4)
    assert r.error.kind == "timeout" and "4 s" in r.error.message
    r = _compile(engine, snippet, "vadd.py", kernel="add_kernel")
    assert r.ok, r.error


def test_crash_is_reported_and_worker_replaced(engine, snippet):
    src = "import os, triton\nimport triton.language as tl\n@triton.jit\ndef k(x):\n    pass\n" \
          "def example():\n    os.kill(os.getpid(), 9)\n"
    r = engine.compile(CompileRequest(source=src, filename="crash.py"))
    assert r.error.kind == "crash" and "SIGKILL" in r.error.message
    assert _compile(engine, snippet, "vadd.py", kernel="add_kernel").ok


def test_user_output_is_captured_not_mixed_into_protocol(engine, snippet):
    src = snippet("vadd.py").replace("def example():", "def example():\n    print('hello <b>' * 3)\n    import sys; sys.stdout.write('x' * 200000)")
    r = engine.compile(CompileRequest(source=src, filename="vadd.py", max_output_bytes=1000))
    assert r.ok, r.error
    assert "earlier bytes of output dropped" in r.output and len(r.output) < 1200


def test_file_writes_stay_in_scratch(engine, snippet, tmp_path):
    src = snippet("vadd.py").replace("def example():", "def example():\n    open('written.txt', 'w').write('x')")
    import os
    r = engine.compile(CompileRequest(source=src, filename="vadd.py", kernel="add_kernel"))
    assert r.ok
    assert not os.path.exists("written.txt")


def test_stages_name_the_file_not_a_scratch_path(engine, snippet):
    r = _compile(engine, snippet, "vadd.py", kernel="add_kernel")
    k = r.kernels[0]
    assert 'loc("vadd.py":' in k.stages["ttir"]
    assert '.file\t1 "vadd.py"' in k.stages["ptx"]
    assert "tlens-" not in k.stages["ptx"] + k.stages["ttgir"] + k.stages["llir"]


def test_same_size_edit_is_not_served_stale_source(engine, snippet):
    """Two jobs with the same file name and length but different code."""
    a = snippet("vadd.py")
    b = a.replace("x + y, mask", "x - y, mask")
    assert len(a) == len(b)
    ra = engine.compile(CompileRequest(source=a, filename="same.py", kernel="add_kernel"))
    rb = engine.compile(CompileRequest(source=b, filename="same.py", kernel="add_kernel"))
    assert "arith.addf" in ra.kernels[0].stages["ttir"]
    assert "arith.subf" in rb.kernels[0].stages["ttir"]


def test_sass_on_demand_matches_worker_sass(engine, snippet):
    from inspectors.read.sass import disassemble_b64
    lazy = _compile(engine, snippet, "vadd.py", kernel="add_kernel", sass=False).kernels[0]
    eager = _compile(engine, snippet, "vadd.py", kernel="add_kernel").kernels[0]
    assert "sass" not in lazy.stages and "sass" in lazy.stage_names()
    assert disassemble_b64(lazy.cubin) == eager.stages["sass"]
    assert "LDG.E.128" in eager.stages["sass"]


def test_memory_limit(engine, snippet):
    """16 GiB in one allocation: refused by the worker's address-space limit (8 GiB), at once."""
    if not engine.memory_limit_mb:
        # a GPU machine: CUDA maps huge virtual ranges, so the worker sets no limit there
        pytest.skip("the compile worker sets no address-space limit here "
                    "(a GPU machine, or TLENS_WORKER_MEMORY_MB=0)")
    assert engine.memory_limit_mb == engine.settings.worker_memory_mb
    src = snippet("vadd.py").replace("def example():", "def example():\n    hog = bytearray(16 << 30)")
    r = engine.compile(CompileRequest(source=src, filename="hog.py"), timeout=60)
    assert r.error.kind == "runtime" and "MemoryError" in r.error.message and "memory limit" in r.error.message
    assert r.error.line == 24


def test_forking_launcher_is_stopped_with_its_children(engine, snippet, tmp_path):
    import os
    import time
    pids = tmp_path / "pids"
    src = snippet("vadd.py").replace(
        "def example():", "def example():\n    import os, time\n    for _ in range(4):\n"
        "        if os.fork() == 0:\n"
        f"            open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "            time.sleep(600)\n    time.sleep(600)\n")
    r = engine.compile(CompileRequest(source=src, filename="forky.py"), timeout=4)
    assert r.error.kind == "timeout"
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 4
    time.sleep(0.5)
    for pid in children:
        try:
            os.kill(pid, 0)
            state = open(f"/proc/{pid}/stat").read().split()[2]
            assert state == "Z", f"forked child {pid} still running"
        except (ProcessLookupError, FileNotFoundError):
            pass
    assert _compile(engine, snippet, "vadd.py", kernel="add_kernel").ok


def test_same_kernel_under_two_file_names(engine, snippet):
    """Triton's cache key ignores the file name; the stages must still name the file compiled."""
    src = snippet("vadd.py")
    first = engine.compile(CompileRequest(source=src, filename="first_name.py", kernel="add_kernel"))
    second = engine.compile(CompileRequest(source=src, filename="second_name.py", kernel="add_kernel"))
    assert 'loc("first_name.py":' in first.kernels[0].stages["ttir"]
    assert 'loc("second_name.py":' in second.kernels[0].stages["ttir"]
    assert '"second_name.py"' in second.kernels[0].stages["ptx"]


def test_linking_the_trusted_cache_skips_what_another_process_moves(tmp_path, monkeypatch):
    """Server processes share the trusted cache: while one links it into a new worker's cache,
    another harvests into it through a `.tmp-` folder that is renamed away at any moment. The
    link skips `.tmp-` folders and any entry gone by the time it is read."""
    import os as os_mod
    from inspectors.compile import trusted as trusted_mod
    by_file = tmp_path / "trusted" / "by-file" / "matmul.py"
    for name in ("KEPT", "GONE", ".tmp-5232-NEW"):
        (by_file / name).mkdir(parents=True)
        (by_file / name / "__grp__matmul_kernel.json").write_text("{}")
    real = os_mod.listdir

    def listdir(path):
        if str(path).endswith("GONE"):
            raise FileNotFoundError(2, "renamed away", str(path))
        return real(path)

    monkeypatch.setattr(trusted_mod.os, "listdir", listdir)
    private = tmp_path / "private"
    trusted_mod.link_trusted(tmp_path / "trusted", private)
    linked = sorted(p.name for p in (private / "by-file" / "matmul.py").iterdir())
    assert linked == ["KEPT"] and (private / "by-file" / "matmul.py" / "KEPT").is_symlink()


def test_a_lazy_module_in_sys_modules_does_not_kill_the_worker(engine, snippet):
    """transformers puts lazy modules in sys.modules; asking one for `__file__`/`__path__` imports
    a submodule, which may fail. Dropping the job's modules afterwards reads what each module
    holds itself: the compile is served, and so is the next one on the same worker."""
    src = snippet("lazy/lazy_driver.py")
    first = engine.compile(CompileRequest(source=src, filename="lazy_driver.py"), timeout=120)
    assert first.ok, first.error
    assert [k.name for k in first.kernels] == ["copy_kernel"]
    again = engine.compile(CompileRequest(source=snippet("vadd.py"), filename="vadd.py"), timeout=120)
    assert again.ok and again.kernels[0].stages["ptx"], again.error


def test_a_training_step_compiles_its_backward_kernels(engine, snippet):
    """`loss.backward()` through a library's autograd Functions on a machine without a GPU: the
    backward kernels are launches like the forward ones (the view is entered again around each
    custom backward), a leaf's `.grad` is filled, `module.cuda()` moves parameters to the target."""
    pytest.importorskip("liger_kernel")
    r = engine.compile(CompileRequest(source=snippet("training/liger_train_step.py"),
                                      filename="liger_train_step.py"), timeout=300)
    assert r.ok, r.error
    names = [k.name for k in r.kernels]
    assert "_rms_norm_forward_kernel" in names and "_rms_norm_backward_kernel" in names, names
    assert "liger_cross_entropy_kernel" in names, names
    back = next(k for k in r.kernels if k.name == "_rms_norm_backward_kernel")
    # the SM count the backward sizes itself by is the target's (H100: 132 SMs, one row a program)
    assert next(a for a in back.args if a.name == "rows_per_program").value == "1"
    assert ".entry _rms_norm_backward_kernel" in back.stages["ptx"]


def test_a_library_probing_the_driver_gets_the_targets_answers(engine, snippet):
    """torch.version.cuda, torch.cuda.device(i).idx, the raw stream and the RNG state answer as
    on the GPU: the library picks the tile a GPU gets (BLOCK 1024 from CUDA 12), not its fallback."""
    r = engine.compile(CompileRequest(source=snippet("training/probes.py"), filename="probes.py"), timeout=120)
    assert r.ok, r.error
    assert next(a for a in r.kernels[0].args if a.name == "BLOCK").value == "1024"


def test_a_library_on_an_amd_target(engine, snippet):
    """Liger's RMSNorm, forward and backward, for hip:gfx942: AMDGCN for each launch."""
    pytest.importorskip("liger_kernel")
    r = engine.compile(CompileRequest(source=snippet("training/liger_train_step.py"), filename="liger_train_step.py",
                                      target="hip:gfx942"), timeout=300)
    assert r.ok, r.error
    assert {"_rms_norm_forward_kernel", "_rms_norm_backward_kernel"} <= {k.name for k in r.kernels}
    assert all("amdgcn" in k.stages for k in r.kernels)


def test_a_library_registering_atens_cuda_kernels(engine, snippet):
    """FlagGems' `use_gems()` registers its Triton kernels as ATen's CUDA implementations: in the
    view the dispatcher sees CPU tensors, so the view makes each registration for the CPU key too
    (inside the view): torch.softmax and layer_norm launch FlagGems' kernels, its autotune configs
    each a launch."""
    import importlib.util
    if importlib.util.find_spec("flag_gems") is None:       # (importing it here raises: no GPU)
        pytest.skip("flag_gems is not installed (make setup installs it)")
    r = engine.compile(CompileRequest(source=snippet("training/flag_gems_ops.py"), filename="flag_gems_ops.py"),
                       timeout=300)
    assert r.ok, r.error
    names = [k.name for k in r.kernels]
    assert names[0] == "softmax_kernel_inner" and "layer_norm_persistent_kernel" in names, names
    assert all(k.source_path.endswith(("flag_gems/ops/softmax.py", "flag_gems/ops/layernorm.py")) for k in r.kernels)
    assert all(".target sm_90" in k.stages["ptx"] for k in r.kernels)


def test_a_library_that_asks_the_gpus_count_and_name_at_import(engine):
    """gemlite makes tensors on each `cuda:i` of `torch.cuda.device_count()` and picks its autotune
    cache by `get_device_properties(0).name` when imported: the view answers as the target (an
    H100's cache); its int8 GEMM's autotune configs, as its pruning kept them, compile for sm_90.
    Torch's own ops that register CPU and CUDA kernels themselves get no CPU twin (no
    "Overriding a previously registered kernel" warning in the output)."""
    import importlib.util
    if importlib.util.find_spec("gemlite") is None:       # (importing it here raises: no GPU)
        pytest.skip("gemlite is not installed (make setup installs it)")
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "drivers" / "gemlite_a16w8.py"
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, sass=False), timeout=600)
    assert r.ok, r.error
    assert "Overriding a previously registered" not in r.output
    import torch
    if not torch.cuda.is_available():          # (a GPU machine's own GPU answers: an H200 has no cache of gemlite's)
        assert "configs/h100.json config" in r.output
    assert {k.name for k in r.kernels} == {"gemm_splitK_INT_kernel"}
    assert r.kernels[0].label.startswith(f"autotune config 1/{len(r.kernels)} (")
    k = r.kernels[0]
    assert _arg(k, "b_ptr").type == "*i8" and _arg(k, "a_ptr").type == "*fp16" and _arg(k, "b_ptr").divisible_by_16
    assert ".target sm_90" in k.stages["ptx"] and k.source_path.endswith("gemlite/triton_kernels/gemm_splitK_kernels.py")


def test_a_helion_kernel_with_a_fixed_config(engine, snippet):
    """Helion traces its kernel on fake tensors of the target (the view leaves a tracer's fake
    tensors alone) and launches the Triton it writes: that launch is compiled for sm_90."""
    # (helion 1.5.1 imports names torch 2.11 lacks: an ImportError there, not a missing module)
    pytest.importorskip("helion", exc_type=ImportError)
    r = engine.compile(CompileRequest(source=snippet("training/helion_add.py"), filename="helion_add.py"),
                       timeout=300)
    assert r.ok, r.error
    [k] = r.kernels
    assert k.name == "_helion_add" and k.options["num_warps"] == 4 and k.options["num_stages"] == 2
    assert "def _helion_add(" in k.stages["source"] and ".target sm_90" in k.stages["ptx"]


def test_a_driver_importing_transformers(engine, snippet):
    """transformers imported for real (its lazy modules in sys.modules), a Liger op forward and
    backward on a LlamaConfig's sizes: both kernels compiled, and the worker serves the next job."""
    pytest.importorskip("transformers")
    pytest.importorskip("liger_kernel")
    r = engine.compile(CompileRequest(source=snippet("training/transformers_driver.py"),
                                      filename="transformers_driver.py"), timeout=300)
    assert r.ok, r.error
    assert [k.name for k in r.kernels] == ["_rms_norm_forward_kernel", "_rms_norm_backward_kernel"]
    from importlib.metadata import version
    assert f"transformers {version('transformers')}" in r.output    # 4.57.6 as pinned; the GPU machine has its own
    again = engine.compile(CompileRequest(source=snippet("vadd.py"), filename="vadd.py"), timeout=120)
    assert again.ok, again.error


def test_a_librarys_custom_ops_run_their_kernels_in_the_view(engine):
    """torchao's fp8 kernels are `@triton_op`s: the dispatcher calls their Python bodies with no
    mode active, and they allocate on `x.device` (cuda:0); the view runs them inside itself.
    The GEMM's autotune configs (kernel filter: only they are compiled) take the quantizers'
    fp8 outputs and their scales, specialized as on the GPU."""
    pytest.importorskip("torchao")
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "drivers" / "torchao_fp8_gemm.py"
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name,
                                      kernel="triton_fp8_gemm_1x128_128x128_kernel", sass=False), timeout=600)
    assert r.ok, r.error
    assert [k.label.split(":")[0] for k in r.kernels] == [f"autotune config {i}/6" for i in range(1, 7)]
    k = r.kernels[0]
    assert _arg(k, "a_ptr").type == "*fp8e4nv" and _arg(k, "c_ptr").type == "*bf16" and _arg(k, "a_ptr").divisible_by_16
    assert ".target sm_90" in k.stages["ptx"] and k.source_path.endswith("blockwise_fp8_training/kernels.py")


def test_import_time_probes_of_the_driver_get_the_targets_answers(engine, snippet):
    """A library that asks `triton.runtime.driver.active` about the GPU when it is imported
    (fla's hardware module) is answered as the target: the H100's BLOCK, not its no-GPU one."""
    r = engine.compile(CompileRequest(source=snippet("training/import_probe.py"), filename="import_probe.py"),
                       timeout=120)
    assert r.ok, r.error
    assert "probed at import: cuda, BLOCK=2048" in r.output
    assert _arg(r.kernels[0], "BLOCK").value == "2048"
