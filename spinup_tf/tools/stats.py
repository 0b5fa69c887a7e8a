"""Statistics for comparing runs over few seeds: IQM, mean, probability of improvement and
performance profiles, each with a 95 % stratified bootstrap confidence interval.

These are the estimators of Agarwal et al. 2021, "Deep RL at the edge of the statistical
precipice" (the ``rliable`` library). ``rliable`` itself is not used: its ``arch`` dependency
does not import next to the pandas that pip resolves for it today, so the resampling is
``scipy.stats.bootstrap`` with the percentile method, which is what ``rliable``'s
``StratifiedBootstrap`` computes.

Notation. A comparison has ``M`` tasks (strata: an env, or an env x algorithm), and task ``m``
has ``N_m`` runs (seeds) with scores ``x_m1 .. x_mN_m``. Arguments called ``tasks`` are a
sequence of ``M`` 1-D arrays, the runs of each task; one task is a plain comparison over seeds.

* **Stratified bootstrap.** One resample draws ``N_m`` runs with replacement from each task
  separately (so every task keeps its weight), and the statistic is recomputed on it. The
  ``confidence`` interval is the percentile interval of ``reps`` resampled statistics:
  ``[q_(1-c)/2, q_(1+c)/2]``. A task with one run is resampled as itself. The resampling is
  seeded: the same data give the same interval.
* **IQM** (interquartile mean): the mean of the middle 50 % of all runs pooled over tasks,
  ``scipy.stats.trim_mean(x, 0.25)``, which cuts ``floor(0.25 n)`` scores from each end. With
  ``n < 4`` runs nothing is cut and the IQM is the mean.
* **Probability of improvement** of X over Y:
  ``P(X > Y) = 1/M sum_m 1/(N_m K_m) sum_i sum_j S(x_mi, y_mj)``, with ``S(x, y) = 1`` if
  ``x > y``, ``1/2`` if ``x == y``, else ``0`` (the Mann-Whitney U statistic over ``N_m K_m``,
  averaged over tasks). X and Y are resampled independently within each task.
* **Performance profile**: ``F(tau) = 1/M sum_m 1/N_m sum_i 1[x_mi > tau]``, the fraction of
  runs scoring above ``tau``, averaged over tasks, for every ``tau`` of a grid.

Caveat: with 3 seeds, a percentile bootstrap of a single task's mean can only range over the
27 resamples of 3 values, and covers the true mean less often than its nominal 95 %. The
intervals earn their keep over many tasks (the benchmark's aggregate), which is the point of
stratifying.

Imports numpy and scipy only.
"""
from collections import namedtuple
from contextlib import contextmanager

import numpy as np

REPS = 10000  # bootstrap resamples
CONFIDENCE = 0.95


class Interval(namedtuple('Interval', 'value low high')):
    """A point estimate and its confidence interval; ``str``: ``'0.93 [0.85, 1.02]'``."""

    def format(self, spec='.2f'):
        return '%s [%s, %s]' % tuple(format(float(v), spec) for v in self)

    def __str__(self):
        return self.format()

    def excludes(self, value):
        """Whether ``value`` lies outside ``[low, high]``."""
        return value < self.low or value > self.high


def _tasks(tasks):
    """``tasks`` as a list of 1-D float arrays; ValueError for no task or an empty one."""
    if isinstance(tasks, np.ndarray) and tasks.ndim == 1 or \
            len(tasks) and all(np.ndim(t) == 0 for t in tasks):
        tasks = [tasks]  # one task's runs
    out = [np.asarray(t, dtype=np.float64).ravel() for t in tasks]
    if not out or any(t.size == 0 for t in out):
        raise ValueError('every task needs at least one run, and there must be a task')
    if any(not np.isfinite(t).all() for t in out):
        raise ValueError('scores must be finite numbers')
    return out


def iqm(scores, axis=-1):
    """Interquartile mean along ``axis``: ``trim_mean(scores, 0.25)``."""
    from scipy.stats import trim_mean
    return trim_mean(scores, 0.25, axis=axis)


def mean(scores, axis=-1):
    return np.mean(scores, axis=axis)


AGGREGATES = {'iqm': iqm, 'mean': mean}


def stratified_bootstrap(samples, statistic, reps=REPS, confidence=CONFIDENCE, seed=0):
    """The percentile interval of ``statistic`` under a stratified bootstrap.

    Args:
        samples: a sequence of 1-D arrays, each resampled on its own (its runs, with
            replacement, as many as it has).
        statistic: ``statistic(*samples, axis=-1)``, vectorised: each sample arrives with shape
            ``(batch, n_i)`` and the result has shape ``(batch,)`` (or ``(k, batch)`` for
            ``k`` statistics at once).
        reps, confidence, seed: resamples, the interval's level, the resampling's seed.

    Returns:
        ``(low, high)``: floats, or arrays of shape ``(k,)``.
    """
    from scipy.stats import bootstrap
    samples = [np.asarray(s, dtype=np.float64) for s in samples]
    varying = [i for i, s in enumerate(samples) if s.size > 1]
    if not varying:  # nothing to resample: every sample is one run
        value = np.asarray(statistic(*[s[None, :] for s in samples], axis=-1))[..., 0]
        return value, value

    def resampled(*moving, axis=-1):
        batch = moving[0].shape[:-1]
        full = [np.broadcast_to(s, batch + s.shape) for s in samples]
        for i, m in zip(varying, moving):
            full[i] = m
        return statistic(*full, axis=axis)

    with _degenerate_ok():
        result = bootstrap(tuple(samples[i] for i in varying), resampled, n_resamples=reps,
                           vectorized=True, method='percentile', confidence_level=confidence,
                           rng=np.random.default_rng(seed))
    return result.confidence_interval.low, result.confidence_interval.high


