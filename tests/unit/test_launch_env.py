"""A launch is compiled with the environment it was launched under (inspectors/compile/triton_shim_env.py):
what the code sets between two launches changes the second's compile only, as the JIT on the GPU."""
import os
import re

from inspectors.base.result import CompileRequest


def _ptx_version(kernel) -> str:
    return re.search(r"^\.version (\S+)", kernel.stages["ptx"], re.M).group(1)


def test_a_ptxas_set_between_two_launches_compiles_the_second_only(engine, snippet):
    # sm_80: Triton's `ptxas` (TRITON_PTXAS_PATH) on 3.6 to 3.9, CUDA 12.8 or 12.9; the wheel's
    # ptxas-blackwell is a later CUDA's (12.9 with 3.6, 13.4 with 3.9): another PTX .version
    r = engine.compile(CompileRequest(source=snippet("ptxas_midway.py"), filename="ptxas_midway.py",
                                      target="cuda:80", sass=False), timeout=300)
    assert r.ok, r.error
    before, after = r.kernels
    assert [a.divisible_by_16 for a in before.args if a.name == "n"] == [True]
    assert [a.divisible_by_16 for a in after.args if a.name == "n"] == [False]
    assert _ptx_version(after) != _ptx_version(before), _ptx_version(before)
    # the job's environment ended with it: the server's and the next job's are as before
    assert "TRITON_PTXAS_PATH" not in os.environ or "blackwell" not in os.environ["TRITON_PTXAS_PATH"]
    again = engine.compile(CompileRequest(source=snippet("vadd.py"), filename="vadd.py", target="cuda:80", sass=False),
                           timeout=300)
    assert again.ok and {_ptx_version(k) for k in again.kernels} == {_ptx_version(before)}
