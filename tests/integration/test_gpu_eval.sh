#!/usr/bin/env bash
# GPU (label gpu): the examples and adversarial candidates on cuda; skipped (77) without a GPU.
set -euo pipefail
KGYM=$1; ROOT=$2
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)" || exit $?
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/examples/candidates" --profile off \
  --out "$OUT/examples.jsonl" --cases 3 -q
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/candidates" --profile off \
  --out "$OUT/adversarial.jsonl" --cases 3 --timeout-case 10 -q
# GPU-only candidates (Triton): a CUDA context corrupted by an illegal address, then an honest
# kernel that must still pass; under the strict profile (the honest Triton kernel is allowed).
"$KGYM" eval --device cuda --suite "$ROOT/examples/suite" --candidates "$ROOT/tests/data/candidates_gpu" \
  --out "$OUT/gpu_only.jsonl" --cases 3 --jobs 1 -q
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/gpu_only.jsonl" "$ROOT/tests/data/candidates_gpu"
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/examples.jsonl" "$ROOT/examples/candidates"
python3 "$ROOT/tests/integration/expect_outcomes.py" "$OUT/adversarial.jsonl" "$ROOT/tests/data/candidates"
