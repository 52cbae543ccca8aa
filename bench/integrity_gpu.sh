#!/usr/bin/env bash
# Issue 4 on the GPU machine (device tool), from a self-contained copy (.carry/integrity) with
# build/kgym, and the pre-integrity engine in old/ (build/kgym + python/) for the overhead:
#   KGYM_DATA=../data bash bench/integrity_gpu.sh  -> $OUT/{env.txt,gpu_test/*.jsonl,cudal1_*.jsonl,times.txt}
# 1) the GPU integration test (examples, adversarial, GPU-only, GPU hack candidates);
# 2) the CUDA-L1 level-1 candidates of bench/gpu_cuda_l1.sh with --profile off: new engine (cold
#    build cache), old engine (warm), new engine again (warm): outcomes and wall time per verdict.
set -uo pipefail
OUT=${OUT:-out/integrity}; mkdir -p "$OUT"
DATA=${KGYM_DATA:-.carry/data}
TASKS=${TASKS:-L1/1,L1/3,L1/9,L1/12,L1/19,L1/21,L1/23,L1/26,L1/33,L1/36,L1/40,L1/88,L1/95,L1/97}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
export KGYM_CACHE_DIR=${KGYM_CACHE_DIR:-/tmp/kgym-cache-integrity}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"; nproc; } > "$OUT/env.txt" 2>&1
stamp() { date +%s.%N; }
t0=$(stamp)
KGYM_GPU_TEST_HONEST=0 KGYM_GPU_TEST_OUT="$OUT/gpu_test" timeout ${GPU_TEST_S:-110} bash tests/integration/test_gpu_eval.sh build/kgym . > "$OUT/gpu_test.log" 2>&1
echo "gpu_test exit=$? s=$(echo "$(stamp) - $t0" | bc)" | tee -a "$OUT/times.txt"
tail -5 "$OUT/gpu_test.log"
run_l1() {  # name binary
  local t=$(stamp)
  timeout ${L1_S:-80} "$2" eval --device cuda --suite "$DATA/kernelbench" --candidates "$DATA/cuda-l1/h100_level1.jsonl" \
    --tasks "$TASKS" --profile off --jobs 14 --out "$OUT/cudal1_$1.jsonl" -q > "$OUT/cudal1_$1.log" 2>&1
  echo "cudal1_$1 exit=$? s=$(echo "$(stamp) - $t" | bc)" | tee -a "$OUT/times.txt"
}
run_l1 new_cold build/kgym
[ -x old/build/kgym ] && L1_S=50 run_l1 old_warm old/build/kgym
L1_S=60 run_l1 new_warm build/kgym
grep -h "" "$OUT/times.txt"
