"""Insight on real compiles: golden fixtures (matmul with cp.async, an atomic kernel, a
runtime-strided load; sm_80 and sm_90), and invariants checked against the PTX and
cuobjdump directly for every library kernel."""
import base64
import json
import re
import subprocess
import tempfile

import pytest

from conftest import FIXTURES
from inspectors.explain.insight import analyze
from inspectors.base.result import CompileRequest, KernelResult
from inspectors.read.sass import nvidia_tool

GOLDEN = sorted((FIXTURES / "insight").glob("*.kernel.json"))
FILES = {"matmul": "matmul.py", "atomic": "atomic.py", "strided": "strided.py"}

# Independent of inspectors.read.memops: a global access is a line with one of these.
_GLOBAL_RE = re.compile(r"^\s*(@!?%p\d+\s+)?(ld\.global|st\.global|atom\.global|red\.global|"
                        r"cp\.async\.(cg|ca)\.shared\.global|cp\.async\.bulk\.tensor)")
_REG_RE = re.compile(r"REG:(\d+)")


def _fixture(path):
    kernel = KernelResult.from_json(json.loads(path.read_text()))
    name = path.name.split("_sm")[0]
    return kernel, FILES[name]


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name.split(".")[0] for p in GOLDEN])
def test_golden(path):
    kernel, filename = _fixture(path)
    got = analyze(kernel, kernel.stages, filename).to_json()
    want = json.loads(path.with_name(path.name.replace(".kernel.json", ".insight.json")).read_text())
    assert json.loads(json.dumps(got, sort_keys=True)) == want


def _check_invariants(kernel: KernelResult, filename: str):
    insight = analyze(kernel, kernel.stages, filename)
    ptx = kernel.stages["ptx"]
    # 1. memory_ops matches what the PTX holds
    expected = [n for n, line in enumerate(ptx.splitlines(), 1) if _GLOBAL_RE.match(line)]
    got = [m.ptx_line for m in insight.memory_ops if m.space == "global"]
    assert got == expected, kernel.label
    # 2. the register count matches cuobjdump's for the same cubin
    tool = nvidia_tool("cuobjdump")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(base64.b64decode(kernel.cubin))
        f.flush()
        out = subprocess.run([str(tool), "-res-usage", f.name], capture_output=True, text=True).stdout
    assert insight.resources.registers == int(_REG_RE.search(out).group(1))
    # 3. every .loc of the user's file that precedes an instruction is in the source map
    #    (inside an inline-asm block only its first .loc counts: LLVM numbers the asm's
    #    lines on from there, see inspectors/read/sourcemap.py)
    user_file = next(m.group(1) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.M)
                     if m.group(2) == filename)
    locs, in_asm, first_in_asm = set(), False, False
    lines = ptx.splitlines()
    for i, line in enumerate(lines):
        s = line.strip()
        if s == "// begin inline asm":
            in_asm, first_in_asm = True, True
        elif s == "// end inline asm":
            in_asm = False
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)\s+\d+", s)
        if m and m.group(1) == user_file and int(m.group(2)) > 0:
            nxt = next((l.strip() for l in lines[i + 1:] if l.strip() and not l.strip().startswith("//")), "")
            if (not in_asm or first_in_asm) and not nxt.startswith(".loc") and nxt.endswith(";"):
                locs.add(int(m.group(2)))
            first_in_asm = False if in_asm else first_in_asm
    mapped = set(insight.source_map.stages["ptx"].to_python.values())
    assert locs <= mapped, f"{kernel.label}: .loc lines missing from the source map: {sorted(locs - mapped)}"
    inlined = {int(n) for f, n in re.findall(r"inlined_at (\d+) (\d+)", ptx) if f == user_file}
    # Triton 3.6 has no inlined_at: the inline stack is in the .loc's comment, `@[ softmax.py:37:23 ]`
    inlined |= {int(n) for n in re.findall(r"@\[ " + re.escape(filename) + r":(\d+):", ptx)}
    assert mapped <= locs | inlined, sorted(mapped - locs - inlined)
    return insight


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name.split(".")[0] for p in GOLDEN])
def test_golden_invariants(path):
    _check_invariants(*_fixture(path))


def test_matmul_loads_are_cp_async_and_atomics_are_found():
    kernel, _ = _fixture(FIXTURES / "insight" / "matmul_sm90.kernel.json")
    ops = analyze(kernel, kernel.stages, "matmul.py").memory_ops
    assert "ld.global" not in kernel.stages["ptx"]
    assert all(m.op.startswith("cp.async") for m in ops if m.kind == "load" and m.space == "global")
    assert any(m.op.startswith("cp.async") and m.vector * m.bits == 128 for m in ops)
    kernel, _ = _fixture(FIXTURES / "insight" / "atomic_sm90.kernel.json")
    atomics = [m for m in analyze(kernel, kernel.stages, "atomic.py").memory_ops if m.kind == "atomic"]
    assert atomics and {m.python_line for m in atomics} == {11}


def test_strided_load_says_why():
    kernel, _ = _fixture(FIXTURES / "insight" / "strided_sm90.kernel.json")
    loads = [m for m in analyze(kernel, kernel.stages, "strided.py").memory_ops if m.kind == "load"]
    assert loads and all(m.vector == 1 for m in loads)
    assert all("multiplied by `stride`" in m.why for m in loads)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_every_library_kernel(engine, target):
    import kernels
    for entry in kernels.LIBRARY:
        r = engine.compile(CompileRequest(source=entry.source(), filename=entry.path.name, target=target))
        assert r.ok, (entry.slug, r.error)
        for kernel in r.kernels:
            _check_invariants(kernel, entry.path.name)
