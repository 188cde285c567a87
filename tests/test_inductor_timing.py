"""Compiled vs eager timing for the torch.compile page (inspectors/compile/inductor_timing.py):
the round orders and the spread as the Benchmark page makes them, the notes that say why a
compiled call is slow, host launch time and Dynamo's recompile count (on the CPU). The GPU
parts (do_bench, profiler, CUDA graphs) run in benchmarks/gpu_torch_compile.py."""
import json
import time

import pytest

from conftest import ROOT
from inspectors.compile import inductor_timing as it


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
                eager_kernel_ms=0.105, compiled_kernel_ms=0.049, eager_host_us=12.0, compiled_host_us=30.0)
    return it.CompileTiming(**{**base, **kw})


def test_notes_say_faster_and_nothing_else_when_all_agrees():
    t = _timing()
    assert it.notes(t) == ("compiled 0.0500 ms vs eager 0.1080 ms (2.16x faster), median of 5 rounds",)
    assert all(abs(v) < it.AGREE for v in it.agreement(t).values())
    assert it.CompileTiming.from_json(json.loads(json.dumps(t.to_json()))) == t


def test_notes_name_a_cpu_bound_call_an_unstable_figure_and_recompiles():
    slow = _timing(compiled=it.Spread(0.268, 0.050, 0.280), compiled_host_us=260.0, recompiles=1)
    text = "\n".join(it.notes(slow))
    assert "2.48x slower" in text
    assert "compiled is unstable: p20-p80 0.0500-0.2800 ms" in text
    assert "compiled is CPU-bound: launching one call takes 260.0 µs on the host, its kernels 49.0 µs" in text
    assert "Dynamo compiled 1 frame(s) while timing" in text
    assert "compiled: do_bench 0.2680 ms is +446.9 % off the profiler's kernel time 0.0490 ms; the host's 260.0 µs" \
        in text
    assert it.agreement(_timing(compiled_kernel_ms=None))["compiled"] is None


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
        assert c["within_5pct"], (key, c)
        assert c["p20_ms"] <= c["do_bench_ms"] <= c["p80_ms"], (key, c)


def test_measure_runs_rounds_in_both_orders_and_fills_every_figure(monkeypatch):
    """measure()'s bookkeeping on the CPU: the GPU-only primitives (do_bench, the profiler, the
    device sync) are replaced by recorders; the host time and Dynamo's counters are real."""
    torch = pytest.importorskip("torch")
    calls = []

    def fake_bench(f, warmup_ms, rep_ms):
        calls.append(f())
        return (0.2, 0.19, 0.21) if calls[-1] == "eager" else (0.1, 0.09, 0.11)

    monkeypatch.setattr(it, "_do_bench", fake_bench)
    monkeypatch.setattr(it, "kernel_time_ms", lambda f, n: 0.1 if f() == "compiled" else 0.2)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    compiled = torch.compile(lambda x: "compiled", backend="eager")
    compiled(torch.ones(2))
    t = it.measure(lambda x: "eager", compiled, (torch.ones(2),), rounds=4)
    assert calls == ["eager", "compiled", "compiled", "eager"] * 2          # forward, reverse, ...
    assert (t.eager.median_ms, t.compiled.median_ms, t.speedup) == (0.2, 0.1, 2.0)
    assert t.eager_kernel_ms == 0.2 and t.compiled_kernel_ms == 0.1 and t.compiled_host_us > 0
    assert t.recompiles == 0 and t.errors == () and "2.00x faster" in t.notes[0]
