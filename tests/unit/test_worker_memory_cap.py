"""The worker's address-space cap (TLENS_WORKER_MEMORY_MB) counts what a job may add to what the
worker has mapped at its start when torch is a CUDA build with no GPU visible: that build's
libraries map gigabytes of address space that hold nothing, and a job's 2 GB of tensors failed
under a plain 8 GB cap on the GPU machine (benchmarks/results/time_estimates_outside.txt)."""
import subprocess
import sys

from conftest import ROOT

_CHILD = """
import resource, sys
from inspectors.process import proclimits
junk = bytearray(300 << 20)                     # 300 MB mapped before the cap, as a CUDA build's libraries
before = proclimits.mapped_bytes()
proclimits.limit_memory(above_mapped=sys.argv[1] == "1")
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
print(before, soft, hard)
"""


def _capped(above: bool) -> tuple[int, int, int]:
    out = subprocess.run([sys.executable, "-c", _CHILD, "1" if above else "0"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={"TLENS_WORKER_MEMORY_MB": "1024", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return tuple(map(int, out.stdout.split()))


def test_a_plain_cap_is_the_setting():
    before, soft, hard = _capped(False)
    assert soft == hard == 1024 << 20 and before > 300 << 20


def test_a_cap_above_what_is_mapped_leaves_the_job_the_whole_setting():
    before, soft, hard = _capped(True)
    assert soft == hard and before + (1024 << 20) <= soft < before + (1024 << 20) + (64 << 20)
