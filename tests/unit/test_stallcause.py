"""Stalls charged to their cause (inspectors/explain/stallcause.py) on the committed H100
profiles: the naive transpose's store line waits for the load line, the strided and vector-add
loads' consumers wait for them; and the register reading on SASS written here."""
import pytest

from conftest import ROOT
from inspectors.explain import stallcause
from inspectors.store import profiles

PROFILES = ROOT / "assets" / "profiles"


def _profile(name: str):
    path = PROFILES / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"no committed profile {name}")
    return profiles.load(path)[0]


def test_registers_read_and_written():
    assert stallcause.dests("@P0 LDG.E.128 R4, desc[UR6][R2.64] ;") == {"R4", "R5", "R6", "R7"}
    assert stallcause.sources("@P0 LDG.E.128 R4, desc[UR6][R2.64] ;") == {"R2", "R3"}
    assert stallcause.dests("STS [R27+UR4], R20 ;") == set()
    assert stallcause.sources("STS [R27+UR4], R20 ;") == {"R27", "R20"}
    assert stallcause.sources("STG.E.64 desc[UR4][R2.64], R8 ;") == {"R2", "R3", "R8", "R9"}
    assert stallcause.dests("FADD R5, R2, RZ ;") == {"R5"} and stallcause.sources("FADD R5, R2, RZ ;") == {"R2"}


class _I:
    def __init__(self, offset, text, line, stalls=None):
        self.offset, self.text, self.python_line, self.stalls = offset, text, line, stalls or {}


def test_the_nearest_writer_decides_and_a_loop_wraps_around():
    ins = [_I(0x10, "LDG.E R4, desc[UR6][R2.64] ;", 14),
           _I(0x20, "MOV R4, RZ ;", 15),                                  # overwrites R4: not a load
           _I(0x30, "FADD R6, R4, R5 ;", 16, {"long_sb": 10.0})]
    assert stallcause.causes(ins) == ()                                  # R4's last writer is the MOV
    loop = [_I(0x10, "FADD R6, R4, R6 ;", 20, {"long_sb": 7.0}),           # uses R4 from the previous iteration
            _I(0x20, "LDG.E R4, desc[UR6][R2.64] ;", 19),
            _I(0x30, "BRA `(.L_x_0) ;", 20)]
    [c] = stallcause.causes(loop)
    assert (c.register, c.producer_offset, c.producer_line, c.samples) == ("R4", 0x20, 19, 7.0)
    assert c.words() == "waiting for the load on line 19"


def test_the_naive_transposes_store_waits_for_its_load():
    """ncu charges the long-scoreboard samples to the STS of the store's line; their producer is
    the LDG of the load's line (kernels/transpose.py: load line, then store line)."""
    p = _profile("transpose-launch1")
    per = stallcause.by_line(stallcause.causes(p.instructions))
    store = max(per, key=lambda line: sum(s for *_, s in per[line]))
    producer_line, op, samples = per[store][0]
    assert op == "LDG" and producer_line == store - 1 and samples > 100
    hot = next(r for r in p.hottest(n=10) if r["python_line"] == store)
    assert f"wait for the load (LDG) on line {store - 1}" in hot["waits_for"]


@pytest.mark.parametrize("name", ["strided-launch1", "vector_add-launch1"])
def test_a_loads_consumer_waits_for_that_load(name):
    p = _profile(name)
    found = stallcause.causes(p.instructions)
    long_sb = [c for c in found if c.reason == "long_sb"]
    assert long_sb
    top = max(long_sb, key=lambda c: c.samples)
    assert top.producer_text.startswith(("LDG", "@")) and "LDG" in top.producer_text
    assert top.producer_line is not None and top.producer_line <= top.line


@pytest.fixture(scope="module")
def lens():
    """The one door, as benchmarks/stall_producers.py compiles through it."""
    from inspectors.session.lens import Lens
    lens = Lens(cache=False, workers=1)
    yield lens
    lens.close()


@pytest.mark.parametrize("name", ["transpose-launch1", "strided-launch1", "vector_add-launch1"])
def test_the_named_producer_is_the_scoreboard_the_stall_waits_on(lens, name):
    """The SASS scheduling controls of the profiled cubin (compiled here with the Triton the profile
    was measured with: `make test-oldest`): each producer sets a scoreboard and the stalled
    instruction waits on it (benchmarks/stall_producers.py, its committed report)."""
    import importlib.util
    import triton
    profile = _profile(name)
    if profile.meta.get("triton") != triton.__version__:
        pytest.skip(f"measured with Triton {profile.meta.get('triton')}; its ptxas writes the controls compared here")
    spec = importlib.util.spec_from_file_location("stall_producers", ROOT / "benchmarks" / "stall_producers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    why, found = mod.check(lens, name)
    assert not why, why
    assert found and all(good for _, good in found), [(c.offset, c.producer_offset, good) for c, good in found]
