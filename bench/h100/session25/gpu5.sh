#!/usr/bin/env bash
# Session 25 GPU call 5: a smoke test of the typed worker protocol on the GPU (its GPU-only requests:
# own calibration, the baselines' wall requests, the trace, release): the examples, the honest
# twin and rt38a among the GPU hacks, and the same-op control at x0.1 on 3 tasks.
set -u
mkdir -p build && gunzip -c .carry/bin/kgym.gz > build/kgym && chmod +x build/kgym
R=/tmp/r5; mkdir -p $R; export KGYM_CACHE_DIR=/tmp/kgym-cache-s25
pack() { tar -C /tmp -czf $OUT/r5.tgz r5; }
timeout 80 build/kgym eval --device cuda --suite examples/suite --candidates examples/candidates --profile off \
  --out $R/examples.jsonl --cases 3 -q > $R/examples.txt 2>&1; echo "examples exit=$?" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/examples.jsonl examples/candidates 2>&1 | tail -3 | tee -a $R/times.txt; pack
mkdir -p /tmp/h/19_ReLU && cp tests/data/hacks_gpu/19_ReLU/{honest_twin,rt38a_wall_spin_lying_events}.py /tmp/h/19_ReLU/
timeout 60 build/kgym eval --device cuda --suite examples/suite --candidates /tmp/h --profile off --jobs 1 \
  --out $R/hacks.jsonl --cases 3 --timeout-case 10 -q > $R/hacks.txt 2>&1; echo "hacks exit=$?" | tee -a $R/times.txt
python3 tests/integration/expect_outcomes.py $R/hacks.jsonl /tmp/h 2>&1 | tail -3 | tee -a $R/times.txt; pack
timeout 60 python3 bench/same_op_control.py --kgym build/kgym --suite .carry/data/kernelbench --device cuda --tasks 1,19,36 \
  --scale 0.1 --work /tmp/so --out $R/so.jsonl --json $R/so.json --extra "--no-compile-baseline --jobs 1" > $R/so.txt 2>&1
echo "same_op exit=$?" | tee -a $R/times.txt; grep -E "^L1|^median" $R/so.txt | cut -c1-140; pack
