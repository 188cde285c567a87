"""Kernels where they live: a driver file whose example() calls a real library's ops
(liger-kernel, pinned in requirements.txt) compiles every launch, each kernel carries its
own file, and every global memory operation maps to the line of that file that holds its
`tl.load`/`tl.store`. A package with relative imports and a file with a sibling import
compile too (inspectors.store.project sends the files beside it)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SNIPPETS
from inspectors.base.result import CompileRequest
from inspectors.explain import insight
from inspectors.store import project

liger = pytest.importorskip("liger_kernel")

# what each driver launches (a kernel launched twice with other arguments, twice)
DRIVERS = {
    "rms_norm": ["_rms_norm_forward_kernel", "_rms_norm_backward_kernel"],
    "rope": ["_triton_rope", "_triton_rope"],
    "swiglu": ["_swiglu_forward_kernel", "_swiglu_backward_kernel"],
    "cross_entropy": ["liger_cross_entropy_kernel", "element_mul_kernel"],
}
_MEMORY_CALL = re.compile(r"\btl\.(load|store|atomic_\w+)\(|\.(load|store)\(")


def _in_memory_call(lines: list[str], n: int) -> bool:
    """Line n holds a `tl.load(`/`tl.store(` call, or lies inside one begun on a line above
    (Triton 3.6 puts a load written over several lines on the line of its address argument)."""
    for start in range(n, max(0, n - 8), -1):
        m = _MEMORY_CALL.search(lines[start - 1])
        if m:
            text = "\n".join([lines[start - 1][m.start():]] + lines[start:n - 1])
            return start == n or text.count("(") > text.count(")")
    return False


def _compile(engine, path: Path, **kw):
    files, package = project.project_of(path)
    return engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target="cuda:90",
                                         sass=False, analysis_s=120, files=files, package=package, **kw),
                          timeout=300)


@pytest.mark.parametrize("driver", sorted(DRIVERS))
def test_a_library_op_maps_to_its_own_file(engine, driver):
    result = _compile(engine, SNIPPETS / "liger" / f"{driver}.py")
    assert result.ok, result.error
    assert [k.name for k in result.kernels] == DRIVERS[driver]
    for k in result.kernels:
        assert "/liger_kernel/ops/" in k.source_path
        # the kernel's own file, as installed, is the source the panels show
        assert k.stages["source"] == Path(k.source_path).read_text()
        lines = k.stages["source"].splitlines()
        found = insight.of(k, driver + ".py")
        assert found is not None and not found.cut, found and found.cut
        ops = [m for m in found.memory_ops if m.space == "global"]
        assert ops, k.name
        for m in ops:
            assert m.python_line, f"{k.name}: {m.text} maps to no line of {k.source_path}"
            assert _in_memory_call(lines, m.python_line), (k.name, m.python_line, lines[m.python_line - 1])


def test_rms_norm_forward_loads_the_row_on_its_line(engine):
    """Independent of the source map's reader: the line that holds `X_row = tl.load(` in
    Liger's installed file is where the forward kernel's first global load maps."""
    result = _compile(engine, SNIPPETS / "liger" / "rms_norm.py")
    forward = result.kernels[0]
    text = Path(forward.source_path).read_text().splitlines()
    start = next(i for i, ln in enumerate(text, 1) if ln.lstrip().startswith("def _rms_norm_forward_kernel("))
    x_row = next(i for i, ln in enumerate(text, 1) if i > start and "X_row = tl.load(" in ln)
    loads = [m for m in insight.of(forward, "rms_norm.py").memory_ops if m.kind == "load" and m.space == "global"]
    assert loads[0].python_line == x_row
    assert loads[0].vector == 4         # 2048 fp16 a row, 16-byte aligned: 4 x b32 per thread


def test_a_file_without_its_own_kernel_that_launches_nothing_says_so(engine, tmp_path):
    path = tmp_path / "nothing.py"
    path.write_text("import torch\n\ndef prepare(n):\n    return torch.ones(n)\n\n"
                    "def example():\n    prepare(3) + 1\n    torch.zeros(2)\n")
    result = _compile(engine, path)
    assert result.error.message == ("example() ran but launched no Triton kernel: it called prepare, "
                                    "torch.zeros; nothing.py has no @triton.jit kernel of its own")


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


KERNEL = '''
@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, scale(x), mask=offs < n)


def example():
    x = torch.randn(4096)
    block = settings(x.numel())
    twice[(x.numel() // block,)](x, torch.empty_like(x), x.numel(), BLOCK=block)
'''
HELPERS = '''import triton
import triton.language as tl


def settings(n):
    return min(1024, triton.next_power_of_2(n))


@triton.jit
def scale(x):
    return x * 2.0
'''


def test_package_relative_imports(engine, tmp_path):
    _write(tmp_path, {"mypkg/__init__.py": "", "mypkg/ops/__init__.py": "", "mypkg/ops/utils.py": HELPERS,
                      "mypkg/ops/norm.py": "import torch\nimport triton\nimport triton.language as tl\n"
                                           "from .utils import scale, settings\n" + KERNEL})
    files, package = project.project_of(tmp_path / "mypkg" / "ops" / "norm.py")
    assert package == "mypkg.ops" and "mypkg/ops/utils.py" in files
    result = _compile(engine, tmp_path / "mypkg" / "ops" / "norm.py")
    assert result.ok, result.error
    k = result.kernels[0]
    assert k.name == "twice" and k.source_path == ""          # written in the file itself
    found = insight.of(k, "norm.py")
    assert [m.vector for m in found.memory_ops if m.space == "global"] == [4] * 4    # 1024 a block: 2 a thread
    # the multiply is in the helper's file: its chain names that file
    assert any(path.endswith("mypkg/ops/utils.py") for path, _ in
               (frame for chains in found.source_map.stages["ptx"].calls.values() for frame in chains))


def test_sibling_import_and_a_kernel_written_in_the_sibling(engine, tmp_path):
    _write(tmp_path, {"_math.py": HELPERS + "\n\n@triton.jit\ndef copy(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
                                  "    offs = tl.arange(0, BLOCK)\n    tl.store(y_ptr + offs, tl.load(x_ptr + offs))\n",
                      "driver.py": "import torch\nfrom _math import copy\n\n\ndef example():\n"
                                   "    x = torch.randn(256)\n    copy[(1,)](x, torch.empty_like(x), BLOCK=256)\n"})
    result = _compile(engine, tmp_path / "driver.py")
    assert result.ok, result.error
    k = result.kernels[0]
    assert k.source_path == "_math.py"                         # the project's own path, not the job's folder
    assert k.stages["source"] == (tmp_path / "_math.py").read_text()
    found = insight.of(k, "driver.py")
    store_line = next(i for i, ln in enumerate(k.stages["source"].splitlines(), 1) if "tl.store(y_ptr" in ln)
    assert {m.python_line for m in found.memory_ops if m.space == "global"} == {store_line}


def test_a_project_file_name_may_not_leave_the_job(engine):
    result = engine.compile(CompileRequest(source="def example():\n    pass\n", filename="k.py",
                                           files={"../escape.py": "x = 1"}))
    assert result.error and "bad project file name '../escape.py'" in result.error.message


def test_a_real_autotuner_prunes_with_nargs_and_sets_best_config(engine):
    path = SNIPPETS / "autotune_prune.py"
    result = _compile(engine, path)
    assert result.ok, result.error
    # the 4096 config is pruned by the user's early_config_prune, which read nargs["n"]
    assert [(k.options["num_warps"], a.value) for k in result.kernels for a in k.args if a.name == "BLOCK"] == \
        [(1, "128"), (2, "256"), (4, "1024")]
    assert all(k.label.startswith(f"autotune config {i + 1}/3 (3 of 4 kept by its pruning): ")
               for i, k in enumerate(result.kernels))
    assert "best 128" in result.output
