"""0-dim tensors (a loss's scalar output) survive the worker's tensor encoding."""
import torch

from kgym_worker import tensors


def test_zero_dim_tensor_round_trips():
    for value in (torch.tensor(1.5), torch.tensor(3, dtype=torch.int64), torch.tensor(0.25, dtype=torch.float16)):
        blobs = []
        meta = tensors.encode(value, blobs)
        assert meta["shape"] == []
        back = tensors.decode(meta, blobs, "cpu")
        assert back.shape == torch.Size([]) and back.dtype == value.dtype
        assert torch.equal(back, value)
