"""rllab's progress columns (the MXNet DDPG seed, 002), as a logger-level feature.

rllab logs ``AverageReturn``/``StdReturn``/``MaxReturn``/``MinReturn`` and
``AverageDiscountedReturn`` of the evaluation episodes, ``...EsReturn`` of the exploration
ones (over the whole run with ``cumulative_es_stats``: its ``strategy_path_returns`` is
never cleared, seed 002 lines 103, 309, 495-511), ``AverageQLoss``,
``AveragePolicyLoss``, ``AverageQ``, and the Q-fit statistics ``AverageAbsQ``, ``AverageY``,
``AverageAbsY``, ``AverageAbsQYDiff`` (``y`` is the Bellman backup). When ``rllab_logging``
is on, the loop takes :func:`q_fit_stats` before the algorithm logs its columns (which
consumes the stored values) and calls :func:`log_rllab_columns` after them; the algorithm
must store ``QVals`` and ``Backup`` (DDPG's Q loss does). The test episodes run on a
:class:`DiscountedReturns` wrapper, which stores each one's ``TestEpDiscRet``. The evaluation
columns are NaN in an epoch without test episodes (rllab's protocol, ``eval_samples``, tests
only at the last).
"""
import numpy as np


class DiscountedReturns:
    """The env the test episodes run on, as it is, but for one thing: each episode's
    discounted return :math:`\\sum_t \\gamma^t r_t` (rllab's ``AverageDiscountedReturn``) is
    stored in ``logger`` as ``TestEpDiscRet``, when the next episode starts (``reset``) or,
    for the last one, by :meth:`flush`.

    Args:
        env: the env (the test env, or the training env for a seed that tests on it).
        gamma (float): the run's discount.
        logger: the run's ``EpochLogger``.
    """

    def __init__(self, env, gamma, logger):
        self.env, self.gamma, self.logger = env, gamma, logger
        self.action_space, self.unwrapped = env.action_space, env.unwrapped
        self.ret = self.t = None  # the open episode's discounted return and its steps

    def reset(self, **kwargs):
        self.flush()
        self.ret, self.t = 0.0, 0
        return self.env.reset(**kwargs)

    def step(self, a):
        out = self.env.step(a)
        self.ret += self.gamma ** self.t * out[1]
        self.t += 1
        return out

    def flush(self):
        """Store the open episode's discounted return (if it took a step)."""
        if self.t:
            self.logger.store(TestEpDiscRet=self.ret)
        self.ret = self.t = None


def q_fit_stats(logger):
    """rllab's Q-fit statistics of this epoch's stored ``QVals`` and ``Backup``."""
    q = _concat(logger.epoch_dict.get('QVals', []))
    y = _concat(logger.epoch_dict.get('Backup', []))
    out = {}
    for key, values in (('AverageAbsQ', np.abs(q)), ('AverageY', y), ('AverageAbsY', np.abs(y)),
                        ('AverageAbsQYDiff', np.abs(q - y) if len(q) == len(y) else [])):
        out[key] = float(np.mean(values)) if len(values) else np.nan
    return out


def log_rllab_columns(logger, q_fit, es_returns=None):
    """Log rllab's columns from this epoch's statistics and ``q_fit`` (:func:`q_fit_stats`).

    ``es_returns``: every exploration return of the run so far (rllab's cumulative
    statistics), or None for this epoch's (``EpRet``)."""
    def stat(key, i):
        return logger.last_stats.get(key, (np.nan,) * 4)[i]

    def es_stat(i):
        if es_returns is None:
            return stat('EpRet', i)
        if not es_returns:
            return np.nan
        return (np.mean, np.std, np.min, np.max)[i](es_returns)

    for prefix, i in (('Average', 0), ('Std', 1), ('Max', 3), ('Min', 2)):
        logger.log_tabular(prefix + 'Return', stat('TestEpRet', i))
    disc = logger.epoch_dict.get('TestEpDiscRet')
    logger.log_tabular('AverageDiscountedReturn', float(np.mean(disc)) if disc else np.nan)
    for prefix, i in (('Average', 0), ('Std', 1), ('Max', 3), ('Min', 2)):
        logger.log_tabular(prefix + 'EsReturn', es_stat(i))
    logger.log_tabular('AverageQLoss', stat('LossQ', 0))
    logger.log_tabular('AveragePolicyLoss', stat('LossPi', 0))
    logger.log_tabular('AverageQ', stat('QVals', 0))
    for key in ('AverageAbsQ', 'AverageY', 'AverageAbsY', 'AverageAbsQYDiff'):
        logger.log_tabular(key, q_fit[key])


def _concat(values):
    return np.concatenate([np.ravel(v) for v in values]) if values else np.zeros(0)
