"""Kernel resources and occupancy: the parsers on inline text copied from real tool
output, the tools run on golden compiles (`tests/fixtures/resources/regen.py`), and
occupancy against hand-computed cases and against an H100's CUDA driver."""
import json
import re
import subprocess

import pytest

from conftest import FIXTURES, ROOT
from inspectors.read.resources import (run_ptxas, Occupancy, occupancy, parse_ptxas_log, parse_res_usage, ptx_local_traffic,
                                  ptx_registers, ptxas_command, ptxas_for, resource_usage, sass_local_traffic)
from inspectors.read.sass import disassemble, nvidia_tool

RES = FIXTURES / "resources"
CASES = ("vector_add_sm90", "matmul_sm90", "matmul_sm80", "spill_sm90")


def meta(name):
    return json.loads((RES / f"{name}.json").read_text())


@pytest.fixture
def cuobjdump():
    tool = nvidia_tool("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump is not in this triton wheel")
    return str(tool)


def cuobjdump_reg(tool, cubin_path) -> dict:
    """The independent path: run the tool here and read its numbers with a regex of our own."""
    out = subprocess.run([tool, "-res-usage", str(cubin_path)], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", out)}


# --------------------------------------------------------------------------- PTX registers

PTX = """\
.visible .entry add_kernel(
\t.param .u64 .ptr .global .align 1 add_kernel_param_0
)
.reqntid 128
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<33>;
\t.reg .b64 \t%rd<11>;
\t.reg .f32 \t%f<9>;
\tld.param.b64 \t%rd7, [add_kernel_param_0];
"""


def test_ptx_registers_inline():
    regs = ptx_registers(PTX)
    assert regs.by_type == {"pred": 2, "b32": 32, "b64": 10, "f32": 8}
    assert regs.lines == (6, 7, 8, 9)
    assert regs.total == 52
    assert ptx_registers("mov.u32 %r1, %tid.x;").by_type == {}


@pytest.mark.parametrize("name", CASES)
def test_ptx_registers_count_from_one(name):
    """`%r<N>` declares %r0..%r(N-1); Triton's PTX uses %r1..%r(N-1), so N-1 is the
    highest name used, counted here without the parser."""
    ptx = (RES / f"{name}.ptx").read_text()
    prefix = {m[1]: m[0] for m in re.findall(r"\.reg \.(\w+)\s+%(\w+?)<\d+>", ptx)}
    regs = ptx_registers(ptx)
    for p, typ in prefix.items():
        used = [int(n) for n in re.findall(rf"%{p}(\d+)\b", ptx)]
        assert 0 not in used
        assert regs.by_type[typ] == max(used), (name, typ)


# --------------------------------------------------------------------------- cuobjdump -res-usage

# `cuobjdump -res-usage vector_add_sm90.cubin` (CUDA 13.1 cuobjdump from triton 3.9)
RES_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function add_kernel:
  REG:26 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:576 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
# two functions, as for a cubin with a non-inlined device function
RES_USAGE_2 = RES_USAGE + """\
 Function helper:
  REG:12 STACK:16 SHARED:4224 LOCAL:8 CONSTANT[0]:0 CONSTANT[2]:24 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def test_parse_res_usage_inline():
    assert parse_res_usage(RES_USAGE) == {
        "kernel": "add_kernel", "registers": 26, "stack_bytes": 0, "shared_bytes": 0, "local_bytes": 0,
        "constant_bytes": {0: 576}, "textures": 0, "surfaces": 0, "samplers": 0}
    assert parse_res_usage(RES_USAGE_2)["kernel"] == "add_kernel"
    helper = parse_res_usage(RES_USAGE_2, "helper")
    assert (helper["registers"], helper["stack_bytes"], helper["shared_bytes"], helper["local_bytes"]) == (
        12, 16, 4224, 8)
    assert helper["constant_bytes"] == {0: 0, 2: 24}
    with pytest.raises(ValueError, match="nope"):
        parse_res_usage(RES_USAGE, "nope")
    with pytest.raises(ValueError):
        parse_res_usage("Resource usage:\n")


# --------------------------------------------------------------------------- ptxas -v

# ptxas -v on spill_sm90.ptx with Triton's flags (ptxas-blackwell 13.4)
PTXAS_SPILL = """\
ptxas-blackwell info    : 0 bytes gmem
ptxas-blackwell info    : Compiling entry function 'row_softmax_kernel' for 'sm_90a'
ptxas-blackwell info    : Function properties for row_softmax_kernel
    96 bytes stack frame, 112 bytes spill stores, 164 bytes spill loads
ptxas-blackwell info    : Used 32 registers, used 0 barriers, 96 bytes cumulative stack size
ptxas-blackwell info    : Compile time = 25.440 ms
"""
# ptxas -v on matmul_sm80.ptx (ptxas 12.9 prints cmem)
PTXAS_MATMUL_80 = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'matmul_kernel' for 'sm_80'
ptxas info    : Function properties for matmul_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 185 registers, used 1 barriers, 416 bytes cmem[0]
"""
# Constructed in the format nvcc -Xptxas -v prints for CUDA C (static __shared__ and a
# non-inlined device function, whose properties come before the entry's).
PTXAS_CUDA_C = """\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'kern' for 'sm_80'
ptxas info    : Function properties for kern
    16 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4224 bytes smem, 400 bytes cmem[0], 24 bytes cmem[2]
"""


def test_parse_ptxas_log_inline():
    assert parse_ptxas_log(PTXAS_SPILL) == {
        "kernel": "row_softmax_kernel", "arch": "sm_90a", "registers": 32, "barriers": 0, "stack_frame": 96,
        "spill_stores": 112, "spill_loads": 164, "cumulative_stack": 96, "smem": 0, "cmem": {}}
    m = parse_ptxas_log(PTXAS_MATMUL_80)
    assert (m["kernel"], m["arch"], m["registers"], m["barriers"], m["cmem"]) == (
        "matmul_kernel", "sm_80", 185, 1, {0: 416})
    assert (m["stack_frame"], m["spill_stores"], m["spill_loads"]) == (0, 0, 0)
    c = parse_ptxas_log(PTXAS_CUDA_C)
    assert (c["kernel"], c["registers"], c["smem"], c["cmem"]) == ("kern", 40, 4224, {0: 400, 2: 24})
    assert (c["stack_frame"], c["spill_stores"], c["spill_loads"]) == (16, 4, 8)   # kern's, not helper's
    with pytest.raises(ValueError):
        parse_ptxas_log("ptxas info    : 0 bytes gmem\n")


@pytest.mark.parametrize("name", CASES)
def test_ptxas_golden_logs(name):
    """The saved ptxas log of each fixture against the numbers in its cuobjdump output."""
    log = parse_ptxas_log((RES / f"{name}.ptxas.txt").read_text())
    res = parse_res_usage((RES / f"{name}.res-usage.txt").read_text())
    assert log["kernel"] == res["kernel"] == meta(name)["kernel"]
    assert log["registers"] == res["registers"]
    assert log["stack_frame"] == res["stack_bytes"]
    assert (log["spill_stores"] > 0) == (name == "spill_sm90")


# --------------------------------------------------------------------------- local memory traffic

# from the SASS of spill_sm90.cubin, plus a global load that must not count
SASS = """\
        /*0120*/                   STL [R1+0x38], R4 ;
        /*0330*/                   STL.64 [R1+0x10], R8 ;
        /*0400*/                   LDL.LU R5, [R1+0x38] ;
        /*0410*/              @!P0 LDL.LU.64 R8, [R1+0x10] ;
        /*0420*/                   LDG.E R5, desc[UR4][R2.64+0x4] ;
"""


def test_local_traffic_inline():
    t = sass_local_traffic(SASS)
    assert (t.stores, t.store_bytes, t.loads, t.load_bytes, t.lines) == (2, 12, 2, 12, (1, 2, 3, 4))
    p = ptx_local_traffic("\tld.local.b32 %r5, [%rd3];\n\t@%p1 st.local.v2.f32 [%rd3], {%f1, %f2};\n"
                          "\tld.global.b32 %r6, [%rd4];\n")
    assert (p.loads, p.stores, p.lines) == (1, 1, (1, 2))


# --------------------------------------------------------------------------- the tools on real cubins

@pytest.mark.parametrize("name", CASES)
def test_res_usage_golden(cuobjdump, name):
    """cuobjdump on the fixture cubin prints the saved output, and resource_usage reads
    the same numbers as a plain regex on a separate cuobjdump run."""
    cubin = RES / f"{name}.cubin"
    out = subprocess.run([cuobjdump, "-res-usage", str(cubin)], capture_output=True, text=True, check=True).stdout
    assert out == (RES / f"{name}.res-usage.txt").read_text()
    direct = cuobjdump_reg(cuobjdump, cubin)
    r = resource_usage(cubin.read_bytes(), meta(name)["shared"])
    assert r.kernel == meta(name)["kernel"]
    assert (r.registers, r.stack_bytes, r.static_shared_bytes, r.local_bytes) == (
        direct["REG"], direct["STACK"], direct["SHARED"], direct["LOCAL"])
    assert r.dynamic_shared_bytes == meta(name)["shared"]


def test_resource_numbers(cuobjdump):
    """Values pinned from the fixtures (update with regen.py when Triton or ptxas changes)."""
    def ru(name):
        return resource_usage((RES / f"{name}.cubin").read_bytes(), meta(name)["shared"])
    vadd, mm90, mm80 = ru("vector_add_sm90"), ru("matmul_sm90"), ru("matmul_sm80")
    assert (vadd.registers, vadd.shared_bytes, vadd.spills, vadd.source) == (26, 0, 0, "cuobjdump -res-usage")
    # sm_90: SHARED:1024 is the driver's reserve laid out in the cubin; Triton's 96 KiB are dynamic
    assert (mm90.registers, mm90.static_shared_bytes, mm90.reserved_shared_bytes, mm90.dynamic_shared_bytes,
            mm90.shared_bytes) == (122, 1024, 1024, 98304, 98304)
    # sm_80 (ptxas 12.9): no reserve in the cubin, 2 stages x 32 KiB
    assert (mm80.registers, mm80.static_shared_bytes, mm80.reserved_shared_bytes, mm80.shared_bytes) == (
        185, 0, 0, 65536)


# The two tests below run the installed Triton's ptxas, so they compile their PTX with the
# installed Triton (the committed fixtures are Triton 3.9's PTX, `.version 9.4`, which the
# CUDA 12.8 ptxas of Triton 3.6 refuses): the same kernels as regen.py, compiled fresh.

@pytest.fixture(scope="module")
def fresh(engine):
    """name -> (ptx, cubin, meta) of the regen.py case, compiled now with the installed Triton."""
    import base64
    from inspectors.base.result import CompileRequest
    sources = {"vector_add_sm90": ROOT / "kernels" / "vector_add.py", "matmul_sm90": ROOT / "kernels" / "matmul.py",
               "matmul_sm80": ROOT / "kernels" / "matmul.py", "spill_sm90": RES / "spill_kernel.py"}
    out = {}

    def get(name):
        if name not in out:
            path, arch = sources[name], meta(name)["arch"]
            r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target=f"cuda:{arch}",
                                              sass=False), timeout=240)
            assert r.ok, r.error
            k = r.kernels[0]
            out[name] = (k.stages["ptx"], base64.b64decode(k.cubin),
                         {**meta(name), "shared": k.metadata["shared"], "num_warps": k.metadata["num_warps"]})
        return out[name]
    return get


