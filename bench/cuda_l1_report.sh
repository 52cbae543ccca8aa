#!/usr/bin/env bash
# Re-judges the 100 CUDA-L1 level-1 rows on one GPU as kgym run directories (issue 7).
# On the GPU machine (device tool), from a self-contained copy of the checkout with build/kgym:
#   KGYM_DATA=../data bash bench/cuda_l1_report.sh      -> $OUT/{env.txt,run.log,off/,strict/,compile/}
# Passes, each bounded by `timeout` so results come back within the device call:
#  1) off:     --profile off, every candidate runs, timed against eager PyTorch (the headline);
#  2) strict:  the gym's default policy profile, correctness only (--no-timing; builds are cached);
#  3) compile: --profile off with the torch.compile baseline too, as many rows as time allows
#              (torch.compile of 100 different references does not fit one short call).
# Then, offline: build/kgym report $OUT/off --claims <jsonl> ... (see bench/cuda_l1_report/README.md).
set -uo pipefail
OUT=${OUT:-out/cuda_l1}; mkdir -p "$OUT"
DATA=${KGYM_DATA:-.carry/data}
ROWS="$DATA/cuda-l1/h100_level1.jsonl"
T_OFF=${T_OFF:-190}; T_STRICT=${T_STRICT:-60}; T_TOTAL=${T_TOTAL:-335}
START=$(date +%s)
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
  echo "cpus $(nproc)"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
COMMON=(--device cuda --suite "$DATA/kernelbench" --candidates "$ROWS" --jobs 16 -q --max-calls 20)
phase() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 10 "$secs" build/kgym eval "${COMMON[@]}" --run-dir "$OUT/$name" "$@" >> "$OUT/run.log" 2>&1
  local rc=$?
  echo "phase $name: exit $rc, $(( $(date +%s) - t0 )) s, $(wc -l < "$OUT/$name/verdicts.jsonl" 2>/dev/null || echo 0) verdicts" | tee -a "$OUT/run.log"
}
phase off "$T_OFF" --profile off --no-compile-baseline
left=$(( T_TOTAL - ($(date +%s) - START) ))
# an interrupted off pass is finished first (resume skips what is done)
if [ "$(wc -l < "$OUT/off/verdicts.jsonl" 2>/dev/null || echo 0)" -lt 100 ] && [ "$left" -gt 30 ]; then
  phase off $(( left - 25 )) --profile off --no-compile-baseline --resume
fi
left=$(( T_TOTAL - ($(date +%s) - START) ))
[ "$left" -gt 15 ] && phase strict $(( left < T_STRICT ? left - 5 : T_STRICT )) --profile strict --no-timing --no-compile-baseline
left=$(( T_TOTAL - ($(date +%s) - START) ))
[ "$left" -gt 20 ] && phase compile $(( left - 5 )) --profile off --compile-baseline
# at most 8 files come back: keep one SQLite store (off), drop journals of killed passes
rm -f "$OUT"/*/results.sqlite-journal "$OUT/strict/results.sqlite" "$OUT/compile/results.sqlite"
echo "total $(( $(date +%s) - START )) s" | tee -a "$OUT/run.log"
