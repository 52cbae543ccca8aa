#!/usr/bin/env bash
# `kgym check`: exit 0 for an honest candidate, 1 for a rejected one (with rule id, line and
# column printed), 2 for bad input; JSONL rows of both kgym and CUDA-L1 shape.
set -u
kgym=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat > "$tmp/honest.py" <<'PY'
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
ext = load_inline(name="relu_ext", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=cuda_source, functions=["relu_cuda"])

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_cuda(x)
PY
sed 's/return ext.relu_cuda(x)/return torch.relu(x)/' "$tmp/honest.py" > "$tmp/fallback.py"

"$kgym" check "$tmp/honest.py" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/out"; fail "honest candidate: exit $rc, want 0"; }

"$kgym" check "$tmp/fallback.py" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/out"; fail "fallback candidate: exit $rc, want 1"; }
grep -q "fallback.py:21:16: reject \[torch_compute_in_forward\]" "$tmp/out" || { cat "$tmp/out"; fail "no finding with rule id, line and column"; }

"$kgym" check "$tmp/fallback.py" --profile off > /dev/null 2>&1 || fail "--profile off must accept"

# A syntax error is reported with its place under every profile (eval gives build_failed).
mkdir -p "$tmp/syn"
printf 'import torch\nclass ModelNew(:\n    pass\n' > "$tmp/syn/bad.py"
"$kgym" check "$tmp/syn/bad.py" --profile off > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/out"; fail "syntax error under --profile off: exit $rc, want 1"; }
grep -q "DOES NOT PARSE" "$tmp/out" && grep -q "bad.py:2:16:" "$tmp/out" || { cat "$tmp/out"; fail "no parse error with line and column under --profile off"; }
# The place is Python's (line 9, column 33 here), not where tree-sitter's recovery starts (9:1).
printf 'import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n\n\ndef helper(a, b):  return (a + b]\n' > "$tmp/syn/mid.py"
"$kgym" check "$tmp/syn/mid.py" --profile off > "$tmp/out" 2>&1
grep -q "mid.py:9:33: " "$tmp/out" || { cat "$tmp/out"; fail "a syntax error's place is not Python's"; }
"$kgym" check "$tmp/syn/mid.py" --profile off --format jsonl > "$tmp/out" 2>&1
grep -q '"column":33,"line":9' "$tmp/out" || { cat "$tmp/out"; fail "jsonl: a syntax error's place is not Python's"; }

"$kgym" check "$tmp" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "directory with a rejected candidate: exit $rc, want 1"

python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
code = open(f"{d}/honest.py").read()
with open(f"{d}/rows.jsonl", "w") as f:
    f.write(json.dumps({"task_id": "L1/19_ReLU", "code": code}) + "\n")
    f.write(json.dumps({"level_id": 1, "task_id": 19, "custom_code": "None", "ref_code": "x"}) + "\n")
    f.write(json.dumps({"level_id": 1, "task_id": 20, "custom_code": None, "ref_code": "x"}) + "\n")
PY
"$kgym" check "$tmp/rows.jsonl" --format jsonl > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/out"; fail "jsonl rows: exit $rc, want 0"; }
[ "$(grep -c '"candidate":false' "$tmp/out")" -eq 2 ] || { cat "$tmp/out"; fail "None/null rows must be 'no candidate'"; }

printf 'import torch\nclass Foo(torch.nn.Module):\n    pass\n' > "$tmp/syn/no_model_new.py"
"$kgym" check "$tmp/syn/no_model_new.py" --profile off > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "model_new_missing" "$tmp/out" || { cat "$tmp/out"; fail "no ModelNew under --profile off: exit $rc, want 1 with model_new_missing (eval rejects it)"; }
# (a finding about the whole file has no line:column, not 0:0)
grep -q "  no_model_new.py: reject \[model_new_missing\]" "$tmp/out" || { cat "$tmp/out"; fail "model_new_missing is placed at 0:0"; }
"$kgym" check "$tmp/syn/bad.py" > "$tmp/out" 2>&1
grep -q "Python: line 2, column" "$tmp/out" || { cat "$tmp/out"; fail "a syntax error without Python's own words (eval gives them)"; }
: > "$tmp/syn/empty.py"
"$kgym" check "$tmp/syn/empty.py" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/out"; fail "an empty .py file: exit $rc, want 1 (no candidate is not a pass)"; }
grep -q "the file is empty" "$tmp/out" || { cat "$tmp/out"; fail "an empty .py file: no explanation"; }

"$kgym" check "$tmp/missing.py" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "missing file: exit $rc, want 2"
"$kgym" check "$tmp/honest.py" --profile lenient > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown profile: exit $rc, want 2"
echo 'not json' > "$tmp/bad.jsonl"
"$kgym" check "$tmp/bad.jsonl" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "malformed jsonl: exit $rc, want 2"
echo "ok"