@pytest.mark.parametrize("name", CASES)
def test_ptxas_agrees_with_cuobjdump(cuobjdump, fresh, tmp_path, name):
    """ptxas -v, run here on the PTX with Triton's flags, reports the registers the cubin has."""
    if ptxas_for(meta(name)["arch"]) is None:
        pytest.skip("ptxas is not in this triton wheel")
    ptx, cubin_bytes, m = fresh(name)
    cubin = tmp_path / f"{name}.cubin"
    cubin.write_bytes(cubin_bytes)
    log = parse_ptxas_log(run_ptxas(ptx, m["arch"]))
    assert log["kernel"] == m["kernel"]
    assert log["registers"] == cuobjdump_reg(cuobjdump, cubin)["REG"]
    r = resource_usage(cubin_bytes, m["shared"], ptx=ptx)
    # ptxas runs only where spills can be: a kernel with no stack frame and no local memory has none
    has_local = bool(r.stack_bytes or r.local_bytes)
    assert r.source == ("cuobjdump -res-usage + ptxas -v" if has_local else "cuobjdump -res-usage")
    assert (r.spills, r.spill_loads) == ((log["spill_stores"], log["spill_loads"]) if has_local else (0, 0))
    assert (r.spills > 0) == (name == "spill_sm90")          # maxnreg=32 spills, with every version


