"""Compiled vs eager timing for the torch.compile page (inspectors/compile/torch_compile_timing.py):
the round orders and the spread as the Benchmark page makes them, the notes that say why a
compiled call is slow, host launch time and Dynamo's recompile count (on the CPU). The GPU
parts (do_bench, profiler, CUDA graphs) run in benchmarks/gpu_torch_compile.py."""
import json
import time

import pytest

from conftest import ROOT
from inspectors.compile import torch_compile_timing as it


def test_orders_and_spread_are_the_benchmark_pages():
    from inspectors.bench.model import round_orders
    for rounds in (1, 2, 5):
        assert it.orders(["eager", "compiled"], rounds) == round_orders(["eager", "compiled"], rounds)
    s = it.combine([(0.10, 0.09, 0.12), (0.30, 0.25, 0.31), (0.11, 0.10, 0.13)])
    assert (s.median_ms, s.p20_ms, s.p80_ms, s.rounds_ms) == (0.11, 0.09, 0.31, (0.10, 0.30, 0.11))
    with pytest.raises(ValueError):
        it.combine([])


def _timing(**kw):
    base = dict(eager=it.Spread(0.108, 0.106, 0.110), compiled=it.Spread(0.050, 0.049, 0.051), rounds=5,
                eager_gpu=it.Spread(0.106, 0.105, 0.107), compiled_gpu=it.Spread(0.0495, 0.049, 0.050),
                eager_kernel_ms=0.105, compiled_kernel_ms=0.049, eager_host_us=12.0, compiled_host_us=30.0)
    return it.CompileTiming(**{**base, **kw})


def test_notes_say_faster_and_nothing_else_when_all_agrees():
    t = _timing()
    assert it.notes(t) == ("compiled 0.0495 ms vs eager 0.1060 ms on the GPU (CUDA graph replay, L2 flushed) "
                           "(2.14x faster), median of 5 rounds",)
    assert all(abs(v) < it.AGREE for v in it.agreement(t).values())
    assert it.CompileTiming.from_json(json.loads(json.dumps(t.to_json()))) == t
    old = {**t.to_json(), "eager_graph_ms": 0.1}            # a record of the version before: read, not refused
    assert it.CompileTiming.from_json(old) == t


def test_the_headline_is_the_gpu_time_and_a_cpu_bound_call_is_said_beside_it():
    """The H100's case: the compiled call's kernels take 36 µs, launching it 44 µs; do_bench
    wandered 0.044-0.070 ms from round to round while graph replay held at 0.036 ms."""
    t = _timing(compiled=it.Spread(0.0606, 0.0393, 0.0853), compiled_gpu=it.Spread(0.0361, 0.0360, 0.0362),
                compiled_kernel_ms=0.0365, compiled_host_us=43.6)
    assert t.speedup == pytest.approx(0.106 / 0.0361)
    text = "\n".join(it.notes(t))
    assert text.startswith("compiled 0.0361 ms vs eager 0.1060 ms on the GPU")
    assert "per call from Python (do_bench, host included): compiled 0.0606 ms vs eager 0.1080 ms (1.78x faster)" in text
    assert ("compiled is CPU-bound: launching one call takes 43.6 µs on the host, its kernels 36.5 µs on the GPU; "
            "back to back the GPU waits for the CPU, and a call from Python takes 0.0606 ms (p20-p80 0.0393-0.0853)"
            in text)
    assert "unstable" not in text            # the GPU time is steady: only do_bench wandered
    assert abs(it.agreement(t)["compiled"]) < it.AGREE


def test_without_a_graph_do_bench_is_the_headline_and_the_notes_say_so():
    slow = _timing(eager_gpu=None, compiled_gpu=None, compiled=it.Spread(0.268, 0.050, 0.280),
                   compiled_host_us=260.0, recompiles=1, errors=("compiled CUDA graph: RuntimeError: x",))
    text = "\n".join(it.notes(slow))
    assert "per call (do_bench, L2 flushed) (2.48x slower)" in text
    assert "no CUDA graph of a call" in text
    assert "compiled is unstable: p20-p80 0.0500-0.2800 ms" in text
    assert "compiled is CPU-bound: launching one call takes 260.0 µs on the host, its kernels 49.0 µs" in text
    assert "Dynamo compiled 1 frame(s) while timing" in text
    assert "compiled: do_bench 0.2680 ms is +446.9 % off the profiler's kernel time 0.0490 ms; the host's 260.0 µs" \
        in text
    assert it.agreement(_timing(compiled_kernel_ms=None))["compiled"] is None


