"""What the server reads of a job's cubin is bounded: a cubin over MAX_CUBIN_BYTES is dropped
where the result enters (its SASS panel says why), nvdisasm's output is read up to
MAX_SASS_BYTES and no further, and the SASS work (disassembly, line map, summary, live
registers) runs in a job process (inspectors/compile/sass_job.py), with the same results as
in-process for real kernels."""
from __future__ import annotations

import base64
import os
import resource
import struct
import subprocess

import pytest

from conftest import SNIPPETS
from inspectors.base import result as result_mod
from inspectors.base.result import CompileRequest, CompileResult, KernelResult, bounded
from inspectors.compile import sass_job
from inspectors.read import sass

pytestmark = pytest.mark.skipif(sass.nvidia_tool("nvdisasm") is None, reason="this triton wheel has no nvdisasm")


@pytest.fixture(scope="module")
def vadd(engine):
    """add_kernel as the app compiles it (SASS not made in the worker, analysed there), and its worker-made SASS."""
    def compile_(sass_in_worker: bool) -> KernelResult:
        r = engine.compile(CompileRequest(source=(SNIPPETS / "vadd.py").read_text(), filename="vadd.py", kernel="add_kernel",
                                          sass=sass_in_worker, analysis_s=60), timeout=120)
        assert r.ok, r.error
        return r.kernels[0]
    lazy, eager = compile_(False), compile_(True)
    assert "sass" not in lazy.stages and lazy.cubin
    return lazy, eager.stages["sass"]


