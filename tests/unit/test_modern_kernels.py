"""Kernels of the kind written now, read right: a Hopper matmul through tensor descriptors (TMA
loads and a TMA store: direction, tile, bytes), a warp-specialized persistent matmul for
Blackwell (the warps a block really runs, its partitions and their lines, occupancy from
them, tcgen05 and TMEM operations counted and marked)."""
import re


from conftest import ROOT, SNIPPETS
from app.render import stage_html
from inspectors.base.result import CompileRequest
from inspectors.explain import insight
from inspectors.read import ptxops

MODERN = SNIPPETS / "modern"
# the TMA and warp-specialized matmuls are the Hopper lesson's own files (assets/lessons/hopper/)
HOPPER = ROOT / "assets" / "lessons" / "hopper"


def _compile(engine, name, target):
    path = HOPPER / name if (HOPPER / name).is_file() else MODERN / name
    r = engine.compile(CompileRequest(source=path.read_text(), filename=name, target=target, sass=False,
                                      analysis_s=120), timeout=300)
    assert r.ok, r.error
    k = r.kernels[0]
    return k, insight.of(k, name), path.read_text().splitlines()


def _line_of(lines, text, after=0):
    return next(i for i, ln in enumerate(lines, 1) if i > after and text in ln)


def test_tma_loads_and_store_have_direction_tile_and_bytes(engine):
    k, found, lines = _compile(engine, "tma_matmul.py", "cuda:90")
    a_line, b_line = _line_of(lines, "a = a_desc.load("), _line_of(lines, "b = b_desc.load(")
    c_line = _line_of(lines, "c_desc.store(")
    tma = [m for m in found.memory_ops if m.role == "tma"]
    # independent of the reader: the PTX's bulk tensor copies, each direction by its state spaces
    ptx = k.stages["ptx"].splitlines()
    loads = [n for n, ln in enumerate(ptx, 1) if re.search(r"cp\.async\.bulk\.tensor\.\dd\.shared::\w+\.global", ln)]
    stores = [n for n, ln in enumerate(ptx, 1) if re.search(r"cp\.async\.bulk\.tensor\.\dd\.global\.shared", ln)]
    assert sorted(m.ptx_line for m in tma if m.kind == "load") == loads and loads
    assert [m.ptx_line for m in tma if m.kind == "store"] == stores and len(stores) == 1
    for m in tma:
        want = {a_line: ((128, 64), "load"), b_line: ((64, 128), "load"), c_line: ((128, 128), "store")}[m.python_line]
        assert (m.tile, m.kind, m.bits) == (want[0], want[1], 16)
        assert m.bytes_per_thread == want[0][0] * want[0][1] * 2
    assert tma[0].width == "TMA tile 128×64 × 16-bit = 16 KiB"
    # the device-side descriptors: one 128-byte write to global per tl.make_tensor_descriptor
    desc = [m for m in found.memory_ops if m.role == "tensormap"]
    assert len(desc) == 3 and {m.bytes_per_thread for m in desc} == {128}
    assert [m.python_line for m in desc] == [_line_of(lines, f"{x}_desc = tl.make_tensor_descriptor") for x in "abc"]
    # a TMA line is marked as the widest access, not as a scalar one
    kinds = stage_html.line_classes("ptx", k.stages["ptx"])
    assert all("mem-vec" in kinds[n] for n in loads + stores)


def test_warp_specialized_matmul_runs_its_partitions_warps(engine):
    k, found, lines = _compile(engine, "ws_matmul.py", "cuda:100")
    ptx = k.stages["ptx"]
    reqntid = int(re.search(r"\.reqntid\s+(\d+)", ptx).group(1))
    assert k.options["num_warps"] == 8 and found.warps == reqntid // 32 > 8
    # occupancy counts the compiled warps, not the 8 asked for
    assert found.occupancy.warps_per_sm == found.occupancy.blocks_per_sm * found.warps
    assert f"blocks of {found.warps} warps" in found.occupancy.explanation or \
        f"block of {found.warps} warps" in found.occupancy.explanation
    parts = {p.name: p for p in found.partitions}
    assert parts["default"].warps == 8 and parts["default"].role.startswith("epilogue")
    roles = sorted(p.role.split(":")[0] for name, p in parts.items() if name != "default")
    assert roles == ["MMA", "producer"]
    producer = next(p for p in found.partitions if p.role.startswith("producer"))
    # (the b tile's copy carries the tl.dot's location after the pass rewrote it: the compiler's own)
    assert _line_of(lines, "a = a_desc.load(") in producer.python_lines
    mma = next(p for p in found.partitions if p.role.startswith("MMA"))
    assert _line_of(lines, "acc = tl.dot(") in mma.python_lines
    assert all(p.registers for p in found.partitions if p.name != "default")
    # Blackwell's tensor cores and tensor memory, counted as wgmma is, and marked in the PTX panel
    fam = ptxops.families(ptx)
    assert fam["tcgen05_mma"] > 0 and fam["tcgen05_ld"] > 0 and fam["tcgen05_alloc"] > 0 and fam["setmaxnreg"] > 0
    kinds = stage_html.line_classes("ptx", ptx)
    tc_lines = [n for n, ln in enumerate(ptx.splitlines(), 1) if re.match(r"\s*(@%p\d+\s+)?tcgen05\.mma", ln)]
    assert tc_lines and all("tc" in kinds[n].split() for n in tc_lines)


def test_gluon_kernel_with_a_layout_from_the_host(engine):
    """`@gluon.jit` with its BlockedLayout passed from the host, as Triton's Gluon tutorials do:
    compiled by the JIT's own source class (GluonASTSource), every stage from TTGIR on."""
    k, found, lines = _compile(engine, "gluon_softmax.py", "cuda:90")
    assert "ttir" not in k.stages and {"ttgir", "llir", "ptx"} <= set(k.stages)   # Gluon starts at TTGIR
    layout = next(a for a in k.args if a.name == "layout")
    assert layout.value.startswith("BlockedLayout(size_per_thread=[4]")
    assert "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>" \
        in k.stages["ttgir"]
    load_line = _line_of(lines, "x = gl.load(")
    loads = [m for m in found.memory_ops if m.space == "global" and m.kind == "load"]
    assert loads and all(m.python_line == load_line and m.vector == 4 for m in loads)   # 4 a thread: v4


def test_a_gluon_error_shows_the_compilers_whole_message(engine):
    source = (MODERN / "gluon_softmax.py").read_text().replace("m = gl.max(x, axis=0)", "m = gl.max(x, axis=1)")
    r = engine.compile(CompileRequest(source=source, filename="bad.py", sass=False))
    assert r.error.kind == "compile"
    assert r.error.message == "invalid axis 1. Expected -1 <= axis < 1"        # not a lone "^"
    assert r.error.line == _line_of(source.splitlines(), "m = gl.max(x, axis=1)")
    assert "raised from ValueError: invalid axis 1" in r.error.detail
