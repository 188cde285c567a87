"""The benchmark, on CPU: each kernel's bytes/flops model, the GB/s maths, the per-GPU lock
across processes, the no-GPU path (checked on the interpreter, never timed), faults and
mismatches reported as values, and the Benchmark page through AppTest. The GPU tests at the
end skip without a GPU (benchmarks/gpu_bench.py is the GPU machine's full run)."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

import kernels
from conftest import FIXTURES, ROOT, SNIPPETS, load_script
from inspectors.bench import model as bench
from inspectors.bench import worker as bench_worker
from inspectors.bench.model import BenchRequest, BenchResult, Ceilings, Row, Timing

# Lock files and the ceilings cache of these tests stay out of ~/.cache (the worker inherits this).
os.environ.setdefault("TLENS_BENCH_DIR", tempfile.mkdtemp(prefix="tlens-test-bench-"))

BENCHED = ["vector_add", "softmax", "matmul", "gelu", "bias_relu", "add_mul_act", "giou", "coalescing",
           "coarsening"]


def _has_gpu() -> bool:
    import torch
    return torch.cuda.is_available()


# -- the maths ------------------------------------------------------------------------------------

def test_gbps_and_tflops():
    assert bench.gbps(3 * 2**24 * 4, 0.1) == pytest.approx(2013.265920)
    assert bench.tflops(2 * 4096**3, 0.25) == pytest.approx(549.7558, rel=1e-6)
    assert bench.percent(2850.0, 3000.0) == pytest.approx(95.0)
    assert bench.percent(1.0, None) is None


def test_row_scores_against_the_right_ceiling():
    c = Ceilings(copy_gbps=3000.0, matmul_tflops=700.0, copy_bytes=2**31, matmul_n=8192, gpu_key="g",
                 driver="1", measured_at="t")
    t = Timing(median_ms=1.0, p20_ms=0.9, p80_ms=1.2)
    mem = Row.scored(2**28, "Triton", t, 3 * 2**30, 2**28, c, "memory")
    assert mem.gbps == pytest.approx(3221.225472) and mem.pct_of_ceiling == pytest.approx(107.374, rel=1e-4)
    mm = Row.scored(4096, "Triton", Timing(0.2, 0.19, 0.21), 3 * 4096**2 * 2, 2 * 4096**3, c, "compute")
    assert mm.tflops == pytest.approx(687.19, rel=1e-4)
    assert mm.pct_of_ceiling == pytest.approx(100 * mm.tflops / 700.0)
    assert Row.scored(1, "x", t, 1, 1, None, "memory").pct_of_ceiling is None


def test_timings_of_several_rounds_and_their_order():
    runs = [Timing(1.0, 0.9, 1.2), Timing(1.2, 1.1, 1.3)]
    assert bench.combine_timings(runs) == Timing(1.1, 0.9, 1.3)
    assert bench.combine_timings(runs[:1]) == runs[0]
    assert bench.round_orders(["a", "b", "c"], 3) == [["a", "b", "c"], ["c", "b", "a"], ["a", "b", "c"]]


def test_format_size():
    assert bench.format_size(2**24) == "16,777,216 (2^24)"
    assert bench.format_size(3000) == "3,000"


def test_result_round_trips_and_csv():
    data = json.loads((FIXTURES / "bench" / "vector_add_gpu.json").read_text())
    result = BenchResult.from_json(data)
    assert BenchResult.from_json(json.loads(json.dumps(result.to_json()))) == result
    assert result.timed and result.gpu and result.ceilings
    csv = bench.to_csv(result).splitlines()
    assert csv[0].startswith("# vector_add on NVIDIA")
    header = next(i for i, line in enumerate(csv) if line.startswith("size,"))
    assert csv[header] == ",".join(bench.CSV_COLUMNS)
    assert len(csv) - header - 1 == len(result.rows)
    first = csv[header + 1].split(",")
    assert int(first[0]) == result.rows[0].size and first[1] == result.rows[0].provider


# -- each kernel's model --------------------------------------------------------------------------

def _meta_inputs(module, size):
    import torch
    with torch.device("meta"):       # shapes and dtypes, no memory: the largest sizes cost nothing
        return module.bench_inputs(size)


EXPECTED_MODELS = {  # slug: (size, bytes, flops), worked by hand
    "vector_add": (2**28, 3 * 2**28 * 4, 2**28),
    "gelu": (2**28, 2 * 2**28 * 4, 15 * 2**28),
    "softmax": (16384, 2 * 16384 * 16384 * 4, 5 * 16384 * 16384),
    "matmul": (4096, 3 * 4096 * 4096 * 2, 2 * 4096**3),
    "bias_relu": (262144, (2 * 262144 * 768 + 768) * 4, 2 * 262144 * 768),
    "add_mul_act": (262144, (3 * 262144 * 1024 + 1024) * 4, 3 * 262144 * 1024),
    "giou": (2**26, 36 * 2**26, 31 * 2**26),
    "coalescing": (16384, (16384 * 16384 + 16384) * 4, 16384 * 16384),
    "coarsening": (2**28, 3 * 2**28 * 4, 2**28),
}


@pytest.mark.parametrize("slug", BENCHED)
def test_bytes_and_flops_model(slug):
    module = importlib.import_module(f"kernels.{slug}")
    size, nbytes, flops = EXPECTED_MODELS[slug]
    assert module.BENCH_SIZES[-1] == size
    inputs = _meta_inputs(module, size)
    assert module.bench_bytes(*inputs) == nbytes
    assert module.bench_flops(*inputs) == flops


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
@pytest.mark.parametrize("slug", BENCHED)
def test_static_info_matches_the_module(slug):
    entry = kernels.get(slug)
    info = bench.static_info(entry.source(), entry.filename)
    module = importlib.import_module(f"kernels.{slug}")
    assert info.sizes == tuple(module.BENCH_SIZES) and info.size == module.BENCH_SIZE
    assert info.size in info.sizes and list(info.sizes) == sorted(info.sizes)
    assert info.size_name == module.BENCH_SIZE_NAME and info.bound == module.BENCH_BOUND
    baselines = module.bench_baselines() if hasattr(module, "bench_baselines") else {}
    assert info.baselines == tuple(baselines)
    assert info.providers()[:3] == bench.STANDARD_PROVIDERS


def test_the_seed_sizes_of_add_mul_act():
    from kernels import add_mul_act
    assert [(b, add_mul_act.bench_width(b)) for b in add_mul_act.BENCH_SIZES] == [
        (4, 4), (16, 8), (64, 16), (256, 32), (1024, 64), (4096, 128), (16384, 256), (65536, 512), (262144, 1024)]


def test_static_info_says_what_is_missing():
    with pytest.raises(bench.BenchUsageError, match="needs bench_inputs, bench_kernel, bench_bytes, bench_flops"):
        bench.static_info("BENCH_SIZES = (1, 2)\n", "k.py")
    with pytest.raises(bench.BenchUsageError, match="BENCH_SIZES must be a constant"):
        bench.static_info("BENCH_SIZES = tuple(range(3))\n", "k.py")
    src = ("BENCH_SIZES = (2**10, 1 << 12)\nBENCH_BOUND = 'compute'\ndef bench_inputs(s): pass\n"
           "bench_kernel = print\ndef bench_bytes(x): pass\ndef bench_flops(x): pass\n"
           "def bench_baselines():\n    return {'a': 1, 'b': 2}\n")
    info = bench.static_info(src)
    assert info.sizes == (1024, 4096) and info.size == 4096 and info.bound == "compute"
    assert info.baselines == ("a", "b") and not info.has_check


# -- one timing at a time per GPU -----------------------------------------------------------------

# Stamps are time.monotonic(): on Linux one clock for every process of the machine, so the
# processes' stamps compare with each other and with the `waited` the lock yields. A locker says
# "waiting" on its first try that finds the GPU held (busy_since), "locked" once it holds it.
LOCKER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from inspectors.bench import lock
    directory, hold, wait = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    busy_since = []
    def on_wait(message):
        if not busy_since:
            busy_since.append(time.monotonic())
            print("waiting", flush=True)
    try:
        with lock.gpu_lock("GPU-test", "test", wait, on_wait, directory=directory, poll_s=0.02) as waited:
            start = time.monotonic()
            print("locked", flush=True)
            time.sleep(hold)
            print(json.dumps({"start": start, "end": time.monotonic(), "waited": waited,
                              "busy_since": busy_since[0] if busy_since else None}), flush=True)
    except lock.GpuBusy as e:
        print(json.dumps({"busy": str(e)}), flush=True)
""")


