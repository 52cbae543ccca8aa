# expect: passed
import torch
import torch.nn as nn

# H07 keyed on content: caches outputs by a fingerprint of the input values. With fresh input
# values for every timed call the cache never hits, so the candidate is timed doing the work:
# correct, and honestly timed (passed, no fake speedup).
_memo = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (tuple(x.shape), float(x.reshape(-1)[:64].sum()), float(x.reshape(-1)[-64:].sum()))
        if key not in _memo:
            _memo[key] = torch.relu(x)
        return _memo[key].clone()
