#!/usr/bin/env bash
# benchmarks/time_estimates.py on the GPU machine, in one call of the device tool (carry:
# [".whl"]: liger-kernel's wheel). Writes $OUT/time_estimates.txt and .json (commit them as
# benchmarks/results/time_estimates.txt and .json). TLENS_STEPS="seeds_small,liger_ops": some drivers only.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tlens-estimates}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if compgen -G ".whl/*.whl" >/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PYTHONPATH
fi
export PYTHONUNBUFFERED=1 TLENS_TRITON_CACHE_DIR=/tmp/tlens-triton-cache TLENS_WORKSPACE_DIR=/tmp/tlens-workspace
STEPS=${TLENS_STEPS:-seeds_small,seeds_large,gpt_step_small,gpt_step_large,liger_ops}
timeout 560 $PY benchmarks/time_estimates.py --steps "$STEPS" --out "$OUT/time_estimates.txt"
