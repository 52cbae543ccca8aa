#!/usr/bin/env bash
# On the GPU machine (device tool), from the repo root, with build/kgym and .carry/data carried:
#   bash bench/gpu_cuda_l1.sh   -> $OUT/{env.txt,gpu_test.log,cudal1_off.jsonl,cudal1_strict.jsonl,...}
# 1) the GPU integration test (examples + adversarial candidates on cuda);
# 2) the CUDA-L1 level-1 candidates of issue 2's task list, judged against their own ref_code,
#    first with --profile off (every candidate runs, to see run-time behaviour), then with the
#    default strict profile (the gym's verdict; builds are cached from the first pass).
set -uo pipefail
OUT=${OUT:-out/gpu}; mkdir -p "$OUT"
DATA=${KGYM_DATA:-.carry/data}
TASKS=${TASKS:-L1/1,L1/3,L1/9,L1/12,L1/19,L1/21,L1/23,L1/26,L1/33,L1/36,L1/40,L1/88,L1/95,L1/97}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"; nproc; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
if [ "${SKIP_GPU_TEST:-0}" != 1 ]; then
  /usr/bin/time -f "gpu integration test: %e s" bash tests/integration/test_gpu_eval.sh build/kgym . > "$OUT/gpu_test.log" 2>&1
  echo "gpu integration test exit $?"; tail -4 "$OUT/gpu_test.log"
fi
for profile in ${PROFILES:-off strict}; do
  /usr/bin/time -f "cuda-l1 ($profile): %e s" build/kgym eval --device cuda --suite "$DATA/kernelbench" \
    --candidates "$DATA/cuda-l1/h100_level1.jsonl" --tasks "$TASKS" --profile "$profile" \
    --jobs 14 ${EXTRA:-} --out "$OUT/cudal1_$profile.jsonl" 2>&1 | tee "$OUT/cudal1_$profile.log" | grep -v "^\s*$"
done
