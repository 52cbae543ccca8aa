"""A model's parameters as a short list, for the message of a candidate whose parameters differ
from the reference's. KernelBench's rule: the reference and ModelNew are constructed under the
same init seed, so a candidate that makes the same parameters in the same order has the same
values; one that changes a parameter's shape or skips a layer computes something else, and its
verdict says which parameter differs (src/verdict/parameters.cpp compares the two lists).
Only a message is made of it: the outcome is decided by the cases alone."""
import torch

MAX_PARAMETERS = 4096  # longer lists are cut (the message names the first difference only)


def summary(model) -> list:
    """[[name, shape, checksum], ...] in registration order (``named_parameters``): ``checksum``
    is the float64 sum of the values (equal for equal values, cheap to compare)."""
    out = []
    try:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if len(out) >= MAX_PARAMETERS:
                    break
                try:
                    checksum = float(p.detach().double().sum().item()) if p.is_floating_point() else 0.0
                except Exception:  # noqa: BLE001 - a parameter on a device or of a type sum does not take
                    checksum = 0.0
                out.append([str(name), [int(s) for s in p.shape], checksum])
    except Exception:  # noqa: BLE001 - a model whose named_parameters raises: nothing to compare
        return []
    return out
