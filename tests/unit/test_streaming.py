"""A compile's launches streamed as they are done (inspectors/compile/journal.py's Stream, the
engine's `on_progress`, `tlens compile --jsonl`): every launch listed once example() has run,
each compiled launch seen before the job ends and equal to the final result's, what a job
writes read through its folder's descriptor within a budget (a link, a malformed or an
oversized answer is skipped), and a callback that raises leaves the compile whole."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


from inspectors.base.result import CompileRequest, KernelResult
from inspectors.compile import journal

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "tests" / "snippets"


def _kernel(i: int) -> KernelResult:
    return KernelResult(f"k{i}", "cuda:90", {"num_warps": 4}, (), {"source": f"# {i}\n", "ptx": f"// {i}\n"}, launch=i)


def test_stream_sees_launches_done_and_reads_one_only_when_asked(tmp_path):
    job = journal.JobDir.create(tmp_path)
    try:
        stream = journal.Stream(job)
        assert stream.poll() is None                          # nothing yet
        journal.listed(job.path, ["a", "b", "c", "d"], 0.25)
        p = stream.poll()
        assert p.labels == ("a", "b", "c", "d") and p.total == 4 and p.example_s == 0.25 and not p.done
        journal.answered(job.path, 2, {"kernel": _kernel(2).to_json()})
        p = stream.poll()
        assert sorted(p.done) == [2] and stream.budget == journal.MAX_STREAMED_BYTES - len(
            (job.path / "launches.json").read_bytes())                    # seen, not read yet
        assert p.first() == _kernel(2) and p.kernel(2) is p.first()       # read once, when asked
        assert stream.poll() is None                                      # nothing new: no call
        assert not list(job.path.glob("*.part"))                          # written whole, by a rename
    finally:
        job.close()


def test_stream_skips_what_it_cannot_trust(tmp_path):
    """Another student's file linked in, a malformed answer, an error answer: done, unreadable."""
    job = journal.JobDir.create(tmp_path)
    try:
        stream = journal.Stream(job)
        journal.listed(job.path, ["a", "b", "c", "d", "e"], 0.1)     # answers are looked for by name, once listed
        other = tmp_path / "other.json"
        other.write_text(json.dumps({"kernel": _kernel(0).to_json()}))
        os.symlink(other, job.path / "launch-0.answer.json")
        (job.path / "launch-1.answer.json").write_text("{not json")
        journal.answered(job.path, 3, {"error": {"kind": "compile", "message": "x"}})
        journal.answered(job.path, 4, {"kernel": _kernel(4).to_json()})
        p = stream.poll()
        assert sorted(p.done) == [0, 1, 3, 4]
        assert p.kernel(0) is None and p.kernel(1) is None and p.kernel(3) is None
        assert p.first() == _kernel(4)                    # the first that can be read
    finally:
        job.close()


def test_stream_budget_bounds_what_the_server_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(journal, "MAX_STREAMED_BYTES", 4000)
    job = journal.JobDir.create(tmp_path)
    try:
        stream = journal.Stream(job)
        journal.listed(job.path, ["a", "b"], 0.1)
        big = dict(_kernel(0).to_json(), stages={"source": "x" * 10_000})
        journal.answered(job.path, 0, {"kernel": big})
        journal.answered(job.path, 1, {"kernel": _kernel(1).to_json()})
        p = stream.poll()
        assert p.kernel(0) is None and stream.budget <= 0    # cut at the budget: unreadable
        assert p.kernel(1) is None                           # the budget is spent
    finally:
        job.close()


def test_engine_streams_each_launch_before_the_job_ends(engine, tmp_path, monkeypatch):
    """An autotuner's 8 configs: listed at once, each one seen while the job still runs (the
    callback is called only then), its stages and label those of the final result."""
    path = SNIPPETS / "autotune_matmul.py"
    seen = []

    def on_progress(p):       # each launch read while the job runs (its folder is gone after)
        seen.append((p.total, {i: p.kernel(i) for i in p.done}))
    result = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, sass=False), timeout=300,
                            on_progress=on_progress)
    assert result.ok, result.error
    assert seen and all(total == 8 for total, _ in seen)
    streamed = seen[-1][1]
    assert sorted(streamed) == list(range(8))
    for i, k in streamed.items():
        assert k.stages["ptx"] == result.kernels[i].stages["ptx"] and k.label == result.kernels[i].label


