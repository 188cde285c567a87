#!/usr/bin/env bash
# The wheels the GPU machine lacks (its own list: /work/.library/device/KINDS.md), downloaded into .whl/
# for the device tool's carry: [".whl"] (benchmarks/gpu_suite.sh, gpu_drivers.sh, gpu_env.sh install
# them into /tmp/site there). Python 3.12, x86-64; no dependencies are followed, so each one the
# machine lacks is named here. About 36 MB (the carry limit is 64 MiB a call). Keep .whl/ out of git:
#   echo /.whl/ >> .git/info/exclude; bash benchmarks/gpu_wheels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
plats=""
for p in manylinux_2_35 manylinux_2_34 manylinux_2_31 manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 manylinux2014 manylinux1; do
  plats="$plats --platform ${p}_x86_64"
done
# streamlit and its requirements the machine lacks; the project's own; the libraries the tests and drivers import
for spec in streamlit==1.67.0 altair pydeck starlette uvicorn python-multipart websockets itsdangerous watchdog \
    jsonschema jsonschema-specifications referencing rpds-py graphviz filecheck sqlalchemy \
    liger-kernel==0.8.5 cut-cross-entropy==25.1.1 fla-core==0.6.0 flag-gems==5.0.2 torchao==0.18.0; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plats -d .whl "$spec"
done
du -sh .whl
