# expect: contract_violation
import torch
import torch.nn as nn

# H40/H21: flips a global precision flag (TF32 matmul; on the GPU it would make fp32 GEMMs and
# convolutions in the process run at 10-bit mantissa). The flags are pinned and compared after
# import and after each call.
torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision("medium")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
