# expect: private_torch_internals forward_without_custom_call   (red team rt24: oneDNN's GEMM through torch.ops.mkldnn passed strict as custom code)
# Policy bypass (strict): the GEMM is oneDNN's, reached through torch.ops.mkldnn. The gate
# counts any torch.ops.<namespace> outside aten as "custom code", and the CPU ATen op trace
# ignores every op whose name is not aten::* ("other"), so the library does all the work.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        # linear(A, W) = A @ W^T with W = B^T (a view)
        return torch.ops.mkldnn._linear_pointwise(A, B.t(), None, "none", [], "")
