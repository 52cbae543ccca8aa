#!/usr/bin/env bash
# Session 22 GPU call 1 (issue 31 runs 2 and 1b): what the device has; the same-op control
# (each task's reference renamed ModelNew) on 20 level-1 tasks at full size and at x0.1; the
# honest Triton set at full size under strict.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R
pack() { (cd $OUT && tar czf res.tgz r); }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
  nproc
  for m in numpy pydantic requests transformers trl accelerate datasets peft redis prometheus_client einops; do
    python3 -c "import $m; print('$m', getattr($m, '__version__', '?'))" 2>/dev/null || echo "$m absent"; done
  which redis-server || echo "redis-server absent"; } > $R/env.txt 2>&1
cat $R/env.txt
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s22
TASKS=1,2,3,4,12,19,20,21,22,23,24,26,36,40,41,47,48,53,88,97
for sc in 1.0 0.1; do
  t0=$(date +%s)
  timeout 200 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench --device cuda \
    --tasks $TASKS --scale $sc --work /tmp/sameop_$sc --out $R/same_op_$sc.jsonl --json $R/same_op_$sc.json \
    --extra "--no-compile-baseline --jobs 8" > $R/same_op_$sc.txt 2>&1
  echo "same_op $sc exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
  tail -1 $R/same_op_$sc.txt
  pack
done
t0=$(date +%s)
timeout 170 build/kgym eval --device cuda --suite .carry/data/kernelbench/level1 --candidates tests/data/honest_gpu --profile strict \
  --out $R/honest_full.jsonl -q > $R/honest_full.log 2>&1
echo "honest_full exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/honest_full.jsonl tests/data/honest_gpu 2>&1 | tail -3
python3 -c "
import json
for l in open('$R/honest_full.jsonl'):
    v = json.loads(l); print(v['task_id'][:28].ljust(28), v['outcome'].ljust(16), v.get('speedup_eager'), v.get('speedup_eager_ci'), v.get('speedup_compile'))
" | tee $R/honest_full.txt
pack
