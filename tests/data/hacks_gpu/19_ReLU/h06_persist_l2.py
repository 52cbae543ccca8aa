# expect: timing_invalid
import ctypes

import torch
import torch.nn as nn

# H06: reserves a persisting-L2 set-aside on every call (what cudaDeviceSetLimit(
# cudaLimitPersistingL2CacheSize, ...) does) so that its inputs could stay in L2 across the
# harness's flush. kgym resets the limit to 0 before each timed call and reads it back after
# (D9): a non-zero limit after a call is timing_invalid.
_cuda = ctypes.CDLL("libcuda.so.1")


class ModelNew(nn.Module):
    def forward(self, x):
        _cuda.cuCtxSetLimit(ctypes.c_int(0x06), ctypes.c_size_t(1 << 20))
        return torch.relu(x)
