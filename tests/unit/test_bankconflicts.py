"""Shared-memory bank conflicts predicted from the PTX (inspectors/explain/bankconflicts.py), against
Nsight Compute's per-instruction counts committed from the H100 (assets/profiles/bank_conflict-*:
an unswizzled 32 x 32 fp32 buffer read down its columns, and the same buffer padded)."""
from pathlib import Path

import pytest

from conftest import ROOT, SNIPPETS
from inspectors.base.result import CompileRequest
from inspectors.explain import bankconflicts as bc
from inspectors.read import ncu_source as ncu
from inspectors.read import sourcemap
from inspectors.store import profiles

PATH = SNIPPETS / "why" / "bank_conflict.py"
READ = next(n for n, line in enumerate(PATH.read_text().splitlines(), 1) if "y = tile.load(cols)" in line)


def test_lane_addresses_and_wavefronts_on_written_ptx():
    ptx = """
	mov.u32 	%r1, %tid.x;
	shl.b32 	%r2, %r1, 7;
	mov.u32 	%r3, global_smem;
	add.s32 	%r4, %r3, %r2;
	ld.shared.b32 	%r5, [%r4];
	shl.b32 	%r6, %r1, 2;
	add.s32 	%r7, %r3, %r6;
	st.shared.v4.b32 	[%r7+16], {%r5, %r5, %r5, %r5};
	xor.b32 	%r8, %r2, %r6;
	add.s32 	%r9, %r3, %r8;
	ld.shared.b32 	%r10, [%r9];
	ld.global.b32 	%r11, [%rd1];
	ld.shared.b32 	%r12, [%r11];
"""
    got = bc.predict(ptx)
    assert [(a.op, a.wavefronts, a.ideal) for a in got] == [
        ("ld.shared.b32", 32, 1),          # lane * 128 B: one bank, 32 words
        ("st.shared.v4.b32", 4, 4),        # 16 B a lane, lanes 4 B apart: overlapping words, 4 requests of 8
        ("ld.shared.b32", 1, 1)]           # the xor swizzle spreads the column over the banks
    # the last load's address came from global memory: unknown, no prediction


def test_a_packing_cvt_of_two_sources_is_unknown_not_an_error():
    # fla's chunk kernels pack bf16 pairs (cvt.rn.bf16x2.f32 %r, %f, %f): before, a one-source
    # rule took it and the whole kernel's analysis failed
    ptx = """
	mov.u32 	%r1, %tid.x;
	cvt.rn.bf16x2.f32 	%r2, %f1, %f2;
	shl.b32 	%r3, %r1, 2;
	add.s32 	%r4, %r3, %r2;
	ld.shared.b32 	%r5, [%r4];
	st.shared.b32 	[%r3], %r2;
"""
    got = bc.predict(ptx)
    assert [(a.op, a.wavefronts) for a in got] == [("st.shared.b32", 1)]   # the load's address is unknown


def test_the_unswizzled_buffer_is_32_way_and_the_padded_one_free(engine):
    r = engine.compile(CompileRequest(source=PATH.read_text(), filename=PATH.name, target="cuda:90", sass=False))
    assert r.ok, r.error
    for k in r.kernels:
        ptx_map = sourcemap.build(k.stages, PATH.name).stages["ptx"].to_python
        per = bc.by_line(bc.predict(k.stages["ptx"]), ptx_map)
        reads = next(line for line in per if PATH.read_text().splitlines()[line - 1].strip().startswith("y = tile.load"))
        waves, ideal = per[reads]
        assert waves / ideal == (32 if k.name == "column_reads" else 1), (k.name, per)


@pytest.mark.parametrize("launch, ways", [(1, 32.0), (2, 1.0)])
def test_ncu_measured_the_same_ways_on_the_h100(launch, ways):
    """The committed profile's `L1 Wavefronts Shared` / `Ideal` on the read line: 32-way unpadded,
    1 padded, as predicted above."""
    base = ROOT / "assets" / "profiles" / f"bank_conflict-launch{launch}"
    if not base.with_suffix(".json").is_file():
        pytest.skip("no committed bank-conflict profile")
    profile, _ = profiles.load(base.with_suffix(".json"))
    page = ncu.parse(Path(str(base) + ".ncu.csv").read_text())[0]
    line_of = {i.offset: i.python_line for i in profile.instructions}
    w = i = 0.0
    read = READ if launch == 1 else next(n for n, line in enumerate(PATH.read_text().splitlines(), 1)
                                         if "y = tile.load(cols)" in line and n > READ)
    for row, off in zip(page.rows, page.offsets()):
        if line_of.get(off) == read:
            w += row.metrics.get(ncu.SHARED_WAVEFRONTS, 0.0)
            i += row.metrics.get(ncu.SHARED_IDEAL, 0.0)
    assert i and w / i == ways
