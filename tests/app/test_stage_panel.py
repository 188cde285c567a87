"""What a stage panel is sent (app/components/stage_panel/payload.py): lines, kinds, the
Python-line map and token runs, on inline snippets and the committed fixtures."""
import json

import pytest
from pygments.token import Keyword, Name

from app.render import stage_html
from app.components.stage_panel import payload
from conftest import FIXTURES
from inspectors.read.lexers import lexer_for

PTX = "\tmov.u32 %r1, %ctaid.x;\n\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];\n" \
      "\t@%p2 ld.global.b32 { %r5 }, [ %rd2 + 4 ];\n\tret;\n"
KERNEL = json.loads((FIXTURES / "insight" / "matmul_sm80.kernel.json").read_text())


def test_ptx_lines_kinds_and_python_map():
    data = payload.build("ptx", PTX, "k.ptx", {2: 27, 3: 28, 9: 30})
    assert data["lines"] == PTX.splitlines() and data["final_newline"]
    assert data["kinds"] == {"1": "sreg", "2": "mem-vec", "3": "mem-scalar"}
    assert data["py"] == [0, 27, 28, 0]                       # line 9 does not exist: dropped
    assert data["summary"] == {"lines": 4, "vector": 1, "scalar": 1, "shared": 0, "widest": "v4 × 32-bit",
                               "tensor core": 0}
    assert (data["stage"], data["label"], data["file"]) == ("ptx", "PTX", "k.ptx")


def test_token_runs_rebuild_every_line_and_carry_the_lexer_classes():
    data = payload.build("ptx", PTX, "k.ptx")
    pieces = payload.runs(data, 2)
    assert "".join(t for _, t in pieces) == PTX.splitlines()[1]
    assert ("k", "ld") in pieces                              # pygments' PTX lexer: ld is a keyword
    assert all(cls == "" for cls, t in pieces if not t.strip())


@pytest.mark.parametrize("stage", ["source", "ttir", "ttgir", "llir", "ptx", "sass"])
def test_runs_cover_each_fixture_stage_exactly(stage):
    text = KERNEL["stages"][stage]
    data = payload.build(stage, text, "f")
    assert len(data["tokens"]) == len(data["lines"]) == len(payload.split_lines(text))
    for n in range(1, len(data["lines"]) + 1, 7):
        assert "".join(t for _, t in payload.runs(data, n)) == data["lines"][n - 1]


@pytest.mark.parametrize("stage,alias", [("sass", "sass"), ("ttgir", "mlir"), ("source", "python-panel")])
def test_one_regex_lexes_as_pygments_does(stage, alias):
    """Our single-state lexers run as one alternation; same tokens as pygments' rule loop."""
    text = KERNEL["stages"][stage]
    lexer = lexer_for(alias)

    def merged(tokens):
        out = []
        for ttype, value in tokens:
            if out and out[-1][0] is ttype:
                out[-1] = (ttype, out[-1][1] + value)
            else:
                out.append((ttype, value))
        return out

    ours, theirs = merged(payload._tokens(lexer, text)), merged(lexer.get_tokens(text))
    assert ours == theirs[:len(ours)] and "".join(v for _, v in theirs[len(ours):]).strip() == ""
    assert any(t is Keyword for t, _ in ours) and any(t in Name for t, _ in ours)


@pytest.mark.parametrize("stage,alias", [("sass", "sass"), ("ttgir", "mlir")])
def test_line_by_line_lexing_gives_the_same_runs(stage, alias):
    text = KERNEL["stages"][stage]
    lexer, n = lexer_for(alias), len(payload.split_lines(text))
    by_line = payload._tokenize_lines(*payload._one_regex(lexer), payload.split_lines(text))
    whole = payload._tokenize_stream(lexer, text, n)

    def pieces(toks):
        data = {"lines": payload.split_lines(text), "tokens": list(toks.lines), "classes": list(toks.classes)}
        return [payload.runs(data, i) for i in range(1, n + 1)]

    assert pieces(by_line) == pieces(whole)


def test_the_source_panels_python_colours_as_pygments_python_lexer_does():
    """The panel's own Python lexer (one regex, ~5x quicker) against pygments' PythonLexer on
    every library kernel: the same class for all but a few characters (f-string fields), and a
    docstring is one on every line it spans."""
    from pygments.lexers import PythonLexer
    from conftest import ROOT

    def classes(lexer, text):
        return [c for t, v in payload._tokens(lexer, text) for c in [payload._css_class(t)] * len(v)]

    ours, theirs = lexer_for("python-panel"), PythonLexer(stripnl=False)
    differ = total = 0
    for path in sorted((ROOT / "kernels").glob("*.py")):
        text = path.read_text()
        a, b = classes(theirs, text), classes(ours, text)
        assert len(a) == len(b) == len(text)
        total += len(text)
        differ += sum(1 for x, y, ch in zip(a, b, text) if x != y and ch.strip())
    assert total > 20_000 and differ / total < 0.005, (differ, total)
    data = payload.build("source", '"""first\nsecond"""\nx = 1  # c\n', "k.py")
    assert payload.runs(data, 1) == [("sd", '"""first')] and payload.runs(data, 2) == [("sd", 'second"""')]
    assert ("c1", "# c") in payload.runs(data, 3) and ("mi", "1") in payload.runs(data, 3)


