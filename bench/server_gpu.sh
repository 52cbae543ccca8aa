#!/usr/bin/env bash
# Issue 5 on the GPU machine (device tool), from the repo root, with build/kgym and .carry/data carried:
#   bash bench/server_gpu.sh            -> $OUT/{env.txt,server_gpu.json,server_gpu.md,server.log,run.log}
# kgym serve on cuda:0 with K workers (default 2), the CUDA-L1 level-1 rows of issue 2's list as
# submissions to episodes on the KernelBench level-1 tasks: a cold pass (all at once, builds) and
# warm passes (same codes, new episodes). Bounded by DEADLINE seconds: default 540 here (server_gpu.py's
# own default is 300), since with K=2 only two load_inline builds run at once and the cold pass of
# 14 rows may need ~200-300 s; 540 s still fits one 600-s device call. K=8 makes the cold pass
# shorter (8 builds at once); the warm passes submit one at a time either way.
# Knobs (environment): K, DEADLINE, PROFILE (off|strict), REFERENCE (suite|rows), TASKS, DEVICES,
# WARM_REPEATS, WARM_CONCURRENCY, EXTRA (more server_gpu.py flags).
set -uo pipefail
OUT=${OUT:-out/server_gpu}; mkdir -p "$OUT"; export OUT
export KGYM_DATA=${KGYM_DATA:-.carry/data}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1; nproc; } > "$OUT/env.txt"
cat "$OUT/env.txt"
python3 bench/server_gpu.py --devices "${DEVICES:-cuda:0}" --workers-per-device "${K:-2}" \
  --profile "${PROFILE:-off}" --reference "${REFERENCE:-suite}" --deadline "${DEADLINE:-540}" \
  --tasks "${TASKS-1,3,9,12,19,21,23,26,33,36,40,88,95,97}" \
  --warm-repeats "${WARM_REPEATS:-2}" --warm-concurrency "${WARM_CONCURRENCY:-1}" ${EXTRA:-} 2>&1 | tee "$OUT/run.log"
rc=${PIPESTATUS[0]}
cat "$OUT/server_gpu.md" 2>/dev/null
exit "$rc"
