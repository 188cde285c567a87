"""Measured cost per line (issue 22), the parts that need no GPU: the Source-page CSV parser,
the pairing of its rows with the compiled SASS and the sums per Python line, the saved-profile
format. The CSVs here are made by the tests in the layout Nsight Compute 2025 exports
(header names as its Source page writes them, thousands separators, `==PROF==` lines), from
the real SASS of the fixture kernels; the figures in them are the tests' own, not measurements.
The measured profiles come from benchmarks/gpu_profile.py on the H100."""
from pathlib import Path
import json

import pytest

from conftest import SNIPPETS
from inspectors.explain import profile as prof
from inspectors.read import ncu_source as ncu
from inspectors.read import sourcemap as sm
from ncu_csv import SM, export, load_heavy, stages, vector_add_profile


def test_parse_reads_the_table():
    st = stages("vector_add_sm90")
    pages = ncu.parse(export(st["sass"], load_heavy))
    assert len(pages) == 1
    page = pages[0]
    assert page.preamble == ('Kernel Name,add_kernel',)
    n = len(prof.sass_instructions(st["sass"]))
    assert len(page.rows) == n and page.offsets()[0] == 0
    ldg = next(r for r in page.rows if "LDG" in r.text)
    assert ldg.samples == 100 and ldg.executed == 2048 and ldg.stalls == {"long_sb": 90, "wait": 10}
    assert ldg.get(ncu.THREAD_EXECUTED) == 65536          # "65,536": the separator is read
    assert ldg.opcode == "LDG"


def test_parse_errors_say_what_is_wrong():
    with pytest.raises(ncu.NcuCsvError, match="no Source-page table"):
        ncu.parse('"ID","Kernel Name"\n"0","add_kernel"\n')
    with pytest.raises(ncu.NcuCsvError, match="line 1: the header has no 'Source' column"):
        ncu.parse('"Address","Instructions Executed"\n"0x10","4"\n')
    with pytest.raises(ncu.NcuCsvError, match="line 2: address '0xzz' is not a hexadecimal number"):
        ncu.parse('"Address","Source"\n"0xzz","NOP"\n')


def test_two_kernels_two_tables():
    st = stages("vector_add_sm90")
    text = export(st["sass"], load_heavy)
    pages = ncu.parse(text + '"Kernel Name","add_kernel"\n' + text.split("\n", 2)[2])
    assert len(pages) == 2 and len(pages[0].rows) == len(pages[1].rows)


def test_samples_land_on_the_python_lines():
    st, smap, page, p = vector_add_profile(load_heavy)
    src = st["source"].splitlines()
    x_line = next(n for n, l in enumerate(src, 1) if "x = tl.load(" in l)
    y_line = next(n for n, l in enumerate(src, 1) if "y = tl.load(" in l)
    hot = p.lines[0]
    assert hot.python_line in (x_line, y_line) and p.lines[1].python_line in (x_line, y_line)
    ldgs = [i for i in p.instructions if i.python_line == hot.python_line and "LDG" in i.text]
    assert hot.stalls["long_sb"] == 90 * len(ldgs) and hot.top_stall == ("long_sb", hot.stalls["long_sb"] / hot.samples)
    assert p.total_samples == page.total(ncu.SAMPLES)
    # every sample is on a Python line or on a prologue/epilogue instruction
    assert not p.unexplained
    assert sum(c.samples for c in p.lines) + sum(i.samples for i in p.instructions if i.where) == p.total_samples
    assert {i.where for i in p.instructions if not i.chain} <= {"prologue", "epilogue"}
    assert any(i.where == "epilogue" and i.text.startswith("BRA") for i in p.instructions)
    rows = p.hottest(st["source"])
    assert rows[0]["sectors_per_request"] == 4.0
    assert rows[0]["why"] == f"{hot.top_stall[1]:.0%} of its samples: long scoreboard: waiting for a global/local memory load"


def test_heat_columns():
    st, smap, page, p = vector_add_profile(load_heavy)
    sass_heat = p.heat(smap.stages["sass"])
    assert sum(sass_heat.values()) == pytest.approx(1.0)
    ptx_heat = p.heat(smap.stages["ptx"])
    x_line = p.lines[0].python_line
    assert {ptx_heat[n] for n, py in smap.stages["ptx"].to_python.items() if py == x_line} == {p.lines[0].share}


