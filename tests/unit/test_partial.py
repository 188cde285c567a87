"""A later stage fails: the stages made before it are still returned and shown, the failing
stage's panel holds the error and the command that reproduces it (engine, CLI JSON, page).

ptxas is made to fail for real: Triton runs the binary that TRITON_PTXAS_PATH /
TRITON_PTXAS_BLACKWELL_PATH name (3.6-3.9), here a script that answers `--version` like the
wheel's ptxas (so Triton's cache key and PTX version stay those of the real one) and then
dies of SIGSEGV, as CUDA 12.8/12.9 ptxas does on the flash-attention snippet, or exits 255
with a message. LLVM is made to abort with an inline-asm constraint string that does not
match its arguments. nvdisasm is given a file that is not a cubin."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.compile.engine import Engine
from inspectors.read.sass import Disassembly, SassError, nvidia_tool

VADD = (ROOT / "kernels" / "vector_add.py").read_text()
BAD_ASM = '''import torch
import triton
import triton.language as tl


@triton.jit
def bad_asm(x_ptr, y_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    # two input constraints for one argument: LLVM stops the process while making LLVM IR
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y)


def example():
    x = torch.zeros(128, dtype=torch.int32)
    bad_asm[(1,)](x, torch.empty_like(x))
'''


def _fake_ptxas(folder: Path, real: Path) -> Path:
    """A ptxas that answers --version like `real`, then fails as `folder/mode` says."""
    script = folder / f"fake-{real.name}"
    script.write_text(f"""#!/bin/bash
