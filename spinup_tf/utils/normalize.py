"""``--normalize_obs`` and ``--normalize_rew``: running observation and reward normalisation
for every algorithm, as an env wrapper (gymnasium's ``NormalizeObservation`` /
``NormalizeReward``, SB3's ``VecNormalize``), off by default.

* Observations: each one updates a running mean and (population) variance, then the agent
  sees ``clip((o - mean) / sqrt(var + 1e-8), -10, 10)``. The test env of the off-policy
  algorithms shares the statistics without updating them.
* Rewards: a running discounted return ``ret = gamma * ret + r`` (reset when an episode
  ends) updates a running variance, and the agent learns from ``clip(r / sqrt(var_ret +
  1e-8), -10, 10)``. ``EpRet`` and ``TestEpRet`` stay the env's own returns: the raw reward
  is in ``info['raw_reward']``.

The statistics are saved with the model (``model_info.json``, key ``normalization``), so
``test_policy`` normalises as training did, and in the checkpoint, so ``resume`` continues
them. They live in numpy, in float64; nothing here changes a run without the flags.
"""
import numpy as np
import gymnasium as gym

CLIP = 10.0
EPS = 1e-8
MODEL_KEY = 'normalization'


class RunningMeanStd:
    """Running mean and population variance (Welford's update, one sample at a time)."""

    def __init__(self, shape=()):
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.zeros(shape, dtype=np.float64)
        self.count = 0

    @property
    def var(self):
        return self.m2 / self.count if self.count else np.ones_like(self.mean)

    def update(self, x):
        x = np.asarray(x, dtype=np.float64)
        self.count += 1
        delta = x - self.mean
        self.mean = self.mean + delta / self.count
        self.m2 = self.m2 + delta * (x - self.mean)

    def state_dict(self):
        return dict(mean=self.mean.tolist(), m2=self.m2.tolist(), count=self.count)

    def load_state_dict(self, d):
        self.mean = np.asarray(d['mean'], dtype=np.float64)
        self.m2 = np.asarray(d['m2'], dtype=np.float64)
        self.count = int(d['count'])


def normalize_obs(o, mean, var):
    """``clip((o - mean) / sqrt(var + EPS), -CLIP, CLIP)`` as float32."""
    return np.clip((np.asarray(o, dtype=np.float64) - mean) / np.sqrt(var + EPS),
                   -CLIP, CLIP).astype(np.float32)


class Normalization:
    """The statistics of a run: ``obs`` and ``ret`` (``RunningMeanStd`` or None). Saved with
    the model and in the checkpoint through ``state_dict`` / ``load_state_dict``."""

    def __init__(self, obs=None, ret=None):
        self.obs, self.ret = obs, ret

    def state_dict(self):
        return {k: v.state_dict() for k, v in (('obs', self.obs), ('ret', self.ret))
                if v is not None}

    def load_state_dict(self, d):
        for key in ('obs', 'ret'):
            if getattr(self, key) is not None and key in d:
                getattr(self, key).load_state_dict(d[key])


class NormalizedEnv(gym.Wrapper):
    """``env`` seen through :class:`Normalization` ``stats``; ``update``: this env's steps
    update them (the training env), else they are only read (a test env, which then also
    leaves rewards alone). ``frozen`` (set while a resume replays an episode, see
    ``spinup_tf.utils.episode_replay``): the statistics are only read, but the discounted
    return still follows the steps."""

    def __init__(self, env, stats, gamma=0.99, update=True):
        super().__init__(env)
        self.stats, self.gamma, self.update = stats, gamma, update
        self.discounted = 0.0
        self.frozen = False

    def _obs(self, o):
        rms = self.stats.obs
        if rms is None:
            return o
        if self.update and not self.frozen:
            rms.update(o)
        return normalize_obs(o, rms.mean, rms.var)

    def reset(self, **kwargs):
        o, info = self.env.reset(**kwargs)
        self.discounted = 0.0
        return self._obs(o), info

    def step(self, action):
        o, r, terminated, truncated, info = self.env.step(action)
        rms = self.stats.ret
        if rms is not None and self.update:
            info = dict(info, raw_reward=r)
            self.discounted = self.gamma * self.discounted + r
            if not self.frozen:
                rms.update(self.discounted)
            r = float(np.clip(r / np.sqrt(rms.var + EPS), -CLIP, CLIP))
            if terminated or truncated:
                self.discounted = 0.0
        return self._obs(o), r, terminated, truncated, info


def normalize_envs(envs, config, logger):
    """``envs`` wrapped as ``config``'s ``normalize_obs`` / ``normalize_rew`` say (the first
    one trains and updates the statistics); unchanged when both are off. The statistics are
    registered with ``logger`` (``model_extras``): saved with the model and checkpoints."""
    obs, rew = bool(config.get('normalize_obs')), bool(config.get('normalize_rew'))
    if not (obs or rew):
        return envs
    shape = envs[0].observation_space.shape
    stats = Normalization(RunningMeanStd(shape) if obs else None,
                          RunningMeanStd() if rew else None)
    logger.model_extras[MODEL_KEY] = stats
    gamma = float(config.get('gamma', 0.99))
    return [NormalizedEnv(env, stats, gamma, update=(i == 0)) for i, env in enumerate(envs)]


def observation_normalizer(model_info):
    """``f(o)`` normalising as the saved model was trained (identity without statistics),
    from ``model_info.json``'s contents."""
    d = (model_info.get(MODEL_KEY) or {}).get('obs') if isinstance(model_info, dict) else None
    if not d:
        return lambda o: o
    rms = RunningMeanStd()
    rms.load_state_dict(d)
    mean, var = rms.mean, rms.var
    return lambda o: normalize_obs(o, mean, var)