def aggregate(tasks, which='iqm', reps=REPS, confidence=CONFIDENCE, seed=0):
    """IQM (``which='iqm'``) or mean of all runs pooled over tasks, with its stratified
    bootstrap interval; an ``Interval``."""
    fn = AGGREGATES[which]
    tasks = _tasks(tasks)

    def statistic(*samples, axis=-1):
        return fn(np.concatenate(samples, axis=-1), axis=-1)

    low, high = stratified_bootstrap(tasks, statistic, reps, confidence, seed)
    return Interval(float(fn(np.concatenate(tasks))), float(low), float(high))


def _improvement(xs, ys):
    """``P(X > Y)`` averaged over tasks; ``xs[m]`` has shape ``(..., N_m)``, ``ys[m]``
    ``(..., K_m)``."""
    per_task = []
    for x, y in zip(xs, ys):
        d = x[..., :, None] - y[..., None, :]
        per_task.append(((d > 0) + 0.5 * (d == 0)).mean(axis=(-2, -1)))
    return np.mean(per_task, axis=0)


def probability_of_improvement(x_tasks, y_tasks, reps=REPS, confidence=CONFIDENCE, seed=0):
    """``P(X > Y)``, the probability that a run of X scores above a run of Y on a task drawn
    at random (ties count a half), with its stratified bootstrap interval; an ``Interval``.

    ``x_tasks`` and ``y_tasks`` hold the runs of X and of Y on the same tasks, in the same
    order (a single array each for one task)."""
    xs, ys = _tasks(x_tasks), _tasks(y_tasks)
    if len(xs) != len(ys):
        raise ValueError('X has %d tasks and Y %d: give both the same tasks' % (len(xs), len(ys)))
    m = len(xs)

    def statistic(*samples, axis=-1):
        return _improvement(samples[:m], samples[m:])

    low, high = stratified_bootstrap(xs + ys, statistic, reps, confidence, seed)
    return Interval(float(_improvement(xs, ys)), float(low), float(high))


def _profile(tasks, taus):
    """``F(tau)`` for each tau: shape ``(len(taus), ...)``."""
    taus = np.asarray(taus, dtype=np.float64)
    fractions = [(t[..., None, :] > taus[:, None]).mean(axis=-1) for t in tasks]
    return np.moveaxis(np.mean(fractions, axis=0), -1, 0)


def performance_profile(tasks, taus, reps=REPS, confidence=CONFIDENCE, seed=0):
    """The fraction of runs scoring above each ``tau`` (averaged over tasks), with pointwise
    stratified bootstrap intervals: ``(fraction, low, high)``, arrays of ``len(taus)``."""
    tasks = _tasks(tasks)

    def statistic(*samples, axis=-1):
        return _profile(samples, taus)

    low, high = stratified_bootstrap(tasks, statistic, reps, confidence, seed)
    return _profile(tasks, taus), np.asarray(low), np.asarray(high)


def curve_interval(runs, estimator='mean', reps=2000, confidence=CONFIDENCE, seed=0):
    """Pointwise interval of a learning curve's estimator over runs (``plot --ci``).

    Args:
        runs: array ``(n_runs, n_points)``, one row per run (NaN where a run has no value).
        estimator: ``'mean'``, ``'median'``, ``'iqm'``, ``'max'`` or ``'min'`` over runs.

    Returns:
        ``(center, low, high)``, arrays of ``n_points``. Runs, not points, are resampled: one
        resample draws ``n_runs`` whole curves with replacement. One run gives a zero-width
        interval.
    """
    fn = _CURVE_ESTIMATORS[estimator]
    y = np.asarray(runs, dtype=np.float64)
    if y.ndim != 2 or not y.shape[0]:
        raise ValueError('curve_interval needs an array (n_runs, n_points)')
    center = fn(y, axis=0)
    if y.shape[0] == 1:
        return center, center.copy(), center.copy()
    from scipy.stats import bootstrap
    with _degenerate_ok():
        result = bootstrap((y,), lambda a, axis: fn(a, axis=axis), n_resamples=reps, axis=0,
                           vectorized=True, method='percentile', confidence_level=confidence,
                           rng=np.random.default_rng(seed))
    return center, result.confidence_interval.low, result.confidence_interval.high


@contextmanager
def _degenerate_ok():
    """scipy warns when every resample gives one value (all runs equal); the percentile
    interval is then that value, which is right."""
    import warnings
    from scipy.stats import DegenerateDataWarning
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DegenerateDataWarning)
        yield


def nan_iqm(y, axis=-1):
    """IQM that ignores NaNs (a curve point some runs lack)."""
    y = np.sort(np.moveaxis(y, axis, -1), axis=-1)  # NaNs sort last
    n = np.sum(~np.isnan(y), axis=-1)
    cut = n // 4
    idx = np.arange(y.shape[-1])
    keep = (idx >= cut[..., None]) & (idx < (n - cut)[..., None])
    with np.errstate(invalid='ignore'):
        return np.where(keep, y, 0.0).sum(axis=-1) / keep.sum(axis=-1)


def _quiet(fn):
    def wrapped(y, axis):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)  # an all-NaN point stays NaN
            return fn(y, axis=axis)
    return wrapped


_CURVE_ESTIMATORS = {'mean': _quiet(np.nanmean), 'median': _quiet(np.nanmedian),
                     'max': _quiet(np.nanmax), 'min': _quiet(np.nanmin), 'iqm': nan_iqm}
