"""TTGIR reading (args, SSA, layouts) and the reasons given for scalar accesses."""
from inspectors.read import layouts
from inspectors.read import mlir
from inspectors.base.result import CompileRequest
from inspectors.explain.vectorization import analyze

TTGIR = """\
#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%x_ptr: !tt.ptr<f32> loc("x_ptr"(#loc)), %out_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("out_ptr"(#loc)), %n: i32 loc("n"(#loc)), %stride: i32 loc("stride"(#loc))) attributes {noinline = false} {
    %offs_2 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked> loc(#loc14)
    %mask = tt.splat %n : i32 -> tensor<1024xi32, #blocked> loc(#loc15)
    %mask_5 = arith.cmpi slt, %offs_2, %mask : tensor<1024xi32, #blocked> loc(#loc15)
    %v = tt.splat %stride : i32 -> tensor<1024xi32, #blocked> loc(#loc16)
    %v_6 = arith.muli %offs_2, %v : tensor<1024xi32, #blocked> loc(#loc16)
    %v_7 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked> loc(#loc17)
    %v_8 = tt.addptr %v_7, %v_6 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked> loc(#loc17)
    %v_9 = tt.load %v_8, %mask_5 : tensor<1024x!tt.ptr<f32>, #blocked> loc(#loc18)
    %0 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked> loc(#loc7)
    %1 = tt.addptr %0, %offs_2 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked> loc(#loc7)
    tt.store %1, %v_9 : tensor<1024x!tt.ptr<f32>, #blocked> loc(#loc8)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
"""


def test_parse_args_ops_aliases():
    m = mlir.parse(TTGIR)
    assert m.args["%x_ptr"] == mlir.Arg("x_ptr", "!tt.ptr<f32>", 1)
    assert m.args["%out_ptr"].divisibility == 16 and not m.args["%n"].is_pointer
    load = m.ops_named("tt.load")[0]
    assert (load.line, load.results, load.operands) == (11, ("%v_9",), ("%v_8", "%mask_5"))
    assert m.defs["%v_8"].name == "tt.addptr"
    assert layouts.parse_blocked(m.aliases["#blocked"]) == layouts.Blocked((4,), (32,), (4,), (0,))


def test_roots_follow_ssa_to_arguments():
    m = mlir.parse(TTGIR)
    roots, _ = mlir.roots(m, "%v_8")
    assert roots == {"%x_ptr", "%stride"}


def test_reasons_for_unaligned_strided_masked_load():
    load, store = analyze(TTGIR)
    assert (load.kind, load.pointers, load.contiguous, load.max_vector) == ("load", ("x_ptr",), 4, 4)
    text = " | ".join(load.reasons)
    assert "`x_ptr` is not known to be 16-byte aligned" in text
    assert "multiplied by `stride`" in text
    assert "compares with `n`" in text
    assert store.reasons == ()            # aligned, contiguous, unmasked


def test_blocked_layout_elements_per_thread():
    b = layouts.Blocked((4,), (32,), (4,), (0,))
    assert b.tile() == (512,)
    assert b.elements_per_thread((1024,)) == 8       # wraps once: two groups of 4
    assert b.elements_per_thread((512,)) == 4
    b2 = layouts.Blocked((1, 8), (4, 8), (8, 1), (1, 0))
    assert b2.contiguous_per_thread() == 8 and b2.tile() == (32, 64)


def test_real_compiles_give_the_jits_reasons(engine, snippet):
    r = engine.compile(CompileRequest(source=snippet("vadd.py"), filename="vadd.py"))
    aligned, misaligned, odd_n = [analyze(k.stages["ttgir"]) for k in r.kernels]
    assert all(a.reasons == () for a in aligned)
    assert any("`x_ptr` is not known to be 16-byte aligned" in s for s in misaligned[0].reasons)
    assert all(any("compares with `n`" in s for s in a.reasons) for a in odd_n)
