"""Writes the small corpus of tests/integration/test_corpus_verify.sh: one row per way a pair is
kept or dropped by `kgym corpus verify`. Each row's `expect` field is the status the test wants.

usage: make_corpus.py SUITE_DIR OUT.jsonl   (SUITE_DIR holds level1/19_ReLU.py: the contaminated row)
"""
import json
import pathlib
import sys

AFFINE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale, shift, low, high):
        super().__init__()
        self.scale, self.shift = scale, shift
        self.low, self.high = low, high

    def forward(self, x):
        y = x * self.scale + self.shift
        return torch.clamp(y, min=self.low, max=self.high)


rows = 16
columns = 4096


def get_inputs():
    return [torch.randn(rows, columns)]


def get_init_inputs():
    return [2.0, 1.0, -3.0, 3.0]
'''

AFFINE_OK = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale, shift, low, high):
        super().__init__()
        self.scale, self.shift = scale, shift
        self.low, self.high = low, high

    def forward(self, x):
        return torch.addcmul(torch.full_like(x, self.shift), x, torch.full_like(x, self.scale)).clamp(self.low, self.high)
'''

AFFINE_OK2 = AFFINE_OK.replace("torch.addcmul(torch.full_like(x, self.shift), x, torch.full_like(x, self.scale))",
                               "x.mul(self.scale).add(self.shift)")
AFFINE_OK3 = AFFINE_OK.replace("torch.addcmul(torch.full_like(x, self.shift), x, torch.full_like(x, self.scale))",
                               "torch.add(x * self.scale, self.shift)")
AFFINE_WRONG = AFFINE_OK.replace("torch.full_like(x, self.shift), x", "torch.zeros_like(x), x")  # forgets the shift

TANH = AFFINE.replace("y = x * self.scale + self.shift", "y = torch.tanh(x) * self.scale + self.shift")
TANH_OK = AFFINE_OK.replace("torch.addcmul(torch.full_like(x, self.shift), x, torch.full_like(x, self.scale))",
                            "((1.0 - 2.0 / (torch.exp(2.0 * x) + 1.0)) * self.scale + self.shift)")


def main() -> int:
    suite, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    relu = (suite / "level1" / "19_ReLU.py").read_text()
    # A KernelBench problem with its names changed: still its code (token-set Jaccard high).
    renamed = relu.replace("batch_size", "n_rows").replace("dim", "n_cols")
    relu_ok = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n" \
              "    def forward(self, x):\n        return x.clamp_min(0.0)\n"
    rows = [
        {"reference": AFFINE, "solution": AFFINE_OK, "module_id": "affine", "family": "elementwise", "expect": "kept"},
        {"reference": AFFINE, "solution": AFFINE_OK2, "module_id": "affine", "family": "elementwise", "expect": "kept"},
        {"reference": AFFINE, "solution": AFFINE_OK3, "module_id": "affine", "family": "elementwise",
         "expect": "max_per_module"},
        {"reference": AFFINE, "solution": AFFINE_WRONG, "module_id": "affine_b", "family": "scale_shift",
         "expect": "incorrect"},
        {"reference": renamed, "solution": relu_ok, "module_id": "relu", "family": "activation",
         "expect": "contaminated"},
        {"reference": TANH, "solution": TANH_OK + "#" * 20000 + "\n", "module_id": "tanh_long", "family": "activation",
         "expect": "over_budget"},
        "{this line is not JSON",
        {"reference": TANH, "module_id": "tanh_nosolution", "expect": "malformed"},
        {"reference": TANH, "solution": TANH_OK, "module_id": "tanh", "family": "activation", "expect": "kept"},
        {"reference": TANH, "solution": TANH_OK.replace("2.0 / (", "2.0 / (0.0 + "), "module_id": "tanh2",
         "family": "activation", "expect": "kept"},
        {"reference": TANH, "solution": TANH_OK, "module_id": "tanh3", "family": "activation",
         "expect": "max_per_family"},
    ]
    with open(out, "w") as f:
        for r in rows:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
