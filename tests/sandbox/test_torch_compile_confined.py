"""The torch.compile page reads back what a user's job wrote (Inductor's folder, its Triton
cache, the JSON the job printed): after the run, the folder is settled (no link, FIFO or hard
link left in it), every path the job's answer names must lie in it, and a kernel's IR that
names a Python file elsewhere (`loc("/etc/hostname":1:1)`) is shown without it."""
import json
import os
from pathlib import Path

from inspectors.compile import torch_compile_gpu
from inspectors.store import cache

TTIR = '''#loc = loc("{path}":1:0)
module {{
  tt.func public @k(%arg0: !tt.ptr<f32> loc("{path}":1:0)) attributes {{noinline = false}} {{
    tt.return loc(#loc1)
  }} loc(#loc)
}} loc(#loc)
#loc1 = loc("{path}":2:4)
'''


def _kernel_folder(root: Path, loc_path: str) -> Path:
    folder = root / "inductor" / "triton" / "0" / "ABCDEF"
    folder.mkdir(parents=True)
    (folder / "k.ttir").write_text(TTIR.format(path=loc_path))
    (folder / "k.json").write_text(json.dumps({"name": "k", "num_warps": 4, "target": {"backend": "cuda", "arch": 90,
                                                                                     "warp_size": 32}}))
    return folder


def test_settle_removes_links_fifos_and_hard_links(tmp_path):
    out = tmp_path / "run"
    folder = _kernel_folder(out, "fn.py")
    secret = tmp_path / "secret.txt"
    secret.write_text("server secret")
    os.symlink(secret, folder / "k.ptx")
    os.symlink(tmp_path, out / "inductor" / "up")
    os.mkfifo(out / "pipe")
    os.link(secret, out / "twin.txt")            # another name of a file outside the run
    assert torch_compile_gpu.settle(out) is None
    left = {str(p.relative_to(out)) for p in out.rglob("*")}
    assert "inductor/triton/0/ABCDEF/k.ptx" not in left and "inductor/up" not in left and "pipe" not in left
    assert "twin.txt" not in left and "inductor/triton/0/ABCDEF/k.json" in left
    assert secret.read_text() == "server secret"


def test_settle_refuses_a_run_over_its_allowance(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    for i in range(30):
        (out / f"f{i}").write_bytes(b"x" * 1000)
    assert "more than" in torch_compile_gpu.settle(out, max_bytes=10_000)
    assert "more than" in torch_compile_gpu.settle(out, max_files=10)


def test_paths_in_the_jobs_answer_must_lie_in_its_folder(tmp_path):
    out = tmp_path / "run"
    inside = _kernel_folder(out, "fn.py")
    run = torch_compile_gpu.InductorRun(function="fn.py", inductor_dir="/", triton_cache_dir="/etc", kernels=(
        torch_compile_gpu.InductorKernel(name="k", category="other", fused="", cache_entries=(str(inside), "/etc", str(out / ".." / "x"), 7)),))
    got = torch_compile_gpu.confine(run, out)
    assert got.inductor_dir == str(out.resolve() / "inductor")
    assert got.kernels[0].cache_entries == (str(inside),)


def test_a_kernel_naming_a_file_outside_is_shown_without_it(tmp_path):
    out = tmp_path / "run"
    secret = tmp_path / "secret_kernel.py"
    secret.write_text("# another student's kernel\n")
    folder = _kernel_folder(out, str(secret))
    opened = cache.load(folder, [out / "inductor"], confined=out)
    assert "source" not in opened.kernel.stages
    assert cache.load(folder, [out / "inductor"]).kernel.stages.get("source", "").startswith("# another")  # the CLI's view
    outside = _kernel_folder(tmp_path / "elsewhere", "fn.py")
    try:
        cache.load(outside, [], confined=out)
    except ValueError as e:
        assert "not in the run's own folder" in str(e)
    else:
        raise AssertionError("a folder outside the run was opened")
