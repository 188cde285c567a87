#!/usr/bin/env bash
# A lecture hall on the GPU machine's CPUs, in one call of the device tool (no GPU needed):
# benchmarks/class_load.py --sessions 300 --workers 16 against N Streamlit processes behind
# nginx (deploy/serve_class.py) and then against one process (REPLICAS=8,1; the default, 8, is
# the one that fits the call's 540 s), beside one baseline, in one run. The class is the one of
# issue 32: most students compile their own edited files in their own warm sandboxes.
# That machine has python3 with torch and triton and no network: streamlit and its dependencies
# travel as wheels in .whl/ (installed into /tmp/site, as benchmarks/gpu_suite.sh does) and
# nginx as Debian packages in .deb/ (unpacked with dpkg -x into /tmp/nginx-root; the libraries
# beside it are used only if the machine lacks them). Writes $OUT/gpu_class_load.txt: the
# machine, versions and commit first, then class_load's output (commit it as
# benchmarks/results/gpu_class_load.txt).
#
#   TLENS_COMMIT=<hash> bash benchmarks/gpu_class_load.sh      # carry: [".whl", ".deb"]
#   SESSIONS=30 WORKERS=2 REPLICAS=1 bash benchmarks/gpu_class_load.sh   # a small run elsewhere
#   (TIMEOUT=10: the hangs end sooner; NGINX_FROM_DEB=1: use .deb/ even where nginx is installed)
#
# .deb/ is made on a Debian 12 box with:
#   mkdir -p .deb && cd .deb && apt-get download nginx nginx-common libpcre2-8-0 libssl3 libcrypt1 zlib1g \
#     bubblewrap libcap2 libselinux1
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tlens-gpu-class-load}
mkdir -p "$OUT"
REPORT="$OUT/gpu_class_load.txt"
PY=${PYTHON:-python3}
# The project itself (inspectors, kernels, app) from this checkout: the scripts and tests import it as
# the installed package that `make setup` makes elsewhere (pip install -e .); here, without network
# or a build backend for sure, the checkout's folder on PYTHONPATH does the same.
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
SESSIONS=${SESSIONS:-300}
WORKERS=${WORKERS:-16}
REPLICAS=${REPLICAS:-8}
TIMEOUT=${TIMEOUT:-30}                    # TLENS_COMPILE_TIMEOUT: how long the class's hangs take
ALONE=${ALONE:-12}                        # the alone baseline's sample of the class's requests
: > "$REPORT"

if compgen -G ".whl/*.whl" >/dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "installing the carried wheels failed" | tee -a "$REPORT"; exit 1; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  export PATH=/tmp/site/bin:$PATH
fi
# streamlit installed with --target takes itself for a development checkout without this
export STREAMLIT_GLOBAL_DEVELOPMENT_MODE=false
export PYTHONUNBUFFERED=1

NGINX=${TLENS_NGINX:-}
if [ -z "$NGINX" ] && [ -z "${NGINX_FROM_DEB:-}" ]; then     # NGINX_FROM_DEB=1: test the .deb path
  NGINX=$(command -v nginx || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)
fi
BWRAP=${TLENS_BWRAP:-$(command -v bwrap || true)}
if [ -z "${NGINX:-}" ] || [ -z "$BWRAP" ]; then
  compgen -G ".deb/*.deb" >/dev/null || { echo "no nginx or bwrap here and no .deb/ carried" | tee -a "$REPORT"; exit 1; }
  rm -rf /tmp/nginx-root && mkdir -p /tmp/nginx-root
  for deb in .deb/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" /tmp/nginx-root
    else                                  # a .deb is an ar archive holding data.tar.*
      (d=$(mktemp -d) && cd "$d" && ar x "$OLDPWD/$deb" && tar -xf data.tar.* -C /tmp/nginx-root)
    fi
  done
  NGINX=${NGINX:-/tmp/nginx-root/usr/sbin/nginx}
  BWRAP=${BWRAP:-/tmp/nginx-root/usr/bin/bwrap}
  if ldd "$NGINX" "$BWRAP" | grep -q "not found"; then
    export LD_LIBRARY_PATH=/tmp/nginx-root/usr/lib/x86_64-linux-gnu:/tmp/nginx-root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi
export TLENS_NGINX=$NGINX TLENS_BWRAP=$BWRAP       # the class server sandboxes every compile (bubblewrap)

commit=${TLENS_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo "unknown (set TLENS_COMMIT)")}
{
  echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) (not used: the class compiles for a target, no GPU needed)"
  echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "cores: $(nproc), memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  $PY - <<'PYEOF'
import platform, torch, triton, streamlit
print(f"torch: {torch.__version__}, triton: {triton.__version__}, streamlit: {streamlit.__version__}, "
      f"python: {platform.python_version()}")
PYEOF
  echo "nginx: $("$NGINX" -v 2>&1) ($NGINX${LD_LIBRARY_PATH:+, carried libraries})"
  echo "bubblewrap: $("$BWRAP" --version 2>&1) ($BWRAP)"
  echo "commit: $commit"
  echo "command: $PY benchmarks/class_load.py --sessions $SESSIONS --workers $WORKERS --timeout $TIMEOUT --replicas $REPLICAS --alone $ALONE"
  echo
} >> "$REPORT" 2>&1
"$NGINX" -v >/dev/null 2>&1 || { echo "nginx does not run here (see above)" | tee -a "$REPORT"; exit 1; }
$PY -c "import streamlit, websockets" >>"$REPORT" 2>&1 || { echo "streamlit/websockets do not import" | tee -a "$REPORT"; exit 1; }

# 540 s: the device tool's command limit is 600 s, and the report must come back
timeout 540 $PY benchmarks/class_load.py --sessions "$SESSIONS" --workers "$WORKERS" --timeout "$TIMEOUT" \
  --replicas "$REPLICAS" --alone "$ALONE" 2>&1 \
  | tee -a "$REPORT"
status=${PIPESTATUS[0]}
cp artifacts/class-load-*.log "$OUT/" 2>/dev/null
tar czf "$OUT/serve_logs.tar.gz" artifacts/serve-class-* 2>/dev/null    # each replica's own log
exit "$status"
