"""Rebuild the open episode of an env after a resume, without pickling the env.

A checkpoint falls wherever an epoch ends, usually inside an episode, and a simulator's
internal state (MuJoCo's, pybullet's) cannot be saved portably. gymnasium envs are
deterministic given how their episode was reset and the actions taken since, so
:class:`EpisodeRecorder` keeps exactly that:

* ``start``: ``{'seed': s}`` for a reset with a seed (a run's first), else
  ``{'rng': state}``, the bit-generator state of ``env.unwrapped.np_random`` just before
  the reset;
* ``actions``: every action passed to ``step`` since, as lists, and their dtype.

:meth:`EpisodeRecorder.replay` resets the env the same way and steps it through the same
actions, which leaves it (and its wrappers: ``TimeLimit``'s step count, the return of
``--normalize_rew``) where the uninterrupted run had it. While it replays, the running
statistics of ``--normalize_obs``/``--normalize_rew`` are frozen: the checkpoint already
holds them after those steps.
"""
import numpy as np

from spinup_tf.utils.normalize import NormalizedEnv
from spinup_tf.utils.envs import seed_env


def _normalizers(env):
    """The ``NormalizedEnv`` wrappers around ``env``'s core."""
    out = []
    while env is not None:
        if isinstance(env, NormalizedEnv):
            out.append(env)
        env = getattr(env, 'env', None)
    return out


class EpisodeRecorder:
    """Wraps the calls a loop makes on its training env: ``reset``, ``seed`` and ``step``.

    ``obs`` is the observation the last of them returned: where the training episode
    continues from (a hook that resets the env between two steps moves it)."""

    def __init__(self, env):
        self.env = env
        self.start, self.actions = None, []
        self.obs = None

    def seed(self, seed):
        """``seed_env(env, seed)``: the first reset of a run; returns its observation."""
        self.start, self.actions = {'seed': int(seed)}, []
        self.obs = seed_env(self.env, seed)
        return self.obs

    def reset(self):
        """``env.reset()`` (its RNG continues); returns the observation."""
        gen = self.env.unwrapped.np_random  # created on first use, as reset would
        self.start, self.actions = {'rng': gen.bit_generator.state}, []
        self.obs, _ = self.env.reset()
        return self.obs

    def step(self, a):
        """``env.step(a)``, remembering ``a`` (and its dtype: an env may compute in it)."""
        self.actions.append(np.asarray(a))  # (made lists only when a checkpoint is written)
        out = self.env.step(a)
        self.obs = out[0]
        return out

    def state_dict(self):
        dtype = self.actions[0].dtype.str if self.actions else None
        return {'start': self.start, 'actions': [a.tolist() for a in self.actions],
                'dtype': dtype}

    def replay(self, state):
        """Reset and step the env as ``state`` (a ``state_dict()``) says; return the open
        episode's ``(o, ep_ret, ep_len)`` (``ep_ret`` the env's own reward)."""
        self.start, self.actions = state['start'], []
        if self.start is None:
            raise ValueError('no episode recorded')
        frozen = _normalizers(self.env)
        for w in frozen:
            w.frozen = True
        try:
            if 'seed' in self.start:  # (the action space's RNG is the checkpoint's)
                o, _ = self.env.reset(seed=self.start['seed'])
            else:
                self.env.unwrapped.np_random.bit_generator.state = self.start['rng']
                o, _ = self.env.reset()
            self.obs = o
            ep_ret, ep_len = 0.0, 0
            for a in state['actions']:
                a = np.asarray(a, dtype=np.dtype(state['dtype']))[()]
                o, r, _, _, info = self.step(a)
                ep_ret += info.get('raw_reward', r)
                ep_len += 1
        finally:
            for w in frozen:
                w.frozen = False
        return o, ep_ret, ep_len