def test_a_job_folder_of_many_files_is_never_listed(tmp_path, monkeypatch):
    """48,000 files in the job's folder (under its quota): a poll asks for the list and each
    launch not done by name, never walks the folder."""
    job = journal.JobDir.create(tmp_path)
    try:
        for i in range(2000):
            (job.path / f"junk-{i}").touch()
        stream = journal.Stream(job)
        monkeypatch.setattr(os, "listdir", lambda *a: pytest.fail("the job's folder was listed"))
        monkeypatch.setattr(os, "scandir", lambda *a: pytest.fail("the job's folder was listed"))
        journal.listed(job.path, ["a", "b"], 0.1)
        journal.answered(job.path, 1, {"kernel": _kernel(1).to_json()})
        p = stream.poll()
        assert p.total == 2 and sorted(p.done) == [1] and stream.poll() is None
    finally:
        job.close()


def test_next_launch_takes_the_one_the_page_asked_for_last(tmp_path):
    todo = list(range(6))
    assert journal.next_launch(tmp_path, todo) == 0 and todo == [1, 2, 3, 4, 5]     # nothing asked: in order
    (tmp_path / journal.WANTED).write_text("[4, 2, 0]")                              # 0 is done already
    assert journal.next_launch(tmp_path, todo) == 2 and todo == [1, 3, 4, 5]
    assert journal.next_launch(tmp_path, todo) == 4 and todo == [1, 3, 5]
    assert journal.next_launch(tmp_path, todo) == 1
    (tmp_path / journal.WANTED).write_text('{"not": "a list"}')
    assert journal.next_launch(tmp_path, todo) == 3


def test_want_is_written_through_the_folders_descriptor_never_through_a_link(tmp_path):
    """The job may put a link where the server writes: the link itself is replaced, the file it
    points to (another student's) is left as it was; a launch done or out of range is not asked."""
    job = journal.JobDir.create(tmp_path)
    try:
        stream = journal.Stream(job)
        journal.listed(job.path, ["a", "b", "c", "d"], 0.1)
        journal.answered(job.path, 0, {"kernel": _kernel(0).to_json()})
        p = stream.poll()
        victim = tmp_path / "victim.txt"
        victim.write_text("theirs")
        os.symlink(victim, job.path / journal.WANTED)
        p.want(0)                                    # done: nothing to ask
        assert (job.path / journal.WANTED).is_symlink()
        p.want(3)
        p.want(2)
        p.want(9)                                    # no such launch
        assert victim.read_text() == "theirs" and not (job.path / journal.WANTED).is_symlink()
        assert json.loads((job.path / journal.WANTED).read_text()) == [3, 2]
        assert not list(job.path.glob(".wanted-*"))
    finally:
        job.close()
    p.want(1)                                        # the job is over: nothing to write, no error


@pytest.fixture(scope="module")
def two_children():
    """An engine whose jobs compile two launches at a time (as on this 2-core box; a 16-core
    GPU host would start all eight at once, leaving no queue to jump)."""
    from inspectors.base import settings as settings_mod
    from inspectors.compile.engine import Engine
    eng = Engine(settings_mod.load(), env={"TLENS_COMPILE_CHILDREN": "2"})
    assert eng.wait_ready()
    yield eng
    eng.close()