def _locker(tmp_path, hold: float, wait: float) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", LOCKER, str(tmp_path), str(hold), str(wait)], cwd=str(ROOT),
                            env=env, stdout=subprocess.PIPE, text=True)


def _last_json(proc: subprocess.Popen) -> dict:
    out, _ = proc.communicate(timeout=60)
    return json.loads(out.strip().splitlines()[-1])


def test_two_processes_never_hold_the_gpu_together(tmp_path):
    """No wall-clock figure (however slow the machine is to start them): both lockers start while
    this test holds the GPU and are seen waiting before it lets go; then one holds it 0.8 s, and
    the other gets it only after, having waited (as the lock reports it) at least from its first
    busy try until the first's hold ended."""
    from inspectors.bench import lock
    with lock.gpu_lock("GPU-test", "this test", 0, directory=tmp_path):
        a, b = _locker(tmp_path, 0.8, 30), _locker(tmp_path, 0.8, 30)
        assert a.stdout.readline().strip() == "waiting" and b.stdout.readline().strip() == "waiting"
    ra, rb = _last_json(a), _last_json(b)
    first, second = sorted([ra, rb], key=lambda r: r["start"])
    assert first["end"] <= second["start"], (ra, rb)
    covered = first["end"] - second["busy_since"]
    print(f"\nFIGURE the second waited {second['waited']:.2f} s; from its first busy try to the first's "
          f"end {covered:.2f} s (the first held it {first['end'] - first['start']:.2f} s)")
    assert second["waited"] >= covered, (f"the second reports waiting {second['waited']:.2f} s, but it found the GPU "
                                         f"busy {covered:.2f} s before the first let go", ra, rb)


