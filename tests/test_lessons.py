"""The Lessons and Layouts pages through AppTest (widgets by key), and the coarsening sweep
against the PTX it comes from."""
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from inspectors.explain import coarsening

APP = str(ROOT / "app" / "main.py")


def _html(at) -> str:
    return "\n".join(el.proto.body for el in at.get("html"))


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _open(params: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.switch_page("views/lessons.py")
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_link_opens_a_lesson_at_a_step_in_large_type():
    at = _open({"lesson": "coalescing", "step": "4", "big": "1"})
    assert "Coalescing · step 4 of 6: A naive transpose, rescued" in _markdown(at)
    assert "ttg.convert_layout" in "\n".join(c.value for c in at.code)
    assert "html { font-size: 22px" in _html(at)                   # large type
    assert "Look at: The ttg.convert_layout line" in _html(at)
    assert at.toggle(key="big").value is True


def test_one_click_per_step_and_the_url_follows():
    at = _open({"lesson": "coalescing", "step": "1"})
    assert at.button(key="lesson_prev").disabled
    at.button(key="lesson_next").click().run()
    assert "step 2 of 6: Column-wise read" in _markdown(at)
    assert at.query_params["step"] == "2" and at.query_params["lesson"] == "coalescing"
    assert "32 sectors of 32 B: 12.5 %" in _markdown(at)
    at.button(key="lesson_prev").click().run()
    assert "step 1 of 6: Row-wise read" in _markdown(at)
    assert "16 sectors of 32 B: 100.0 %" in _markdown(at)
    at.toggle(key="big").set_value(True).run()
    assert at.query_params["big"] == "1"
    at.radio(key="lesson").set_value("coarsening").run()
    assert "Thread coarsening · step 1 of 7" in _markdown(at) and at.query_params["step"] == "1"


def test_bad_links_fall_back():
    at = _open({"lesson": "nope", "step": "99"})
    assert "Thread coarsening · step 1 of 7" in _markdown(at)
    at = _open({"lesson": "coalescing", "step": "99"})
    assert "step 6 of 6" in _markdown(at) and at.button(key="lesson_next").disabled


def test_coarsening_block_step_shows_v1_v2_v4():
    at = _open({"lesson": "coarsening", "step": "2"})
    assert not at.error, [e.value for e in at.error]
    df = at.dataframe[0].value
    assert list(df["BLOCK"]) == list(coarsening.BLOCKS)
    assert list(df["load width"]) == ["scalar", "v2", "v4", "v4", "v4", "v4", "v4"]
    assert list(df["ld.global / thread"]) == [2, 2, 2, 4, 8, 16, 32]
    assert list(df["elements / thread"]) == ["1", "2", "4", "8", "16", "32", "64"]


def test_measured_steps_show_the_committed_gpu_runs():
    at = _open({"lesson": "coalescing", "step": "6"})
    assert "H100" in _markdown(at)
    df = at.dataframe[0].value
    assert df["within ±10 %"].all() and len(df) >= 12
    at = _open({"lesson": "coarsening", "step": "6"})
    assert "GB/s" in _markdown(at) and "H100" in _markdown(at)


def test_sweep_widths_match_the_ptx(engine):
    """The coarsening sweep compiles without a GPU; each row's vector width and load count are
    those of the PTX's ld.global / st.global lines (read with an independent regex)."""
    import kernels
    source = kernels.get("coarsening").source()
    widths = {}
    for block, warps in coarsening.DEFAULT:
        result = engine.compile(coarsening.sweep_request(source, block, warps))
        assert result.ok, result.error
        k = result.kernels[0]
        row = coarsening.sweep_row(k, block, warps)
        ld, st = coarsening.widths_in_ptx(k.stages["ptx"], "ld"), coarsening.widths_in_ptx(k.stages["ptx"], "st")
        assert row.load_vector == max(ld) and row.store_vector == max(st), (block, warps)
        assert row.loads_per_thread == len(ld) and row.stores_per_thread == len(st)
        assert row.elements_per_thread * row.threads == max(block, row.threads) // row.copies * row.copies
        assert row.registers and row.occupancy_warps
        widths[(block, warps)] = row.load_vector
    assert [widths[(b, 4)] for b in coarsening.BLOCKS] == [1, 2, 4, 4, 4, 4, 4]
    assert [widths[(1024, w)] for w in coarsening.WARPS] == [4, 4, 4, 4, 2]


def test_layouts_page_draws_the_mma_accumulator():
    at = AppTest.from_file(APP, default_timeout=240)
    at.switch_page("views/layouts.py")
    at.query_params.update({"kernel": "matmul", "target": "cuda:80"})
    at.run()
    assert not at.exception, at.exception
    text = _markdown(at)
    assert "`#mma`" in text and "mma.sync" in text and "goes through **shared memory**" in text
    at.selectbox(key="lay_layout").set_value("#mma").run()
    html = _html(at)
    assert 'class="tl-grid"' in html and "Showing 32 of 128 rows" in "\n".join(c.value for c in at.caption)
    assert len(at.get("graphviz_chart")) == 1
    at.selectbox(key="lay_kernel").set_value("vector_add").run()
    assert not at.exception and at.selectbox(key="lay_layout").value == "#blocked"
