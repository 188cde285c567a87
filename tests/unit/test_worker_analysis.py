"""The insight is computed in the worker, once per compile, and the server only decodes it
(inspectors.base.codec against the dataclasses' annotations): the same insight as analysing
in the server, and a worker's answer of any other shape is refused with a note, never trusted."""
import json

import pytest

from conftest import FIXTURES
from inspectors.base import codec
from inspectors.base.result import CompileRequest, KernelResult
from inspectors.explain import insight
from inspectors.explain.insight import Insight, analyze

GOLDEN = sorted((FIXTURES / "insight").glob("*.kernel.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name.split(".")[0] for p in GOLDEN])
def test_round_trip_is_the_same_insight(path):
    kernel = KernelResult.from_json(json.loads(path.read_text()))
    found = analyze(kernel, kernel.stages, "k.py")
    plain = json.loads(json.dumps(insight.to_plain(found)))
    assert codec.from_plain(Insight, plain) == found


def _plain():
    kernel = KernelResult.from_json(json.loads(GOLDEN[0].read_text()))
    return json.loads(json.dumps(insight.to_plain(analyze(kernel, kernel.stages, "k.py"))))


@pytest.mark.parametrize("damage, where", [
    (lambda p: p.update(memory_ops="boom"), "Insight.memory_ops"),
    (lambda p: p["memory_ops"][0].update(vector="4"), "Insight.memory_ops[0].vector"),
    (lambda p: p["memory_ops"][0].update(vector=True), "Insight.memory_ops[0].vector"),
    (lambda p: p["source_map"]["stages"]["ptx"]["to_python"].update({"x": 1}), "key 'x' is not an integer"),
    (lambda p: p["memory_ops"][0].update(__class__="os.system"), "unknown field '__class__'"),
    (lambda p: p["memory_ops"][0].pop("kind"), "Insight.memory_ops[0].kind: missing"),
    (lambda p: p["memory_ops"][0].update(chain=[["", 1, 2]]), "expected 2 items"),
    (lambda p: p.update(resources={"registers": [[[[[]]]]]}), "Insight.resources"),
])
def test_a_damaged_answer_is_refused_naming_the_field(damage, where):
    plain = _plain()
    damage(plain)
    with pytest.raises(codec.DecodeError) as e:
        codec.from_plain(Insight, plain)
    assert where in str(e.value)


def test_deep_nesting_and_long_strings_are_bounded():
    deep = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(codec.DecodeError, match="expected 2 items, got 1"):
        codec.from_plain(tuple[tuple[str, int], ...], deep)
    long = codec.from_plain(str, "x" * (codec.MAX_STR * 3))
    assert len(long) < codec.MAX_STR + 20 and long.endswith("[cut]")


def test_unreadable_analysis_becomes_a_note():
    plain = _plain()
    plain["memory_ops"] = 7
    found = insight.of(KernelResult("k", "cuda:90", {}, (), {}, analysis=plain), "k.py")
    assert found.cut.startswith("the worker's analysis of this kernel could not be read (Insight.memory_ops")
    assert insight.of(KernelResult("k", "cuda:90", {}, (), {}), "k.py") is None


def test_worker_sends_the_insight_the_server_would_compute(engine, snippet):
    src = snippet("vadd.py")
    result = engine.compile(CompileRequest(source=src, filename="vector_add.py", sass=False, analysis_s=60))
    assert result.ok, result.error
    kernel = result.kernels[0]
    got = insight.of(kernel, "vector_add.py")
    assert got is not None and not got.cut
    assert got == analyze(kernel, kernel.stages, "vector_add.py")
    assert [m.vector for m in got.memory_ops if m.space == "global"] == [4] * 6     # 2 per tensor
    misaligned = insight.of(result.kernels[1], "vector_add.py")
    assert {m.vector for m in misaligned.memory_ops if m.space == "global"} == {1}
    assert got.resources is not None and got.resources.registers > 0
    # without analysis_s (the default) the worker sends none
    plain = engine.compile(CompileRequest(source=src, filename="vector_add.py", sass=False))
    assert plain.kernels[0].analysis == {}


def test_a_file_that_rewrites_the_analysis_gets_a_note(engine, snippet):
    """The user's code runs in the worker and can replace the analysis: what it sends is
    decoded like any other untrusted answer."""
    src = snippet("vadd.py") + (
        "\nimport inspectors.explain.insight as _i\n"
        "_i.to_plain = lambda found: {'memory_ops': [{'kind': 'load'}], 'evil': 1}\n")
    result = engine.compile(CompileRequest(source=src, filename="evil.py", sass=False, analysis_s=60))
    assert result.ok, result.error
    got = insight.of(result.kernels[0], "evil.py")
    assert got.cut.startswith("the worker's analysis of this kernel could not be read")
    assert got.memory_ops == ()
    # the worker that ran it is not reused: the next compile gets the real analysis
    after = engine.compile(CompileRequest(source=snippet("vadd.py"), filename="va.py", sass=False, analysis_s=60))
    assert not insight.of(after.kernels[0], "va.py").cut


def test_over_its_budget_the_analysis_is_cut(engine, snippet):
    result = engine.compile(CompileRequest(source=snippet("vadd.py"), filename="va.py", sass=False,
                                           analysis_s=1e-6))
    assert result.ok, result.error
    got = insight.of(result.kernels[0], "va.py")
    assert "took longer than 1e-06 s and was cut" in got.cut


def test_a_workers_diagnostics_cross_bounded():
    """The compiler's diagnostics a worker sends (KernelResult.diagnostics) reach the server, cut
    to a bound like every other text of the answer."""
    from inspectors.base.result import CompileResult, KernelResult, MAX_MESSAGE_CHARS, bounded
    k = KernelResult("k", "cuda:90", {}, (), {"source": ""}, diagnostics="k.py:3:1: remark: r\n" * 100_000)
    got = bounded(CompileResult((k,))).kernels[0].diagnostics
    assert got.startswith("k.py:3:1: remark: r") and len(got) <= MAX_MESSAGE_CHARS * 4 + 200
