"""Element -> (warp, lane, register) maps of inspectors.explain.layout_view (pure Python) and
inspectors.explain.threadmap.owned_elements, pinned against Triton's own layout engine.

Triton (3.6-3.9) exposes its LinearLayout in `triton._C.libtriton.linear_layout.LinearLayout`
(from_bases, apply, ...) and the conversion of a layout attribute to one through gluon:
`GluonOpBuilder(ctx).to_linear_layout(attr, shape)`. Both ways are compared here: the bases
themselves, and every (register, lane, warp) run through Triton's LinearLayout.apply.

Those calls run in Triton's C++, which aborts the process on what it does not support
(3.6: a shared layout), so they go through `inspectors.compile.layout_probe`, a separate
process: a crash fails (or, where the version is known not to support it, skips) a test and
never takes the test run down. The pure-Python side is asked for the installed Triton's
behaviour (`triton_support.blocked_keeps_small_registers`: 3.6-3.8 keep a small tensor's extra
registers as copies, 3.9 drops them).
"""
import json

import pytest

from conftest import FIXTURES
from inspectors.base import triton_support
from inspectors.compile import layout_probe
from inspectors.explain import layout_view as V
from inspectors.read.layouts import Blocked
from inspectors.explain.threadmap import owned_elements

pytest.importorskip("triton.experimental.gluon.language._layouts")
TRITON = triton_support.installed()


def blocked_spec(params) -> dict:
    spt, tpw, wpc, order = params
    return {"kind": "blocked", "size_per_thread": list(spt), "threads_per_warp": list(tpw),
            "warps_per_cta": list(wpc), "order": list(order)}


def mma_spec(version, warps, instr) -> dict:
    return {"kind": "nvidia_mma", "version": list(version), "warps_per_cta": list(warps), "instr_shape": list(instr)}


def mfma_spec(instr, transposed, warps) -> dict:
    return {"kind": "amd_mfma", "version": 3, "instr_shape": list(instr), "transposed": transposed,
            "warps_per_cta": list(warps)}


def _key(spec, shape) -> str:
    return json.dumps([spec, list(shape)], sort_keys=True)


def ours_map(ll: V.LinearLayout) -> dict:
    return {(w, l, r): ll.apply(r, l, w) for w in range(ll.num_warps) for l in range(ll.warp_size)
            for r in range(ll.size("register"))}


def check_against_triton(theirs: dict, our_layout, shape):
    bases = theirs["bases"]
    ours = V.to_linear(our_layout, shape)
    for k in ("register", "lane", "warp"):
        assert [tuple(b) for b in bases[k]] == list(ours.bases[k]), (TRITON, k, bases[k], ours.bases[k])
    assert ours_map(ours) == triton_map(theirs)
    return ours


def triton_map(theirs: dict) -> dict:
    """(warp, lane, register) -> index, through Triton's LinearLayout.apply (in the probe)."""
    return {(w, l, r): tuple(idx) for w, l, r, idx in theirs["map"]}


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


@pytest.fixture(scope="module")
def triton_layouts():
    """Triton's bases and maps for every distributed case of this module, from one probe run."""
    cases = [(blocked_spec(p), shape) for p, shape in BLOCKED]
    cases += [(mma_spec(v, w, i), shape) for v, w, i, shape in MMA]
    cases += [(mfma_spec(i, t, w), shape) for i, t, w, shape in MFMA]
    cases += [(spec, shape) for spec, _, shape in SLICES]
    answers = layout_probe.ask([{"op": "layout", "layout": spec, "shape": list(shape)} for spec, shape in cases])
    return {_key(spec, shape): a for (spec, shape), a in zip(cases, answers)}


@pytest.mark.parametrize("params,shape", BLOCKED)
def test_blocked_matches_triton(triton_layouts, params, shape):
    theirs = triton_layouts[_key(blocked_spec(params), shape)]
    ours = Blocked(*(tuple(p) for p in params))
    ll = check_against_triton(theirs, ours, shape)
    # and inspectors.explain.threadmap (the Explorer's "Programs & threads"): same elements per thread;
    # the same register order too, except where sizePerThread > 1 along the slower dimension
    same_order = len(shape) == 1 or ours.size_per_thread[ours.order[-1]] == 1
    # a tensor smaller than sizePerThread: Triton 3.9 drops the extra registers, 3.6-3.8 and
    # threadmap repeat the elements in them (thread 0 of [4] per thread on 2 elements: 3.9
    # [0, 1], 3.6 and threadmap [0, 1, 0, 1]); the elements a thread holds are the same
    smaller_than_spt = any(s < p for s, p in zip(shape, ours.size_per_thread))
    tmap = triton_map(theirs)
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


def test_small_tensor_registers_per_version():
    """The one difference between the versions' blocked layouts, modelled for each."""
    layout = Blocked((4,), (32,), (4,), (0,))
    assert V.to_linear(layout, (2,), "3.6.0").bases["register"] == ((1,), (0,))
    assert V.to_linear(layout, (2,), "3.8.0").bases["register"] == ((1,), (0,))
    assert V.to_linear(layout, (2,), "3.9.0").bases["register"] == ((1,),)
    assert V.to_linear(layout, (2,), "3.6.0").thread_elements(0, 0) == [(0,), (1,), (0,), (1,)]
    assert V.to_linear(layout, (2,), "3.9.0").thread_elements(0, 0) == [(0,), (1,)]
    said = " ".join(V.words(layout, (2,), triton_version="3.6.0"))
    assert "Triton 3.6.0 keeps the extra registers" in said and "3.9 drops them" in said
    assert "keeps the extra registers" not in " ".join(V.words(layout, (2,), triton_version="3.9.0"))


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

