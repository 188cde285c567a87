"""The server's analysis of a kernel (it parses a job's text: untrusted) has a time budget: a
kernel whose analysis is slow is drawn without it, the page says so, and the analysis finished
beside is found by the next run; an analysis that fails on hostile text leaves the stages shown."""
import json
import time

from conftest import FIXTURES
from inspectors.session import insights
from inspectors.base.result import KernelResult


def _kernel(ptx: str = ".version 8.0\n") -> KernelResult:
    return KernelResult("k", "cuda:90", {"num_warps": 4}, (), {"source": "x = 1\n", "ptx": ptx})


def test_a_slow_analysis_is_cut_and_found_by_the_next_run(monkeypatch):
    real = insights.analyze
    monkeypatch.setenv("TLENS_ANALYSIS_BUDGET_S", "0.3")
    monkeypatch.setattr(insights, "analyze", lambda *a: (time.sleep(1.5), real(*a))[1])
    kernel = _kernel("// slow\n")
    t0 = time.perf_counter()
    first = insights.insight(kernel, "slow.py")
    assert time.perf_counter() - t0 < 1.2
    assert first.cut and "longer than 0.3 s" in first.cut
    time.sleep(1.6)
    again = insights.insight(kernel, "slow.py")
    assert not again.cut and "ptx" in again.summaries


def test_an_analysis_that_fails_leaves_the_stages(monkeypatch):
    def boom(*a):
        raise IndexError("hostile text")
    monkeypatch.setattr(insights, "analyze", boom)
    got = insights.insight(_kernel("// boom\n"), "boom.py")
    assert "IndexError: hostile text" in got.cut and got.memory_ops == ()


def test_the_same_kernel_read_again_is_not_analysed_again(monkeypatch):
    calls = []
    real = insights.analyze
    monkeypatch.setattr(insights, "analyze", lambda *a: (calls.append(1), real(*a))[1])
    k1 = KernelResult.from_json(json.loads((FIXTURES / "insight" / "matmul_sm90.kernel.json").read_text()))
    k2 = KernelResult.from_json(k1.to_json())          # another object, the same kernel (history)
    a, b = insights.insight(k1, "twice.py"), insights.insight(k2, "twice.py")
    assert a is b and len(calls) == 1 and a.memory_ops
