"""The noise test of `gpuscope diff`: beyond noise only where Mann-Whitney holds after Holm,
no estimate from one run, and the verdict names why a few runs cannot reach the threshold."""

from __future__ import annotations

import numpy as np

from gpuscope.metrics.compare import noise


def test_clear_slowdown_with_six_runs_is_beyond_noise() -> None:
    base = [np.array([10.0, 10.1, 9.9, 10.2, 10.0, 9.8])]
    new = [base[0] * 1.3]
    p_raw = noise.p_values(base, new)
    p, words = noise.verdicts(np.array([0.3]), p_raw, np.array([6]), np.array([6]))
    assert p[0] < noise.ALPHA and words == [noise.SLOWER]


def test_three_runs_cannot_reach_alpha_and_say_so() -> None:
    base, new = [np.array([1.0, 1.1, 1.2])], [np.array([2.0, 2.1, 2.2])]
    p, words = noise.verdicts(np.array([0.8]), noise.p_values(base, new), np.array([3]), np.array([3]))
    assert abs(p[0] - 0.1) < 1e-12
    assert words[0].startswith(noise.WITHIN) and "3 and 3 values cannot reach p < 0.05" in words[0]


def test_holm_family_floor_is_said() -> None:
    base = [np.arange(5.0) + i for i in range(10)]
    new = [b + 100 for b in base]
    p, words = noise.verdicts(np.full(10, 0.5), noise.p_values(base, new), np.full(10, 5), np.full(10, 5))
    assert (p >= noise.ALPHA).all()
    assert all("Holm's correction keeps every p at 0.079 or more" in w for w in words)


def test_one_run_has_no_noise_estimate_new_and_vanished() -> None:
    empty = np.empty(0)
    base = [np.array([1.0]), np.array([1.0, 2.0]), empty, np.array([1.0, 2.0])]
    new = [np.array([5.0]), np.array([3.0]), np.array([1.0]), empty]
    _, words = noise.verdicts(np.array([4.0, 1.0, np.nan, np.nan]), noise.p_values(base, new), np.array([1, 2, 0, 2]), np.array([1, 1, 1, 0]))
    assert words == [noise.SINGLE, noise.ONE_SIDE, noise.NEW, noise.GONE]


def test_fail_threshold_needs_noise_and_percentage() -> None:
    assert noise.beyond(noise.SLOWER, 0.12, 10)
    assert not noise.beyond(noise.SLOWER, 0.08, 10)
    assert noise.beyond(noise.SLOWER, 0.01, None)
    assert not noise.beyond(noise.SINGLE, 5.0, 1)
