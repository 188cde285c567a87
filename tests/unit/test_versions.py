"""Several Triton versions on one server: the library and the flash-attention snippet compiled by
3.6.0 and by 3.9.0, each in its own worker, and the differences only a version change explains
reported (ptxas flags, layout copies of small tensors, the flash-attention launch that 3.6's ptxas
cannot assemble); the CLI's `diff --triton A --triton B --json`; the two-version benchmark path
on the interpreter.

The version that is not the running one comes from the configured versions
(`make setup-versions`, inspectors.base.triton_installs), else from the other virtualenv of this
checkout (`.venv-oldest` has 3.6.0, `.venv` 3.9.0). Without it these tests skip."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.base import triton_installs
from inspectors.base.result import CompileRequest
from inspectors.bench.model import BenchRequest
import kernels

A, B = "3.6.0", "3.9.0"
FALLBACK = {"3.6.0": ROOT / ".venv-oldest" / "bin" / "python", "3.9.0": ROOT / ".venv" / "bin" / "python"}


def _envs() -> dict:
    envs = triton_installs.configured()
    for v in (A, B):
        if v not in envs and FALLBACK[v].exists():
            try:
                env = triton_installs.parse_entry(str(FALLBACK[v]))
            except triton_installs.VersionError:
                continue
            if env.version == v:
                envs[v] = env
    return envs


ENVS = _envs()
needs_both = pytest.mark.skipif(not (A in ENVS and B in ENVS),
                                reason=f"Triton {A} and {B} not both set up (make setup-versions TRITON_VERSIONS='{A} {B}')")


def _spec() -> str:
    """TLENS_TRITON_VERSIONS naming the extra version(s) for a subprocess."""
    return " ".join(f"{v}={e.path or e.python}" for v, e in ENVS.items() if v in (A, B) and not e.own)


# -- discovery (no compile) ---------------------------------------------------------------------

def test_discovery_reads_folders_and_rejects_bad_entries(tmp_path):
    folder = tmp_path / "versions"
    (folder / "3.7.1" / "triton-3.7.1.dist-info").mkdir(parents=True)
    (folder / "3.8.0.tmp" / "triton-3.8.0.dist-info").mkdir(parents=True)   # a setup that did not finish
    (folder / "empty").mkdir()
    found = triton_installs.configured("", folder)
    assert found["3.7.1"].path == str(folder / "3.7.1") and "3.8.0" not in found
    assert list(found) == sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))
    with pytest.raises(triton_installs.VersionError, match="neither a folder holding triton nor a Python interpreter"):
        triton_installs.configured(str(tmp_path / "nowhere"), folder)
    with pytest.raises(triton_installs.VersionError, match="holds triton 3.7.1, not 3.9.9"):
        triton_installs.configured(f"3.9.9={folder / '3.7.1'}", folder)
    with pytest.raises(triton_installs.VersionError, match="write it as VERSION=PATH"):
        triton_installs.configured(str(folder / "empty"), folder)


# -- compiling with two versions ----------------------------------------------------------------

@pytest.fixture(scope="module")
def engines():
    from inspectors.compile.version_engines import Engines
    eng = Engines(envs={v: ENVS[v] for v in (A, B)}, workers=1)
    yield eng
    eng.close()


@needs_both
def test_requests_are_routed_by_version(engines):
    src = (ROOT / "kernels" / "vector_add.py").read_text()
    for v in (A, B):
        r = engines.compile(CompileRequest(source=src, filename="vector_add.py", triton_version=v, sass=False))
        assert r.ok and r.triton_version == v, r.error
    r = engines.compile(CompileRequest(source=src, triton_version="3.7.0"))
    assert r.error.kind == "usage" and "Triton 3.7.0 is not set up" in r.error.message and A in r.error.message
    # an engine asked for a version its workers do not run says so instead of compiling
    r = engines.get(A).compile(CompileRequest(source=src, triton_version=B))
    assert r.error.kind == "usage" and f"these workers run Triton {A}" in r.error.message


@needs_both
def test_library_under_both_versions(engines):
    from inspectors.session.compare import compare_results, compile_both
    from inspectors.session.lens import Lens
    layout_copies = []
    for k in kernels.LIBRARY:
        ra, rb = compile_both(Lens(engines=engines, cache=False), CompileRequest(source=k.source(), filename=k.filename), A, B, timeout=300)
        assert ra.ok and rb.ok, (k.slug, ra.error, rb.error)
        assert (ra.triton_version, rb.triton_version) == (A, B)
        cmp = compare_results(A, B, ra, rb, k.filename)
        assert len(cmp.launches) == len(ra.kernels) == len(rb.kernels) >= 1
        for lc in cmp.launches:
            assert lc.headline.startswith(f"{A} → {B}: ")
            # 3.7 and later pass --regAllocOptLevel=2 to ptxas; 3.9 assembles sm_90 with ptxas-blackwell
            assert "`--regAllocOptLevel=2` added to ptxas" in lc.notes, (k.slug, lc.notes)
            assert "sm_90 assembled by the wheel's `ptxas-blackwell` instead of `ptxas`" in lc.notes
            assert lc.diff.a.cubin and lc.diff.b.cubin
            layout_copies += [(k.slug, n) for n in lc.notes if n.startswith("layout copies:")]
    # matmul's 128x1 / 1x64 pointer tensors are smaller than sizePerThread: 3.6 keeps copies
    assert any(slug == "matmul" and f"{A} keeps copies in the extra registers, {B} drops them" in n
               for slug, n in layout_copies), layout_copies


@needs_both
def test_flash_attention_under_both_versions(engines):
    from inspectors.session.compare import compare_results, compile_both
    from inspectors.session.lens import Lens
    src = (SNIPPETS / "flash_attention.py").read_text()
    ra, rb = compile_both(Lens(engines=engines, cache=False), CompileRequest(source=src, filename="flash_attention.py"), A, B, timeout=300)
    assert rb.ok, rb.error
    # UNROLL=8: 3.6's CUDA 12.8 ptxas dies on the PTX, 3.9's CUDA 13 ptxas assembles it (tests/unit/test_big_kernel.py)
    assert ra.partial and ra.kernels[1].error.stage == "sass" and ra.kernels[0].error is None
    cmp = compare_results(A, B, ra, rb, "flash_attention.py")
    small, big = cmp.launches
    assert any(n.startswith(f"{A} fails making SASS (ptxas crashed (SIGSEGV)") and n.endswith(f"{B} makes it")
               for n in big.notes), big.notes
    rows = {r.metric: r for r in big.diff.delta.rows}
    assert rows["registers / thread"].a is None and rows["registers / thread"].b == 255
    assert rows["shared memory / block (B)"].a is None          # not assembled: unknown, not 0
    assert "ptx" in big.diff.stages and "sass" not in big.diff.stages
    # launch 1: both assembled; the register count is each ptxas's own
    regs = {r.metric: r for r in small.diff.delta.rows}["registers / thread"]
    assert isinstance(regs.a, int) and isinstance(regs.b, int) and regs.a != regs.b
    assert f"registers {regs.a} → {regs.b}" in small.headline
    assert any(n.startswith("layout copies:") for n in small.notes)


@needs_both
@pytest.mark.workers
def test_cli_diff_two_versions_json(tmp_path):
    env = {**os.environ, "TLENS_TRITON_VERSIONS": _spec(), "TLENS_TRITON_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "inspectors", "diff", str(ROOT / "kernels" / "softmax.py"),
                          "--triton", A, "--triton", B, "--json"], capture_output=True, text=True, env=env,
                         cwd=str(ROOT), timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout)
    assert data["triton"] == {"a": A, "b": B} and data["a"]["triton"] == A and data["b"]["triton"] == B
    assert len(data["launches"]) == 2
    for launch in data["launches"]:
        assert launch["headline"].startswith(f"{A} → {B}: ")
        assert "`--regAllocOptLevel=2` added to ptxas" in launch["notes"]
        assert {r["metric"] for r in launch["delta"]} >= {"registers / thread", "spill bytes", "ptx"}
        assert launch["stages"]["ttir"]["identical"] in (True, False)
    bad = subprocess.run([sys.executable, "-m", "inspectors", "diff", str(ROOT / "kernels" / "softmax.py"),
                          "--triton", "3.7.9", "--triton", B, "--json"], capture_output=True, text=True, env=env,
                         cwd=str(ROOT), timeout=600)
    assert bad.returncode == 1
    err = json.loads(bad.stdout)["error"]
    assert err["kind"] == "usage" and "Triton 3.7.9 is not set up" in err["message"]
    one = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(ROOT / "kernels" / "vector_add.py"),
                          "--triton", A, "--json"], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=600)
    assert one.returncode == 0, one.stderr[-3000:]
    compiled = json.loads(one.stdout)
    assert compiled["triton_version"] == A and len(compiled["kernels"]) == 3


# -- the two-version benchmark path -------------------------------------------------------------

def test_interleaved_order():
    from inspectors.bench.compare_versions import interleaved
    assert interleaved(1) == [0, 1]
    assert interleaved(3) == [0, 1, 1, 0, 0, 1]



def test_ratio_is_of_each_versions_median():
    """The aggregation on a GPU (here fed by a runner that reports fixed timings per version):
    each version's Triton ms is the median over its runs, the ratio B / A, in the order run."""
    from inspectors.bench.model import TRITON, BenchResult, Row
    from inspectors.bench.compare_versions import run_versions
    seen = []
    times = {"3.6.0": iter([2.0, 4.0, 3.0]), "3.9.0": iter([1.0, 1.5, 2.0])}

    def runner(request, timeout=None, triton=None):
        v = triton.version if triton is not None else "own"
        seen.append((v, request.providers, request.rounds))
        ms = next(times[v])
        return BenchResult(request.slug, "gpu", rows=(Row(4096, TRITON, ms, ms, ms, 1, 1, 1.0, 0.0, None),),
                           triton_version=v)
    envs = [triton_installs.TritonEnv("3.6.0", path="/x"), triton_installs.TritonEnv("3.9.0", python="/y")]
    vb = run_versions(BenchRequest("softmax"), envs, rounds=3, runner=runner)
    assert [s[0] for s in seen] == ["3.6.0", "3.9.0", "3.9.0", "3.6.0", "3.6.0", "3.9.0"]
    assert all(s[1:] == ((TRITON,), 1) for s in seen)      # only Triton is timed, one round per worker
    assert vb.mode == "gpu" and vb.ratios == ((4096, 3.0, 1.5, 0.5),)
    assert vb.describe() == "size 4096: Triton 3.6.0 3.0000 ms, 3.9.0 1.5000 ms, 3.9.0/3.6.0 = 0.500×"