def test_sass_kinds_match_the_legend():
    text = KERNEL["stages"]["sass"]
    data = payload.build("sass", text, "f")
    assert data["kinds"] == {str(n): c for n, c in stage_html.line_classes("sass", text).items()}
    assert any("LDGSTS.E.BYPASS.LTC128B.128" in data["lines"][int(n) - 1] for n, c in data["kinds"].items()
               if c == "mem-vec")


def test_markup_is_data_not_html():
    src = 'x = "<script>alert(1)</script>"  # <img src=x onerror=alert(2)>\n'
    data = payload.build("source", src, "k.py")
    assert data["lines"] == [src.rstrip("\n")]               # drawn as text nodes by panel.js


def test_encode_decode_and_digest():
    a = payload.encode(payload.build("ptx", PTX, "k.ptx"))
    b = payload.encode(payload.build("ptx", PTX, "k.ptx"))
    c = payload.encode(payload.build("ptx", PTX + "\tret;\n", "k.ptx"))
    assert a == b and a[:36] != c[:36] and a.startswith(payload.MAGIC)
    assert payload.decode(a)["lines"] == PTX.splitlines()
    with pytest.raises(ValueError):
        payload.decode(b"<html>")


def test_twenty_thousand_lines_compress():
    lines = KERNEL["stages"]["sass"].splitlines()
    text = "\n".join((lines * 13)[:20_000])
    blob = payload.encode(payload.build("sass", text, "big.sass"))
    assert payload.decode(blob)["summary"]["lines"] == 20_000
    assert len(blob) < len(text) / 3


# -- where a panel opens (payload.opening) ------------------------------------------------------

TWO_KERNELS = '''"""doc"""
import triton
import triton.language as tl


@triton.jit
def helper(x):
    return tl.load(x)


@triton.autotune(configs=[], key=[])
@triton.jit
def launched(x_ptr,
             n,   # tl.load( in a comment is not a load
             ):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    tl.store(x_ptr, v)


def example():
    launched[(1,)](None, 1)
'''


def test_python_opens_at_the_launched_kernels_first_decorator_and_first_load():
    lines = TWO_KERNELS.splitlines()
    at = payload.opening("source", TWO_KERNELS, "launched")
    assert lines[at.start - 1].startswith("@triton.autotune") and lines[at.start].startswith("@triton.jit")
    assert "v = tl.load(" in lines[at.load - 1]
    helper = payload.opening("source", TWO_KERNELS, "helper")
    assert lines[helper.start - 1] == "@triton.jit" and "return tl.load(x)" in lines[helper.load - 1]
    assert payload.opening("source", TWO_KERNELS, "absent") == payload.Opening(None, None)
    no_load = TWO_KERNELS.replace("    v = tl.load(x_ptr + pid)\n", "    v = pid\n")
    assert payload.opening("source", no_load, "launched").load is None      # the body ends before example()


@pytest.mark.parametrize("stage,start,load", [
    ("ttir", "tt.func public @matmul_kernel(", "tt.load"),
    ("ttgir", "tt.func public @matmul_kernel(", "async_copy_global_to_local"),
    ("llir", "define ptx_kernel void @matmul_kernel(", "cp.async.cg.shared.global"),
    ("ptx", ".entry matmul_kernel(", "cp.async.cg.shared.global"),
    ("sass", ".text.matmul_kernel:", "LDGSTS"),
])
def test_each_stage_opens_at_the_function_and_its_first_global_load(stage, start, load):
    text = KERNEL["stages"][stage]
    lines = payload.split_lines(text)
    at = payload.opening(stage, text, KERNEL["name"])
    assert start in lines[at.start - 1] and load in lines[at.load - 1] and at.start < at.load
    assert not any(load in line for line in lines[at.start - 1:at.load - 1])     # the first one
    data = payload.build(stage, text, f"k.{stage}", kernel_name=KERNEL["name"])
    assert data["open"] == {"start": at.start, "load": at.load}


def test_ptx_first_global_load_skips_shared_and_param_loads():
    ptx = (".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tld.param.u64 %rd1, [k_param_0];\n"
           "\tld.shared.b32 %r1, [%r2];\n\tld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];\n}\n")
    assert payload.opening("ptx", ptx, "k") == payload.Opening(1, 7)
    assert payload.build("ptx", ptx, "k.ptx")["open"] == {"start": None, "load": None}   # no kernel named


def test_two_panels_below_1500_px_or_when_presenting():
    from app.components.stage_panel import panels_for_width
    assert [panels_for_width(w, False) for w in (1280, 1499, 1500, 1920, None)] == [2, 2, 3, 3, 3]
    assert panels_for_width(1920, True) == 2
