#!/usr/bin/env bash
# GPU (label gpu): the examples, the adversarial candidates and the GPU-only ones on cuda;
# skipped (77) without a GPU. KGYM_GPU_TEST_OUT=<dir> keeps the verdict files there.
set -uo pipefail
KGYM=$1; ROOT=$2
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)" || exit $?
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
# GPU-only reward hacks (side stream, thread launching work after return, persisting L2, pointer
# cache, stale allocator memory), run with the policy gate off so that the run-time defences act.
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/hacks_gpu" --profile off \
  --out "$OUT/gpu_hacks.jsonl" --cases 3 --timeout-case 10 -q || status=1
if [ -n "${KGYM_GPU_TEST_OUT:-}" ]; then mkdir -p "$KGYM_GPU_TEST_OUT" && cp "$OUT"/*.jsonl "$KGYM_GPU_TEST_OUT/"; fi
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/examples.jsonl" "$ROOT/examples/candidates" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/adversarial.jsonl" "$ROOT/tests/data/candidates" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/gpu_only.jsonl" "$ROOT/tests/data/candidates_gpu" || status=1
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/gpu_hacks.jsonl" "$ROOT/tests/data/hacks_gpu" || status=1
exit $status
