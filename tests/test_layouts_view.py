"""Element -> (warp, lane, register) maps of inspectors.explain.layout_view (pure Python) and
inspectors.explain.threadmap.owned_elements, pinned against Triton's own layout engine.

Triton 3.9 exposes its LinearLayout in `triton._C.libtriton.linear_layout.LinearLayout`
(from_bases, apply, get_distributed_view, ...) and the conversion of a layout attribute to one
through gluon: `GluonOpBuilder(ctx).to_linear_layout(attr, shape)` returns a
DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases, shape) for a layout
built with `builder.get_blocked_layout / get_mma_layout / get_slice_layout / ...` (the gluon
layout classes' `_to_ir`). Both ways are compared here: the bases themselves, and every
(register, lane, warp) run through Triton's LinearLayout.apply.
"""
import json

import pytest

from conftest import FIXTURES
from inspectors.explain import layout_view as V
from inspectors.read.layouts import Blocked
from inspectors.explain.threadmap import owned_elements

libtriton = pytest.importorskip("triton._C.libtriton")
gluon = pytest.importorskip("triton.experimental.gluon.language._layouts")
amd = pytest.importorskip("triton.experimental.gluon.language.amd._layouts")


@pytest.fixture(scope="module")
def builder():
    ctx = libtriton.ir.context()
    libtriton.ir.load_dialects(ctx)
    b = libtriton.gluon_ir.GluonOpBuilder(ctx)
    b._ctx = ctx          # keep the context alive as long as the builder
    return b


def triton_bases(builder, layout, shape) -> dict:
    d = builder.to_linear_layout(layout._to_ir(builder), list(shape))
    return {"register": d.reg_bases, "lane": d.lane_bases, "warp": d.warp_bases, "block": d.block_bases}


def triton_map(bases: dict, shape) -> dict:
    """(warp, lane, register) -> index, through Triton's LinearLayout.apply."""
    names = [f"dim{i}" for i in range(len(shape))]
    ll = libtriton.linear_layout.LinearLayout.from_bases(
        [(k, [list(b) for b in bases[k]]) for k in ("register", "lane", "warp", "block")], names, list(shape),
        require_surjective=False)
    out = {}
    for w in range(1 << len(bases["warp"])):
        for l in range(1 << len(bases["lane"])):
            for r in range(1 << len(bases["register"])):
                got = ll.apply({"register": r, "lane": l, "warp": w, "block": 0})
                out[(w, l, r)] = tuple(got[n] for n in names)
    return out


def ours_map(ll: V.LinearLayout) -> dict:
    return {(w, l, r): ll.apply(r, l, w) for w in range(ll.num_warps) for l in range(ll.warp_size)
            for r in range(ll.size("register"))}


def check_against_triton(builder, triton_layout, our_layout, shape):
    bases = triton_bases(builder, triton_layout, shape)
    ours = V.to_linear(our_layout, shape)
    for k in ("register", "lane", "warp"):
        assert [tuple(b) for b in bases[k]] == list(ours.bases[k]), (k, bases[k], ours.bases[k])
    assert ours_map(ours) == triton_map(bases, shape)
    return ours


BLOCKED = [
    # 1-D, the tensor larger than the tile (512): each thread wraps around, 2 groups of 4
    (([4], [32], [4], [0]), (1024,)),
    (([4], [32], [4], [0]), (4096,)),
    (([1], [32], [4], [0]), (1024,)),
    # 1-D, the tensor smaller than the tile: threads hold copies
    (([1], [32], [4], [0]), (64,)),
    (([4], [32], [4], [0]), (2,)),
    # 2-D, dim 1 fastest (row-major) and dim 0 fastest (column-major)
    (([1, 4], [4, 8], [2, 1], [1, 0]), (8, 32)),
    (([1, 4], [2, 16], [4, 1], [1, 0]), (64, 64)),
    (([1, 8], [4, 8], [8, 1], [1, 0]), (128, 64)),
    (([4, 1], [16, 2], [1, 4], [0, 1]), (64, 64)),
    (([4, 1], [8, 4], [1, 2], [0, 1]), (32, 8)),
    (([2, 2], [8, 4], [2, 2], [0, 1]), (64, 32)),
    (([2, 2], [8, 4], [2, 2], [1, 0]), (4, 4)),
]


