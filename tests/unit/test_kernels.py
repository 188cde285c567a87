"""The kernel library: every kernel matches its torch reference on the CPU interpreter,
the registry lists them without importing torch, and no module does work at import."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kernels

REPO_ROOT = Path(__file__).resolve().parents[2]
SLUGS = [k.slug for k in kernels.LIBRARY]
EXPECTED = ["vector_add", "softmax", "matmul", "gelu", "bias_relu", "add_mul_act", "giou",
            "coalescing", "coarsening"]


def _run(code: str, interpret: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, "-c", code], cwd=str(REPO_ROOT), env=env,
                          capture_output=True, text=True, timeout=timeout)


def _explain(proc: subprocess.CompletedProcess) -> str:
    return (f"exit status {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n"
            f"--- stderr ---\n{proc.stderr[-8000:]}")


# -- the registry -------------------------------------------------------------------------

def test_library_lists_every_kernel_in_teaching_order():
    assert SLUGS == EXPECTED


@pytest.mark.parametrize("slug", EXPECTED)
def test_library_entry(slug):
    k = kernels.get(slug)
    assert k.slug == slug
    assert k.path.is_absolute() and k.path == REPO_ROOT / "kernels" / f"{slug}.py"
    assert k.title and "\n" not in k.title
    assert 3 <= len(k.note.splitlines()) <= 8, k.note
    assert k.source() == k.path.read_text(encoding="utf-8")
    assert k.source().startswith('"""' + k.title)


def test_get_unknown_slug_names_the_known_ones():
    with pytest.raises(KeyError, match="no library kernel 'nope'.*vector_add"):
        kernels.get("nope")


def test_importing_the_registry_imports_neither_torch_nor_triton():
    proc = _run("import kernels, sys\n"
                "assert 'torch' not in sys.modules, 'torch'\n"
                "assert 'triton' not in sys.modules, 'triton'\n"
                "assert not [m for m in sys.modules if m.startswith('kernels.')], 'kernel modules'\n"
                "assert len(kernels.LIBRARY) == 9\n", interpret=False)
    assert proc.returncode == 0, _explain(proc)


# -- the modules ---------------------------------------------------------------------------

@pytest.mark.parametrize("slug", EXPECTED)
def test_module_layout(slug):
    from triton.runtime.jit import JITFunction
    module = importlib.import_module(f"kernels.{slug}")
    for name in ("make_inputs", "example", "reference", "check"):
        assert callable(getattr(module, name, None)), f"kernels.{slug} has no {name}()"
    jitted = [v for v in vars(module).values() if isinstance(v, JITFunction)]
    assert jitted, f"kernels.{slug} has no @triton.jit kernel"


def test_modules_do_no_work_at_import():
    # Allocation functions raise while each module is imported (fresh process, all modules).
    code = textwrap.dedent(f"""
        import importlib, torch, triton
        names = ["empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full",
                 "rand", "randn", "randint", "arange", "tensor"]
        saved = {{n: getattr(torch, n) for n in names}}
        def forbid(name):
            def f(*a, **k):
                raise AssertionError(f"torch.{{name}} called at import time")
            return f
        for n in names:
            setattr(torch, n, forbid(n))
        for slug in {EXPECTED!r}:
            importlib.import_module("kernels." + slug)
        for n, f in saved.items():
            setattr(torch, n, f)
    """)
    proc = _run(code)
    assert proc.returncode == 0, _explain(proc)


def _has_gpu() -> bool:
    import torch
    return torch.cuda.is_available()


@pytest.fixture(scope="module")
def interpreter_checks() -> tuple[dict, subprocess.CompletedProcess]:
    """Every library kernel's check() on the CPU interpreter, in one process (one torch import,
    not nine): slug -> None where it passed, else its traceback."""
    # fix_interpreter: the same Triton 3.6 + numpy >= 2.4 workaround the Benchmark page's
    # no-GPU check runs (a no-op on 3.7 and later)
    proc = _run(textwrap.dedent(f"""
        import importlib, json, traceback
        from inspectors.compile import triton_shim
        triton_shim.fix_interpreter()
        for slug in {EXPECTED!r}:
            try:
                importlib.import_module("kernels." + slug).check()
                error = None
            except BaseException:
                error = traceback.format_exc()
            print("CHECK " + json.dumps({{"slug": slug, "error": error}}), flush=True)
    """), timeout=600)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("CHECK "):
            row = json.loads(line[6:])
            results[row["slug"]] = row["error"]
    return results, proc


@pytest.mark.skipif("_has_gpu()", reason="a GPU machine launches for real (test_check_against_torch_on_the_gpu)")
@pytest.mark.parametrize("slug", EXPECTED)
def test_check_against_torch_on_the_interpreter(slug, interpreter_checks):
    results, proc = interpreter_checks
    assert slug in results, f"the checks' process ended before {slug}:\n" + _explain(proc)
    assert results[slug] is None, results[slug]


@pytest.mark.skipif("not _has_gpu()", reason="needs a CUDA GPU (without one, the interpreter checks the kernels)")
@pytest.mark.parametrize("slug", EXPECTED)
def test_check_against_torch_on_the_gpu(slug):
    """A real launch of every library kernel on the GPU, against its torch reference."""
    proc = _run("import importlib, torch\n"
                "torch.set_default_device('cuda')\n"
                f"m = importlib.import_module('kernels.{slug}')\n"
                "assert torch.empty(1).is_cuda\n"
                "m.check()\n"
                "torch.cuda.synchronize()\n", interpret=False)
    assert proc.returncode == 0, _explain(proc)


def test_interpreter_fix_is_needed_only_where_triton_says_so():
    """Without the fix, Triton 3.6's interpreter fails softmax with numpy >= 2.4; with it the
    check passes (the test above). 3.7 and later need nothing: fix_interpreter changes nothing."""
    import numpy
    import triton
    from inspectors.base import triton_support
    if not triton_support.interpreter_index_needs_squeeze(triton.__version__):
        proc = _run("from inspectors.compile import triton_shim\nassert triton_shim.fix_interpreter() is False\n")
        assert proc.returncode == 0, _explain(proc)
        return
    if tuple(int(x) for x in numpy.__version__.split(".")[:2]) < (2, 4):
        pytest.skip(f"numpy {numpy.__version__} still converts 1-element arrays to scalars")
    proc = _run("import kernels.softmax as m; m.check()")
    assert proc.returncode != 0 and "TypeError" in proc.stderr and "0-dimensional arrays" in proc.stderr


def test_check_raises_on_mismatch():
    # check() must fail loudly when the kernel is wrong: break vector add's reference.
    proc = _run("import kernels.vector_add as m\n"
                "m.reference = lambda x, y: x - y\n"
                "try:\n"
                "    m.check()\n"
                "except AssertionError:\n"
                "    raise SystemExit(0)\n"
                "raise SystemExit('check() passed against a wrong reference')\n")
    assert proc.returncode == 0, _explain(proc)
