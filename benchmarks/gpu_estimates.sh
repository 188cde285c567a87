#!/usr/bin/env bash
# benchmarks/time_estimates.py on the GPU machine, in one call of the device tool (carry:
# [".whl"]: liger-kernel's wheel). Writes $OUT/time_estimates.txt and .json (commit them as
# benchmarks/results/time_estimates.txt and .json). TLENS_STEPS="seeds_small,liger_ops": some drivers only.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tlens-estimates}
. benchmarks/gpu_env.sh      # PY, the project and the carried wheels on PYTHONPATH, /tmp caches
STEPS=${TLENS_STEPS:-seeds_small,seeds_large,gpt_step_small,gpt_step_large,liger_ops}
timeout 560 $PY benchmarks/time_estimates.py --steps "$STEPS" --out "$OUT/time_estimates.txt"