def _sections(cubin: bytes) -> dict[str, bytes]:
    """Section name -> contents of a 64-bit ELF (our own reading, for the test)."""
    import struct
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    return {cubin[strtab + n:cubin.index(b"\0", strtab + n)].decode(): cubin[off:off + size]
            for n, _t, _f, _a, off, size in headers}


@pytest.mark.parametrize("name", ["vector_add_sm90", "spill_sm90"])
def test_ptxas_flags_reproduce_triton_cubin(fresh, tmp_path, name):
    """With ptxas_command's flags the cubin is Triton's: byte-identical with the CUDA 13 ptxas
    (Triton 3.9 on sm_90). The CUDA 12 ptxas (3.6-3.8 on sm_90, any version on sm_80) also
    writes the modification time and size of the Python file named by the PTX's `.file` into
    .debug_line, read from its working folder (Triton's: the job folder, which has the file;
    ours: none), which moves the offset in .rela.debug_line; every other section, the machine
    code first, is byte-identical."""
    ptx, cubin, m = fresh(name)
    arch = m["arch"]
    if ptxas_for(arch) is None:
        pytest.skip("ptxas is not in this triton wheel")
    src, out = tmp_path / "k.ptx", tmp_path / "k.cubin"
    src.write_text(ptx)
    subprocess.run(ptxas_command(ptxas_for(arch), str(src), arch, str(out)), capture_output=True, check=True,
                   cwd=tmp_path)
    mine, theirs = _sections(out.read_bytes()), _sections(cubin)
    assert any(k.startswith(".text.") for k in mine)
    line_table = (".debug_line", ".rela.debug_line")        # the table, and its relocation's offset
    assert {k: v for k, v in mine.items() if k not in line_table} == \
        {k: v for k, v in theirs.items() if k not in line_table}
    release = re.search(r"release (\d+)", subprocess.run([str(ptxas_for(arch)), "--version"], capture_output=True,
                                                          text=True).stdout).group(1)
    if int(release) >= 13:
        assert out.read_bytes() == cubin


