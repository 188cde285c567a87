"""The Lessons and Layouts pages through AppTest (widgets by key), and the coarsening sweep
against the PTX it comes from."""
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from inspectors.explain import coarsening

# every test here starts a compile worker or the CLI (tests/conftest.py)
pytestmark = pytest.mark.workers

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


def _all_text(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.code] + [i.value for i in at.info]
                     + [c.value for c in at.caption] + [_html(at)] + [t.value.to_string() for t in at.table])


def _step_clean(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]        # a {{figure}} nobody provided warns
    assert "⟨" not in _all_text(at) and "{{" not in _all_text(at)


@pytest.mark.parametrize("lesson, steps", [("fusion", 7), ("tiling", 8), ("hopper", 5), ("torch_compile", 5)])
def test_every_step_of_the_new_lessons_draws_with_every_figure_filled(lesson, steps):
    measured = (ROOT / "assets" / "gpu" / "gpu_lessons.json").exists()
    for step in range(1, steps + 1):
        at = _open({"lesson": lesson, "step": str(step)})
        _step_clean(at)
        text = _all_text(at)
        assert f"step {step} of {steps}" in text
        if not measured and (lesson, step) in (("fusion", 6), ("fusion", 7), ("tiling", 8)):
            assert "Not yet measured on a GPU" in text                # plainly, and no figure typed in


def test_fusion_steps_show_the_bytes_and_the_loads():
    at = _open({"lesson": "fusion", "step": "2"})
    df = at.table[0].value
    rows = {(r["version"], r["example"].rsplit(" (", 1)[0]): r for r in df.to_dict("records")}
    assert rows[("separate torch ops", "bias-add + ReLU")]["kernels"] == 2
    assert rows[("separate torch ops", "GELU (tanh)")]["× fused"] == "11.0"
    assert "(2.0×)" in _markdown(at) and "(11.0×)" in _markdown(at)
    at = _open({"lesson": "fusion", "step": "3"})
    code = "\n".join(c.value for c in at.code)
    assert "ld.global.v4.b32" in code and "st.global.v4.b32" in code and "max.f32" in code
    at = _open({"lesson": "fusion", "step": "4"})
    df = at.table[0].value
    assert any(k.startswith("torch.compile: triton_poi_fused_add_relu_0") for k in df["kernel"])
    assert "config 1 has exactly our loads and stores" in _markdown(at)


def test_tiling_steps_show_the_instructions_and_the_pipeline():
    at = _open({"lesson": "tiling", "step": "3"})
    df = at.table[0].value.set_index("PTX instruction")
    assert df.loc["wgmma.mma_async (Hopper tensor cores)", "sm_90"] > 0 == df.loc["wgmma.mma_async (Hopper tensor cores)", "sm_80"]
    assert df.loc["mma.sync (Ampere tensor cores)", "sm_80"] > 0
    loops = "\n".join(c.value for c in at.code)
    assert "cp.async.wait_group 2" in loops and "wgmma.mma_async" in loops
    at = _open({"lesson": "tiling", "step": "5"})
    df = at.table[0].value
    sm90 = df[df["target"] == "sm_90"].set_index("num_stages")
    assert list(sm90["wait_group N"]) == ["—", "0", "2", "4"] and list(sm90["cp.async / loop"])[0] == 0
    assert [float(x) for x in sm90["shared KiB"]] == [48, 96, 144, 192]
    at = _open({"lesson": "tiling", "step": "6"})
    assert "the first wave covers 5 rows of tiles and 32 of the 32 columns" in " ".join(_markdown(at).split())


