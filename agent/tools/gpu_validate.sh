#!/usr/bin/env bash
# GPU validation of live attach and the libtorch sample (docs/LIVE.md has the numbers):
#   bash agent/tools/gpu_validate.sh OUTDIR
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/agent
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, transformers, sys; print('torch', torch.__version__, 'transformers', transformers.__version__, 'python', sys.version.split()[0])"
# The libtorch sample builds while the tracker extension builds.
( prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  timeout 240 cmake -S samples/libtorch -B /tmp/lt -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" > "$out/libtorch.log" 2>&1 &&
  timeout 240 cmake --build /tmp/lt -j6 >> "$out/libtorch.log" 2>&1 && echo "libtorch sample built" >> "$out/libtorch.log" ) &
lt=$!
t0=$(date +%s)
timeout 240 python3 -c "import torch, memscope_agent.tracker as t; t.load(torch, verbose=True); print('tracker extension ready')" > "$out/tracker_build.log" 2>&1
echo "tracker build: rc $? in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/tracker_build.log")"
wait $lt
echo "libtorch: $(tail -1 "$out/libtorch.log")"
if [ -x /tmp/lt/libtorch_train_mlp ]; then
  /tmp/lt/libtorch_train_mlp "$out/libtorch_sample.pickle" 3 2>&1 | tail -2
fi
QWEN_STEPS=${QWEN_STEPS:-25} SMALL_STEPS=${SMALL_STEPS:-100} timeout ${VALIDATION_TIMEOUT:-330} \
  python3 agent/tools/live_validation.py "$out" 2>&1 | grep -v -i warn | tail -40