def test_spilling_kernel(cuobjdump):
    """maxnreg=32 makes ptxas spill: the stack frame holds the spill slots (LOCAL stays 0),
    STL/LDL appear in the SASS and their bytes are ptxas' spill bytes; the PTX has no
    local memory at all, spilling happens after it."""
    m = meta("spill_sm90")
    assert m["maxnreg"] == 32
    cubin = (RES / "spill_sm90.cubin").read_bytes()
    ptx = (RES / "spill_sm90.ptx").read_text()
    assert ".maxnreg 32" in ptx and ptx_local_traffic(ptx).lines == ()
    sass = disassemble(cubin)
    traffic = sass_local_traffic(sass)
    assert traffic.stores > 0 and traffic.loads > 0
    assert re.search(r"\bSTL\b", sass) and re.search(r"\bLDL\b", sass)

    from_ptxas = resource_usage(cubin, ptx=ptx)
    assert from_ptxas.registers == 32
    assert (from_ptxas.spills, from_ptxas.spill_loads) == (112, 164)
    assert (from_ptxas.stack_bytes, from_ptxas.local_bytes) == (96, 0)
    assert (traffic.store_bytes, traffic.load_bytes) == (from_ptxas.spills, from_ptxas.spill_loads)

    from_sass = resource_usage(cubin, sass=sass)
    assert from_sass.source == "cuobjdump -res-usage + SASS STL/LDL"
    assert (from_sass.spills, from_sass.spill_loads) == (112, 164)


