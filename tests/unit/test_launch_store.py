"""A big result's launches kept on disk, one file each (inspectors/base/launches.py,
inspectors/store/launches.py): adopted from a job's answer files without parsing the step whole,
each launch read (and bounded) only when asked for, a few kept in memory, the store bounded in
bytes (least recently read first out, and a dropped launch says so), a stored result's JSON
small and naming only a token; and through the engine, a stored result equal, launch by launch,
to the same compile answered whole."""
import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from inspectors.base import launches as launches_mod
from inspectors.base.launches import StoredLaunches, header_of
from inspectors.base.result import MAX_STAGE_CHARS, CompileRequest, CompileResult, KernelResult
from inspectors.store.launches import LaunchStore

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "tests" / "snippets"


def _kernel(i: int, ptx: str = "") -> KernelResult:
    return KernelResult(f"k{i}", "cuda:90", {"num_warps": 4}, (), {"source": f"# {i}\n", "ptx": ptx or f"// {i}\n"},
                        launch=i, label=f"k{i} · launch {i + 1}", analysis={"memory_ops": [i]})


def _answers(kernels):
    return lambda i: json.dumps({"kernel": kernels[i].to_json()}).encode()


def test_adopted_launches_are_read_one_at_a_time_and_round_trip(tmp_path):
    kernels = [_kernel(i) for i in range(10)]
    store = LaunchStore(tmp_path, 1 << 30)
    stored = store.adopt(tuple(map(header_of, kernels)), _answers(kernels))
    assert len(stored) == 10 and stored.header(3).stages == {} and stored.header(3).label == "k3 · launch 4"
    assert list(stored) == kernels and stored[-1] == kernels[9] and stored[2:4] == tuple(kernels[2:4])
    assert len(stored._kept) == launches_mod.KEPT                 # what was read is not all kept
    result = CompileResult(kernels=stored, triton_version="3.9.0")
    data = result.to_json()
    assert data["stored"] == stored.token and all(k["stages"] == {} for k in data["kernels"])
    again = CompileResult.from_json(json.loads(json.dumps(data)))
    assert isinstance(again.kernels, StoredLaunches) and again.headers == result.headers
    assert again.kernels.folder == launches_mod.root() / stored.token      # by token, under the server's store
    assert StoredLaunches(stored.token, stored.headers, tmp_path / stored.token)[5] == kernels[5]


def test_a_token_that_is_a_path_is_refused():
    for token in ("../../etc", "/tmp/x", "A" * 32, "0" * 31):
        with pytest.raises(ValueError):
            CompileResult.from_json({"stored": token, "kernels": []})


def test_each_launch_is_bounded_as_it_is_read(tmp_path):
    big = _kernel(0, ptx="x\n" * (MAX_STAGE_CHARS // 2 + 10))
    stored = LaunchStore(tmp_path, 1 << 30).adopt((header_of(big),), _answers([big]))
    ptx = stored[0].stages["ptx"]
    assert len(ptx) < MAX_STAGE_CHARS + 200 and "cut at" in ptx


def test_a_gzip_bomb_is_read_only_so_far(tmp_path, monkeypatch):
    """A launch file that unpacks past MAX_LAUNCH_BYTES is an error, read no further."""
    monkeypatch.setattr(launches_mod, "MAX_LAUNCH_BYTES", 1 << 20)
    k = _kernel(0)
    stored = LaunchStore(tmp_path, 1 << 30).adopt((header_of(k),), _answers([k]))
    with gzip.open(stored.folder / launches_mod.file_name(0), "wb") as f:
        f.write(b'{"kernel": {"name": "' + b"a" * (8 << 20) + b'"}}')
    got = stored[0]
    assert got.error is not None and "could not be read" in got.error.message and got.name == "k0"


def test_the_store_keeps_its_bytes_dropping_the_least_recently_read(tmp_path):
    import os
    import time
    kernels = [_kernel(i, ptx=os.urandom(50_000).hex()) for i in range(4)]   # ~60 KB gzipped each
    store = LaunchStore(tmp_path, 1 << 30)
    first = store.adopt(tuple(map(header_of, kernels)), _answers(kernels))
    second = store.adopt(tuple(map(header_of, kernels)), _answers(kernels))
    old = time.time() - 100
    os.utime(second.folder, (old, old))        # read long ago ...
    first[0]                                   # ... the first one read just now
    store.max_bytes = store.used() + 1000      # room for two results, not three
    third = store.adopt(tuple(map(header_of, kernels)), _answers(kernels))
    assert first.folder.exists() and third.folder.exists() and not second.folder.exists()
    second._kept.clear()
    gone = second[1]
    assert gone.name == "k1" and gone.stages == {} and "dropped it" in gone.error.message


def test_a_launch_the_engine_could_not_read_says_so(tmp_path):
    kernels = [_kernel(0), _kernel(1)]

    def read(i):
        if i == 1:
            raise OSError("a link, refused")
        return _answers(kernels)(i)
    stored = LaunchStore(tmp_path, 1 << 30).adopt(tuple(map(header_of, kernels)), read)
    assert stored[0] == kernels[0] and stored[1].error is not None and stored[1].name == "k1"


def test_the_engine_stores_a_big_results_launches_equal_to_the_whole_answer(engine):
    """The autotuner's 8 configs answered whole, then (inline_bytes=0) each a stored file: the
    same launches, stages, analysis and all; the result's own JSON a few kB."""
    path = SNIPPETS / "autotune_matmul.py"
    request = CompileRequest(source=path.read_text(), filename=path.name, analysis_s=20)
    whole = engine.compile(request, timeout=300)
    stored = engine.compile(dataclasses.replace(request, inline_bytes=0), timeout=300)
    assert whole.ok and stored.ok, (whole.error, stored.error)
    assert isinstance(stored.kernels, StoredLaunches) and not isinstance(whole.kernels, StoredLaunches)
    assert len(stored.kernels) == len(whole.kernels) == 8
    for a, b in zip(whole.kernels, stored.kernels):
        # two compiles: what may differ between them is their time and what the compiler printed
        # (a compile from Triton's cache prints nothing new, ptxas's log included)
        same = [dataclasses.replace(k, compile_seconds=0, diagnostics="",
                                    metadata={m: v for m, v in k.metadata.items() if m != "ptxas_log"}) for k in (a, b)]
        differ = [f.name for f in dataclasses.fields(a) if getattr(same[0], f.name) != getattr(same[1], f.name)]
        assert not differ, (a.label, differ)
        assert a.stages == b.stages and "sass" in b.stages and b.analysis
    assert len(json.dumps(stored.to_json())) < 64_000 < len(json.dumps(whole.to_json()))


def test_one_owner_cannot_push_the_class_out_of_the_launch_store(tmp_path):
    import os
    from inspectors.store import launches as store_mod
    kernels = [_kernel(i, ptx=os.urandom(30_000).hex()) for i in range(3)]
    heads = tuple(map(header_of, kernels))
    store = LaunchStore(tmp_path, 1 << 30)
    one = store.adopt(heads, _answers(kernels), "user:alice")
    store.max_bytes = store.used() * 20                  # room for 20 results; a student's share is 20/SHARE
    theirs = [store.adopt(heads, _answers(kernels), "user:mallory") for _ in range(12)]
    kept = [s for s in theirs if s.folder.exists()]
    assert one.folder.exists() and theirs[-1].folder.exists()
    assert len(kept) <= 20 // store_mod.SHARE + 1, len(kept)
