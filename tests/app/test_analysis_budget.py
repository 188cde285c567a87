"""The server's analysis of a kernel (it parses a job's text: untrusted) has a time budget: a
kernel whose analysis is slow is drawn without it, the page says so, and the analysis finished
beside is found by the next run; an analysis that fails on hostile text leaves the stages shown."""
import json
import threading
import time

from conftest import FIXTURES
from inspectors.session import insights
from inspectors.base.result import KernelResult


def _kernel(ptx: str = ".version 8.0\n") -> KernelResult:
    return KernelResult("k", "cuda:90", {"num_warps": 4}, (), {"source": "x = 1\n", "ptx": ptx})


HANG_S = 60.0            # how long the slow analysis below would take if nothing let it go


def test_a_slow_analysis_is_cut_and_found_by_the_next_run(monkeypatch):
    """No wall-clock figure (machines are shared and noisy): the analysis hangs until the test lets
    it go, so the page's call can only come back by the budget; it must come back cut while the
    analysis still runs, far sooner than the HANG_S the analysis asked for, and the next run finds
    that same analysis (it ran once)."""
    real = insights.analyze
    calls, release, finished = [], threading.Event(), threading.Event()

    def slow(*a):
        calls.append(1)
        release.wait(HANG_S)
        try:
            return real(*a)
        finally:
            finished.set()

    monkeypatch.setenv("TLENS_ANALYSIS_BUDGET_S", "0.3")
    monkeypatch.setattr(insights, "analyze", slow)
    kernel = _kernel("// slow\n")
    try:
        t0 = time.perf_counter()
        first = insights.insight(kernel, "slow.py")
        took = time.perf_counter() - t0
        still_running = not finished.is_set()
    finally:
        release.set()
    print(f"\nFIGURE cut after {took:.2f} s (budget 0.3 s) of the {HANG_S:g} s the analysis asked for")
    assert first.cut and "longer than 0.3 s" in first.cut, first.cut
    assert still_running, "the page's call waited for the analysis instead of cutting it at its budget"
    assert took < HANG_S / 10, (f"the cut call took {took:.1f} s; the analysis asked for {HANG_S:g} s: "
                                "the call should come back at its 0.3 s budget, far sooner")
    assert finished.wait(HANG_S), "the analysis let go did not finish"
    again = insights.insight(kernel, "slow.py")
    assert not again.cut and "ptx" in again.summaries
    assert len(calls) == 1, f"the next run analysed the kernel again ({len(calls)} analyses), not found the first"


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