def test_other_code_is_refused():
    st = stages("vector_add_sm90")
    other = stages("softmax_sm90")
    page = ncu.parse(export(other["sass"], load_heavy))[0]
    smap = sm.build(st, "vector_add.py")
    with pytest.raises(prof.ProfileMismatch, match="the profiled kernel is not this SASS"):
        prof.build(page, st["sass"], smap.stages["sass"])


def test_round_trip_json():
    _, _, _, p = vector_add_profile(load_heavy)
    back = prof.Profile.from_json(json.loads(json.dumps(p.to_json())))
    assert back == p
    with pytest.raises(ValueError, match="not a saved profile"):
        prof.Profile.from_json({"format": "something-else"})


META = {"gpu": "(test-made CSV, not a measurement)", "driver": "-", "torch": "-", "triton": "-", "date": "-",
        "tool": "ncu", "file": "vector_add.py", "kernel": "add_kernel", "launch": 1}


def test_saved_profile_files(tmp_path):
    from inspectors.store import profiles
    st, smap, page, p = vector_add_profile(load_heavy)
    raw = export(st["sass"], load_heavy)
    p = prof.Profile({**p.meta, **META}, p.instructions, p.lines, p.total_samples)
    path = profiles.save(tmp_path, "vector_add-launch1", p, raw)
    assert path.name == "vector_add-launch1.json" and (tmp_path / "vector_add-launch1.ncu.csv").read_text() == raw
    back, back_raw = profiles.load(path)
    assert back_raw == raw and back.instructions == p.instructions and back.meta["raw"] == "vector_add-launch1.ncu.csv"
    assert profiles.folder_profiles(tmp_path) == [path]
    with pytest.raises(ValueError, match="missing: gpu"):
        profiles.save(tmp_path, "x", prof.Profile({}, (), (), 0.0), "")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match=r"bad.json: not JSON \(line 1"):
        profiles.load(tmp_path / "bad.json")