def _fake_gpu_run() -> dict:
    """A stand-in for assets/gpu/gpu_lessons.json in the shape benchmarks/gpu_lessons.py writes,
    with made-up numbers (GPU "TEST GPU"): it only drives the measured panels' code here and is
    never written under assets/."""
    import importlib.util
    from inspectors.explain import tiling
    spec = importlib.util.spec_from_file_location("gpu_lessons", ROOT / "benchmarks" / "gpu_lessons.py")
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    versions = {"bias_relu": ["separate torch ops", "Triton, one kernel", "torch.compile"],
                "gelu": ["separate torch ops", "F.gelu (one torch op)", "Triton, one kernel", "torch.compile"]}
    fusion = {"shapes": {k: [list(s) for s in v] for k, v in g.FUSION_SHAPES.items()}, "examples": {}}
    for ex, names in versions.items():
        rows = [{"version": v, "bytes": (4 if i == 0 else 2) * 2**30, "ops": None, "kernels": 2 if i == 0 else 1,
                 "kernel_names": [], "ms": 2.0 if i == 0 else 1.0, "p20_ms": 1.0, "p80_ms": 2.0,
                 "gbps": 1000.0 + i} for i, v in enumerate(names)]
        fusion["examples"][ex] = {"rows": rows, "least_bytes": 2 * 2**30}
    fusion["add_mul_act"] = {"rows": [{"batch": b, "width": 2 * int(round(b ** 0.5)), "bytes": 1, "ms": {},
                                       "gbps": {"Triton": 1.0, "torch eager": 2.0, "TorchScript": 3.0, "torch.compile": 4.0}}
                                      for b in g.ADD_MUL_BATCHES]}
    runs = {}
    for step, cfg, size in g.matmul_runs():
        runs[tiling.key(*cfg, size=size)] = {"step": step, "config": list(cfg), "size": size, "ms": 1.0, "p20_ms": 1.0,
                                             "p80_ms": 1.0, "tflops": 123.0, "registers": 208, "spills": 0,
                                             "shared": 147456, "num_warps": cfg[3], "families": {}, "loop_waits": [2]}
    key = tiling.key(*tiling.DEFAULT, group=8, size=tiling.SIZE)
    ncu = {"metrics": list(g.NCU_METRICS), "dropped_metrics": [], "order": [],
           "cases": {"fusion/gelu/separate torch ops": [{"kernel": "k", "dram__bytes_read.sum": 2**30,
                                                         "dram__bytes_write.sum": 2**30}],
                     f"matmul/{key}": [{"kernel": "matmul_kernel", "launch__registers_per_thread": 208,
                                        "launch__shared_mem_per_block_dynamic": 147456,
                                        "sm__maximum_warps_per_active_cycle_pct": 12.5,
                                        "lts__t_sectors_srcunit_tex_op_read.sum": 5e7, "dram__bytes_read.sum": 3e8,
                                        "lts__t_sector_hit_rate.pct": 80.0}]}}
    return {"script": "benchmarks/gpu_lessons.py", "errors": {}, "seconds": {},
            "env": {"gpu": "TEST GPU", "capability": "9.0", "sms": 132, "driver": "0", "torch": "t", "triton": "x"},
            "ceilings": {"copy_gbps": 2000.0}, "fusion": fusion,
            "matmul": {"runs": runs, "torch_matmul": {str(tiling.SIZE): {"ms": 1.0, "tflops": 600.0},
                                                      str(tiling.GROUP_SIZE): {"ms": 1.0, "tflops": 610.0}}},
            "ncu": ncu}


def test_the_measured_steps_draw_a_gpu_run(tmp_path, monkeypatch):
    import json
    from app.lessons import common
    path = tmp_path / "gpu_lessons.json"
    path.write_text(json.dumps(_fake_gpu_run()))
    monkeypatch.setattr(common, "LESSONS_GPU_FILE", path)
    for lesson, step in (("fusion", 6), ("fusion", 7), ("tiling", 4), ("tiling", 5), ("tiling", 6), ("tiling", 8)):
        at = _open({"lesson": lesson, "step": str(step)})
        _step_clean(at)
        text = _all_text(at)
        assert "TEST GPU" in text or "123" in text, (lesson, step)
        assert "Not yet measured" not in text
    at = _open({"lesson": "fusion", "step": "6"})
    assert "GELU **2.0×**" in " ".join(_markdown(at).split())          # bytes ratio of the run's own rows
    gelu = at.table[1].value.set_index("version")
    assert gelu.loc["separate torch ops", "MB DRAM (ncu)"] == "2,147.5" and gelu.loc["torch.compile", "MB DRAM (ncu)"] == "—"
    at = _open({"lesson": "tiling", "step": "8"})
    checks = at.table[1].value
    assert set(checks["figure"]) >= {"registers per thread", "theoretical occupancy (%)"} and "True" in str(list(checks["agrees"]))


def test_hopper_lesson_counts_copies_and_partitions():
    at = _open({"lesson": "hopper", "step": "2"})
    assert not at.error, [e.value for e in at.error]
    text = _markdown(at)
    assert "**2 copy instructions where the pointer version issued\n2048**" in text
    assert "mbarrier.arrive.expect_tx ... 32768" in text
    df = at.table[0].value
    assert list(df["threads issuing"]) == [256, 1] and list(df["bytes each"]) == ["16 B", "16 KiB"]
    at = _open({"lesson": "hopper", "step": "3"})
    assert not at.error and not at.warning, [w.value for w in at.warning]
    assert "compiled for\n**12**" in _markdown(at) and "**8 warps, 0\npartitions**" in _markdown(at)
    parts = at.table[0].value
    assert list(parts["partition"]) == ["default", "partition0", "partition1"]
    assert sorted(parts["warps"]) == [1, 2, 8]
    at = _open({"lesson": "hopper", "step": "4"})
    assert "H100" in _markdown(at) and not at.warning, [w.value for w in at.warning]
