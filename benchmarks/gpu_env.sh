# Sourced by the GPU machine's one-call scripts (gpu_drivers.sh, gpu_estimates.sh), from the
# checkout's root: the project on PYTHONPATH (no pip install there), the wheels carried in .whl/
# installed into /tmp/site, the caches and workspace under /tmp. Sets PY and OUT's folder.
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if compgen -G ".whl/*.whl" >/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PYTHONPATH
fi
export PYTHONUNBUFFERED=1 TLENS_TRITON_CACHE_DIR=/tmp/tlens-triton-cache TLENS_WORKSPACE_DIR=/tmp/tlens-workspace
