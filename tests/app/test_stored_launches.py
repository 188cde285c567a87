"""The Explorer on a result whose launches are stored one file each (TLENS_INLINE_MB=0: every
result so, as a training step past 16 MB is): the launch picker lists them from their headers,
and a launch picked shows its own stages, read from its file."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest_panels import panels, text
from inspectors.base.launches import StoredLaunches
from conftest import ROOT, SNIPPETS
from editor_helpers import editor

pytestmark = pytest.mark.workers


def test_a_stored_results_launches_are_picked_and_shown(monkeypatch):
    monkeypatch.setenv("TLENS_INLINE_MB", "0")
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=240)
    at.run()
    source = (SNIPPETS / "autotune_prune.py").read_text() + "\n# stored launches\n"
    editor(at).input(source).run()
    at.button(key="compile").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    from app.backend import services
    newest = list(services.lens().results._memory.values())[-1]       # the result the page shows
    assert isinstance(newest.kernels, StoredLaunches) and len(newest.kernels) == 3
    launches = at.selectbox(key="launch")
    assert len(launches.options) == 3
    table = next(d for d in at.dataframe if d.key == "step-table")        # the step at a glance, from headers
    assert list(table.value["kernel"]) == ["copy_kernel"] * 3 and list(table.value["#"]) == [1, 2, 3]
    assert any(e.label.startswith("The step: 3 launches") for e in at.expander)
    first = panels(at)["ptx"]["lines"]
    launches.set_value(2).run()
    assert not at.exception
    third = panels(at)["ptx"]["lines"]
    assert ".entry copy_kernel" in "\n".join(third) and third != first
    assert "stages are gone" not in text(at)