def test_spills_without_ptx_or_sass(cuobjdump):
    """No PTX, no SASS: a stack frame makes resource_usage disassemble; none means no spills."""
    r = resource_usage((RES / "spill_sm90.cubin").read_bytes())
    assert (r.spills, r.spill_loads, r.source) == (112, 164, "cuobjdump -res-usage + SASS STL/LDL")
    clean = resource_usage((RES / "matmul_sm80.cubin").read_bytes(), 65536)
    assert (clean.spills, clean.spill_loads, clean.stack_bytes, clean.source) == (0, 0, 0, "cuobjdump -res-usage")


# --------------------------------------------------------------------------- occupancy

def test_occupancy_warps_limit():
    # sm_90, 4 warps, 26 registers, no shared memory: 26*32 = 832 -> 1024 per warp, 16 warps per
    # sub-partition, 64 per SM = 16 blocks; the 64 warp slots also give 16 blocks (blocks: 32)
    o = occupancy(90, 26, 0, 4)
    assert (o.warps_per_sm, o.max_warps_per_sm, o.blocks_per_sm, o.limiter) == (64, 64, 16, "threads/warps")
    assert o.limits == {"threads/warps": 16, "blocks": 32, "registers": 16, "shared memory": 228}
    assert o.fraction == 1.0
    assert "64" in o.explanation and "threads/warps" in o.explanation


def test_occupancy_registers_limit():
    # sm_80, 255 registers: 8160 -> 8192 per warp, 16384 per sub-partition hold 2 warps,
    # 8 warps per SM = one block of 8 warps
    o = occupancy(80, 255, 0, 8)
    assert (o.warps_per_sm, o.blocks_per_sm, o.limiter) == (8, 1, "registers")
    assert "255 registers" in o.explanation and "8,192 per warp" in o.explanation
    # 168 registers: 5376 per warp, 3 per sub-partition, 12 warps: 3 blocks of 4 (not 12 // 4 rounding)
    o = occupancy(90, 168, 0, 4)
    assert (o.warps_per_sm, o.blocks_per_sm, o.limiter) == (12, 3, "registers")
    # 255 registers cannot run 16 warps (16 * 8192 > 65536): no block fits
    o = occupancy(90, 255, 0, 16)
    assert (o.blocks_per_sm, o.limiter) == (0, "registers")
    assert "cannot fit" in o.explanation


def test_occupancy_shared_memory_limit():
    # a 96 KiB matmul on sm_90: (98304 + 1024 reserved) = 99328 per block, 233472 // 99328 = 2
    o = occupancy(90, 64, 96 * 1024, 4)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiter) == (2, 8, "shared memory")
    assert "99,328" in o.explanation and "233,472" in o.explanation
    # the same on sm_80: 164 KiB per SM, 1 block
    assert occupancy(80, 64, 96 * 1024, 4).blocks_per_sm == 1
    # allocation unit: 1 byte more than 10 KiB - reserve rounds up to 128
    assert occupancy(90, 32, 10 * 1024 - 1024 + 1, 1).limits["shared memory"] == 233472 // (10 * 1024 + 128)
    # over the 227 KiB a block may use
    o = occupancy(90, 32, 227 * 1024 + 1, 4)
    assert (o.blocks_per_sm, o.limiter) == (0, "shared memory")
    assert occupancy(90, 32, 227 * 1024, 4).blocks_per_sm == 1


def test_occupancy_blocks_limit_and_table():
    # one warp per block: 32 blocks on sm_90, 16 on sm_75/86, 24 on sm_89
    assert (occupancy(90, 32, 0, 1).blocks_per_sm, occupancy(90, 32, 0, 1).limiter) == (32, "blocks")
    assert occupancy(86, 32, 0, 1).blocks_per_sm == 16
    assert occupancy(89, 32, 0, 1).warps_per_sm == 24
    assert occupancy(75, 32, 0, 1).blocks_per_sm == 16
    assert occupancy(120, 32, 0, 2).max_warps_per_sm == 48
    # Turing: 32 warps per SM, no driver reserve, 256-byte shared allocation unit
    o = occupancy(75, 32, 100, 8)
    assert (o.max_warps_per_sm, o.blocks_per_sm) == (32, 4)
    assert occupancy(75, 32, 32 * 1024, 8).limits["shared memory"] == 2
    assert occupancy(75, 32, 32 * 1024 + 1, 8).limits["shared memory"] == 1    # 32 KiB + 256
    assert occupancy(100, 32, 0, 4).warps_per_sm == 64
    with pytest.raises(ValueError):
        occupancy(70, 32, 0, 4)
    # a block of more than 1024 threads does not launch
    assert occupancy(90, 16, 0, 64).blocks_per_sm == 0


