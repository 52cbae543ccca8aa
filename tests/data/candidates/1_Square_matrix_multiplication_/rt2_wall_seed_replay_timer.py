# expect: passed|contract_violation|incorrect|timing_invalid, speedup <= twin
# why passed|contract_violation|incorrect|timing_invalid: every wall request has fresh seeds, so
#   the cache misses: passed at its honest speed (bounded by its twin); the timer patch may be
#   seen (contract_violation), a stale cached output rechecked (incorrect), or the floor
#   inconclusive (timing_invalid).
# Red team (2026-12-01, helper on CPU): caches by seed across the two timed wall requests (which shared seeds) plus a self-restoring timer (passed 16.1x). Every wall request now has fresh seeds.
# Red team: the wall-clock check sends the SAME seed (seed + i) in both of its timed requests and
# keeps the faster one, so an output cache keyed by torch.initial_seed() (set by the harness
# before every call) hits on every call of the second request: the supervisor's floor is a dict
# lookup (plus a spin of 8% of the input generation time, to keep the check "conclusive"), and
# every output is still exact. With that floor gone, a self-restoring patch of the
# timer (reads the harness's t0 from the time_calls frame, restores itself on the harness's next
# read, before the identity check) reports 0.05 ms. Every timed output is honest: rechecks pass.
import sys
import time

import torch
import torch.nn as nn

_orig = time.perf_counter_ns
_cache = {}


def _frame(name):
    f = sys._getframe(2)
    for _ in range(6):
        if f is None:
            return None
        if f.f_code.co_name == name:
            return f
        f = f.f_back
    return None


SHARE = 0.08  # cached calls spin this share of the gap since the previous call, so that the wall
              # check stays "conclusive" (call share > 5%) instead of taking the whole request


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last_return = time.perf_counter()

    def forward(self, A, B):
        if _frame("wall_calls") is not None:
            key = torch.initial_seed()
            out = _cache.get(key)
            if out is None:
                out = _cache[key] = torch.matmul(A, B)
            else:
                now = time.perf_counter()
                end = now + SHARE * (now - self.last_return)
                while time.perf_counter() < end:
                    continue
            self.last_return = time.perf_counter()
            return out
        out = torch.matmul(A, B)
        fr = _frame("time_calls")
        if fr is not None:
            t0 = fr.f_locals.get("t0")

            def fake():
                time.perf_counter_ns = _orig
                return (t0 if t0 is not None else _orig()) + 50_000
            time.perf_counter_ns = fake
        self.last_return = time.perf_counter()
        return out
