"""%ctaid/%tid: addresses rebuilt from real PTX, and element ownership from layouts."""
import json

from conftest import FIXTURES
from inspectors.read.layouts import Blocked
from inspectors.explain.threadmap import owned_elements, ptx_addresses, tensor_mappings, thread_examples

PARAMS = ["x_ptr", "y_ptr", "out_ptr", "n"]


def test_vector_add_addresses_from_ptx():
    ptx = (FIXTURES / "vadd_aligned_sm90.ptx").read_text()
    addrs = ptx_addresses(ptx, PARAMS)
    exprs = [a.expr for a in addrs.values()]
    assert exprs[0] == "x_ptr + 4·(4·(tid.x mod 128) + 1024·ctaid.x)"
    assert exprs[1] == "x_ptr + 4·(4·(tid.x mod 128) + 1024·ctaid.x) + 2048"     # the +512 elements
    assert exprs[4].startswith("out_ptr + ")
    assert all(a.uses_ctaid and a.uses_tid for a in addrs.values())


def test_misaligned_scalar_loads_step_by_4_bytes():
    ptx = (FIXTURES / "vadd_misaligned_sm90.ptx").read_text()
    x_loads = [a.expr for a in ptx_addresses(ptx, PARAMS).values() if a.expr.startswith("x_ptr")]
    assert [e.rsplit(" + ", 1)[-1] for e in x_loads[1:4]] == ["4", "8", "12"]


def test_runtime_stride_appears_in_the_address():
    k = json.loads((FIXTURES / "insight" / "strided_sm90.kernel.json").read_text())
    params = [a["name"] for a in k["args"] if a["type"] != "constexpr"]
    first = next(iter(ptx_addresses(k["stages"]["ptx"], params).values()))
    assert first.expr.startswith("src_ptr + ") and "stride" in first.expr


def test_layout_formula_and_ownership():
    k = json.loads((FIXTURES / "insight" / "atomic_sm90.kernel.json").read_text())
    m = tensor_mappings(k["stages"]["ttgir"])[0]
    assert m.formula.startswith("element = 1024·ctaid.x + 4·tid.x + {0,1,2,3} and +512")
    assert m.owned(1) == [(4,), (5,), (6,), (7,), (516,), (517,), (518,), (519,)]
    assert thread_examples(m)[1] == "thread 1 of warp 0 (tid.x = 1) owns elements 4–7, 516–519"


def test_2d_blocked_order_1_0_and_0_1():
    row_major = Blocked((1, 4), (4, 8), (2, 1), (1, 0))      # dim 1 fastest
    assert owned_elements(row_major, (8, 32), 0) == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert owned_elements(row_major, (8, 32), 1) == [(0, 4), (0, 5), (0, 6), (0, 7)]
    assert owned_elements(row_major, (8, 32), 8) == [(1, 0), (1, 1), (1, 2), (1, 3)]
    assert owned_elements(row_major, (8, 32), 32) == [(4, 0), (4, 1), (4, 2), (4, 3)]
    col_major = Blocked((4, 1), (8, 4), (1, 2), (0, 1))      # dim 0 fastest
    assert owned_elements(col_major, (32, 8), 1) == [(4, 0), (5, 0), (6, 0), (7, 0)]
    assert owned_elements(col_major, (32, 8), 8) == [(0, 1), (1, 1), (2, 1), (3, 1)]


def test_every_element_owned_exactly_once():
    for layout, shape in [(Blocked((4,), (32,), (4,), (0,)), (1024,)),
                          (Blocked((1, 8), (4, 8), (8, 1), (1, 0)), (128, 64)),
                          (Blocked((2, 2), (8, 4), (2, 2), (0, 1)), (64, 32))]:
        threads = 32 * (layout.warps_per_cta[0] * (layout.warps_per_cta[1] if len(shape) > 1 else 1))
        cells = [c for t in range(threads) for c in owned_elements(layout, shape, t)]
        assert len(cells) == len(set(cells)) == (shape[0] * (shape[1] if len(shape) > 1 else 1))