@pytest.mark.parametrize("params,shape", BLOCKED)
def test_blocked_matches_triton(builder, params, shape):
    tl_layout = gluon.BlockedLayout(*params)
    ours = Blocked(*(tuple(p) for p in params))
    ll = check_against_triton(builder, tl_layout, ours, shape)
    # and inspectors.explain.threadmap (the Explorer's "Programs & threads"): same elements per thread;
    # the same register order too, except where sizePerThread > 1 along the slower dimension
    same_order = len(shape) == 1 or ours.size_per_thread[ours.order[-1]] == 1
    # a tensor smaller than sizePerThread: Triton drops the extra registers, threadmap repeats
    # the elements in them (thread 0 of [4] per thread on 2 elements: Triton [0, 1], threadmap
    # [0, 1, 0, 1]); the elements a thread holds are the same
    smaller_than_spt = any(s < p for s, p in zip(shape, ours.size_per_thread))
    tmap = triton_map(triton_bases(builder, tl_layout, shape), shape)
    for thread in range(32 * len(range(ll.num_warps))):
        warp, lane = divmod(thread, 32)
        theirs = [tmap[(warp, lane, r)] for r in range(ll.size("register"))]
        mine = owned_elements(ours, shape, thread)
        if smaller_than_spt:
            assert sorted(set(mine)) == sorted(set(theirs)), thread
        elif same_order:
            assert mine == theirs, (thread, mine, theirs)
        else:
            assert sorted(mine) == sorted(theirs), thread


def test_wrap_around_in_words():
    layout = Blocked((4,), (32,), (4,), (0,))
    ll = V.to_linear(layout, (1024,))
    assert ll.thread_elements(0, 1) == [(4,), (5,), (6,), (7,), (516,), (517,), (518,), (519,)]
    assert V.ownership(layout, (1024,)).replication == 1
    small = V.ownership(Blocked((1,), (32,), (4,), (0,)), (64,))
    assert small.replication == 2 and small.owners[(0,)] == [(0, 0, 0), (2, 0, 0)]


MMA = [
    ([2, 0], [2, 4], [16, 8], (128, 128)),
    ([2, 0], [4, 1], [16, 8], (64, 32)),
    ([2, 0], [2, 2], [16, 8], (16, 16)),        # smaller than the warps' tile: copies
    ([3, 0], [8, 1], [16, 128, 16], (128, 128)),
    ([3, 0], [4, 1], [16, 64, 16], (64, 64)),
]


@pytest.mark.parametrize("version,warps,instr,shape", MMA)
def test_nvidia_mma_matches_triton(builder, version, warps, instr, shape):
    ours = V.NvidiaMma(version[0], version[1], tuple(warps), tuple(instr))
    check_against_triton(builder, gluon.NVMMADistributedLayout(version, warps, instr), ours, shape)


def test_mma_v2_thread_holds_pairs_of_columns():
    """mma.sync m16n8: lane l holds (l/4, 2·(l%4) + {0,1}) and the same 8 rows down."""
    ll = V.to_linear(V.NvidiaMma(2, 0, (1, 1), (16, 8)), (16, 8))
    assert ll.thread_elements(0, 5) == [(1, 2), (1, 3), (9, 2), (9, 3)]


@pytest.mark.parametrize("instr,transposed,warps,shape", [
    ([32, 32, 8], False, [2, 2], (128, 128)), ([32, 32, 8], True, [2, 4], (128, 256)),
    ([16, 16, 16], False, [4, 1], (64, 64)), ([16, 16, 16], True, [2, 2], (32, 64))])
def test_amd_mfma_matches_triton(builder, instr, transposed, warps, shape):
    ours = V.AmdMfma(3, tuple(warps), tuple(instr), transposed)
    check_against_triton(builder, amd.AMDMFMALayout(3, instr, transposed, warps), ours, shape)