for a in "$@"; do if [ "$a" = "--version" ]; then exec {real} --version; fi; done
if [ "$(cat {folder}/mode)" = segv ]; then kill -SEGV $$; fi
echo "ptxas fatal   : planted failure (tests/unit/test_partial.py)" >&2
exit 255
""")
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def broken_ptxas(tmp_path_factory):
    """Environment that points Triton at failing ptxas scripts (and a fresh cache, so nothing
    compiled by the real ptxas is found there)."""
    if nvidia_tool("ptxas") is None:
        pytest.skip("this triton wheel has no ptxas")
    folder = tmp_path_factory.mktemp("ptxas")
    (folder / "mode").write_text("segv")
    env = {"TRITON_PTXAS_PATH": str(_fake_ptxas(folder, nvidia_tool("ptxas"))),
           "TLENS_TRITON_CACHE_DIR": str(folder / "cache"), "TLENS_REPRO_DIR": str(folder / "repro")}
    if nvidia_tool("ptxas-blackwell"):
        env["TRITON_PTXAS_BLACKWELL_PATH"] = str(_fake_ptxas(folder, nvidia_tool("ptxas-blackwell")))
    return folder, env


@pytest.fixture(scope="module")
def broken_engine(broken_ptxas):
    folder, env = broken_ptxas
    settings = dataclasses.replace(settings_mod.load(), triton_cache_dir=folder / "cache", repro_dir=folder / "repro")
    eng = Engine(settings, env=env)       # every worker it starts (after a crash too) gets `env`
    assert eng.wait_ready()
    yield folder, eng
    eng.close()


def test_ptxas_crash_keeps_every_stage_up_to_ptx(broken_engine):
    folder, eng = broken_engine
    (folder / "mode").write_text("segv")
    r = eng.compile(CompileRequest(source=VADD, filename="vector_add.py", target="cuda:90"), timeout=120)
    assert r.partial and not r.ok
    assert len(r.kernels) == 3                              # every launch of example() is there
    for k in r.kernels:
        assert {"source", "ttir", "ttgir", "llir", "ptx"} <= set(k.stages) and "sass" not in k.stages
        assert not k.cubin and k.error.stage == "sass" and k.error.kind == "compile"
        assert "ld.global" in k.stages["ptx"] and ".target sm_90a" in k.stages["ptx"]
    err = r.error
    assert err == r.kernels[0].error and err.stage == "sass"
    assert err.message.startswith("ptxas crashed (SIGSEGV)")
    # Triton's own command line, the PTX kept where it says, the cubin path next to it
    argv = err.command.split()
    assert argv[0].startswith(str(folder)) and "-lineinfo" in argv and "-v" in argv and "--gpu-name=sm_90a" in argv
    ptx = Path(next(a for a in argv if a.endswith(".ptx")))
    assert ptx.parent == folder / "repro" and ptx.read_text() == r.kernels[0].stages["ptx"]
    assert argv[argv.index("-o") + 1].endswith(".cubin")
    rerun = subprocess.run(argv, capture_output=True)          # the command reproduces the failure
    assert rerun.returncode == -11


def test_ptxas_error_message_is_shown(broken_engine):
    folder, eng = broken_engine
    (folder / "mode").write_text("error")
    r = eng.compile(CompileRequest(source=VADD, filename="vector_add.py", target="cuda:80", kernel="add_kernel"),
                    timeout=120)
    assert r.partial and r.error.stage == "sass"
    assert r.error.message.startswith("ptxas failed (exit status 255)")
    assert "planted failure (tests/unit/test_partial.py)" in r.error.message
    assert "--gpu-name=sm_80 " in r.error.command


@pytest.mark.workers
def test_llvm_abort_keeps_the_stages_before_it(broken_engine):
    _, eng = broken_engine
    r = eng.compile(CompileRequest(source=BAD_ASM, filename="bad_asm.py", target="cuda:90"), timeout=120)
    assert r.error.kind == "crash" and r.error.stage == "llir"
    assert "killed by SIGABRT" in r.error.message and "while making LLVM IR" in r.error.message
    assert "number of input constraints does not match" in r.error.detail
    (k,) = r.kernels
    assert set(k.stages) == {"source", "ttir", "ttgir"} and "inline_asm" in k.stages["ttgir"]
    assert k.error == r.error and [a.name for a in k.args] == ["x_ptr", "y_ptr"]
    # the worker was replaced and compiles again
    again = eng.compile(CompileRequest(source=(SNIPPETS / "vadd.py").read_text(), filename="vadd.py",
                                       target="cuda:80"), timeout=120)
    assert again.partial and again.error.stage == "sass"     # the new worker runs the same (broken) ptxas
    assert "ptx" in again.kernels[0].stages


@pytest.mark.workers
def test_cli_json_holds_the_stages_made_and_names_the_failing_one(broken_ptxas, tmp_path):
    folder, env = broken_ptxas
    (folder / "mode").write_text("segv")
    kernel = tmp_path / "vector_add.py"
    kernel.write_text(VADD)
    proc = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(kernel), "--json", "--target", "cuda:90"],
                          cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["error"]["stage"] == "sass" and data["error"]["kind"] == "compile"
    assert "--gpu-name=sm_90a" in data["error"]["command"]
    for k in data["kernels"]:
        assert sorted(k["stages"]) == ["llir", "ptx", "source", "ttgir", "ttir"]
        assert k["error"]["stage"] == "sass"
        assert k["memory_ops"]                          # the PTX is still read: its loads and stores
    text = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(kernel), "--target", "cuda:90",
                           "--stage", "ptx"], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300)
    assert text.returncode == 1 and ".entry add_kernel" in text.stdout
    assert "compile error in stage sass" in text.stderr and "reproduce: " in text.stderr


def test_zip_holds_the_stages_made_and_the_error(broken_engine):
    import io
    import zipfile
    from inspectors.session.files import export as bundle
    folder, eng = broken_engine
    (folder / "mode").write_text("segv")
    request = CompileRequest(source=VADD, filename="vector_add.py", target="cuda:90", kernel="add_kernel")
    result = eng.compile(request, timeout=120)
    assert result.partial
    z = zipfile.ZipFile(io.BytesIO(bundle(request, result, "vector_add.py")))
    names = z.namelist()
    first = "vector_add-cuda_90/launch-1-add_kernel/"
    assert {first + f"add_kernel.{ext}" for ext in ("ttir", "ttgir", "ll", "ptx")} <= set(names)
    assert first + "add_kernel.sass" not in names
    error = z.read(first + "error.txt").decode()
    assert "ptxas crashed (SIGSEGV)" in error and result.error.command in error
    report = z.read("vector_add-cuda_90/report.md").decode()
    assert "**Stage sass failed**" in report and result.error.command in report


# Triton 3.6.0's PTXASError on the flash-attention snippet (UNROLL=8), and 3.9.0's on a PTX
# newer than its ptxas (exit 255)
PTXAS_SEGV = """PTXAS error: `ptxas` failed with error code -11
`ptxas` stderr:

