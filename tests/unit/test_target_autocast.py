"""torch.autocast("cuda") on the target view (inspectors/target/autocast.py): the view's
CPU tensors get the dtypes CUDA autocast gives. The reference is PyTorch's own CUDA autocast,
run on fake `cuda` tensors (its kernels are in every build of torch), in a process of its own:
the policy, once installed, stays for the process."""
import json
import subprocess
import sys

import torch

from inspectors.target import autocast

SCRIPT = r'''
import json, sys, torch, torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from inspectors.target import autocast, cuda_guard
if cuda_guard.ensure():
    print(json.dumps({"skip": cuda_guard.ensure()})); sys.exit()
torch.cuda.is_available = lambda: True                # as in the view
torch.cuda.is_bf16_supported = lambda *a, **k: True

def program(make):
    x, w, b = make(8, 16), make(32, 16), make(32)
    img, k = make(2, 3, 8, 8), make(4, 3, 3, 3)
    t = torch.zeros(8, dtype=torch.long, device=x.device)
    out = {}
    def see(name, f):
        try:
            out[name] = str(f().dtype)
        except RuntimeError as e:
            out[name] = "raises: " + str(e).split(".")[0][:40]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = F.linear(x, w, b)
        for name, f in {
            "linear": lambda: y, "matmul": lambda: x @ w.t(), "bmm": lambda: torch.bmm(y[None], y.t()[None]),
            "conv2d": lambda: F.conv2d(img, k), "gelu": lambda: F.gelu(y), "softmax": lambda: y.softmax(-1),
            "log_softmax": lambda: F.log_softmax(y, -1), "softmax_dtype": lambda: y.softmax(-1, dtype=torch.bfloat16),
            "layer_norm": lambda: F.layer_norm(y, (32,)), "rms_norm": lambda: F.rms_norm(y, (32,)),
            "group_norm": lambda: F.group_norm(img, 3), "cross_entropy": lambda: F.cross_entropy(y, t),
            "mse": lambda: F.mse_loss(y, y), "sum": lambda: y.sum(), "sum_dim": lambda: y.sum(0),
            "cumsum": lambda: y.cumsum(0), "exp": lambda: y.exp(), "pow": lambda: y.pow(2), "norm": lambda: y.norm(),
            "addcmul": lambda: torch.addcmul(x, y[:, :16], x), "cat": lambda: torch.cat([y, x.repeat(1, 2)]),
            "sdpa": lambda: F.scaled_dot_product_attention(y[None, None], y[None, None], y[None, None]),
            "add": lambda: y + x.repeat(1, 2), "bce": lambda: F.binary_cross_entropy(y.sigmoid(), y.sigmoid()),
        }.items():
            see(name, f)
    return out

mode = FakeTensorMode()
with mode:
    gpu = program(lambda *s: FakeTensor(mode, torch.empty(*s, device="meta"), torch.device("cuda", 0)))
autocast.install()
view = program(lambda *s: torch.randn(*s))
print(json.dumps({"gpu": gpu, "view": view}))
'''


def test_the_views_tensors_get_cuda_autocasts_dtypes():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in got:
        import pytest
        pytest.skip(got["skip"])
    assert got["view"] == got["gpu"]
    # what the comparison covers: each of CUDA's policies, and an op the CPU alone casts (cat)
    assert got["gpu"]["linear"] == "torch.bfloat16" and got["gpu"]["softmax"] == "torch.float32"
    assert got["gpu"]["addcmul"] == "torch.float32" and got["gpu"]["cat"] == "torch.float32"
    assert got["gpu"]["bce"].startswith("raises")


def test_the_policy_read_from_the_header_is_what_cuda_autocast_registers():
    policy = autocast.cuda_policy()
    registered = {n.removeprefix("aten::") for n in torch._C._dispatch_get_all_op_names()
                  if torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCUDA")}
    # a CUDA build registers a few more outside those lists: cuDNN's own ops (no CPU tensor reaches
    # them) and the named-dimension norm
    cuda_build_only = {"cudnn_convolution", "cudnn_convolution_transpose", "_cudnn_rnn", "norm.names_ScalarOpt_dim"}
    assert set(policy) <= registered and registered - set(policy) <= cuda_build_only, registered ^ set(policy)
    assert policy["linear"] == "lower" and policy["softmax.int"] == "fp32_dtype" and policy["layer_norm"] == "fp32"
