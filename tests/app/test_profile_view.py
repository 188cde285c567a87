"""The explorer with a saved profile (issue 22): a "Measured heat" toggle when the open file's
launch has one, heat bars in the panels' data, the hottest lines with their reasons. The
profile here is made by the test from a real compile of kernels/vector_add.py and a CSV in
Nsight Compute's layout whose figures are the test's own (labelled so in the profile's GPU
field): it checks the plumbing, not a measurement."""
import hashlib
import os

import pytest
from streamlit.testing.v1 import AppTest

from apptest_panels import panels
from conftest import ROOT
from inspectors.base.result import CompileRequest
from inspectors.explain import profile as prof
from inspectors.read import ncu_source as ncu
from inspectors.read import sourcemap as sm
from inspectors.store import profiles
from ncu_csv import export, load_heavy

APP = str(ROOT / "app" / "main.py")


@pytest.fixture(scope="module")
def saved(engine, tmp_path_factory):
    folder = tmp_path_factory.mktemp("profiles")
    source = (ROOT / "kernels" / "vector_add.py").read_text()
    k = engine.compile(CompileRequest(source=source, filename="vector_add.py", target="cuda:90")).kernels[0]
    smap = sm.build(k.stages, "vector_add.py")
    raw = export(k.stages["sass"], load_heavy)
    meta = {"gpu": "test-made CSV, not a measurement", "driver": "-", "cuda": "-", "torch": "-", "triton": "-",
            "date": "2026-11-24", "tool": "ncu", "file": "vector_add.py", "kernel": k.name, "launch": 1,
            "source_sha256": hashlib.sha256(source.encode()).hexdigest(), "launch_ints": {"n_elements": 98432}}
    p = prof.build(ncu.parse(raw)[0], k.stages["sass"], smap.stages["sass"], meta=meta)
    profiles.save(folder, "vector_add-launch1", p, raw)
    old = os.environ.get("TLENS_PROFILES_DIR")
    os.environ["TLENS_PROFILES_DIR"] = str(folder)
    yield p, source
    if old is None:
        os.environ.pop("TLENS_PROFILES_DIR", None)
    else:
        os.environ["TLENS_PROFILES_DIR"] = old


def test_heat_in_the_explorer(saved):
    p, source = saved
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.selectbox(key="picker").set_value("vector_add").run()
    at.selectbox(key="target").set_value("cuda:90").run()
    at.button(key="compile").click().run()
    assert not at.exception, at.exception
    assert not panels(at)["ptx"]["heat"]                    # off until asked for
    toggle = at.toggle(key="heat")
    assert "test-made CSV, not a measurement" in toggle.help
    toggle.set_value(True).run()
    assert not at.exception, at.exception
    hot = p.lines[0]
    data = panels(at)
    for stage in ("source", "ptx"):
        heat = {int(n): h for n, h in data[stage]["heat"].items()}
        assert heat and max(heat.values()) == pytest.approx(hot.share, abs=1e-5), stage
    assert data["source"]["heat"][str(hot.python_line)] == pytest.approx(hot.share, abs=1e-5)
    tables = [d for d in at.dataframe if d.key != "step-table"]       # (the step's table is above the panels)
    table = tables[0].value
    assert table["where"].iloc[0] == f"line {hot.python_line}" and "long scoreboard" in table["why (ncu)"].iloc[0]
    assert any("Where the time goes, measured on test-made CSV" in c.value for c in at.caption)
    from app.widgets import profile_view
    n = int(p.total_samples)
    assert any(e.label == f"Hottest lines — line {hot.python_line}: {100 * hot.share:.1f} % of {n:,} samples"
               for e in at.expander), [e.label for e in at.expander]
    few = any("samples: a share of p % is known to about" in c.value for c in at.caption)
    assert few == (n < profile_view.FEW_SAMPLES)
    # measured against predicted: the estimate of this PTX (16 sectors for a v4 load of a warp)
    # next to the test-made 4 sectors per execution
    compared = tables[1].value
    loads = compared[compared["access"] == "load"]
    assert len(loads) == 2 and set(loads["predicted sectors / request"]) == {16.0}
    assert set(loads["measured"]) == {4.0} and set(loads["difference"]) == {"-75 %"}


def test_edited_file_gets_no_heat(saved):
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.selectbox(key="picker").set_value("vector_add").run()
    at.selectbox(key="target").set_value("cuda:90").run()
    from editor_helpers import editor
    editor(at).input(saved[1].replace("# pointer to the first input", "# the first input")).run()
    at.button(key="compile").click().run()
    assert not at.exception, at.exception
    assert any("the file changed since it was measured" in c.value for c in at.caption)
    assert not [t for t in at.toggle if t.key == "heat"]


def test_few_samples_are_said_with_their_uncertainty():
    """matmul's H100 profile has 56 samples: its top line's 25 % is known to about ±12 points."""
    from app.widgets import profile_view
    assert profile_view._spread(56) == 12 and profile_view._spread(383) == 4
    assert profile_view._spread(10_000) == 1


@pytest.mark.workers
def test_bank_conflicts_predicted_beside_measured(monkeypatch):
    """The committed H100 profile of the unswizzled Gluon buffer: its read line, 32-way predicted
    from the PTX compiled here and 32-way measured by ncu, in the hottest-lines expander's table."""
    from app.widgets import profile_view
    from inspectors.base import settings as settings_mod
    from inspectors.base.result import CompileRequest
    from inspectors.compile.engine import Engine
    from inspectors.read import sourcemap
    path = ROOT / "tests" / "snippets" / "why" / "bank_conflict.py"
    monkeypatch.setattr(profile_view, "profiles_dir", lambda: ROOT / "assets" / "profiles")
    saved = profile_view.saved_profile("bank_conflict.py", 0)
    if saved is None:
        pytest.skip("no committed bank-conflict profile")
    engine = Engine(settings_mod.load())
    try:
        r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target="cuda:90", sass=False))
    finally:
        engine.close()
    k = r.kernels[0]
    rows = profile_view.bank_rows(saved, "bank_conflict.py", k, sourcemap.build(k.stages, path.name))
    read = next(x for x in rows if path.read_text().splitlines()[x["Python line"] - 1].strip().startswith("y = tile.load"))
    assert read["predicted ways"] == 32.0 and read["measured ways (ncu)"] == 32.0
