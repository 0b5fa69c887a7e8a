"""``spinup_tf.tools.stats`` against hand-worked cases."""
import itertools

import numpy as np
import pytest

from spinup_tf.tools import stats


def test_bootstrap_interval_of_a_mean_matches_the_enumerated_bootstrap_distribution():
    # Runs 0, 0, 0, 1. A resample's mean is B/4 with B ~ Binomial(4, 1/4): P(B <= 1) = 0.738,
    # P(B <= 2) = 0.949, P(B <= 3) = 0.996. So the 2.5 % quantile is 0 and the 97.5 % one
    # is 3/4: the percentile interval is [0, 0.75]. Checked here by enumerating all 4^4
    # resamples too.
    runs = [0.0, 0.0, 0.0, 1.0]
    means = sorted(np.mean(r) for r in itertools.product(runs, repeat=4))
    cdf = np.arange(1, len(means) + 1) / len(means)
    exact_low = means[int(np.argmax(cdf >= 0.025))]
    exact_high = means[int(np.argmax(cdf >= 0.975))]
    assert (exact_low, exact_high) == (0.0, 0.75)
    est = stats.aggregate(runs, 'mean')
    assert est == (0.25, 0.0, 0.75)
    assert str(est) == '0.25 [0.00, 0.75]'


def test_bootstrap_interval_of_a_large_sample_is_the_normal_one():
    # For n = 400 draws the bootstrap distribution of the mean is close to normal with
    # standard error s / sqrt(n) (s with ddof=0, the bootstrap's plug-in), so the interval is
    # about mean +- 1.96 s / sqrt(n).
    x = np.random.default_rng(3).normal(5.0, 2.0, size=400)
    est = stats.aggregate(x, 'mean')
    half = 1.96 * x.std() / np.sqrt(x.size)
    assert est.value == pytest.approx(x.mean())
    assert est.low == pytest.approx(x.mean() - half, abs=0.05 * half)
    assert est.high == pytest.approx(x.mean() + half, abs=0.05 * half)


def test_stratified_bootstrap_keeps_each_task_and_a_constant_task_adds_no_width():
    a = [1.0, 2.0, 3.0]
    alone = stats.aggregate([a], 'mean')
    # A second task whose runs all score 10 shifts the pooled mean by a fixed amount and
    # halves the spread: every resample keeps 3 runs of each task.
    both = stats.aggregate([a, [10.0, 10.0, 10.0]], 'mean')
    assert both.value == pytest.approx((alone.value + 10) / 2)
    assert both.low == pytest.approx((alone.low + 10) / 2)
    assert both.high == pytest.approx((alone.high + 10) / 2)
    # A task with a single run is held as it is.
    one = stats.aggregate([a, [7.0]], 'mean')
    assert one.value == pytest.approx(13 / 4)
    assert (one.low, one.high) == pytest.approx(((3 * alone.low + 7) / 4,
                                                 (3 * alone.high + 7) / 4))


def test_iqm_cuts_a_quarter_from_each_end():
    # 8 runs: floor(8 / 4) = 2 cut from each end, the IQM is the mean of the middle four.
    runs = [-100.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1000.0]
    assert stats.aggregate(runs, 'iqm').value == pytest.approx(2.5)
    assert stats.aggregate(runs, 'mean').value == pytest.approx(915 / 8)
    # With 3 runs nothing is cut.
    assert stats.iqm(np.array([1.0, 2.0, 9.0])) == pytest.approx(4.0)


def test_probability_of_improvement_on_known_samples():
    # Pairs (x, y): (1, 1.5) 0, (1, 2) 0, (2, 1.5) 1, (2, 2) one half: 1.5 / 4.
    assert stats.probability_of_improvement([1.0, 2.0], [1.5, 2.0]).value == 0.375
    assert stats.probability_of_improvement([1.5, 2.0], [1.0, 2.0]).value == 0.625
    # Every run of X above every run of Y: 1, and no resample changes that.
    assert tuple(stats.probability_of_improvement([5.0, 6.0, 7.0], [1.0, 2.0, 3.0])) == \
        (1.0, 1.0, 1.0)
    # Averaged over tasks: task 1 gives 1, task 2 gives 0.
    est = stats.probability_of_improvement([[1, 2, 3], [0, 0]], [[0, 0, 0], [4, 5]])
    assert tuple(est) == (0.5, 0.5, 0.5)
    # Two samples from one distribution: 1/2 lies inside the interval, which is wide.
    rng = np.random.default_rng(0)
    est = stats.probability_of_improvement(rng.normal(size=5), rng.normal(size=5))
    assert est.low < 0.5 < est.high and est.high - est.low > 0.3
    with pytest.raises(ValueError):
        stats.probability_of_improvement([[1.0], [2.0]], [[1.0]])


def test_probability_of_improvement_interval_matches_an_explicit_resampling():
    # The same interval by a plain loop over resamples (X and Y resampled independently).
    x, y = np.array([3.0, 1.0, 4.0]), np.array([1.0, 5.0, 2.0])
    rng = np.random.default_rng(1)
    draws = []
    for _ in range(20000):
        xr, yr = rng.choice(x, 3), rng.choice(y, 3)
        draws.append(np.mean([(a > b) + 0.5 * (a == b) for a in xr for b in yr]))
    est = stats.probability_of_improvement(x, y)
    # 3 beats 1 and 2; 1 ties 1; 4 beats 1 and 2: (2 + 0.5 + 2) / 9.
    assert est.value == pytest.approx(4.5 / 9)
    assert est.low == pytest.approx(np.percentile(draws, 2.5), abs=0.03)
    assert est.high == pytest.approx(np.percentile(draws, 97.5), abs=0.03)


def test_performance_profile():
    tasks = [[0.5, 1.0, 1.5], [0.2, 2.0]]
    fraction, low, high = stats.performance_profile(tasks, [0.0, 1.0, 3.0])
    # tau 0: every run; tau 1: 1 of 3 and 1 of 2, averaged (5/12); tau 3: none.
    assert fraction == pytest.approx([1.0, 5 / 12, 0.0])
    assert low[0] == high[0] == 1.0 and low[2] == high[2] == 0.0
    assert low[1] <= 5 / 12 <= high[1] and high[1] > low[1]


def test_curve_interval():
    runs = np.array([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]])
    center, low, high = stats.curve_interval(runs, 'mean')
    assert center == pytest.approx([1.0, 2.0, 3.0])
    # Two runs: a resample is both (mean), twice the first or twice the second.
    assert low == pytest.approx([0.0, 1.0, 2.0]) and high == pytest.approx([2.0, 3.0, 4.0])
    center, low, high = stats.curve_interval(runs[:1], 'mean')
    assert (low == center).all() and (high == center).all()
    nan_run = np.array([[1.0, np.nan], [3.0, 5.0], [5.0, 7.0], [100.0, 9.0]])
    center, _, _ = stats.curve_interval(nan_run, 'iqm')
    assert center == pytest.approx([4.0, 7.0])  # 4 runs: 1 cut each end; 3 values: none