MFMA = [([32, 32, 8], False, [2, 2], (128, 128)), ([32, 32, 8], True, [2, 4], (128, 256)),
        ([16, 16, 16], False, [4, 1], (64, 64)), ([16, 16, 16], True, [2, 2], (32, 64))]

_PARENT = blocked_spec(([1, 4], [4, 8], [4, 1], [1, 0]))
_OURS_PARENT = Blocked((1, 4), (4, 8), (4, 1), (1, 0))
SLICES = [({"kind": "slice", "dim": dim, "parent": _PARENT}, V.Slice(dim, _OURS_PARENT), shape)
          for dim, shape in ((1, (64,)), (0, (64,)), (0, (256,)))]
SLICES.append(({"kind": "slice", "dim": 1, "parent": mma_spec([2, 0], [2, 4], [16, 8])},
               V.Slice(1, V.NvidiaMma(2, 0, (2, 4), (16, 8))), (128,)))


@pytest.mark.parametrize("version,warps,instr,shape", MMA)
def test_nvidia_mma_matches_triton(triton_layouts, version, warps, instr, shape):
    ours = V.NvidiaMma(version[0], version[1], tuple(warps), tuple(instr))
    check_against_triton(triton_layouts[_key(mma_spec(version, warps, instr), shape)], ours, shape)


def test_mma_v2_thread_holds_pairs_of_columns():
    """mma.sync m16n8: lane l holds (l/4, 2·(l%4) + {0,1}) and the same 8 rows down."""
    ll = V.to_linear(V.NvidiaMma(2, 0, (1, 1), (16, 8)), (16, 8))
    assert ll.thread_elements(0, 5) == [(1, 2), (1, 3), (9, 2), (9, 3)]


@pytest.mark.parametrize("instr,transposed,warps,shape", MFMA)
def test_amd_mfma_matches_triton(triton_layouts, instr, transposed, warps, shape):
    ours = V.AmdMfma(3, tuple(warps), tuple(instr), transposed)
    check_against_triton(triton_layouts[_key(mfma_spec(instr, transposed, warps), shape)], ours, shape)


def test_slices_match_triton(triton_layouts):
    for spec, ours, shape in SLICES:
        check_against_triton(triton_layouts[_key(spec, shape)], ours, shape)


@pytest.mark.workers
def test_swizzled_shared_matches_triton():
    """Triton's shared linear layout maps offset -> (row, col); ours maps (row, col) -> offset."""
    cases = ((8, 1, 8, 64, 64), (4, 2, 4, 32, 32), (1, 1, 1, 16, 16))
    try:
        answers = layout_probe.ask([{"op": "layout", "shape": [rows, cols], "layout": {
            "kind": "swizzled_shared", "vec": vec, "per_phase": per_phase, "max_phase": max_phase, "order": [1, 0]}}
            for vec, per_phase, max_phase, rows, cols in cases])
    except layout_probe.ProbeCrash as e:
        # Triton 3.6 builds a distributed LinearEncodingAttr from the shared layout's "offset"
        # bases and aborts on the assertion; 3.7, 3.8 and 3.9 answer. Anything else fails.
        if triton_support.parse(TRITON) < (3, 7) and "Expected input dimension 0 to be 'register'" in e.stderr:
            pytest.skip(f"Triton {TRITON}'s to_linear_layout aborts on shared layouts ({e}); "
                        "checked with 3.7-3.9")
        raise
    for (vec, per_phase, max_phase, rows, cols), theirs in zip(cases, answers):
        ours = V.SwizzledShared(vec, per_phase, max_phase, (1, 0))
        for offset in range(rows * cols):
            r = c = 0
            for bit, (br, bc) in enumerate(theirs["bases"]["offset"]):
                if offset >> bit & 1:
                    r, c = r ^ br, c ^ bc
            assert ours.offset(r, c, cols) == offset


@pytest.mark.workers
def test_a_crash_in_triton_fails_the_test_not_the_run():
    """The probe process dies on a bad query; the test process lives and is told why."""
    with pytest.raises(layout_probe.ProbeCrash) as e:
        layout_probe.ask([{"op": "layout", "layout": {"kind": "nope"}, "shape": [4]}])
    assert e.value.returncode != 0 and "unknown layout kind 'nope'" in e.value.stderr


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
    from app.render import classroom
    own = V.ownership(Blocked((4,), (32,), (4,), (0,)), (1024,))
    g = classroom.layout_graph(own.layout, warps=(0,), lanes=(0, 1))
    src = g.source
    assert 'w0t1r4 -> e516' in src.replace('"', "") and "3 more warps" in src and "30 more lanes" in src
    grid, note = classroom.ownership_html(own, highlight=(0, 1))
    assert grid.count("<td") == 1024 and 'class="hl"' in grid and note == "All 1,024 elements."
