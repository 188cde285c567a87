#!/usr/bin/env bash
# benchmarks/gpu_drivers.py's two halves on the GPU machine, in one call of the device tool
# (carry: [".whl"]): the CPU side with the GPU hidden (CUDA_VISIBLE_DEVICES=: the worker takes
# the target view, as on a laptop), then the GPU side, the same torch and Triton on both.
# Writes $OUT/gpu_drivers.txt (commit it as benchmarks/results/gpu_drivers.txt) and, in one file
# (the device tool brings back only a few files), the mismatches' texts: $OUT/mismatches.tgz.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tlens-gpu-drivers}
. benchmarks/gpu_env.sh      # PY, the project and the carried wheels on PYTHONPATH, /tmp caches
REPORT="$OUT/gpu_drivers.txt"
rm -f "$OUT"/*.ptx "$OUT"/*.ttir "$OUT"/*.src
echo "commit: ${TLENS_COMMIT:-unknown}" > "$REPORT"
# TLENS_DRIVERS="fla torchao": only the drivers whose path contains one of the words
ONLY=(); for w in ${TLENS_DRIVERS:-}; do ONLY+=(--only "$w"); done
# both halves within TLENS_BUDGET seconds (default 560: the device tool stops a call at 600 s, and then
# nothing comes back; a six-model hf_zoo run did that): the GPU side gets what the CPU side left
BUDGET=${TLENS_BUDGET:-560}
CUDA_VISIBLE_DEVICES= timeout $((BUDGET * 2 / 3)) $PY benchmarks/gpu_drivers.py "${ONLY[@]}" --cpu "$OUT/drivers_cpu.json" 2>&1 | tail -30 | tee -a "$REPORT"
LEFT=$((BUDGET - SECONDS))
timeout $((LEFT > 30 ? LEFT : 30)) $PY benchmarks/gpu_drivers.py "${ONLY[@]}" --gpu "$OUT/drivers_cpu.json" 2>&1 | tee -a "$REPORT"
[ "${PIPESTATUS[0]}" = 124 ] && echo "# the GPU side stopped at the budget ($BUDGET s in all): the drivers after the last one listed were not compared" | tee -a "$REPORT"
( cd "$OUT" && tar czf mismatches.tgz --remove-files drivers_cpu.json $(ls *.ptx *.ttir *.src 2>/dev/null) )
