"""A compile's time limit grows with the launches its worker has begun (a library op of 50
launches, a torch.compile'd model), within a bound a job cannot raise by making folders; and a
job that runs past it is told which launch was stuck, in which stage."""
from inspectors.base.result import ArgSpec, KernelResult
from inspectors.compile import journal
from inspectors.compile.worker_handle import MAX_EXTRA_LAUNCHES, grown_by_launches, launches_begun


def _launch(job, i, name="add_kernel"):
    return journal.begin(job.path, i, KernelResult(name, "cuda:90", {"num_warps": 4}, (ArgSpec("x", "*fp32"),),
                                                   {"source": "..."}, i, name))


def test_the_limit_grows_with_each_launch_after_the_first(tmp_path):
    job = journal.JobDir.create(tmp_path)
    grown = grown_by_launches(15.0, job.fd)
    assert grown() == 0.0                              # example() still running: no launch yet
    _launch(job, 0)
    assert grown() == 0.0                              # one launch: the base limit is its own
    for i in range(1, 4):
        _launch(job, i)
    assert launches_begun(job.fd) == 4 and grown() == 45.0
    (job.path / "launch-3.answer.json").write_text("{}")   # a forked child's answer is no launch
    assert launches_begun(job.fd) == 4


def test_folders_a_job_makes_itself_grow_it_only_so_far(tmp_path):
    job = journal.JobDir.create(tmp_path)
    for i in range(500):
        (job.path / f"launch-{i}").mkdir()
    assert grown_by_launches(15.0, job.fd)() == 15.0 * MAX_EXTRA_LAUNCHES


def test_a_stuck_launch_is_named_with_its_stage(tmp_path):
    job = journal.JobDir.create(tmp_path)
    assert journal.in_progress(job) == ""               # nothing begun: example() itself ran on
    _launch(job, 0, "copy_kernel")
    folder = _launch(job, 1, "matmul_kernel")
    journal.running(folder, "ptx")
    assert journal.in_progress(job) == "launch 2 (matmul_kernel) was stuck making its PTX"
    journal.running(folder, None)
    assert "the last launch 2 (matmul_kernel), and no compiler stage was running" in journal.in_progress(job)


def test_the_limit_grows_with_each_torch_compile_graph_example_begins(tmp_path):
    """A big model's step lowers its graphs for minutes inside example(), before its first launch is
    begun: each graph begun grows the limit too, within the same bound."""
    job = journal.JobDir.create(tmp_path)
    grown = grown_by_launches(15.0, job.fd)
    for i, which in enumerate(("forward", "forward", "backward")):
        journal.graph_begun(job.path, i, which)
    assert grown() == 45.0
    _launch(job, 0)
    _launch(job, 1)
    assert grown() == 60.0                             # three graphs and one launch after the first
    for i in range(4, 200):
        journal.graph_begun(job.path, i, "forward")    # a gap at 3 stops the count: graphs come in order
    assert grown() == 60.0
    journal.graph_begun(job.path, 3, "forward")
    assert grown() == 15.0 * MAX_EXTRA_LAUNCHES


def test_a_job_stopped_while_torch_compile_lowers_says_so(tmp_path):
    job = journal.JobDir.create(tmp_path)
    journal.graph_begun(job.path, 0, "forward")
    journal.graph_begun(job.path, 1, "backward")
    said = journal.in_progress(job)
    assert said.startswith("example() was running: torch.compile had begun 2 graph(s), the last a backward graph"), said
