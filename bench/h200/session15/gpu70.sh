#!/usr/bin/env bash
# Session 15 GPU run 1 (diagnostic): where a full-size verdict's device-holding time goes.
# Three full-size honest rows (ReLU: memory-bound and large; GELU, LayerNorm: small kernels) judged
# as in bench/honest_gpu.sh while py-spy (carried, static) samples every kgym worker process
# (raw collapsed stacks, idle samples included). Results in $OUT/res.tgz.
set -u
mkdir -p build && cp .carry/bin/kgym build/kgym && chmod +x build/kgym
R=$OUT/r; mkdir -p $R/spy
SPY=.carry/bin/py-spy; chmod +x $SPY
pack() { (cd $OUT && tar czf res.tgz r); }
git log --oneline -1 > $R/commit.txt 2>/dev/null
# sampler: attach to every new python worker
( declare -A seen; while true; do
    for p in $(pgrep -f "kgym_worker" 2>/dev/null); do
      [ -n "${seen[$p]:-}" ] && continue; seen[$p]=1
      tr '\0' ' ' < /proc/$p/cmdline > $R/spy/$p.cmd 2>/dev/null; echo " ppid=$(awk '{print $4}' /proc/$p/stat 2>/dev/null)" >> $R/spy/$p.cmd
      $SPY record --pid $p --rate 250 --idle --nonblocking --format raw -o $R/spy/$p.txt > $R/spy/$p.log 2>&1 &
    done; sleep 0.2; done ) & SP=$!
t=$(date +%s)
OUT=$R/full SCALE=1 JOBS=1 EVAL_S=200 PLAIN_S=60 TASKS='19_ReLU,40_*,88_*' KGYM_DATA=.carry/data bash bench/honest_gpu.sh > $R/full_run.log 2>&1
echo "full exit=$? s=$(( $(date +%s) - t ))" | tee -a $R/times.txt
kill $SP; sleep 3; pkill -INT -f "py-spy record" ; sleep 2
grep -E "passed, |Geometric|Device-phase|exit=|FAIL" $R/full_run.log | cut -c1-300
ls -la $R/spy | head -30
pack