def test_quantiles_interpolate_as_numpy_does():
    np = pytest.importorskip("numpy")
    xs = sorted([0.3, 0.1, 0.7, 0.2, 0.9, 0.4, 0.5])
    for q in (0.0, 0.2, 0.5, 0.8, 1.0):
        assert it._quantile(xs, q) == pytest.approx(float(np.quantile(xs, q)))


def test_host_time_counts_the_cpu_work_of_a_call():
    took = it.host_time_us(lambda: time.sleep(0.0002), calls=25)
    assert took >= 200


def test_recompiles_are_counted():
    torch = pytest.importorskip("torch")
    f = torch.compile(lambda x: x * 2 + 1, backend="eager", dynamic=False)
    f(torch.ones(3))
    before = it.dynamo_frames()
    f(torch.ones(3))                     # guards hold: no new frame
    assert it.dynamo_frames() == before
    f(torch.ones(3, dtype=torch.float64))   # a dtype guard fails: compiled again
    assert it.dynamo_frames() == before + 1


def test_committed_gpu_timing_agrees_with_an_independent_timing():
    summary = json.loads((ROOT / "benchmarks" / "results" / "gpu_torch_compile.json").read_text())
    if "timing_check" not in summary:
        pytest.skip("benchmarks/results/gpu_torch_compile.json predates the timing check: "
                    "re-run benchmarks/gpu_torch_compile.py on the GPU")
    checks = summary["timing_check"]
    assert {k.split("/")[0] for k in checks} >= set(summary["examples"])
    for key, c in checks.items():
        assert c["headline"] == "graph replay", (key, c)
        assert c["within_5pct"], (key, c)
        assert abs(c["gpu_ms"] / c["profiler_kernel_ms"] - 1) <= it.AGREE, (key, c)
        assert c["gpu_p20_ms"] <= c["gpu_ms"] <= c["gpu_p80_ms"], (key, c)
        assert c["do_bench_p20_ms"] <= c["do_bench_ms"] <= c["do_bench_p80_ms"], (key, c)


def test_measure_runs_rounds_in_both_orders_and_fills_every_figure(monkeypatch):
    """measure()'s bookkeeping on the CPU: the GPU-only primitives (do_bench, the profiler, the
    device sync) are replaced by recorders; the host time and Dynamo's counters are real."""
    torch = pytest.importorskip("torch")
    calls = []

    def fake_bench(f, warmup_ms, rep_ms):
        calls.append(f())
        return (0.2, 0.19, 0.21) if calls[-1] == "eager" else (0.1, 0.09, 0.11)

    class FakeGraph:                      # replays record their provider beside do_bench's calls
        def __init__(self, f, n):
            self.f = f
            if f() == "eager" and graphless:
                raise RuntimeError("operation not permitted when stream is capturing")

        def sample(self):
            calls.append("graph " + self.f())
            return (0.19, 0.18, 0.2) if self.f() == "eager" else (0.05, 0.049, 0.051)

    monkeypatch.setattr(it, "_do_bench", fake_bench)
    monkeypatch.setattr(it, "GraphTimer", FakeGraph)
    monkeypatch.setattr(it, "kernel_time_ms", lambda f, n: 0.05 if f() == "compiled" else 0.19)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    compiled = torch.compile(lambda x: "compiled", backend="eager")
    compiled(torch.ones(2))
    graphless = False
    t = it.measure(lambda x: "eager", compiled, (torch.ones(2),), rounds=4)
    assert calls == ["eager", "graph eager", "compiled", "graph compiled",
                     "compiled", "graph compiled", "eager", "graph eager"] * 2     # forward, reverse, ...
    assert (t.eager.median_ms, t.compiled.median_ms) == (0.2, 0.1)
    assert (t.eager_gpu.median_ms, t.compiled_gpu.median_ms, t.speedup) == (0.19, 0.05, 0.19 / 0.05)
    assert t.eager_kernel_ms == 0.19 and t.compiled_kernel_ms == 0.05 and t.compiled_host_us > 0
    assert t.recompiles == 0 and t.errors == () and "3.80x faster" in t.notes[0]
    # a function a CUDA graph cannot hold: do_bench alone, and the error says why
    calls.clear()
    graphless = True
    t = it.measure(lambda x: "eager", compiled, (torch.ones(2),), rounds=2)
    assert t.eager_gpu is None and t.compiled_gpu is not None and not t.by_graph
    assert t.speedup == 2.0 and "operation not permitted" in t.errors[0]
