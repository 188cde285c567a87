import pytest

from inspectors.base import stages
from inspectors.base import targets


def test_parse_cuda_and_hip():
    assert targets.parse("cuda:90") == targets.Target("cuda", 90, 32)
    assert targets.parse("hip:gfx942") == targets.Target("hip", "gfx942", 64)
    assert targets.parse(" CUDA:100 ").key == "cuda:100"


@pytest.mark.parametrize("bad", ["cuda", "cuda:", "sm_90", "cuda:9", "hip:942", "metal:1", ""])
def test_parse_rejects(bad):
    with pytest.raises(targets.TargetError) as e:
        targets.parse(bad)
    assert "target" in str(e.value)


def test_stage_table_drives_backends():
    assert [s.name for s in stages.stages_for("cuda")] == ["source", "glir", "ttir", "ttgir", "llir", "ptx", "sass"]
    assert [s.name for s in stages.stages_for("hip")] == ["source", "glir", "ttir", "ttgir", "llir", "amdgcn"]
    orders = [s.order for s in stages.STAGES]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    assert len({s.name for s in stages.STAGES}) == len(stages.STAGES)


def test_every_stage_has_a_lexer():
    from inspectors.read.lexers import lexer_for
    for s in stages.STAGES:
        assert lexer_for(s.lexer) is not None


def test_unknown_stage():
    with pytest.raises(KeyError, match="unknown stage"):
        stages.get("hsaco")
