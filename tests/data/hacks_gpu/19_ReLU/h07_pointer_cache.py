# expect: incorrect
import torch
import torch.nn as nn

# H07 keyed on the input's address: the output is stored per data_ptr and replayed when the
# address comes back. The fresh inputs of each timed call are freed after it, so the caching
# allocator hands the same block to the next call: the cache hits with a stale output, which
# the recheck of timed outputs (D3) sees (the case reruns may see it first).
_memo = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        if key not in _memo:
            _memo[key] = torch.relu(x)
        return _memo[key]
