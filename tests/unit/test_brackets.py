"""Bracket depth (inspectors/read/brackets.py), on text as its callers read it: TTIR signatures
and types, TTGIR layout attributes and locations, Inductor's meta dict, PTX operands; and the
callers themselves, whose results (unbalanced input included) are the ones they had before
the one splitter replaced their own loops."""
import pytest

from inspectors.explain import bankconflicts, coalescing, layout_view
from inspectors.read import inductor, layouts, lines_mlir, mlir
from inspectors.read.brackets import matching, split_top, top_end

SIG = ('tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), '
       '%out: tensor<128x!tt.ptr<f32>, #blocked> loc("out"(#loc1)), %n: i32 loc("n"(#loc2))) '
       'attributes {noinline = false} {')
META = ("@triton.jit\ndef k(...):\n    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), "
        "'kernel_name': 'triton_poi_fused_add_relu_0', 'mutated_arg_names': [], 'optimize_mem': True, "
        "'num_load': 2, 'num_reduction': 0},\n    min_elem_per_thread=0\n)")
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"


# --------------------------------------------------------------------------- split_top

def test_split_top_mlir_type_and_attributes():
    assert split_top("tensor<128x!tt.ptr<f32>, #blocked>, i32") == ["tensor<128x!tt.ptr<f32>, #blocked>", " i32"]
    assert split_top("sizePerThread = [1, 4], order = [1, 0]") == ["sizePerThread = [1, 4]", " order = [1, 0]"]
    assert split_top("%a: i32 {tt.divisibility = 16 : i32, tt.x = (1, 2)}, %b: f32") == [
        "%a: i32 {tt.divisibility = 16 : i32, tt.x = (1, 2)}", " %b: f32"]


def test_split_top_strings_and_empty_parts():
    assert split_top('loc("a, b"(#loc)), %n') == ['loc("a, b"(#loc))', " %n"]
    assert split_top('"a, <b", c') == ['"a, <b"', " c"]           # no bracket counted in a string
    assert split_top(r'"a\", b", c') == [r'"a\", b"', " c"]       # an escaped quote stays in it
    assert split_top('"a, b", c', quotes="") == ['"a', ' b"', " c"]
    assert split_top("") == [""]
    assert split_top("a,,b,") == ["a", "", "b", ""]               # as str.split
    assert split_top("a;b<c;d>;e", sep=";") == ["a", "b<c;d>", "e"]


def test_split_top_unbalanced():
    assert split_top("tensor<4x#blocked, i32") == ["tensor<4x#blocked, i32"]     # never closed: one part
    assert split_top("a>, b, (c), d") == ["a>, b, (c), d"]        # depth -1: no split until back at 0
    assert split_top("a>, <b, c") == ["a>, <b", " c"]
    assert split_top('"a, b') == ['"a, b']                         # a string never closed
    assert split_top("(a>, b") == ["(a>", " b"]                   # any closer closes any opener


def test_split_top_ptx_operands():
    ptx = "{%r1, %r2, %r3, %r4}, [%rd1+0]"
    assert split_top(ptx, opens="{[", closes="}]", quotes="") == ["{%r1, %r2, %r3, %r4}", " [%rd1+0]"]
    assert split_top("%r1, %rd2<3>, 4", opens="{[", closes="}]") == ["%r1", " %rd2<3>", " 4"]


# --------------------------------------------------------------------------- matching and top_end

def test_matching_signature_and_locations():
    open_at = SIG.index("(")
    close = matching(SIG, open_at)
    assert SIG[close] == ")" and SIG[close + 1:].startswith(" attributes")
    assert matching('loc("x"(#loc7))', 3) == 14
    assert matching('loc("f(x"(#loc7))', 3) == 16                 # a paren in a string is not one
    assert matching(r'loc("a\")"(#loc))', 3, "(", ")") == 16
    assert matching("loc(callsite(#loc13 at #loc45))", 3) == 30
    assert matching("f(a -> b)", 1) == 5                          # the `>` of `->` closes it
    assert matching("f(a -> b)", 1, "(", ")") == 8


def test_matching_unbalanced():
    assert matching("tensor<4x#blocked", 6) == -1
    assert matching('loc("x)', 3) == -1                            # the string never closes
    assert matching("(a))", 0) == 2 and matching("((a)", 0) == -1


