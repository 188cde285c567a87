"""benchmarks/gpu_lessons.py on a machine without a GPU: it refuses clearly and writes
nothing; its CPU-side pieces (the ncu CSV, the marker split, the run list) work."""
import importlib.util
import subprocess
import sys

from conftest import ROOT
from inspectors.explain import tiling

SCRIPT = ROOT / "benchmarks" / "gpu_lessons.py"
SPEC = importlib.util.spec_from_file_location("gpu_lessons", SCRIPT)
gpu_lessons = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gpu_lessons)


def test_without_a_gpu_it_says_so_and_writes_nothing(tmp_path):
    import torch
    if torch.cuda.is_available():
        import pytest
        pytest.skip("this machine has a GPU")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "needs an NVIDIA GPU" in proc.stderr and "torch.cuda.is_available() is False" in proc.stderr
    assert not out.exists()


CSV = '''==PROF== Connected to process 1
"ID","Process ID","Kernel Name","dram__bytes_read.sum","launch__registers_per_thread"
"","","","byte","register/thread"
"0","1","lesson_marker_kernel","32","16"
"1","1","vectorized_elementwise_kernel","1,073,745,920","32"
"2","1","vectorized_elementwise_kernel","1,073,741,824","32"
"3","1","lesson_marker_kernel","32","16"
"4","1","lesson_marker_kernel","32","16"
"5","1","triton_poi_fused_add_relu_0","1,073,745,920","18"
"6","1","lesson_marker_kernel","32","16"
'''


def test_ncu_rows_split_by_the_markers():
    rows = gpu_lessons.parse_ncu_csv(CSV)
    assert len(rows) == 7 and rows[1]["Kernel Name"] == "vectorized_elementwise_kernel"
    cases = gpu_lessons.split_by_markers(rows, ["eager", "fused"])
    assert [r["Kernel Name"] for r in cases["eager"]] == ["vectorized_elementwise_kernel"] * 2
    assert [r["ID"] for r in cases["fused"]] == ["5"]
    assert gpu_lessons.number("1,073,745,920") == 1073745920 and gpu_lessons.number("n/a") is None


def test_the_runs_cover_every_lesson_configuration_once():
    runs = gpu_lessons.matmul_runs()
    keys = [tiling.key(*cfg, size=size) for _, cfg, size in runs]
    assert len(keys) == len(set(keys))
    for cfg in tiling.BLOCK_CONFIGS:
        assert tiling.key(*cfg, group=8, size=tiling.SIZE) in keys
    for s in tiling.STAGES:
        assert tiling.key(*tiling.DEFAULT[:4], s, group=8, size=tiling.SIZE) in keys
    for g in tiling.GROUPS:
        assert tiling.key(*tiling.DEFAULT, group=g, size=tiling.GROUP_SIZE) in keys
    for cfg, size in gpu_lessons.NCU_MATMUL:
        assert tiling.key(*cfg, size=size) in keys                    # every profiled case was also timed


def test_an_ncu_error_names_the_metrics_to_drop():
    metrics = ["dram__bytes_read.sum", "lts__t_sector_hit_rate.pct", "launch__registers_per_thread"]
    out = "==PROF== Connected\n==ERROR== Failed to find metric lts__t_sector_hit_rate\n==PROF== Disconnected"
    assert gpu_lessons.unknown_metrics(out, metrics) == ["lts__t_sector_hit_rate.pct"]
    assert gpu_lessons.unknown_metrics("==PROF== ok", metrics) == []
