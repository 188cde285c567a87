"""The one door (inspectors/session): a compile through the Lens is kept as one object that every
caller shares (its JSON only on disk), a result another process wrote is read back whole, a
disk file that does not decode is a miss, and the CLI, the Compare page and the history get their
figures from the same insight policy."""
import dataclasses
import gzip
import json

import pytest

from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest, CompileResult
from inspectors.explain.delta import headline as figures_headline
from inspectors.session import compare, insights, records
from inspectors.session.lens import Lens

# every test here starts a compile worker or the CLI (tests/conftest.py)
pytestmark = pytest.mark.workers


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    lens = Lens(settings_mod.load(), results_dir=tmp_path_factory.mktemp("results"), workers=1)
    yield lens
    lens.close()


def _request(snippet, block: int = 256) -> CompileRequest:
    return CompileRequest(source=snippet("vadd.py").replace("BLOCK=1024", f"BLOCK={block}"), filename="vadd.py")


def test_a_result_is_one_object_for_every_caller(lens, snippet):
    first = lens.compile(_request(snippet), who="session:a")
    assert first.result.ok and not first.hit and first.result.key
    again = lens.compile(_request(snippet), who="session:b")
    assert again.hit and again.result is first.result        # not decoded again: the same object
    # and so its insight is found by identity, not worked out again
    k = first.result.kernels[0]
    assert insights.insight(k, "vadd.py") is insights.insight(again.result.kernels[0], "vadd.py")


def test_a_compile_says_what_it_cost_the_server(lens, snippet):
    """Issue 56: the server's CPU for a compile (this thread's, and the parse of the worker's
    answer), which the per-student panel charges to whoever asked (app/backend/presence.charge)."""
    done = lens.compile(_request(snippet, 64), who="session:a")
    assert not done.hit and done.server_cpu_s > 0
    assert done.server_cpu_s >= done.result.timings["server_parse_s"]


def test_another_process_reads_the_result_back_whole(lens, snippet):
    done = lens.compile(_request(snippet, 512), who="session:a")
    other = Lens(lens.settings, results_dir=lens.results.folder, engines=lens.engines)   # its own memory
    got = other.compile(_request(snippet, 512), who="session:c")
    assert got.hit and got.result is not done.result
    assert got.result == done.result and got.result.key == done.result.key
    assert isinstance(got.result, CompileResult) and got.result.kernels[0].stages["ptx"]


def test_a_file_that_does_not_decode_is_a_miss(lens, snippet, tmp_path):
    done = lens.compile(_request(snippet, 128), who="session:a")
    path = lens.results.folder / f"{done.result.key}.json.gz"
    assert path.is_file()
    path.write_bytes(gzip.compress(json.dumps({"kernels": "not a list of kernels"}).encode()))
    other = Lens(lens.settings, results_dir=lens.results.folder, engines=lens.engines)
    got = other.compile(_request(snippet, 128), who="session:d")
    assert not got.hit and got.result.ok and got.result.kernels     # compiled again, not a crash


def test_an_unknown_triton_version_is_an_error_value(lens, snippet):
    got = lens.compile(dataclasses.replace(_request(snippet), triton_version="0.0.1"), who="session:a")
    assert got.result.error.kind == "usage" and "0.0.1" in got.result.error.message


def test_the_history_the_compare_page_and_the_cli_share_one_figure_policy(lens, snippet):
    ra = lens.compile(_request(snippet, 256), who="session:a").result
    rb = lens.compile(_request(snippet, 1024), who="session:a").result
    rec_a, rec_b = records.make("vadd", _request(snippet, 256), ra), records.make("vadd", _request(snippet, 1024), rb)
    ka, kb = ra.kernels[0], rb.kernels[0]
    fa, fb = (compare.launch_figures(k, "vadd.py", with_sass=False) for k in (ka, kb))
    assert rec_a.info.figures == fa.to_json() and rec_b.info.figures == fb.to_json()
    assert records.headline(rec_a.info, rec_b.info) == figures_headline(fa, fb)
    d = compare.diff_launch(0, ka, kb, "vadd.py", "vadd.py")          # what `diff` prints
    assert "ptx" in d.stages and d.delta == compare.delta(ka, kb, "vadd.py", "vadd.py")   # what the page shows


def test_a_record_keeps_digests_not_the_project(snippet):
    req = dataclasses.replace(_request(snippet), files={"helpers.py": "x = 1\n"})
    kept = records.kept(req)
    assert kept.files["helpers.py"].startswith("sha256:") and kept.source == req.source
