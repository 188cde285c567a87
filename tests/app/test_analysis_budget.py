"""The server's analysis of a kernel (it parses a job's text: untrusted) has a time budget: a
kernel whose analysis is slow is drawn without it, the page says so, and the analysis finished
beside is found by the next run; an analysis that fails on hostile text leaves the stages shown."""
import json
import time

from conftest import FIXTURES
from app.backend import services
from inspectors.base.result import KernelResult


def _kernel(ptx: str = ".version 8.0\n") -> KernelResult:
    return KernelResult("k", "cuda:90", {"num_warps": 4}, (), {"source": "x = 1\n", "ptx": ptx})


def test_a_slow_analysis_is_cut_and_found_by_the_next_run(monkeypatch):
    real = services.analyze
    monkeypatch.setattr(services, "ANALYSIS_BUDGET_S", 0.3)
    monkeypatch.setattr(services, "analyze", lambda *a: (time.sleep(1.5), real(*a))[1])
    kernel = _kernel("// slow\n")
    t0 = time.perf_counter()
    first = services.insight(kernel, ["ptx"], "slow.py")
    assert time.perf_counter() - t0 < 1.2
    assert first.cut and "longer than 0.3 s" in first.cut
    time.sleep(1.6)
    again = services.insight(kernel, ["ptx"], "slow.py")
    assert not again.cut and "ptx" in again.summaries


def test_an_analysis_that_fails_leaves_the_stages(monkeypatch):
    def boom(*a):
        raise IndexError("hostile text")
    monkeypatch.setattr(services, "analyze", boom)
    got = services.insight(_kernel("// boom\n"), ["ptx"], "boom.py")
    assert "IndexError: hostile text" in got.cut and got.memory_ops == ()


def test_the_same_kernel_read_again_is_not_analysed_again(monkeypatch):
    calls = []
    real = services.analyze
    monkeypatch.setattr(services, "analyze", lambda *a: (calls.append(1), real(*a))[1])
    k1 = KernelResult.from_json(json.loads((FIXTURES / "insight" / "matmul_sm90.kernel.json").read_text()))
    k2 = KernelResult.from_json(k1.to_json())          # another object, the same kernel (history)
    a, b = services.insight(k1, ["ptx"], "twice.py"), services.insight(k2, ["ptx"], "twice.py")
    assert a is b and len(calls) == 1 and a.memory_ops
