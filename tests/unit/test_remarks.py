"""Why, not only what (inspectors/explain/remarks.py): the compiler's remarks and the tool's
findings on the Python line that caused them, from real compiles; and the diagnostics reader."""
import re


from conftest import SNIPPETS
from inspectors.base.result import CompileRequest
from inspectors.explain import insight as insight_mod
from inspectors.read import diagnostics
import kernels

WHY = SNIPPETS / "why"


def _compile(engine, path, target="cuda:90"):
    r = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, target=target, sass=False,
                                      analysis_s=60))
    assert r.ok, r.error
    return r


def _remarks(kernel, filename):
    found = insight_mod.of(kernel, kernel.home(filename))
    assert found is not None and not found.cut, found and found.cut
    return found.remarks


def _line_of(path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_matmul_loop_is_pipelined_at_3_stages_and_says_why_not_at_1(engine):
    path = WHY / "pipeline.py"
    r = _compile(engine, path)
    mm3, mm1 = (k for k in r.kernels if k.name == "mm")
    loop, a, b = (_line_of(path, t) for t in ("for k in range", "a = tl.load", "b = tl.load"))
    [p3] = [x for x in _remarks(mm3, path.name) if x.kind == "pipeline"]
    assert p3.line == loop and p3.severity == "info"
    assert f"lines {a}, {b} → cp.async" in p3.message and "num_stages=3" in p3.message
    assert "keeps 2 copy group(s) in flight" in p3.message
    # the TTGIR lines it names are the loop and its async copies
    ttgir = mm3.stages["ttgir"].splitlines()
    assert "scf.for" in ttgir[p3.stage_lines["ttgir"][0] - 1]
    assert all("async_copy_global_to_local" in ttgir[n - 1] for n in p3.stage_lines["ttgir"][1:])
    [p1] = [x for x in _remarks(mm1, path.name) if x.kind == "pipeline"]
    assert p1.line == loop and p1.severity == "warning"
    assert f"the loads on lines {a}, {b} stay synchronous" in p1.message and "num_stages=1" in p1.message


def test_an_indirect_load_is_named_with_the_load_it_waits_for(engine):
    path = WHY / "pipeline.py"
    gather = next(k for k in _compile(engine, path).kernels if k.name == "gather_sum")
    idx, x = _line_of(path, "idx = tl.load"), _line_of(path, "x = tl.load")
    [p] = [r for r in _remarks(gather, path.name) if r.kind == "pipeline"]
    assert p.line == _line_of(path, "for i in range") and "cp.async" not in p.message.split("stay")[0]
    assert f"the load on line {x} stays synchronous" in p.message
    assert f"its address comes from the load on line {idx} in the same loop" in p.message


def test_the_transposes_layout_conversion_goes_through_shared_memory_on_its_line(engine):
    entry = next(k for k in kernels.LESSON_KERNELS if k.slug == "transpose")
    r = engine.compile(CompileRequest(source=entry.source(), filename=entry.filename, target="cuda:90", sass=False,
                                      analysis_s=60))
    assert r.ok, r.error
    naive = [k for k in r.kernels if "convert_layout" in k.stages["ttgir"]]
    assert naive, "the library transpose has a kernel with a ttg.convert_layout"
    k = naive[0]
    found = [x for x in _remarks(k, entry.filename) if x.kind == "layout"]
    assert found and any("through shared memory" in x.message for x in found)
    x = next(x for x in found if "through shared memory" in x.message)
    ttgir = k.stages["ttgir"].splitlines()
    assert "ttg.convert_layout" in ttgir[x.stage_lines["ttgir"][0] - 1]
    ptx = k.stages["ptx"].splitlines()
    assert x.stage_lines["ptx"] and all(re.search(r"\b(ld|st)\.shared", ptx[n - 1]) for n in x.stage_lines["ptx"])
    assert "tl.store" in entry.source().splitlines()[x.line - 1] or "tl.load" in entry.source().splitlines()[x.line - 1]


def test_a_compiler_remark_in_a_helper_names_the_helpers_line_and_its_call(engine):
    path = WHY / "helper_remark.py"
    k = _compile(engine, path).kernels[0]
    found = [x for x in _remarks(k, path.name) if x.kind == "compiler"]
    assert found, "Triton prints a vectorization remark for the stride-3 load"
    helper, call = _line_of(path, "return tl.load(ptr + offs)"), _line_of(path, "x = _load_row(")
    assert found[0].line == helper and found[0].file == path.name
    assert "vectorization fails" in found[0].message and f"called from line {call}" in found[0].message
    # a second compile of the same file comes from Triton's cache, silent: the remark is remembered
    again = [x for x in _remarks(_compile(engine, path).kernels[0], path.name) if x.kind == "compiler"]
    assert [x.message for x in again] == [x.message for x in found]


def test_every_remark_points_at_a_real_line_of_its_file(engine):
    for path in sorted(WHY.glob("*.py")):
        r = _compile(engine, path)
        lines = path.read_text().splitlines()
        for k in r.kernels:
            for x in _remarks(k, path.name):
                assert x.line is None or (x.file == path.name and 1 <= x.line <= len(lines)), (path.name, x)


def test_the_diagnostics_reader_keeps_the_first_line_of_each():
    text = ("/j/k.py:14:20: remark: Warning: vectorization fails vec = 1\n\n        a = tl.load(p)\n          ^\n"
            "/j/k.py:14:20: remark: Warning: vectorization fails vec = 1\n"
            "k.py:22:5: warning: Failed to pipeline loop\nk.py:22:5: note: see current operation: %0 = ...\n"
            "UserWarning: not a diagnostic\nk.py:30:1: error: boom\n")
    found = diagnostics.diagnostics(text)
    assert [(d.basename, d.line, d.severity, d.message) for d in found] == [
        ("k.py", 14, "remark", "Warning: vectorization fails vec = 1"),
        ("k.py", 22, "warning", "Failed to pipeline loop"), ("k.py", 30, "error", "boom")]


def test_the_diagnostics_reader_on_hostile_text():
    """Near-misses (a 50-digit column, no message) are not diagnostics; a run of colons is read in
    one pass (a backtracking pattern would hang here, and the suite's timeout would say so)."""
    text = ("a" * 300 + ".py:1:" + "1" * 50 + ": remark:" + " " * 200 + "\n") * 2000 + ":" * 200_000
    assert diagnostics.diagnostics(text) == ()
    many = "".join(f"k.py:{n}:1: remark: r{n}\n" for n in range(2000))
    assert len(diagnostics.diagnostics(many)) == diagnostics.MAX_DIAGNOSTICS


def test_predicted_bank_conflicts_are_a_remark_on_the_reading_line(engine):
    path = WHY / "bank_conflict.py"
    r = _compile(engine, path)
    unpadded, padded = (next(k for k in r.kernels if k.name == n) for n in ("column_reads", "column_reads_padded"))
    [bank] = [x for x in _remarks(unpadded, path.name) if x.kind == "bank"]
    assert bank.line == _line_of(path, "y = tile.load(cols)") and "32-way" in bank.message
    assert not [x for x in _remarks(padded, path.name) if x.kind == "bank"]


def test_a_loop_without_a_dot_says_to_ask_with_tl_range(engine):
    """Triton 3.6 and 3.9 copy ahead the loads of a loop without a tl.dot only when the loop is a
    tl.range(..., num_stages=N); the plain range's load stays synchronous and the remark says so."""
    path = WHY / "reduction_loop.py"
    plain, asked = _compile(engine, path).kernels
    [p] = [x for x in _remarks(plain, path.name) if x.kind == "pipeline"]
    assert p.line == _line_of(path, "for i in range(") and "has no tl.dot" in p.message and "tl.range" in p.message
    assert "cp.async" not in plain.stages["ptx"]
    [a] = [x for x in _remarks(asked, path.name) if x.kind == "pipeline"]
    assert a.line == _line_of(path, "for i in tl.range(") and a.severity == "info"
    loads = [n for n, line in enumerate(path.read_text().splitlines(), 1) if "acc += tl.load" in line]
    assert f"the load on line {loads[1]} → cp.async" in a.message
    assert "cp.async" in asked.stages["ptx"]