Repro command: /v/bin/ptxas -lineinfo -v --gpu-name=sm_90a /tmp/tmpsf9ldot0.ptx -o /tmp/tmpsf9ldot0.ptx.o
"""
PTXAS_255 = """PTXAS error: Internal Triton PTX codegen error
`ptxas` stderr:
ptxas /tmp/tmpw3kksd_n.ptx, line 5; fatal   : Unsupported .version 9.4; current version is '9.1'
ptxas fatal   : Ptx assembly aborted due to errors

Repro command: /v/bin/ptxas -lineinfo -v --regAllocOptLevel=2 --gpu-name=sm_90a /tmp/tmpw3kksd_n.ptx -o /tmp/tmpw3kksd_n.ptx.o
"""


def test_parse_ptxas_error_inline():
    from inspectors.read.toolfail import parse_ptxas_error
    segv = parse_ptxas_error(PTXAS_SEGV)
    assert (segv.returncode, segv.signal, segv.crashed, segv.stderr) == (-11, "SIGSEGV", True, "")
    assert segv.ptx_path == "/tmp/tmpsf9ldot0.ptx" and segv.command.startswith("/v/bin/ptxas -lineinfo -v ")
    assert segv.message().startswith("ptxas crashed (SIGSEGV)")
    err = parse_ptxas_error(PTXAS_255)
    assert (err.returncode, err.signal, err.crashed) == (255, None, False)
    assert err.stderr.splitlines()[0].endswith("current version is '9.1'")
    assert err.message().startswith("ptxas failed (exit status 255)") and "Unsupported .version 9.4" in err.message()
    assert parse_ptxas_error("LLVM ERROR: out of memory") is None


def test_nvdisasm_failure_names_the_command():
    if nvidia_tool("nvdisasm") is None:
        pytest.skip("this triton wheel has no nvdisasm")
    with pytest.raises(SassError) as e:
        Disassembly(b"this is not a cubin").result()
    argv = e.value.command.split()
    assert Path(argv[0]).name == "nvdisasm" and argv[1:3] == ["-c", "-gi"]
    assert Path(argv[-1]).read_bytes() == b"this is not a cubin"        # kept for the command
    Path(argv[-1]).unlink()
    assert "nvdisasm failed" in e.value.message


@pytest.mark.workers
def test_page_shows_made_stages_and_the_error_in_the_failing_panel(broken_engine):
    from streamlit.testing.v1 import AppTest
    folder, eng = broken_engine
    (folder / "mode").write_text("segv")
    request = CompileRequest(source=VADD, filename="vector_add.py", target="cuda:90", sass=False)
    result = eng.compile(request, timeout=120)
    assert result.partial
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=240)
    at.run()
    at.session_state["result"] = CompileResult.from_json(json.loads(json.dumps(result.to_json())))
    at.session_state["result_request"] = request
    at.run()
    assert not at.exception, at.exception
    assert any("stopped at a later stage" in w.value and "launch 1 (sass)" in w.value for w in at.warning)
    assert at.multiselect(key="stages-cuda").value == ["ttgir", "ptx", "sass"]
    from apptest_panels import panels
    shown = panels(at)
    assert {"ptx", "ttgir"} <= set(shown)
    assert any(e.value.startswith("ptxas crashed (SIGSEGV)") for e in at.error)
    assert any(c.value == result.error.command for c in at.code)
    # the PTX panel still downloads the PTX ptxas was given (its ⬇ saves the lines it was sent)
    assert shown["ptx"]["file"] == "add_kernel.ptx"
    assert shown["ptx"]["lines"] == result.kernels[0].stages["ptx"].splitlines()