def test_occupancy_tie_names_both():
    # the sm_90 matmul fixture: registers and shared memory both allow 2 blocks
    o = occupancy(90, 122, 98304, 8)
    assert (o.blocks_per_sm, o.limiter) == (2, "registers")
    assert "shared memory would allow no more either" in o.explanation


def test_occupancy_matches_h100_driver():
    """cuOccupancyMaxActiveBlocksPerMultiprocessor on an H100 (driver 580) for the sm_90
    fixture cubins at block sizes 32..1024 and dynamic shared sizes 0..228 KiB
    (`driver_probe.py`; rows kept around every change of the answer). The driver's
    static shared is 0 even for the matmul cubin whose SHARED is 1024."""
    data = json.loads((RES / "driver_occupancy_sm90.json").read_text())
    assert data["device"]["reserved_smem"] == 1024 and data["device"]["smem_per_sm"] == 228 * 1024
    checked = 0
    for name, entry in data.items():
        if name == "device":
            continue
        attrs = entry["attrs"]
        if name == "matmul_sm90":
            assert attrs["shared"] == 0
        for threads, rows in entry["rows"].items():
            for dyn, blocks in rows:
                got = occupancy(90, attrs["regs"], attrs["shared"] + dyn, int(threads) // 32)
                assert got.blocks_per_sm == blocks, (name, threads, dyn, got.limits)
                checked += 1
    assert checked > 400


def test_occupancy_from_resources(cuobjdump):
    """Resources.shared_bytes is what the driver counts: the sm_90 matmul fixture is
    limited to 2 blocks by registers and by shared memory, not to 1 by a double reserve."""
    r = resource_usage((RES / "matmul_sm90.cubin").read_bytes(), meta("matmul_sm90")["shared"])
    o = occupancy(90, r.registers, r.shared_bytes, meta("matmul_sm90")["num_warps"])
    assert isinstance(o, Occupancy)
    assert (o.blocks_per_sm, o.warps_per_sm) == (2, 16)


def test_the_compiles_own_ptxas_log_gives_the_spills(cuobjdump, engine, monkeypatch):
    """The worker keeps ptxas's `-v` log from Triton's own compile (a kernel compiled now, not
    from the cache: its source made unique): the spills come from it, ptxas is not run again,
    and they are the numbers ptxas gives when it is."""
    import base64
    import secrets
    from inspectors.base.result import CompileRequest
    from inspectors.read import resources
    source = (RES / "spill_kernel.py").read_text().replace(      # the JIT's key hashes the kernel's text
        "    row = tl.program_id(0)\n", f"    row = tl.program_id(0)  # {secrets.token_hex(8)}\n")
    r = engine.compile(CompileRequest(source=source, filename="spill_kernel.py", target="cuda:90", sass=False),
                       timeout=240)
    assert r.ok, r.error
    k = r.kernels[0]
    log = k.metadata["ptxas_log"]
    assert f"Compiling entry function '{k.name}'" in log and "spill stores" in log
    cubin, ptx = base64.b64decode(k.cubin), k.stages["ptx"]
    again = resource_usage(cubin, ptx=ptx)                       # ptxas run once more
    monkeypatch.setattr(resources, "run_ptxas", lambda *a, **kw: (_ for _ in ()).throw(AssertionError("ran ptxas")))
    kept = resources.resource_usage(cubin, ptx=ptx, ptxas_log=log)
    assert kept.source == again.source == "cuobjdump -res-usage + ptxas -v"
    assert (kept.spills, kept.spill_loads, kept.ptxas_registers) == (again.spills, again.spill_loads,
                                                                    again.ptxas_registers) and kept.spills > 0