@needs_both
@pytest.mark.workers
def test_two_version_benchmark_on_the_interpreter():
    """No GPU here: each version's own worker checks the kernel on its own interpreter (3.6's
    needs the shim's squeeze for numpy 2.4), in interleaved order, and times nothing."""
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU machine times instead (benchmarks/gpu_bench.py)")
    from inspectors.bench.compare_versions import run_versions
    vb = run_versions(BenchRequest("softmax"), [ENVS[A], ENVS[B]], rounds=2)
    assert vb.mode == "interpreter" and vb.order == (A, B, B, A)
    assert [r.triton_version for r in vb.runs] == list(vb.order)
    assert vb.errors == () and len(vb.checks) == 4 and all(ok for _, ok, _ in vb.checks)
    assert vb.ratios == ()
    assert vb.describe() == (f"no GPU: nothing timed; Triton {A} passes the check on its interpreter, "
                             f"Triton {B} passes the check on its interpreter")


# -- the page -----------------------------------------------------------------------------------

@pytest.fixture
def two_version_app(monkeypatch, tmp_path):
    """The app with both versions configured: a fresh Engines (the server-wide one is cached), put
    back as it was afterwards."""
    from app.backend import services
    monkeypatch.setenv("TLENS_TRITON_VERSIONS", _spec())
    monkeypatch.setenv("TLENS_TRITON_VERSIONS_DIR", str(tmp_path / "none"))
    services.lens().close()
    services.lens.clear()
    yield
    services.lens().close()
    services.lens.clear()


