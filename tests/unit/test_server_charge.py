"""Issue 56: the server's CPU for a student's compile outside their page's run is theirs too: the
parse of the worker's answer (measured where the engine reads it: timings["server_parse_s"]),
and, for a compile in a thread of its own, that thread's CPU (Lens.compile's server_cpu_s),
charged on the per-student panel (presence.charge)."""
import pytest

from conftest import SNIPPETS
from inspectors.base.result import CompileRequest, timings_of

pytestmark = pytest.mark.workers


def test_an_answers_parse_is_measured_where_the_engine_reads_it(engine):
    r = engine.compile(CompileRequest(source=(SNIPPETS / "vadd.py").read_text() + "\n# parse charged\n",
                                      filename="vadd.py", sass=False), timeout=300)
    assert r.ok, r.error
    assert isinstance(r.timings.get("server_parse_s"), float) and r.timings["server_parse_s"] >= 0
    # a worker cannot claim it: the reader's figure replaces whatever the answer said
    assert timings_of({"server_parse_s": -5, "made_up": 1}) == {}


def test_the_panel_adds_a_compiles_server_cpu_to_its_student():
    from app.backend import presence
    presence._students.clear()
    try:
        presence.charge("user:user:ann", 0.25)
        presence.charge("user:user:ann", 0.5)
        presence.charge("user:user:ann", 0.0)
        presence.charge("user:user:ben", -1.0)             # nothing negative, nothing for a non-figure
        assert presence._students["user:user:ann"].cpu_s == pytest.approx(0.75)
        assert "user:user:ben" not in presence._students
    finally:
        presence._students.clear()
