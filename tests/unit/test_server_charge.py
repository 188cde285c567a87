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


def test_the_panel_charges_each_student_what_their_answers_keep(tmp_path, monkeypatch):
    """Issue 56: what a student's answers hold where they outlive the page, on their own row:
    their share of the shared result cache's disk level, their stored launches, their history
    on the host's disk; another student's holdings are not in it."""
    import gzip

    from app.backend import presence
    import os

    from inspectors.store import workspace
    from inspectors.store.launches import LaunchStore
    from inspectors.store.results import ResultCache

    monkeypatch.setenv("TLENS_WORKSPACE_DIR", str(tmp_path / "ws"))
    results = ResultCache(tmp_path / "results", max_bytes=64 << 20)
    results.put("k-ann", {"x": os.urandom(300_000).hex()}, owner="user:user:ann")      # hex: it does not gzip away
    results.put("k-ben", {"x": os.urandom(900_000).hex()}, owner="user:user:ben")
    store = LaunchStore(tmp_path / "launches", 1 << 30)
    blob = gzip.compress(os.urandom(2 << 20))
    store.adopt(("h",), lambda i: blob, owner="user:user:ann")

    class Eng:
        own, launch_store = None, store

    class Engines:
        def started(self):
            return [Eng()]

    history = workspace.user_folder(tmp_path / "ws", "ann") / ".history"
    history.mkdir(parents=True)
    (history / "r1.json.gz").write_bytes(b"x" * 3 * 2**20)
    presence._students.clear()
    presence._students["user:user:ann"] = presence._Student(user="ann")
    presence._students["user:user:ben"] = presence._Student(user="ben")
    try:
        (row,) = presence.rows(Engines(), me="user:user:ann", results=results)
        assert row["student"] == "ann (you)"
        assert 0 < row["cache MB"] < results.owned_bytes("user:user:ben") / 2**20
        assert row["cache MB"] == round(results.owned_bytes("user:user:ann") / 2**20, 2)
        assert row["stored launches MB"] > 0 and row["history MB"] == 3.0
        (ben,) = presence.rows(Engines(), me="user:user:ben", results=results)
        assert ben["stored launches MB"] == 0 and ben["history MB"] == 0 and ben["cache MB"] > row["cache MB"]
    finally:
        presence._students.clear()