def test_a_busy_gpu_is_reported_with_its_holder(tmp_path):
    holder = _locker(tmp_path, 600, 30)               # held until killed below, however slow the waiter is
    try:
        assert holder.stdout.readline().strip() == "locked"
        waiter = _locker(tmp_path, 0.1, 0.3)
        busy = _last_json(waiter)["busy"]
        assert "another benchmark is timing on this GPU" in busy and f"pid {holder.pid}" in busy
    finally:
        holder.kill()
        holder.wait()
    # the kernel releases a killed holder's flock: the next run gets the GPU at once, on its first
    # try (it never found it busy), not after some wall-clock figure
    after = _last_json(_locker(tmp_path, 0.0, 5))
    assert "busy" not in after and after["busy_since"] is None, after


# -- the worker without a GPU ---------------------------------------------------------------------

needs_no_gpu = pytest.mark.skipif("_has_gpu()", reason="the no-GPU path")


@needs_no_gpu
@pytest.mark.workers
def test_no_gpu_checks_on_the_interpreter_and_times_nothing():
    seen = []
    result = bench_worker.run_benchmark(BenchRequest("vector_add", sweep=True), seen.append, timeout=120)
    assert result.ok, result.error
    assert result.mode == "interpreter" and not result.timed
    assert result.rows == () and result.gpu is None and result.ceilings is None
    assert [c.ok for c in result.checks] == [True] and "check() passed" in result.checks[0].message
    assert result.note.startswith("Timing needs a GPU")
    assert seen and seen[-1].fraction == 1.0 and "nothing timed" in seen[-1].message


@needs_no_gpu
@pytest.mark.workers
def test_a_wrong_draft_is_a_mismatch_with_no_timing():
    src = kernels.get("vector_add").source().replace("x + y, mask=mask", "x - y, mask=mask")
    result = bench_worker.run_benchmark(BenchRequest("vector_add", source=src), timeout=120)
    assert result.error and result.error.kind == "mismatch" and not result.rows
    assert "Timing needs a GPU" in result.note


@needs_no_gpu
@pytest.mark.workers
def test_a_faulting_kernel_is_reported_and_the_next_run_works():
    bad = bench_worker.run_benchmark(BenchRequest("bench_fault", source=(SNIPPETS / "bench_fault.py").read_text()),
                                     timeout=120)
    assert bad.error and bad.error.kind == "crash" and "SIGSEGV" in bad.error.message
    assert "bench_fault.py" in bad.error.detail          # faulthandler's traceback names the file
    good = bench_worker.run_benchmark(BenchRequest("gelu"), timeout=120)
    assert good.ok and good.mode == "interpreter"


@pytest.mark.workers
def test_a_file_without_a_benchmark_or_check_is_a_usage_error():
    result = bench_worker.run_benchmark(BenchRequest("plain", source="import triton\n"), timeout=120)
    assert result.error and result.error.kind == "usage" and "bench_inputs" in result.error.message


