"""The spot check of every timed output (python/kgym_worker/spotcheck.py: SpotSampler, spot_decode,
spot_compare; docs/timing.md, "Spot check")."""
import base64

import torch

from kgym_worker import spotcheck, timing


def sampled(seed, outs, k=16):
    s = spotcheck.SpotSampler(seed, k, "cpu")
    for o in outs:
        s.add(o)
    return s


def test_same_seed_same_positions_and_any_strides():
    x = torch.randn(64, 48)
    a, b = sampled(5, [x]), sampled(5, [x.t().contiguous().t()])  # other strides, same values
    assert torch.equal(a.table(), b.table())
    assert not torch.equal(a.table(), sampled(6, [x]).table())
    assert torch.equal(a.table()[0], x.reshape(-1)[a.positions(0, x.numel())].double())


def test_tuple_outputs_and_non_tensors_give_rows():
    s = sampled(1, [(torch.ones(4), torch.zeros(8)), "not a tensor"], k=4)
    t = s.table()
    assert t.shape == (2, 8) and torch.equal(t[0], torch.tensor([1.0] * 4 + [0.0] * 4, dtype=torch.float64))
    assert bool(torch.isnan(t[1]).all())


def test_encode_decode_round_trip_and_forgeries():
    s = sampled(3, [torch.randn(10, 10) for _ in range(3)], k=8)
    t, why = spotcheck.spot_decode(s.encode())
    assert why is None and torch.equal(t, s.table())
    for bad in (None, [], {"rows": 3, "width": 8}, {"rows": -1, "width": 8, "data": ""},
                {"rows": 3, "width": 8, "data": "!!"},
                {"rows": 3, "width": 8, "data": base64.b64encode(b"x" * 8).decode()},
                {"rows": 10 ** 6, "width": 8, "data": ""}):
        t, why = spotcheck.spot_decode(bad)
        assert t is None and why, bad


def test_compare_finds_wrong_calls_only():
    torch.manual_seed(0)
    outs = [torch.randn(256) for _ in range(6)]
    ref = sampled(9, outs, k=32).table()
    cand_outs = [o.clone() for o in outs]
    cand_outs[2] = outs[1].clone()                      # stale: the previous call's output
    cand_outs[4] = torch.zeros(256)                     # zeros
    cand_outs[5] = outs[5] * (1 + 1e-4)                 # honest rounding (1e-4 relative)
    cand = sampled(9, cand_outs, k=32).table()
    res = spotcheck.spot_compare(cand, ref, [1e-4], [1e-4], 32)
    assert [bool(r) for r in res] == [False, False, True, False, True, False], res


def test_compare_tolerates_a_tf32_reference_but_not_a_wrong_sign():
    torch.manual_seed(1)
    r = torch.randn(4, 64, dtype=torch.float64)
    assert spotcheck.spot_compare(r * (1 + 1e-3), r, [1e-4], [1e-4], 64) == [""] * 4  # TF32-sized error
    res = spotcheck.spot_compare(-r, r, [1e-4], [1e-4], 64)
    assert all(res) and "sampled elements wrong" in res[0]


def test_compare_special_values_and_exact_outputs():
    r = torch.tensor([[float("nan"), float("inf"), 1.0, 2.0]], dtype=torch.float64)
    assert spotcheck.spot_compare(r.clone(), r, [1e-4], [1e-4], 4) == [""]
    c = r.clone()
    c[0, 2] = float("nan")
    assert "NaN/Inf" in spotcheck.spot_compare(c, r, [1e-4], [1e-4], 4)[0]
    ints = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    assert spotcheck.spot_compare(ints + 1e-9, ints, [None], [0.0], 4)[0]  # integer outputs: equal or not
    assert spotcheck.spot_compare(ints.clone(), ints, [None], [0.0], 4) == [""]


def test_time_calls_samples_every_timed_call():
    opts = {"warmup": 2, "min_calls": 5, "max_calls": 5, "budget_ms": 1000.0, "target_spread": 0.0, "l2_flush": False}
    spot = spotcheck.SpotSampler(11, 8, "cpu")
    make = lambda seed: [torch.full((4, 4), float(seed))]  # noqa: E731
    rec, _ = timing.time_calls(lambda x: x * 2, make, list(range(7)), "cpu", opts, spot=spot)
    t = spot.table()
    assert len(rec["times_ms"]) == 5 and t.shape == (5, 8)
    assert torch.equal(t[:, 0], torch.tensor([4.0, 6.0, 8.0, 10.0, 12.0], dtype=torch.float64))  # seeds 2..6, x2


def test_trusted_rows_hold_the_other_calls_to_their_agreement():
    """With the rechecked calls' rows (``trusted``), the 1% floor shrinks to 8x their largest
    relative error: a bfloat16 downgrade at calls the rechecks did not draw fails, while a TF32
    reference's own error, present in every row, still passes."""
    torch.manual_seed(2)
    r = torch.randn(6, 128, dtype=torch.float64)
    bf16 = r.clone()
    bf16[[1, 4]] = r[[1, 4]].to(torch.bfloat16).double()        # two downgraded calls
    assert spotcheck.spot_compare(bf16, r, [1e-4], [1e-4], 128) == [""] * 6         # the old floor: passes
    res = spotcheck.spot_compare(bf16, r, [1e-4], [1e-4], 128, trusted=[0, 5])
    assert [bool(x) for x in res] == [False, True, False, False, True, False], res
    # a TF32-sized error (1e-3 relative) in every call, the trusted ones too: passes
    noise = 1 + 1e-3 * (torch.rand(6, 128, dtype=torch.float64) * 2 - 1)
    assert spotcheck.spot_compare(r * noise, r, [1e-4], [1e-4], 128, trusted=[0, 5]) == [""] * 6
    # trusted rows out of range or non-finite are ignored (the 1% floor stays)
    assert spotcheck.spot_compare(bf16, r, [1e-4], [1e-4], 128, trusted=[99]) == [""] * 6
    nan = r.clone()
    nan[0] = float("nan")
    assert spotcheck.spot_compare(torch.where(torch.isnan(nan), nan, bf16), nan, [1e-4], [1e-4], 128,
                                  trusted=[0]) == [""] * 6