def test_a_launch_opened_while_the_others_compile_is_compiled_next(two_children):
    """The autotuner's 8 configs (a cold Triton cache: the source made unique), two at a time:
    asked for the last config as soon as the list is there, the job compiles it before those in
    between."""
    engine = two_children
    path = SNIPPETS / "autotune_matmul.py"
    source = path.read_text().replace("    pid_m, pid_n = tl.program_id(0), tl.program_id(1)\n",
                                      f"    pid_m, pid_n = tl.program_id(0), tl.program_id(1)  # {os.urandom(8).hex()}\n")
    asked = []

    def on_progress(p):
        if not asked:
            p.want(7)
            asked.append((p, sorted(p.done)))
    result = engine.compile(CompileRequest(source=source, filename=path.name, sass=False), timeout=300,
                            on_progress=on_progress)
    assert result.ok, result.error
    progress, done_when_asked = asked[0]
    assert len(done_when_asked) <= 2                        # asked before a third launch began
    seen = progress.done                                    # launch -> when the server saw it done
    assert sorted(seen) == list(range(8))
    # 7 jumped the queue: done no later than those in between (two children: 7 and 5 may end in one poll)
    assert seen[7] <= seen[5] and seen[7] <= seen[6], seen


def test_a_callback_that_raises_leaves_the_compile_whole(engine):
    calls = []

    def on_progress(p):
        calls.append(p.total)
        raise RuntimeError("the page went away")
    path = SNIPPETS / "autotune_prune.py"
    result = engine.compile(CompileRequest(source=path.read_text(), filename=path.name, sass=False), timeout=300,
                            on_progress=on_progress)
    assert result.ok and len(result.kernels) == 3 and calls == [3]     # called once, then not again


@pytest.mark.workers
def test_cli_jsonl_streams_launches_kernels_then_the_result(tmp_path):
    env = {**os.environ, "TLENS_TRITON_CACHE_DIR": str(tmp_path / "cache")}
    p = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(SNIPPETS / "autotune_prune.py"), "--jsonl"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines()]
    assert events[0]["event"] == "launches" and len(events[0]["labels"]) == 3
    kernels = [e for e in events if e["event"] == "kernel"]
    assert sorted(e["launch"] for e in kernels) == [0, 1, 2]
    assert all(".entry copy_kernel" in e["kernel"]["stages"]["ptx"] and "cubin" not in e["kernel"] for e in kernels)
    assert events[-1]["event"] == "result" and len(events[-1]["kernels"]) == 3
    assert events[-1]["kernels"][0]["stages"]["ptx"] == next(e for e in kernels if e["launch"] == 0)["kernel"]["stages"]["ptx"]


@pytest.mark.workers
def test_cli_jsonl_error_is_one_result_line():
    p = subprocess.run([sys.executable, "-m", "inspectors", "compile", str(SNIPPETS / "syntax_error.py"), "--jsonl"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    events = [json.loads(line) for line in p.stdout.splitlines()]
    assert p.returncode == 1 and events[-1]["event"] == "result" and events[-1]["error"]["kind"] == "syntax"


@pytest.mark.workers
def test_who_waits_for_the_same_compile_sees_its_progress(tmp_path, monkeypatch):
    """A page's rerun (Streamlit stops a run at a click, and starts another) asks for the compile
    the stopped run started: it waits for that one and is shown its launches as they come."""
    import threading

    from inspectors.session.lens import Lens
    monkeypatch.setenv("TLENS_TRITON_CACHE_DIR", str(tmp_path / "cache"))
    lens = Lens(results_dir=tmp_path / "results", workers=1)
    try:
        lens.engine().wait_ready()
        path = SNIPPETS / "streaming" / "many_launches.py"
        request = CompileRequest(source=path.read_text(), filename=path.name, sass=False)
        started, first, second, out = threading.Event(), [], [], {}

        def one():
            out["first"] = lens.compile(request, "session:a", 300, on_progress=lambda p: (first.append(len(p.done)),
                                                                                          started.set()))
        t = threading.Thread(target=one)
        t.start()
        assert started.wait(120)
        out["second"] = lens.compile(request, "session:a", 300, on_progress=lambda p: second.append(len(p.done)))
        t.join()
        assert out["first"].result.ok and out["second"].result.kernels == out["first"].result.kernels
        assert second and second[-1] <= 11 and first[-1] == 11
    finally:
        lens.close()
