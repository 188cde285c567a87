"""Nsight Compute Source-page CSVs made by the tests (tests/unit/test_profile.py, and the profile
view's tests in tests/app and tests/browser): the layout Nsight Compute 2025 exports, from the real
SASS of the fixture kernels; the figures in them are the tests' own, not measurements."""
import csv
import io

from conftest import FIXTURES
from inspectors.explain import profile as prof
from inspectors.read import ncu_source as ncu
from inspectors.read import sourcemap as sm

SM = FIXTURES / "sourcemap"
BASE = 0x7F3C_2E1D_0000
HEADER = ["Address", "Source", ncu.SAMPLES, ncu.NOT_ISSUED, ncu.EXECUTED, ncu.THREAD_EXECUTED,
          ncu.SECTORS, ncu.SECTORS_IDEAL, ncu.SECTORS_EXCESSIVE, "stall_long_sb", "stall_wait", "stall_selected"]


def stages(name: str) -> dict:
    out = {"source": (SM / f"{name}.py").read_text()}
    for ext in ("ptx", "sass"):
        out[ext] = (SM / f"{name}.{ext}").read_text()
    return out


def export(sass: str, cost, preamble=("==PROF== Connected to process 521 (/usr/bin/python3.12)",
                                      '"Kernel Name","add_kernel"')) -> str:
    """A Source-page CSV of `sass`: cost(offset, text) -> (samples, executed, sectors, ideal, long_sb)."""
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(HEADER)
    for _n, off, text in prof.sass_instructions(sass):
        samples, executed, sectors, ideal, long_sb = cost(off, text)
        w.writerow([f"0x{BASE + off:x}", text, f"{samples:,}", "0", f"{executed:,}", f"{32 * executed:,}",
                    f"{sectors:,}", f"{ideal:,}", f"{sectors - ideal:,}", f"{long_sb:,}",
                    f"{samples - long_sb:,}", "0"])
    return "\n".join(preamble) + "\n" + buf.getvalue()


def vector_add_profile(cost):
    st = stages("vector_add_sm90")
    smap = sm.build(st, "vector_add.py")
    page = ncu.parse(export(st["sass"], cost))[0]
    return st, smap, page, prof.build(page, st["sass"], smap.stages["sass"], meta={"kernel": "add_kernel"})


def load_heavy(off, text):
    """Loads wait (100 samples, 90 on long scoreboard); everything else 1 sample."""
    if "LDG" in text:
        return 100, 2048, 4 * 2048, 4 * 2048, 90
    return 1, 2048, 0, 0, 0
