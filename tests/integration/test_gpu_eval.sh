#!/usr/bin/env bash
# GPU (label gpu): the examples, the adversarial candidates, the GPU-only ones and the link check on cuda;
# skipped (77) without a GPU. KGYM_GPU_TEST_OUT=<dir> keeps the verdict files there.
set -uo pipefail
KGYM=$1; ROOT=$2
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)"
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "skipped: torch sees no CUDA device here (this test runs on a GPU machine)"  # in LastTest.log
  exit 77
fi
[ "$rc" -eq 0 ] || exit "$rc"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
status=0
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/examples/candidates" --profile off \
  --out "$OUT/examples.jsonl" --cases 3 -q || status=1
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/candidates" --profile off \
  --out "$OUT/adversarial.jsonl" --cases 3 --timeout-case 10 -q || status=1
# GPU-only candidates (Triton): a CUDA context corrupted by an illegal address, then an honest
# kernel that must still pass; under the strict profile (the honest Triton kernel is allowed).
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/candidates_gpu" \
  --out "$OUT/gpu_only.jsonl" --cases 3 --jobs 1 -q || status=1
# Gate 2's link check on CUDA builds, under strict: an extension with its own driver context is
# rejected by its imports; the honest counterpart (c10's guard, the current stream) passes, so the
# link check (imports and linked libraries) rejects no honest CUDA build.
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/link_gpu" --profile strict \
  --out "$OUT/link_gpu.jsonl" --cases 3 --timeout-case 20 -q || status=1
# GPU-only reward hacks (side stream, thread launching work after return, persisting L2, pointer
# cache, stale allocator memory, helper processes with CUDA contexts), run with the policy gate off
# so that the run-time defences act; one at a time: the zygote kills a candidate's escaped
# processes whenever another candidate's worker is reaped, which ended rt5's hogs before its
# baselines in a --jobs 8 run.
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/hacks_gpu" --profile off \
  --out "$OUT/gpu_hacks.jsonl" --cases 3 --timeout-case 10 --jobs 1 -q || status=1
# The honest Triton set (issue 4: no false rejections), when the KernelBench level-1 data is found
# (KGYM_KERNELBENCH_L1, .carry/data or ../shared/data next to the checkout); sizes x0.1 and no
# compile baseline to keep the test short (bench/honest_gpu.sh runs it at full size).
# KGYM_GPU_TEST_HONEST=0 skips it.
HONEST_L1=""
for d in "${KGYM_KERNELBENCH_L1:-}" "$ROOT/.carry/data/kernelbench/level1" "$ROOT/../shared/data/kernelbench/level1"; do
  if [ -n "$d" ] && [ -f "$d/19_ReLU.py" ]; then HONEST_L1=$d; break; fi
done
if [ "${KGYM_GPU_TEST_HONEST:-1}" != 0 ] && [ -n "$HONEST_L1" ]; then
  "$KGYM" eval --device cuda --suite "$HONEST_L1" --candidates "$ROOT/tests/data/honest_gpu" --profile strict \
    --scale 0.1 --no-compile-baseline --cases 3 --out "$OUT/honest.jsonl" -q || status=1
  python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/honest.jsonl" "$ROOT/tests/data/honest_gpu" || status=1
else
  echo "honest Triton set skipped (no KernelBench level-1 data found, or KGYM_GPU_TEST_HONEST=0)"
fi
if [ -n "${KGYM_GPU_TEST_OUT:-}" ]; then mkdir -p "$KGYM_GPU_TEST_OUT" && cp "$OUT"/*.jsonl "$KGYM_GPU_TEST_OUT/"; fi
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/examples.jsonl" "$ROOT/examples/candidates" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/adversarial.jsonl" "$ROOT/tests/data/candidates" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/gpu_only.jsonl" "$ROOT/tests/data/candidates_gpu" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/gpu_hacks.jsonl" "$ROOT/tests/data/hacks_gpu" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/link_gpu.jsonl" "$ROOT/tests/data/link_gpu" || status=1
exit $status
