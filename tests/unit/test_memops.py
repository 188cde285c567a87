"""Memory-op parsing on inline PTX/SASS lines (copied from real compiles) and golden fixtures."""
import json

from inspectors.read.memops import amdgcn_memops, ptx_memops, sass_memops
from conftest import FIXTURES

PTX = """\
\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
\t@%p2 ld.global.b32 { %r5 }, [ %rd2 + 4 ];
\tst.global.v2.b32 [ %rd4 + 0 ], { %r9, %r10 };
\t@%p1 atom.global.gpu.acq_rel.add.u32 %r5, [ %rd1 + 0 ], %r4;
\tcp.async.cg.shared.global [ %r12 + 0 ], [ %rd8 + 0 ], 0x10, %r13;
\tld.shared.v4.b32 { %r20, %r21, %r22, %r23 }, [ %r30 + 0 ];
\tld.param.u64 %rd1, [add_kernel_param_0];
\tcp.async.wait_group 0;
\tcp.async.commit_group;
\tldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 { %r40, %r41, %r42, %r43 }, [ %r44 + 0 ];
\tmov.u32 %r1, %ctaid.x;
"""


def test_ptx_memops_inline():
    ops = [(o.line, o.kind, o.space, o.vector, o.bits) for o in ptx_memops(PTX)]
    assert ops == [
        (1, "load", "global", 4, 32),
        (2, "load", "global", 1, 32),
        (3, "store", "global", 2, 32),
        (4, "atomic", "global", 1, 32),
        (5, "load", "global", 4, 32),     # cp.async of 16 bytes
        (6, "load", "shared", 4, 32),
        (10, "load", "shared", 4, 32),    # ldmatrix .x4: four 32-bit registers per thread
    ]


SASS = """\
        /*0180*/              @!P0 LDG.E.128 R16, desc[UR4][R2.64] ;
        /*0190*/                   LDG.E R5, desc[UR4][R2.64+0x4] ;
        /*0200*/                   STG.E.64 desc[UR4][R4.64], R8 ;
        /*0210*/                   LDS.U.128 R8, [R3] ;
        /*0220*/                   IMAD.WIDE R2, R25, 0x4, R2 ;
"""


def test_sass_memops_inline():
    ops = [(o.line, o.kind, o.space, o.vector, o.bits) for o in sass_memops(SASS)]
    assert ops == [(1, "load", "global", 4, 32), (2, "load", "global", 1, 32),
                   (3, "store", "global", 2, 32), (4, "load", "shared", 4, 32)]


def test_golden_fixtures():
    """Real stage texts from `tests/fixtures/regen.py`; expected ops pinned in *.memops.json."""
    checked = 0
    for golden in sorted(FIXTURES.glob("*.memops.json")):
        text = golden.with_name(golden.name.replace(".memops.json", "")).read_text()
        parse = ptx_memops if golden.name.split(".")[-3] == "ptx" else sass_memops
        got = [[o.line, o.kind, o.space, o.vector, o.bits] for o in parse(text)]
        assert got == json.loads(golden.read_text()), golden.name
        checked += 1
    assert checked >= 4


def test_fixture_counts_match_the_text():
    """Independent of the parser: every `ld.global`/`st.global` line in the PTX is one op,
    and every LDG/STG line in the SASS."""
    for ptx in FIXTURES.glob("*.ptx"):
        text = ptx.read_text()
        lines = [l for l in text.splitlines() if "ld.global" in l or "st.global" in l]
        assert len([o for o in ptx_memops(text) if o.space == "global"]) == len(lines), ptx.name
    for sass in FIXTURES.glob("*.sass"):
        text = sass.read_text()
        lines = [l for l in text.splitlines() if " LDG." in l or " STG." in l]
        assert len(sass_memops(text)) == len(lines), sass.name


def test_amdgcn_memops_inline():
    text = ("\tglobal_load_dwordx4 v[2:5], v[0:1], off\n\tbuffer_store_dword v3, v4, s[8:11], 0 offen\n"
            "\tds_read_b128 v[4:7], v2\n\tv_add_f32_e32 v0, v2, v8\n\tglobal_atomic_add_f32 v0, v1, s[0:1]\n")
    ops = [(o.line, o.kind, o.space, o.vector, o.bits) for o in amdgcn_memops(text)]
    assert ops == [(1, "load", "global", 4, 32), (2, "store", "global", 1, 32), (3, "load", "shared", 4, 32),
                   (5, "atomic", "global", 1, 32)]
