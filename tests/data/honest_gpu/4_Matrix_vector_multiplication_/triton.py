# expect: passed
"""Honest Triton matrix-vector product C = A @ B, A (M, K), B (K, N) with N = 1 in the task
(issue 4 honest-kernel set). One program per output element: a BLOCK_K-wide fp32 accumulator
walks the row of A (contiguous, coalesced) and the column of B, then a tree sum."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matvec_kernel(a_ptr, b_ptr, c_ptr, K, N, sam, sak, sbk, sbn, scm, scn, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    m = pid // N
    n = pid % N
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = (k0 + tl.arange(0, BLOCK_K)).to(tl.int64)
        mask = k < K
        a = tl.load(a_ptr + m * sam + k * sak, mask=mask, other=0.0)
        b = tl.load(b_ptr + k * sbk + n * sbn, mask=mask, other=0.0)
        acc += a * b
    tl.store(c_ptr + m * scm + n * scn, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        matvec_kernel[(M * N,)](A, B, C, K, N, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                C.stride(0), C.stride(1), BLOCK_K=4096, num_warps=8)
        return C
