"""torch's process-wide settings put back after a job (inspectors/compile/torch_state.py): in a
worker that serves the next file, one file's `torch._inductor.config.freezing = True` made the
next file's torch.compile refuse (tests/sandbox/test_target_devices.py ran the two in that order
on Triton 3.6)."""
import subprocess
import sys

import torch

from conftest import ROOT


def test_configs_and_flags_a_job_changes_are_put_back():
    import torch._dynamo.config as dynamo
    import torch._inductor.config as inductor

    from inspectors.compile import torch_state
    before = (inductor.freezing, inductor.coordinate_descent_tuning, dynamo.capture_scalar_outputs,
              torch.backends.cuda.flash_sdp_enabled(), torch.get_default_dtype(), torch.is_grad_enabled())
    with torch_state.kept():
        inductor.freezing = True
        inductor.coordinate_descent_tuning = True
        dynamo.capture_scalar_outputs = True
        torch.backends.cuda.enable_flash_sdp(False)
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
    after = (inductor.freezing, inductor.coordinate_descent_tuning, dynamo.capture_scalar_outputs,
             torch.backends.cuda.flash_sdp_enabled(), torch.get_default_dtype(), torch.is_grad_enabled())
    assert after == before == (False, False, False, True, torch.float32, True)


def test_a_config_first_imported_by_the_job_goes_back_to_its_defaults():
    """The worker has not imported Inductor's config before a file's torch.compile does."""
    code = ("import sys, torch\n"
            "from inspectors.compile import torch_state\n"
            "assert 'torch._inductor.config' not in sys.modules\n"
            "with torch_state.kept():\n"
            "    import torch._inductor.config as c\n"
            "    c.freezing = True\n"
            "    c.max_autotune = True\n"
            "print(c.freezing, c.max_autotune, c.compile_threads > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "True"]