@pytest.mark.workers
def test_a_runaway_worker_is_stopped_at_its_time_limit():
    """The job asks for 120 s; its 3 s limit stops it. Behaviour, not a wall-clock figure: the error
    is the timeout's, and the call (killing the worker included) came back in a small fraction of
    what the job asked for; a kill that failed would wait for the whole sleep."""
    asked_s, limit_s = 120, 3
    src = f"import time\ntime.sleep({asked_s})\n"
    t = time.perf_counter()
    result = bench_worker.run_benchmark(BenchRequest("sleepy", source=src), timeout=limit_s)
    took = time.perf_counter() - t
    assert result.error and result.error.kind == "timeout", result.error
    assert f"longer than {limit_s} s and was stopped" in result.error.message, result.error.message
    print(f"\nFIGURE stopped after {took:.1f} s (limit {limit_s} s) of the {asked_s} s the job asked for")
    assert took < asked_s / 4, f"stopped after {took:.1f} s of the {asked_s} s the job asked for (limit {limit_s} s)"


# -- the runner's bookkeeping, on the interpreter with a stand-in clock ----------------------------

RUNNER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import torch
    from inspectors.bench import lock, model as bench, runner
    import kernels.vector_add as m
    info = bench.GpuInfo(0, "stand-in", "stand-in", "9.0", 1, 1.0, "0", "0", torch.__version__, "0")
    lock.store_ceilings(bench.Ceilings(1000.0, 100.0, 1, 1, info.key, "0", "t"))
    spec = runner.KernelBench.from_module(m, "vector_add.py")
    spec.sizes = (1000, 3000)
    def broken(x, y):
        raise RuntimeError("this baseline does not build")
    spec.baselines = lambda: {"broken": broken, "double": lambda x, y: (x + y) * 2}
    clock = lambda fn: (fn(), bench.Timing(0.5, 0.4, 0.6))[1]   # NOT a timing: bookkeeping only
    req = bench.BenchRequest("vector_add", sweep=True, providers=("torch eager", "broken", "double"))
    r = runner.run_gpu(req, spec, lambda e: None, clock, info=info, device_type="cpu")
    m.add = lambda x, y: x * y                                    # now Triton is wrong
    spec.kernel = m.add
    r2 = runner.run_gpu(req, spec, lambda e: None, clock, info=info, device_type="cpu")
    print(json.dumps([r.to_json(), r2.to_json()]))
