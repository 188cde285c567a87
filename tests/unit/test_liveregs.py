"""Live registers per Python line (inspectors/read/liveregs.py): nvdisasm's life ranges paired
with the line-info SASS by offset; a spilling kernel of our own through the CLI's JSON."""
import json

import pytest

from conftest import SNIPPETS
from inspectors.read import liveregs, sass
from test_cli import cli

PLR = """        /*0000*/                   LDC R1, c[0x0][0x28] ;                 // |   1   |        |        |         |
        /*0010*/                   S2R R0, SR_TID.X ;                     // |   2   |        |        |         |
        /*0020*/                   STL [R1], R0 ;                         // |   2   |        |        |         |
.L_x_0:                                                                   // |       |        |        |         |
        /*0030*/                   LDL R4, [R1] ;                         // |  40   |    1   |    2   |         |
"""
SASS = """	//## File "k.py", line 7
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "k.py", line 9
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   STL [R1], R0 ;
.L_x_0:
	//## File "k.py", line 12
        /*0030*/                   LDL R4, [R1] ;
"""


def test_life_ranges_pair_with_the_line_info_by_offset():
    assert liveregs.live_counts(PLR) == {0x0: 1, 0x10: 2, 0x20: 2, 0x30: 40}
    to_py = {2: 7, 4: 9, 5: 9, 8: 12}          # SASS line -> Python line, as the source map makes it
    p = liveregs.pressure(PLR, SASS, to_py)
    assert p.by_line == {7: 1, 9: 2, 12: 40} and p.peak == 40 and p.peak_line() == 12
    assert p.spill_stores == {9: 1} and p.spill_loads == {12: 1}


@pytest.mark.skipif(sass.nvidia_tool("nvdisasm") is None, reason="this triton wheel has no nvdisasm")
@pytest.mark.workers
def test_a_spilling_kernel_names_its_peak_and_spill_lines():
    code, out, err = cli("compile", SNIPPETS / "why" / "spill.py", "--target", "cuda:90", "--json", "--timeout", "300",
                         timeout=400)
    assert code == 0, err
    k = json.loads(out)["kernels"][0]
    lines = (SNIPPETS / "why" / "spill.py").read_text().splitlines()
    pressure = {int(n): r for n, r in k["register_pressure"].items()}
    assert pressure and all(1 <= n <= len(lines) for n in pressure)
    # never more live than ptxas allocated, and the peak is in the kernel's body
    assert max(pressure.values()) == k["register_peak"] <= k["resources"]["registers"]
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("def heavy"))
    last = next(n for n, line in enumerate(lines, 1) if "tl.store(" in line)
    assert first < max(pressure, key=pressure.get) <= last
    # spills, where ptxas -v says there are some, on lines of the body too
    assert k["resources"]["spills"] > 0 and k["spills"]["stores"] and k["spills"]["loads"]
    assert all(first < int(n) <= last for n in [*k["spills"]["stores"], *k["spills"]["loads"]])
    # the Why list travels in the same JSON
    assert isinstance(k["remarks"], list)