def padded(cubin_b64: str, size: int) -> str:
    """A real cubin whose kernel's .text is its own instructions repeated up to about `size`
    bytes (a valid ELF: nvdisasm prints every copy, ~3.5 bytes of SASS per byte)."""
    b = bytearray(base64.b64decode(cubin_b64))
    shoff, = struct.unpack_from("<Q", b, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", b, 0x3A)
    header = lambda i: list(struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * entsize))
    strtab = header(names)[4]
    for i in range(count):
        h = header(i)
        if bytes(b[strtab + h[0]:b.index(0, strtab + h[0])]).startswith(b".text."):
            body = bytes(b[h[4]:h[4] + h[5]])
            start = len(b) + (-len(b)) % 128
            b += bytes(start - len(b)) + body * max(1, (size - len(b)) // len(body))
            h[4], h[5] = start, len(b) - start
            struct.pack_into("<IIQQQQIIQQ", b, shoff + i * entsize, *h)
            return base64.b64encode(bytes(b)).decode()
    raise AssertionError("no .text section in the cubin")


def test_a_cubin_over_the_cap_is_dropped_where_the_result_enters(vadd):
    kernel, _ = vadd
    big = base64.b64encode(b"\0" * (result_mod.MAX_CUBIN_BYTES + 4096)).decode()
    got = bounded(CompileResult((KernelResult(kernel.name, kernel.target, kernel.options, kernel.args,
                                              dict(kernel.stages), cubin=big),))).kernels[0]
    assert got.cubin == ""
    note = got.stages["sass"]
    assert note.startswith(result_mod.CUBIN_TOO_LARGE) and "too large to disassemble here (8.0 MB" in note
    assert "sass" in got.stage_names()
    from inspectors.session import insights       # what the SASS panel and the live registers show
    assert insights.stage_text(got, "sass") == note
    assert "too large to disassemble here" in insights.register_pressure(got, "vadd.py")
    # a real cubin passes as it is
    same = bounded(CompileResult((kernel,))).kernels[0]
    assert same.cubin == kernel.cubin and "sass" not in same.stages


def test_a_cubin_over_the_cap_is_refused_before_any_process_starts(vadd, monkeypatch):
    kernel, _ = vadd
    monkeypatch.setattr(sass_job.subprocess, "Popen", lambda *a, **k: pytest.fail("a process was started"))
    monkeypatch.setattr(sass.subprocess, "Popen", lambda *a, **k: pytest.fail("a process was started"))
    big = padded(kernel.cubin, result_mod.MAX_CUBIN_BYTES + (1 << 20))
    for reply in (sass_job.disassemble(big), sass_job.pressure(big, "", kernel.stages["ptx"], "vadd.py")):
        assert "too large to disassemble here" in reply.error and not reply.transient
        with pytest.raises(sass.SassError, match="too large to disassemble here"):
            reply.check()


def test_nvdisasm_output_past_the_cap_stops_it_unread(vadd, monkeypatch):
    kernel, worker_sass = vadd
    cap = 64 << 10
    monkeypatch.setattr(sass, "MAX_SASS_BYTES", cap)
    read = {"bytes": 0}
    real_read = os.read

    def counting(fd, n):
        data = real_read(fd, n)
        read["bytes"] += len(data)
        return data
    monkeypatch.setattr(sass.os, "read", counting)
    # a cubin of 1 MB whose SASS is several MB: stopped after the cap, the rest never read
    job = sass.Disassembly(base64.b64decode(padded(kernel.cubin, 1 << 20)))
    with pytest.raises(sass.SassError, match=r"SASS too large to disassemble here \(over 0.1 MB"):
        job.result()
    assert cap < read["bytes"] <= cap + (128 << 10)
    assert job.proc.returncode is not None and job.proc.returncode < 0        # killed
    # under the cap, the same reader gives nvdisasm's whole output
    monkeypatch.setattr(sass, "MAX_SASS_BYTES", 16 << 20)
    assert sass.disassemble_b64(kernel.cubin) == worker_sass


def test_a_job_past_its_time_is_stopped_and_not_remembered(vadd, monkeypatch):
    kernel, _ = vadd
    reply = sass_job.run(sass_job.Request("sass", cubin=padded(kernel.cubin, 4 << 20)), timeout=0.3)
    assert reply.transient and "longer than 0.3 s" in reply.error
    monkeypatch.setattr(sass_job, "run", lambda req: reply)
    with pytest.raises(sass.SassError, match="longer than"):     # raised: st.cache_data keeps no failure that may pass
        sass_job.disassemble(kernel.cubin)


def test_server_sass_line_map_and_live_registers_equal_in_process(vadd):
    """The move to a job changes nothing for a real kernel."""
    from inspectors.session import insights
    from inspectors.explain.insight import summarize_stage
    from inspectors.read import liveregs, sourcemap
    kernel, worker_sass = vadd
    ptx = kernel.stages["ptx"]
    here = sass.disassemble_b64(kernel.cubin)
    assert insights.stage_text(kernel, "sass") == here == worker_sass
    ins = insights.insight(kernel, "vadd.py", with_sass=True)
    assert ins.source_map.stages["sass"] == sourcemap.sass_stage_lines(here, ptx, "vadd.py")
    assert ins.source_map.stages["sass"].to_python
    assert ins.summaries["sass"] == summarize_stage("sass", here)
    got = insights.register_pressure(kernel, "vadd.py")
    assert isinstance(got, liveregs.Pressure) and got.by_line
    assert got == liveregs.of_kernel(kernel.cubin, here, ptx, "vadd.py")


def test_the_sass_work_runs_in_another_process(vadd, monkeypatch):
    """The server's SASS, line map, summary and live registers come from job processes: with
    every in-process way to make them broken here, the server still gets them all."""
    from inspectors.session import insights
    from inspectors.explain import insight
    from inspectors.read import liveregs, sourcemap
    kernel, worker_sass = vadd
    kernel = KernelResult(kernel.name, kernel.target, kernel.options, kernel.args, dict(kernel.stages),
                          cubin=padded(kernel.cubin, 1 << 20), analysis=kernel.analysis)   # MBs of SASS
    started = []
    real = subprocess.Popen

    def popen(argv, *a, **k):
        started.append(list(argv))
        return real(argv, *a, **k)
    monkeypatch.setattr(sass_job.subprocess, "Popen", popen)
    broken = lambda *a, **k: pytest.fail("SASS work done in the server's process")
    for module, name in ((sass, "Disassembly"), (sass, "disassemble_b64"), (sourcemap, "sass_stage_lines"),
                         (sass_job, "sass_stage_lines"), (insight, "summarize_stage"), (sass_job, "summarize_stage"),
                         (liveregs, "of_kernel"), (liveregs, "pressure")):
        if hasattr(module, name):
            monkeypatch.setattr(module, name, broken)

    def cpu():
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_utime + u.ru_stime
    before = cpu()
    text = insights.stage_text(kernel, "sass")
    ins = insights.insight(kernel, "vadd.py", with_sass=True)
    pressure = insights.register_pressure(kernel, "vadd.py")
    spent = cpu() - before
    assert len(text) > 2 << 20 and ins.source_map.stages["sass"].to_python and ins.summaries["sass"].instructions > 10000
    assert isinstance(pressure, liveregs.Pressure) and pressure.by_line
    assert [argv[-2:] for argv in started] == [["-m", "inspectors.compile.sass_job"]] * 3
    assert spent < 5, spent      # the server's part: the requests and replies (nvdisasm alone takes seconds)


def test_a_reply_that_is_not_one_is_refused():
    assert sass_job._decode(b"not json") is None
    assert sass_job._decode(b'{"reply": {"lines": {"stage": "sass", "to_python": {"1": "x"}}}, "sass": ""}') is None
    assert sass_job._decode(b'{"reply": {}, "sass": 5}') is None
    assert sass_job._decode(b'{"reply": {"error": "e", "transient": true}, "sass": "t"}') == \
        sass_job.Reply(sass="t", error="e", transient=True)