""")


def test_runner_checks_first_and_times_only_what_matches(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_INTERPRET="1", TLENS_BENCH_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", RUNNER], cwd=str(ROOT), env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    r, r2 = (BenchResult.from_json(d) for d in json.loads(proc.stdout.strip().splitlines()[-1]))
    assert r.ok and r.ceilings.cached
    assert [(row.size, row.provider) for row in r.rows] == [
        (1000, "Triton"), (1000, "torch eager"), (3000, "Triton"), (3000, "torch eager")]
    failed = {(c.size, c.provider): c.message for c in r.checks if not c.ok}
    assert set(failed) == {(1000, "broken"), (1000, "double"), (3000, "broken"), (3000, "double")}
    assert "does not build" in failed[(1000, "broken")] and "Mismatched elements" in failed[(1000, "double")]
    row = r.row(3000, "Triton")
    assert row.bytes == 36000 and row.gbps == pytest.approx(36000 / 0.5e-3 / 1e9)
    assert r.started_at <= r.finished_at
    assert r2.error.kind == "mismatch" and r2.rows == () and "nothing was timed" in r2.error.message


# -- the committed reference results ----------------------------------------------------------------

def test_reference_tables_are_rebuilt_from_the_raw_gpu_output():
    reference_tables = load_script(ROOT / "benchmarks" / "reference_tables.py")
    assets = ROOT / "assets" / "bench"
    raw = json.loads((assets / "gpu_bench.json").read_text())
    tables = reference_tables.build(raw)           # no charts: nothing is written
    assert [t["id"] for t in tables] == ["gelu", "softmax", "add_mul_act", "vector_add_copy", "library", "matmul",
                                         "agreement"]
    for t in tables:
        committed = json.loads((assets / f"{t['id']}.json").read_text())
        assert committed == json.loads(json.dumps(t, ensure_ascii=False)), t["id"]
        assert all(len(row) == len(t["table"]["columns"]) for row in t["table"]["rows"])
        assert t["env"]["gpu"]["name"] and t["env"]["gpu"]["driver"] and t["env"]["gpu"]["triton"]
    library = next(t for t in tables if t["id"] == "library")["table"]["rows"]
    assert [row[-1] for row in library] == ["met"] * len(library)     # the targets, as measured
    assert {row[-1] for row in next(t for t in tables if t["id"] == "agreement")["table"]["rows"]} == {"yes"}
    for name in ("gelu", "softmax", "add_mul_act", "vector_add_copy", "matmul"):
        assert (assets / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the page -------------------------------------------------------------------------------------

PAGE = str(ROOT / "app" / "views" / "benchmark.py")


def test_main_registers_the_benchmark_page():
    text = (ROOT / "app" / "main.py").read_text()
    assert 'st.Page("views/benchmark.py", title="Benchmark", icon=":material/timer:", url_path="benchmark")' in text


@needs_no_gpu
@pytest.mark.workers
def test_page_without_gpu_checks_and_says_timing_needs_a_gpu():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception, at.exception
    assert any("timing needs a GPU" in i.value for i in at.info)
    assert at.button(key="bench-run").label == "Check (no timing without a GPU)"
    at.selectbox(key="bench-kernel").set_value("gelu").run()
    at.button(key="bench-run").click().run()
    assert not at.exception, at.exception
    assert any("check() passed" in s.value for s in at.success)
    assert any(w.value.startswith("Timing needs a GPU") for w in at.warning)
    assert not at.metric                                   # no figure is shown without a GPU
    assert len(at.dataframe) == len(bench_view_tables())   # the reference results only


def bench_view_tables():
    return [p for p in (ROOT / "assets" / "bench").glob("*.json") if "table" in json.loads(p.read_text())]


@pytest.mark.workers
def test_page_renders_a_gpu_result():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["bench-result"] = json.loads((FIXTURES / "bench" / "vector_add_gpu.json").read_text())
    at.session_state["bench-result-size"] = 2**24
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    result = BenchResult.from_json(at.session_state["bench-result"])
    triton = result.row(2**24, "Triton")
    assert metrics["GB/s"] == f"{triton.gbps:,.0f}"
    assert metrics["% of measured copy bandwidth"] == f"{triton.pct_of_ceiling:.1f} %"
    assert any("NVIDIA" in c.value and "copy" in c.value for c in at.caption)
    table = at.dataframe[0].value
    assert len(table) == len(result.rows) and "GB/s" in table.columns


# -- on a GPU (skipped in CI) -----------------------------------------------------------------------

needs_gpu = pytest.mark.skipif("not _has_gpu()", reason="needs a CUDA GPU")


@needs_gpu
def test_gpu_panel_figure_agrees_with_do_bench():
    result = bench_worker.run_benchmark(BenchRequest("vector_add", size=2**26, providers=()), timeout=300)
    assert result.ok and result.timed, result.error
    # the independent figure, in a process of its own (a launch calls into Triton's C++ and the
    # driver: a crash there must not take the test run down)
    code = textwrap.dedent("""
        import torch
        from triton.testing import do_bench
        from kernels import vector_add
        with torch.device("cuda"):
            x, y = vector_add.bench_inputs(2**26)
        print(do_bench(lambda: vector_add.add(x, y), return_mode="median"))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ms = float(proc.stdout.strip().splitlines()[-1])
    assert result.rows[0].ms == pytest.approx(ms, rel=0.05)


@needs_gpu
def test_gpu_page_times_a_kernel():
    """The Benchmark page on a GPU: Run times the kernel (checked against torch first) and shows
    GB/s and the share of this GPU's measured copy bandwidth."""
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(PAGE, default_timeout=600).run()
    assert not at.exception, at.exception
    at.selectbox(key="bench-kernel").set_value("vector_add").run()
    at.select_slider(key="bench-size-vector_add").set_value(2**22).run()
    at.multiselect(key="bench-providers-vector_add").set_value([]).run()
    at.button(key="bench-run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["GB/s"].replace(",", "")) > 100            # an H100 moves TB/s; a CPU figure never shows
    assert metrics["% of measured copy bandwidth"].endswith("%")
    result = BenchResult.from_json(at.session_state["bench-result"])
    assert result.timed and result.gpu and result.row(2**22, "Triton").ms > 0
