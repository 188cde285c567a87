"""The step table's "Measure on this machine's GPU" (issue 57): without a GPU it says the times are
estimates; with one, each Triton launch's measured time sits beside its estimate. The GPU and
the measuring worker are stood in for here (the real run: tests/unit/test_step_estimates.py's
GPU test, and benchmarks/time_estimates.py)."""
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, SNIPPETS
from editor_helpers import editor

pytestmark = pytest.mark.workers


def _page(source: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=240)
    at.run()
    editor(at).input(source).run()
    at.button(key="compile").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_measuring_without_a_gpu_says_the_times_are_estimates(monkeypatch):
    from inspectors.session import bench
    from app.widgets import bench_view
    monkeypatch.setattr(bench, "probe", lambda: {"gpus": []})
    bench_view.gpu_probe.clear()
    try:
        at = _page((SNIPPETS / "autotune_prune.py").read_text() + "\n# measure, no GPU\n")
        at.button(key="step-measure").click().run()
        assert any("No GPU on this machine" in i.value for i in at.info)
        table = next(d for d in at.dataframe if d.key == "step-table")
        assert "measured µs" not in table.value.columns
        # the cells a row leaves empty (a cuBLAS call's #, warps, registers) are drawn blank, not "None"
        assert table.proto.HasField("placeholder") and table.proto.placeholder == ""
    finally:
        bench_view.gpu_probe.clear()


def test_measured_times_join_the_table_on_a_gpu(monkeypatch):
    from inspectors.session import bench
    from app.widgets import bench_view
    calls = []
    monkeypatch.setattr(bench, "probe", lambda: {"gpus": [{"index": 0, "name": "NVIDIA H200"}]})
    monkeypatch.setattr(bench, "measure_source", lambda source, filename, files=None: calls.append(filename) or
                        {"times": {"copy_kernel": [12.0, 14.0, 13.0, 13.0, 13.0], "nvjet_sm90_tst": [5.0] * 5}})
    bench_view.gpu_probe.clear()
    try:
        at = _page((SNIPPETS / "autotune_prune.py").read_text() + "\n# measure, a GPU\n")
        at.button(key="step-measure").click().run()
        assert not at.exception and len(calls) == 1 and calls[0].endswith(".py")
        table = next(d for d in at.dataframe if d.key == "step-table")
        assert list(table.value["measured µs"]) == [13.0, 13.0, 13.0]
    finally:
        bench_view.gpu_probe.clear()