def test_cli_shows_a_saved_profile(tmp_path, capsys):
    from inspectors.__main__ import main
    from inspectors.store import profiles
    st, smap, page, p = vector_add_profile(load_heavy)
    p = prof.Profile({**p.meta, **META}, p.instructions, p.lines, p.total_samples)
    (tmp_path / "vector_add.py").write_text(st["source"])
    path = profiles.save(tmp_path, "vector_add-launch1", p, export(st["sass"], load_heavy))
    assert main(["profile", "--saved", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hottest"][0]["python_line"] == p.lines[0].python_line and out["unexplained"] == []
    assert out["hottest"][0]["where"] == f"line {p.lines[0].python_line}"
    assert main(["profile", "--saved", str(path)]) == 0
    text = capsys.readouterr().out
    assert "test-made CSV" in text and "long scoreboard" in text


def test_cli_profile_without_gpu_says_why(capsys):
    from inspectors.__main__ import main
    from inspectors.bench.profiler import find_ncu
    if find_ncu() is not None:
        pytest.skip("ncu is here: the GPU test measures for real")
    assert main(["profile", str(SNIPPETS / "vadd.py"), "--json"]) == 1
    assert "ncu" in json.loads(capsys.readouterr().out)["error"]["message"]


def test_gpu_script_checks_and_targets():
    """benchmarks/gpu_profile.py's parts that run without a GPU: what it profiles, and the
    mapping check it applies to each profile."""
    import importlib.util
    from conftest import ROOT
    spec = importlib.util.spec_from_file_location("gpu_profile", ROOT / "benchmarks" / "gpu_profile.py")
    gp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gp)
    names = [(p.name, only) for p, only in gp.targets()]
    assert ("vector_add.py", None) in names and ("transpose.py", None) in names and names[-2:] == [("flash_attention.py", 1), ("bank_conflict.py", None)]
    st, smap, page, p = vector_add_profile(load_heavy)
    lines = st["source"].splitlines()
    assert gp.check(p, SM / "vector_add.py", lines) == []
    # a sample on an instruction that maps nowhere, between mapped ones: the check names it
    k = next(k for k, i in enumerate(p.instructions) if i.chain and k > 3)
    bad = list(p.instructions)
    bad[k] = prof.InstructionCost(bad[k].sass_line, bad[k].offset, bad[k].text, (), 5.0, 1.0, {}, where="unexplained")
    q = prof.Profile(p.meta, tuple(bad), p.lines, p.total_samples)
    assert gp.check(q, SM / "vector_add.py", lines) == [
        f"SASS line {bad[k].sass_line} `{bad[k].text}` has 5 samples and maps to no Python line"]
    # matmul's rule (the hottest line is the tl.dot or a load): a load passes, a store does not
    assert "tl.load" in lines[p.lines[0].python_line - 1] and gp.check(p, Path("matmul.py"), lines) == []
    _, _, _, s = vector_add_profile(lambda off, text: (100, 1, 0, 0, 0) if "STG" in text else (1, 1, 0, 0, 0))
    assert "tl.store" in lines[s.lines[0].python_line - 1]
    assert gp.check(s, Path("matmul.py"), lines) == [
        f"the hottest line is neither the tl.dot nor a load feeding it: `{lines[s.lines[0].python_line - 1].strip()}`"]


PROFILES = Path(__file__).resolve().parents[2] / "assets" / "profiles"


def _gpu_and_ncu() -> bool:
    from inspectors.bench.profiler import find_ncu
    try:
        import torch
        return torch.cuda.is_available() and find_ncu() is not None
    except ImportError:
        return False


@pytest.mark.skipif(not _gpu_and_ncu(), reason="needs an NVIDIA GPU and Nsight Compute")
def test_fresh_profile_of_vector_add(tmp_path):
    from conftest import ROOT
    from inspectors.bench.profiler import profile_launch
    from inspectors.store import profiles
    p, raw, path = profile_launch(ROOT / "kernels" / "vector_add.py", 1, tmp_path)
    assert p.total_samples > 0 and not p.unexplained and p.opcode_mismatches == 0
    src = (ROOT / "kernels" / "vector_add.py").read_text().splitlines()
    assert any(w in src[p.lines[0].python_line - 1] for w in ("tl.load", "tl.store"))   # memory-bound
    back, back_raw = profiles.load(path)
    assert back_raw == raw and back.lines == p.lines


@pytest.mark.skipif(not any(PROFILES.glob("*.csv")), reason="no committed profiles yet (benchmarks/gpu_profile.py)")
def test_every_stall_reason_of_the_committed_exports_has_words():
    """The H100's ncu (2025.3) names its stall columns stall_lg, stall_mio, stall_no_inst...: each
    one the committed exports carry is said in words in the hottest-lines table."""
    reasons = set()
    for path in PROFILES.glob("*.ncu.csv"):
        for page in ncu.parse(path.read_text()):
            for row in page.rows:
                reasons |= set(row.stalls)
    assert reasons and reasons <= set(ncu.STALL_WORDS), reasons - set(ncu.STALL_WORDS)


@pytest.mark.skipif(not any(PROFILES.glob("*.json")), reason="no committed profiles yet (benchmarks/gpu_profile.py)")
def test_committed_profiles_map_and_heat():
    """The profiles measured on the H100: each opens, names where it was measured, maps every
    sampled instruction, and its SASS heat column sums to 1 over the kernel's SASS."""
    from inspectors.store import profiles
    for path in profiles.folder_profiles(PROFILES):
        p, raw = profiles.load(path)
        assert raw, path
        for key in profiles.REQUIRED_META:
            assert p.meta.get(key) not in (None, ""), (path.name, key)
        assert not p.unexplained and p.opcode_mismatches == 0, path.name
        assert sum(c.share for c in p.lines) + sum(i.samples for i in p.instructions if i.where) / p.total_samples \
            == pytest.approx(1.0), path.name
        page = ncu.parse(raw)[0]
        assert page.total(ncu.SAMPLES) == p.total_samples, path.name


def test_measured_next_to_static():
    """The plumbing of measured vs predicted sectors per request: the static side is the
    coalescing estimate of the fixture's PTX, the measured side the test-made CSV's 4 sectors
    per execution on each LDG (not a measurement: the H100's figures are in the GPU report)."""
    from inspectors.explain import coalescing
    st, smap, page, p = vector_add_profile(load_heavy)
    est = coalescing.estimate(st["ptx"], ["x_ptr", "y_ptr", "output_ptr", "n_elements"], {"n_elements": 98432})
    rows = prof.measured_vs_static(p, est, smap.stages["ptx"])
    loads = [r for r in rows if r["kind"] == "load"]
    assert len(loads) == 2
    for r in loads:
        want = [a.sectors_per_request for a in est.accesses
                if a.kind == "load" and smap.stages["ptx"].to_python.get(a.ptx_line) == r["python_line"]]
        assert r["static"] == sum(want) / len(want) == 16.0          # v4 x 32 lanes = 512 B = 16 sectors
        assert r["measured"] == 4.0 and r["ratio"] == 0.25
    store = next(r for r in rows if r["kind"] == "store")
    assert store["measured"] is None and store["static"] == 16.0


def test_other_column_spellings():
    """`# Samples` and smsp__pcsamp_warps_issue_stalled_* (exports of other ncu versions)."""
    text = ('"Address","Source","# Samples","Instructions Executed",'
            '"smsp__pcsamp_warps_issue_stalled_long_scoreboard","smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",'
            '"smsp__pcsamp_warps_issue_stalled_wait"\n'
            '"0x7f0000000100","@!P0 LDG.E.128 R16, desc[UR4][R2.64]","1,200","64","1,000","990","200"\n')
    page = ncu.parse(text)[0]
    row = page.rows[0]
    assert page.has_samples and row.samples == 1200 and page.total(ncu.SAMPLES) == 1200
    assert row.stalls == {"long_scoreboard": 1000, "wait": 200}
    assert ncu.STALL_WORDS["long_scoreboard"].startswith("long scoreboard")


def test_two_profiles_line_by_line(tmp_path, capsys):
    """A load-bound and a store-bound (test-made) profile of the same SASS: the store line
    gains what the load lines lose."""
    from inspectors.__main__ import main
    from inspectors.store import profiles
    st, smap, page, a = vector_add_profile(load_heavy)
    _, _, _, b = vector_add_profile(lambda off, text: (100, 1, 0, 0, 0) if "STG" in text else (1, 1, 0, 0, 0))
    rows = prof.compare(a, b)
    src = st["source"].splitlines()
    top = rows[0]
    assert "tl.store" in src[top["python_line"] - 1] and top["change"] > 0.5
    assert sum(r["change"] for r in rows) == pytest.approx(
        sum(c.share for c in b.lines) - sum(c.share for c in a.lines))
    pa = profiles.save(tmp_path, "a", prof.Profile({**a.meta, **META}, a.instructions, a.lines, a.total_samples), "")
    pb = profiles.save(tmp_path, "b", prof.Profile({**b.meta, **META}, b.instructions, b.lines, b.total_samples), "")
    assert main(["profile", "--saved", str(pa), "--against", str(pb), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lines"][0]["python_line"] == top["python_line"]
    assert main(["profile", "--against", str(pb)]) == 1


def test_profile_launch_orchestration_without_a_gpu(tmp_path, monkeypatch, engine):
    """profile_launch's own steps on the CPU: the compile, the launch picked from the log, the
    ncu command, the export read, the pairing, the saved files, the note of a program that
    failed after the profiled launch. What a GPU would do is stood in for: ncu "writes" its
    report and "exports" a CSV made from the compiled SASS (test-made figures)."""
    from conftest import ROOT
    from inspectors.bench import profiler
    from inspectors.store import profiles
    calls = []

    class Done:
        def __init__(self, rc=0, out="", err=""):
            self.returncode, self.stdout, self.stderr = rc, out, err

    def fake_run(cmd, **kw):
        calls.append(cmd)
        if "-o" in cmd:                                   # the profiling run
            report = Path(cmd[cmd.index("-o") + 1])
            report.with_suffix(".ncu-rep").write_text("report")
            return Done(1, "", "RuntimeError: the second launch failed")
        if "--import" in cmd:                             # the export
            return Done(0, export(state["sass"], load_heavy))
        raise AssertionError(cmd)

    state = {}
    real_build = sm.build

    def keep_sass(stages, filename):
        state["sass"] = stages["sass"]
        return real_build(stages, filename)

    monkeypatch.setattr(profiler, "find_ncu", lambda: "/opt/ncu")
    monkeypatch.setattr(profiler, "_target", lambda: "cuda:90")
    monkeypatch.setattr(profiler, "environment", lambda ncu: {**META, "tool": "ncu", "ncu": "stand-in"})
    monkeypatch.setattr(profiler.sourcemap, "build", keep_sass)
    monkeypatch.setattr(profiler.subprocess, "run", fake_run)
    log = [{"kernel": "add_kernel", "hash": "h1", "ints": {"n_elements": 98432}},
           {"kernel": "add_kernel", "hash": "h1", "ints": {"n_elements": 98432}},
           {"kernel": "add_kernel", "hash": "h2", "ints": {"n_elements": 98431}}]
    p, raw, path = profiler.profile_launch(ROOT / "kernels" / "vector_add.py", 2, tmp_path, engine=engine,
                                           launch_log=log)
    cmd = calls[0]
    assert cmd[:9] == ["/opt/ncu", "--set", "full", "--import-source", "yes", "--clock-control", "none",
                       "--kernel-name", "regex:^add_kernel$"]
    assert cmd[cmd.index("--launch-skip") + 1] == "2" and cmd[cmd.index("--launch-count") + 1] == "1"
    assert calls[1][:2] == ["/opt/ncu", "--import"] and calls[1][3:] == ["--page", "source", "--csv",
                                                                          "--print-source", "sass"]
    assert p.meta["launch_ints"] == {"n_elements": 98431} and p.meta["launch"] == 2
    assert any("exited with status 1 after the profiled launch" in n for n in p.notes)
    assert path.name == "vector_add-launch2.json" and profiles.load(path)[1] == raw
    assert not p.unexplained and p.lines[0].top_stall[0] == "long_sb"
    with pytest.raises(profiler.ProfileError, match="there is no launch 4"):
        profiler.profile_launch(ROOT / "kernels" / "vector_add.py", 4, None, engine=engine, launch_log=log)


def test_gpu_script_end_to_end_with_ncu_stood_in(tmp_path, monkeypatch, engine):
    """benchmarks/gpu_profile.py on the CPU, the GPU's part stood in: example()'s launch log is
    the compile's launches, ncu "profiles" by writing a report and "exports" a CSV made from the
    compiled SASS of the launch it was asked for (test-made figures). Checks the script's own
    flow: files written, report lines, the static-vs-measured rows, the exit status."""
    import importlib.util
    import torch
    from conftest import ROOT
    from inspectors.base.result import CompileRequest
    from inspectors.bench import profiler
    spec = importlib.util.spec_from_file_location("gpu_profile", ROOT / "benchmarks" / "gpu_profile.py")
    gp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gp)

    compiled = {}

    def kernels_of(path):
        if path not in compiled:
            compiled[path] = engine.compile(CompileRequest(source=Path(path).read_text(), filename=Path(path).name,
                                                           target="cuda:90")).kernels
        return compiled[path]

    class Done:
        def __init__(self, rc=0, out="", err=""):
            self.returncode, self.stdout, self.stderr = rc, out, err

    asked = {}

    def fake_run(cmd, **kw):
        if cmd[1:3] == ["-m", "inspectors.bench.profile_run"]:            # the logged run of example()
            ks = kernels_of(cmd[3])
            ints = [{a.name: 2048 for a in k.args if a.type != "constexpr" and not a.type.startswith("*")}
                    for k in ks]                                   # sizes: 2048 each
            Path(kw["env"]["TLENS_LAUNCH_LOG"]).write_text(json.dumps(
                [{"kernel": k.name, "hash": f"h{i}", "ints": ints[i]} for i, k in enumerate(ks)]))
            return Done()
        if "-o" in cmd:
            ks = kernels_of(cmd[-1])
            name = cmd[cmd.index("--kernel-name") + 1][len("regex:^"):-1]
            skip = int(cmd[cmd.index("--launch-skip") + 1])
            asked["sass"] = [k for k in ks if k.name == name][skip].stages["sass"]
            Path(cmd[cmd.index("-o") + 1]).with_suffix(".ncu-rep").write_text("report")
            return Done()
        if "--import" in cmd:
            return Done(0, export(asked["sass"], load_heavy))
        raise AssertionError(cmd)

    monkeypatch.setattr(profiler, "find_ncu", lambda: "/opt/ncu")
    monkeypatch.setattr(profiler, "_target", lambda: "cuda:90")
    monkeypatch.setattr(profiler, "environment", lambda ncu: {**META, "ncu": "stand-in"})
    monkeypatch.setattr(profiler.subprocess, "run", fake_run)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    rc = gp.main(["--out", str(tmp_path), "--only", "vector_add,transpose"])
    report = (tmp_path / "gpu_profile.txt").read_text()
    saved = sorted(p.name for p in (tmp_path / "profiles").glob("*.json"))
    assert saved == ["transpose-launch1.json", "transpose-launch2.json", "vector_add-launch1.json",
                     "vector_add-launch2.json", "vector_add-launch3.json"], report
    assert "5 launch(es) profiled" in report and "unexplained with samples" in report
    assert "sectors/request static 16.00, measured 4.00 (-75.0 %)" in report      # vector_add's loads
    # the test-made 4 sectors per request are not transpose's: its check fails, and says so
    assert rc == 1 and "transpose.py launch 1: line" in report and "more than 10 % apart" in report