@needs_both
def test_page_version_picker_panel_titles_and_compare(two_version_app):
    from streamlit.testing.v1 import AppTest
    from apptest_panels import panels
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    picker = at.selectbox(key="triton")
    assert [o.split()[0] for o in picker.options] == [A, B]
    at.selectbox(key="picker").set_value("softmax").run()
    for v in (A, B):
        at.selectbox(key="triton").set_value(v).run()
        at.button(key="compile").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        shown = panels(at)
        assert shown["ptx"]["label"] == f"PTX · Triton {v}", shown["ptx"]["label"]
        assert any(f"Triton {v}" in c.value for c in at.caption)
    # Compare: one kernel, two versions
    at.switch_page("views/diff.py").run()
    # two option sets: one Triton on both sides (the Explorer's last pick), so a version change
    # does not hide among the option changes
    at.segmented_control(key="cmp-mode").set_value("options").run()
    assert (at.selectbox(key="opt-a-triton").value, at.selectbox(key="opt-b-triton").value) == (B, B)
    at.segmented_control(key="cmp-mode").set_value("versions").run()
    at.selectbox(key="opt-src").set_value("softmax").run()
    assert (at.selectbox(key="opt-a-triton").value, at.selectbox(key="opt-b-triton").value) == (A, B)
    at.button(key="opt-build").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    heads = [h.value for h in at.subheader]
    assert any(h.startswith(f"{A} → {B}: ") for h in heads), heads
    said = " ".join(m.value for m in at.markdown)
    assert "`--regAllocOptLevel=2` added to ptxas" in said


@needs_both
def test_benchmark_page_two_versions(two_version_app):
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU machine times instead")
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=300)
    at.run()
    at.switch_page("views/benchmark.py").run()
    assert not at.exception, at.exception
    at.selectbox(key="bench-kernel").set_value("softmax").run()
    assert (at.selectbox(key="bench-va").value, at.selectbox(key="bench-vb").value) == (A, B)
    at.number_input(key="bench-vrounds").set_value(1).run()
    at.button(key="bench-versions").click().run()
    assert not at.exception, at.exception
    said = " ".join(m.value for m in at.markdown)
    assert (f"Triton {A} vs {B}:** no GPU: nothing timed; Triton {A} passes the check on its interpreter, "
            f"Triton {B} passes the check on its interpreter") in said
