#!/usr/bin/env bash
# The whole test suite on the GPU machine, in one call of the device tool (see the README's
# "GPU machine" section). That machine has python3 3.12 with torch 2.11.0+cu130 and triton 3.6.0
# and no network: the packages it lacks travel as wheels in .whl/ (carry: [".whl"]), installed
# here into /tmp/site. Browser tests skip there (no Chromium). Writes $OUT/gpu_suite.txt: first
# the GPU, driver, torch, triton and the commit tested, then pytest's output, whose last line is
# its summary (commit it as benchmarks/results/gpu_suite.txt).
#
#   TLENS_COMMIT=<hash> bash benchmarks/gpu_suite.sh   # the commit, written out: the tree
#                                                     # travels without .git
# The whole suite runs as two calls, each within the device tool's 600 s (their last times: docs/09),
# each call two pytest processes side by side (TLENS_SUITE_GROUPS: groups split by '|', run at once on
# the machine's 16 cores; one after the other, the two halves outgrew two calls at 03ce170):
#   TLENS_SUITE_GROUPS="tests/unit/test_[a-k]*.py | tests/unit/test_[l-z]*.py"   (the readers, CLI, kernels
#       against torch, the Benchmark and profile tests: the GPU-timed ones are all in tests/unit)
#   TLENS_SUITE_GROUPS="tests/app | tests/sandbox/test_[a-o]*.py | tests/sandbox/test_[p-z]*.py tests/browser"   (AppTest pages; the compile engine's pool
#       and sandbox tests; browser and sandbox tests skip there)
# TLENS_SUITE_ARGS (one group) still works. A group's own summary line closes its section of the report.
# The wheels to carry: the header of benchmarks/results/gpu_suite.txt lists them.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tlens-gpu-suite}
mkdir -p "$OUT"
REPORT="$OUT/gpu_suite.txt"
PY=${PYTHON:-python3}
# The project itself (inspectors, kernels, app) from this checkout: the scripts and tests import it as
# the installed package that `make setup` makes elsewhere (pip install -e .); here, without network
# or a build backend for sure, the checkout's folder on PYTHONPATH does the same. (No `tlens`
# command here: tests/unit/test_package.py skips its check where the project is not pip-installed.)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

if compgen -G ".whl/*.whl" >/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "installing the carried wheels failed" | tee "$REPORT"; exit 1; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1 TLENS_TRITON_CACHE_DIR=/tmp/tlens-triton-cache TLENS_WORKSPACE_DIR=/tmp/tlens-workspace

commit=${TLENS_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo "unknown (set TLENS_COMMIT)")}
{
  echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  $PY - <<'PYEOF'
import platform, torch, triton
print(f"torch: {torch.__version__} (CUDA {torch.version.cuda}, GPU visible: {torch.cuda.is_available()})")
print(f"triton: {triton.__version__}")
print(f"python: {platform.python_version()}")
PYEOF
  echo "commit: $commit"
  echo "command: $PY -m pytest -q -p no:cacheprovider -rs --durations=12 ${TLENS_SUITE_GROUPS:-${TLENS_SUITE_ARGS:-(the whole suite)}} (groups split by '|' run side by side; browser tests skip without Chromium)"
  echo
} > "$REPORT" 2>&1

# A check that the carried wheels import, so a missing one reads as such and not as 100 failures.
$PY -c "import streamlit, graphviz, pygments, matplotlib; from streamlit.testing.v1 import AppTest" >>"$REPORT" 2>&1 \
  || { echo "the carried wheels do not import (see above)" | tee -a "$REPORT"; exit 1; }

# 540 s (TLENS_SUITE_TIMEOUT: less where less device time is left): the device tool's command limit is
# 600 s, and the report must come back
# (TLENS_SUITE_ARGS narrows it for a smoke run elsewhere, e.g. TLENS_SUITE_ARGS=tests/unit/test_layering.py)
IFS='|' read -r -a GROUPS_ <<< "${TLENS_SUITE_GROUPS:-${TLENS_SUITE_ARGS:-}}"
[ ${#GROUPS_[@]} -eq 0 ] && GROUPS_=("")
pids=()
for i in "${!GROUPS_[@]}"; do
  # (each pytest process makes a workspace of its own: tests/conftest.py)
  # shellcheck disable=SC2086  # the group's globs are for the shell to expand
  # SIGINT at the limit (then KILL 20 s on): pytest stops as at Ctrl-C and still prints the failures so far,
  # which a cut run's report lacked when TERM killed it
  timeout -s INT -k 20 ${TLENS_SUITE_TIMEOUT:-540} $PY -m pytest -q -p no:cacheprovider -rs --durations=12 ${GROUPS_[$i]} \
    > "$OUT/group-$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"; r=$?; [ $r -gt $rc ] && rc=$r
  { echo "# ---- group $i:${GROUPS_[$i]:- (the whole suite)} (exit $r)"; cat "$OUT/group-$i.log"; echo; } >> "$REPORT"
  rm -f "$OUT/group-$i.log"
done
tail -n 3 "$REPORT"
exit $rc
