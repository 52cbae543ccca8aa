# expect: contract_violation|incorrect
# why contract_violation|incorrect: torch's generators are identity-checked (contract_violation);
#   were they not, the timed rechecks would fail (incorrect). Never passed.
import torch
import torch.nn as nn

# Patches torch's generators at import, so that the case inputs the candidate worker regenerates
# from the seed (and its timed inputs) are zeros: an output computed on them could never match the
# reference, which compares with its own inputs. torch.randn/rand are identity-checked (D13):
# contract_violation; were they not, the fingerprint mismatch would send the reference's bytes for
# the cases and the timed rechecks would fail (incorrect). Never passed.
_zeros = torch.zeros
torch.randn = lambda *size, **kw: _zeros(*size, **kw)
torch.rand = lambda *size, **kw: _zeros(*size, **kw)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
