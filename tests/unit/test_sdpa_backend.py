"""The attention kernel the target GPU picks (inspectors.target.sdpa_backend), against the GPU's
own choices measured on an H100 (benchmarks/sdpa_choice.py; its table in
benchmarks/results/sdpa_choice.txt): every row the same, and the switches torch reads."""
import re
from pathlib import Path

import pytest
import torch

from inspectors.target.sdpa_backend import choice, enabled

TABLE = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "sdpa_choice.txt"
NAMES = {"CUDNN_ATTENTION": "cudnn", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient", "MATH": None}
ROW = re.compile(r"^(b?float\d+|float32)\s+([\d,]+)\s+(True|False)\s+(True|False)\s+(\S+)\s+([\d.]+)\s+(\w+)", re.M)


def _measured():
    """The newest run's rows: (dtype, shape, causal, grad, mask, dropout, the GPU's choice)."""
    newest = TABLE.read_text().split("# benchmarks/sdpa_choice.py on ")[1]
    major = 9 if re.search(r"H100|H200", newest.splitlines()[0]) else None
    return major, [(getattr(torch, m[1]), tuple(int(x) for x in m[2].split(",")), m[3] == "True", m[4] == "True",
                    m[5], float(m[6]), m[7]) for m in ROW.finditer(newest)]


def _inputs(dtype, shape, grad, mask):
    b, h, hkv, lq, lk, d = shape
    q = torch.empty(b, h, lq, d, dtype=dtype, device="meta", requires_grad=grad)
    k, v = (torch.empty(b, hkv, lk, d, dtype=dtype, device="meta", requires_grad=grad) for _ in range(2))
    # the view decides on the additive mask (a boolean one is made additive first), as the script asks
    m = None if mask == "-" else torch.empty(lq, lk, dtype=dtype, device="meta")
    return q, k, v, m


def test_every_choice_the_h100_made_is_the_views():
    """288 attentions (dtypes, shapes with a one-query decode and grouped heads, causal, grad, a
    float or boolean mask, dropout): the view picks what torch 2.11 with cuDNN 9.19 picked on the
    H100 (176 of them differed before cuDNN's attention was modelled)."""
    major, rows = _measured()
    assert major == 9 and len(rows) == 288, (major, len(rows))
    differ = []
    for dtype, shape, causal, grad, mask, dropout, gpu in rows:
        q, k, v, m = _inputs(dtype, shape, grad, mask)
        view = choice(q, k, v, causal, major, m, dropout=dropout, enable_gqa=shape[1] != shape[2])
        if view != NAMES[gpu]:
            differ.append((dtype, shape, causal, grad, mask, dropout, gpu, view))
    assert not differ, differ
    assert {gpu for *_, gpu in rows} >= {"CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION"}


def _bf16():
    return _inputs(torch.bfloat16, (2, 4, 4, 128, 128, 64), True, "-")[:3]


def test_cudnn_is_sm90s_and_sm100s_first_choice_only():
    q, k, v = _bf16()
    assert choice(q, k, v, True, 9) == choice(q, k, v, True, 10) == "cudnn"
    assert choice(q, k, v, True, 8) == "flash"          # an A100 tries flash first


@pytest.mark.parametrize("switch", ["disabled", "deterministic", "deprioritized"])
def test_what_turns_cudnn_off_turns_it_off_in_the_view(switch, monkeypatch):
    """torch.backends.cuda.enable_cudnn_sdp(False) (as sdpa_kernel without CUDNN_ATTENTION sets it),
    deterministic algorithms (cuDNN's attention is not), TORCH_CUDNN_SDPA_DEPRIORITIZED=1: flash."""
    q, k, v = _bf16()
    if switch == "disabled":
        was = torch.backends.cuda.cudnn_sdp_enabled()
        torch.backends.cuda.enable_cudnn_sdp(False)
        try:
            assert "cudnn" not in enabled()
            assert choice(q, k, v, True, 9, allowed=enabled()) == "flash"
        finally:
            torch.backends.cuda.enable_cudnn_sdp(was)
    elif switch == "deterministic":
        torch.use_deterministic_algorithms(True)
        try:
            assert choice(q, k, v, True, 9) == "flash"
        finally:
            torch.use_deterministic_algorithms(False)
    else:
        monkeypatch.setenv("TORCH_CUDNN_SDPA_DEPRIORITIZED", "1")
        assert choice(q, k, v, True, 9) == "flash"


def test_masks_cudnn_refuses():
    """A 3-D mask, a mask that needs a gradient, a key of one position, heads past 256: not cuDNN."""
    q, k, v = _bf16()
    three_d = torch.empty(4, 128, 128, dtype=torch.bfloat16, device="meta")
    learned = torch.empty(128, 128, dtype=torch.bfloat16, device="meta", requires_grad=True)
    assert choice(q, k, v, False, 9, three_d) == "efficient"
    assert choice(q, k, v, False, 9, learned) == "efficient"
    one = torch.empty(2, 4, 1, 64, dtype=torch.bfloat16, device="meta")
    assert choice(q, one, one, False, 9) == "flash"
    wide = torch.empty(2, 4, 128, 512, dtype=torch.bfloat16, device="meta")
    assert choice(wide, wide, wide, False, 9) == "efficient"
