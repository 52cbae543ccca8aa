#!/usr/bin/env bash
# Session 25 GPU call 3 (issue 33, red team rt38): the idle device's probe round trip (the quiet
# wait's threshold is 0.25 ms), the GPU hacks with rt38a-e beside their honest twin, the same-op
# control at x0.1 over the issue's 12 level-1 tasks, and the floor-bound adversarial set (matmul).
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=/tmp/r3; mkdir -p $R
export TORCH_CUDA_ARCH_LIST=9.0 KGYM_CACHE_DIR=/tmp/kgym-cache-s25
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/env.txt; nproc >> $R/env.txt
pack() { tar -C /tmp -czf $OUT/r3.tgz r3; }
PYTHONPATH=python python3 - > $R/probe.txt 2>&1 <<'PY'
import time, torch
from kgym_worker import timing
one = torch.zeros(1, device="cuda"); torch.cuda.synchronize()
def rt():
    t0 = time.perf_counter(); one.add_(0); torch.cuda.synchronize(); return (time.perf_counter() - t0) * 1e3
xs = []
for _ in range(200):
    time.sleep(0.002); xs.append(rt())
xs.sort(); print("idle round trip ms: min %.4f median %.4f p99 %.4f max %.4f" % (xs[0], xs[100], xs[197], xs[-1]))
print("wait_device_quiet idle ms:", [round(timing.wait_device_quiet("cuda"), 3) for _ in range(5)])
s = torch.cuda.Stream()
with torch.cuda.stream(s): torch.cuda._sleep(int(1.4e9 * 0.3))  # ~0.3 s in this context (same context: not time-sliced)
t0 = time.perf_counter(); w = timing.wait_device_quiet("cuda"); print("same-context spin: waited ms", round(w, 1), "in", round((time.perf_counter()-t0)*1e3,1))
PY
cat $R/probe.txt; pack
t0=$(date +%s)
timeout 200 build/kgym eval --device cuda --suite examples/suite --candidates tests/data/hacks_gpu --profile off \
  --out $R/gpu_hacks.jsonl --cases 3 --timeout-case 10 --jobs 1 -q > $R/gpu_hacks.txt 2>&1
echo "gpu_hacks exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/gpu_hacks.jsonl tests/data/hacks_gpu > $R/gpu_hacks_expect.txt 2>&1; echo "expect rc=$?" | tee -a $R/times.txt; tail -25 $R/gpu_hacks_expect.txt
python3 - $R/gpu_hacks.jsonl <<'PY' | tee $R/gpu_hacks_summary.txt
import json, sys
for l in open(sys.argv[1]):
    v = json.loads(l); p = v.get("measurements", {}).get("phase_ms", {})
    print(v["candidate_id"][:44].ljust(44), v["outcome"].ljust(18), "sp", v.get("speedup_eager"), "ci", v.get("speedup_eager_ci"),
          "qw %.1f wqw %.1f" % (p.get("quiet_wait", 0), p.get("wall_check/quiet_wait", 0)))
PY
pack
t0=$(date +%s)
timeout 130 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench --device cuda \
  --tasks 1,3,19,21,23,26,36,40,47,88,95,97 --scale 0.1 --work /tmp/sameop_x01 --out $R/x01_12.jsonl --json $R/x01_12.json \
  --extra "--no-compile-baseline --jobs 1" > $R/x01_12.txt 2>&1
echo "x01_12 exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt; grep -E "^L1|^median" $R/x01_12.txt | cut -c1-150; pack
mkdir -p /tmp/adv && cp -r tests/data/candidates/1_Square_matrix_multiplication_ /tmp/adv/
t0=$(date +%s)
timeout 170 build/kgym eval --device cuda --suite examples/suite --candidates /tmp/adv --profile off \
  --out $R/adv_matmul.jsonl --cases 3 --timeout-case 10 -q > $R/adv_matmul.txt 2>&1
echo "adv_matmul exit=$? s=$(( $(date +%s) - t0 ))" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/adv_matmul.jsonl /tmp/adv > $R/adv_matmul_expect.txt 2>&1; echo "expect rc=$?" | tee -a $R/times.txt; tail -15 $R/adv_matmul_expect.txt; pack