def test_matching_inductor_meta_and_encoding():
    i = META.index("{")
    j = matching(META, i, "{[(", "}])", quotes="")
    assert META[j] == "}" and META[j + 1:].startswith(",\n    min_elem")
    assert matching("{'a': '}'}", 0, "{[(", "}])", quotes="") == 7     # Python's quotes not read
    line = f"%0 = tt.splat %x : f32 -> tensor<128xf32, {BLOCKED}> loc(#loc1)"
    s = line.index("#ttg")
    assert line[s:matching(line, s + len("#ttg.blocked"), "<", ">", quotes="") + 1] == BLOCKED


def test_top_end():
    body = "dim = 1, parent = " + BLOCKED
    i = body.index("parent = ") + len("parent = ")
    assert body[i:top_end(body, i, ",", "<{[", ">}]", quotes="")] == BLOCKED
    body = "opIdx = 0, parent = #mma, kWidth = 2"
    assert body[20:top_end(body, 20, ",", "<{[", ">}]", quotes="")] == "#mma"
    assert top_end("#blocked}>, x", 0) == 8                       # a bracket opened before start
    assert top_end("a, b", 3) == 4 and top_end("", 0) == 0
    assert top_end("(a, b), c", 0, sep="") == 9


# --------------------------------------------------------------------------- the callers, as before

def test_parse_ttir_args():
    assert [(a.name, a.type, a.divisible_by_16) for a in mlir.parse_ttir_args(SIG)] == [
        ("x_ptr", "*fp32", True), ("out", "tensor", False), ("n", "i32", False)]
    assert mlir._balanced("f(a, (b", 1) == "a, (b"                # unclosed: the rest


def test_parse_layout_parents():
    s = layouts.parse_layout(f"#ttg.slice<{{dim = 1, parent = {BLOCKED}}}>")
    assert isinstance(s, layouts.Slice) and s.dim == 1 and s.parent.size_per_thread == (1, 4)
    d = layouts.parse_layout("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", {"#mma": "#ttg.x<{}>"})
    assert isinstance(d, layouts.DotOperand) and d.k_width == 2
    assert layouts._parent("dim = 0, parent = #blocked}>, #foo<{x") == "#blocked"


def test_inductor_meta():
    assert inductor.parse_inductor_meta(META) == {
        "grid_type": "Grid1D", "kernel_name": "triton_poi_fused_add_relu_0", "optimize_mem": True,
        "num_load": 2, "num_reduction": 0}
    assert inductor.parse_inductor_meta("inductor_meta={'num_load': 2, 'x': [") == {"num_load": 2}


@pytest.mark.parametrize("line, enc", [
    (f"tensor<128xf32, {BLOCKED}>", BLOCKED),
    ("tensor<128xf32, #blocked1>", "#blocked1"),
    ("tensor<128xf32, #ttg.blocked<{order = [0]", "#ttg.blocked"),     # never closed: the name only
])
def test_encoding_at(line, enc):
    assert layout_view._encoding_at(line, line.index("#")) == enc


def test_balanced_end():
    line = 'tt.return loc("f(x"(#loc7))'
    assert lines_mlir._balanced_end(line, line.index("(")) == len(line)
    assert lines_mlir._balanced_end("loc(#loc", 3) == -1


def test_ptx_split_args():
    vec = "[%rd1+0], {%r1, %r2, %r3, %r4}"
    assert coalescing._split_args(vec) == ["[%rd1+0]", " {%r1, %r2, %r3, %r4}"]
    assert bankconflicts._split_args(vec) == ["[%rd1+0]", " {%r1, %r2, %r3, %r4}"]
    # the last empty operand: coalescing drops a blank one; bankconflicts an empty one where
    # the text has an opening bracket, and none without (str.split)
    assert coalescing._split_args("%r1, [%rd1], ") == ["%r1", " [%rd1]"]
    assert coalescing._split_args("%r1, %r2,") == ["%r1", " %r2"]
    assert bankconflicts._split_args("%r1, [%rd1],") == ["%r1", " [%rd1]"]
    assert bankconflicts._split_args("%r1, [%rd1], ") == ["%r1", " [%rd1]", " "]
    assert bankconflicts._split_args("%r1, %r2,") == ["%r1", " %r2", ""]
    assert bankconflicts._split_args("%r1], %r2") == ["%r1]", " %r2"]       # no opener: str.split
    assert bankconflicts._split_args("{%r1]], %r2") == ["{%r1]], %r2"]      # depth -1: no split