def test_slices_match_triton(builder):
    parent = gluon.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    ours = Blocked((1, 4), (4, 8), (4, 1), (1, 0))
    for dim, shape in ((1, (64,)), (0, (64,)), (0, (256,))):
        check_against_triton(builder, gluon.SliceLayout(dim, parent), V.Slice(dim, ours), shape)
    mma = gluon.NVMMADistributedLayout([2, 0], [2, 4], [16, 8])
    check_against_triton(builder, gluon.SliceLayout(1, mma), V.Slice(1, V.NvidiaMma(2, 0, (2, 4), (16, 8))), (128,))


def test_swizzled_shared_matches_triton(builder):
    """Triton's shared linear layout maps offset -> (row, col); ours maps (row, col) -> offset."""
    for vec, per_phase, max_phase, rows, cols in ((8, 1, 8, 64, 64), (4, 2, 4, 32, 32), (1, 1, 1, 16, 16)):
        d = builder.to_linear_layout(gluon.SwizzledSharedLayout(vec, per_phase, max_phase, [1, 0])._to_ir(builder),
                                     [rows, cols])
        ours = V.SwizzledShared(vec, per_phase, max_phase, (1, 0))
        for offset in range(rows * cols):
            r = c = 0
            for bit, (br, bc) in enumerate(d.offset_bases):
                if offset >> bit & 1:
                    r, c = r ^ br, c ^ bc
            assert ours.offset(r, c, cols) == offset


def test_parse_every_kind_from_text():
    aliases = {"#blocked": "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>"}
    assert V.parse_layout("#blocked", aliases) == Blocked((1, 8), (4, 8), (8, 1), (1, 0))
    s = V.parse_layout("#ttg.slice<{dim = 1, parent = #blocked}>", aliases)
    assert isinstance(s, V.Slice) and s.dim == 1 and s.parent == Blocked((1, 8), (4, 8), (8, 1), (1, 0))
    assert V.parse_layout("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], "
                          "instrShape = [16, 128, 16]}>") == V.NvidiaMma(3, 0, (8, 1), (16, 128, 16))
    assert V.parse_layout("#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 4], instrShape = [32, 32, 8], "
                          "isTransposed = true}>") == V.AmdMfma(3, (2, 4), (32, 32, 8), True)
    lin = V.parse_layout("#ttg.linear<{register = [[1, 0], [2, 0]], lane = [[0, 8], [4, 0]], warp = [[8, 0]], block = []}>")
    assert lin.bases["register"] == ((1, 0), (2, 0)) and lin.bases["block"] == ()
    assert V.parse_layout("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>") == \
        V.SwizzledShared(8, 1, 8, (1, 0))
    assert isinstance(V.parse_layout("#ttg.amd_rotating_shared<{vec = 4}>"), V.Other)


def test_matmul_ttgir_layouts_conversion_and_shared():
    k = json.loads((FIXTURES / "insight" / "matmul_sm80.kernel.json").read_text())
    found = V.module_layouts(k["stages"]["ttgir"])
    by_name = {u.name: u for u in found.uses}
    assert by_name["#mma"].layout == V.NvidiaMma(2, 0, (2, 4), (16, 8))
    assert by_name["#mma"].shapes[0] == (128, 256)
    assert isinstance(by_name["#shared"].layout, V.SwizzledShared) and by_name["#shared"].shared
    assert [(c.source, c.target, c.shape) for c in found.conversions] == [("#mma", "#blocked", (128, 256))]
    assert found.num_warps == 8 and len(found.shared_allocs) == 2
    own = V.ownership(by_name["#mma"].layout, (128, 256))
    assert own.registers == 128 and own.replication == 1 and len(own.owners) == 128 * 256
    words = V.words(by_name["#ttg.slice<{dim = 1, parent = #blocked}>"].layout, (128,))
    assert any("held by 32 threads" in w for w in words)


def test_graph_and_grid_are_built_without_a_dot_binary():
    from app import classroom
    own = V.ownership(Blocked((4,), (32,), (4,), (0,)), (1024,))
    g = classroom.layout_graph(own.layout, warps=(0,), lanes=(0, 1))
    src = g.source
    assert 'w0t1r4 -> e516' in src.replace('"', "") and "3 more warps" in src and "30 more lanes" in src
    grid, note = classroom.ownership_html(own, highlight=(0, 1))
    assert grid.count("<td") == 1024 and 'class="hl"' in grid and note == "All 1,024 elements."
