"""A class server's sandboxed worker compiles a student's project (files beside the kernel,
sent with the job) and a driver that calls an installed library's op; the copies are the
only part of the student's folder the job sees, and a job's project files never reach the
next job (a fresh sandbox, its own folder)."""
import dataclasses

import pytest

from conftest import SNIPPETS
from inspectors.process import sandbox
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.compile.engine import Engine
from inspectors.explain import insight
from inspectors.store import project

pytestmark = pytest.mark.skipif(sandbox.check() is not None, reason=f"no sandbox here: {sandbox.check()}")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("projects")
    env = {"TLENS_CLASS": "1", "TLENS_WORKSPACE_DIR": str(root / "workspace"),
           "TLENS_TRITON_CACHE_DIR": str(root / "cache" / "triton"), "TLENS_REPRO_DIR": str(root / "cache" / "repro")}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        s = dataclasses.replace(settings_mod.load(), workers=1)
        assert s.sandbox and s.class_mode
        eng = Engine(s)
        assert eng.wait_ready()
        yield eng
        eng.close()


def test_library_op_in_the_sandbox(engine):
    pytest.importorskip("liger_kernel")
    path = SNIPPETS / "liger" / "rms_norm.py"
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, analysis_s=60),
                       session="user:alice", timeout=300)
    assert r.ok, r.error
    assert [k.name for k in r.kernels] == ["_rms_norm_forward_kernel", "_rms_norm_backward_kernel"]
    found = insight.of(r.kernels[0], path.name)
    assert found is not None and not found.cut
    assert all(m.python_line for m in found.memory_ops if m.space == "global")


def test_project_files_reach_only_their_own_job(engine, tmp_path):
    (tmp_path / "_helpers.py").write_text("import triton\n\ndef block(n):\n    return triton.next_power_of_2(n)\n")
    driver = (SNIPPETS / "vadd.py").read_text().replace("import torch\n", "import torch\nfrom _helpers import block\n", 1)
    (tmp_path / "driver.py").write_text(driver)
    files, package = project.project_of(tmp_path / "driver.py")
    r = engine.compile(CompileRequest(source=driver, filename="driver.py", files=files, package=package),
                       session="user:alice")
    assert r.ok, r.error
    # the next student's job, in a fresh sandbox, does not find alice's helper
    r2 = engine.compile(CompileRequest(source=driver, filename="driver.py"), session="user:bob")
    assert r2.error and "No module named '_helpers'" in r2.error.message


def test_a_torch_compile_job_in_the_sandbox(engine):
    """A class server's student compiles a model with dropout (its seed ops need the CUDA device
    guard the job builds with the machine's compiler, inside the sandbox)."""
    path = SNIPPETS / "compiled" / "gpt_train.py"
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, sass=False),
                       session="user:alice", timeout=300)
    assert r.ok, r.error
    assert any("native_dropout" in k.name for k in r.kernels) and all(k.stages.get("ptx") for k in r.kernels)
