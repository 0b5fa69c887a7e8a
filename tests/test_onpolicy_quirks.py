"""The TRPO blog's (seed 004) loop quirks, each on its own switch: the reward lag, the
bootstrap with the last reward, and the time limit treated as terminal."""
import numpy as np
import gymnasium as gym
import pytest
from gymnasium.spaces import Box, Discrete

from spinup_tf.algos.trpo import trpo
from spinup_tf.loops.gae_buffer import GAEBuffer
from spinup_tf.reproductions.hooks import make_hooks


class CountEnv(gym.Env):
    """Reward t at step t (1, 2, ...); terminates at ``terminate_at``; obs = [t]."""

    def __init__(self, terminate_at=4):
        self.observation_space = Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = Discrete(2)
        self.terminate_at, self.t = terminate_at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, a):
        self.t += 1
        return (np.array([self.t], np.float32), float(self.t), self.t >= self.terminate_at,
                False, {})


def record(monkeypatch, tmp_path, env_fn, steps=12, **quirks):
    rewards, last_vals = [], []
    store, finish = GAEBuffer.store, GAEBuffer.finish_path

    def spy_store(self, obs, act, rew, *args, **kw):
        rewards.append(float(rew))
        return store(self, obs, act, rew, *args, **kw)

    def spy_finish(self, last_val=0):
        last_vals.append(float(last_val))
        return finish(self, last_val)
    monkeypatch.setattr(GAEBuffer, 'store', spy_store)
    monkeypatch.setattr(GAEBuffer, 'finish_path', spy_finish)
    trpo(env_fn, ac_kwargs=dict(hidden_sizes=(4,)), steps_per_epoch=steps, epochs=1,
         train_v_iters=1, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
         hooks=make_hooks(**quirks))
    return rewards, last_vals


def test_reward_lag_stores_the_previous_steps_reward(monkeypatch, tmp_path):
    rewards, _ = record(monkeypatch, tmp_path / 'on', CountEnv, reward_lag=True)
    assert rewards == [0, 1, 2, 3] * 3  # each step stores the reward of the one before
    rewards, _ = record(monkeypatch, tmp_path / 'off', CountEnv)
    assert rewards == [1, 2, 3, 4] * 3


def test_bootstrap_with_reward_at_terminal_states(monkeypatch, tmp_path):
    _, last_vals = record(monkeypatch, tmp_path / 'on', CountEnv, bootstrap_with_reward=True)
    assert last_vals == [4.0] * 3  # last_val = r at every terminal state
    _, last_vals = record(monkeypatch, tmp_path / 'off', CountEnv)
    assert last_vals == [0.0] * 3
    # With the lag as well, r is the reward the lag kept back: the seed's own combination.
    rewards, last_vals = record(monkeypatch, tmp_path / 'both', CountEnv, reward_lag=True,
                                bootstrap_with_reward=True)
    assert rewards[:4] == [0, 1, 2, 3] and last_vals == [4.0] * 3


@pytest.mark.parametrize('terminal', [False, True])
def test_timeout_is_terminal(monkeypatch, tmp_path, terminal):
    env_fn = lambda: gym.wrappers.TimeLimit(CountEnv(terminate_at=100), 3)  # noqa: E731
    _, last_vals = record(monkeypatch, tmp_path, env_fn, steps=9,
                          timeout_is_terminal=terminal)
    if terminal:
        assert last_vals == [0.0] * 3  # no bootstrap from V at the time limit
    else:
        assert len(last_vals) == 3 and all(v != 0.0 for v in last_vals)  # V(s_T)


class ActionRecordingEnv(gym.Env):
    """A Box([-0.1, 0.1]) action space (so a Gaussian of std 0.6 leaves it at most steps);
    records every action ``step`` receives."""

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = Box(-0.1, 0.1, shape=(1,), dtype=np.float32)
        self.received = []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, a):
        self.received.append(float(np.asarray(a)[0]))
        return np.zeros(1, np.float32), 0.0, False, len(self.received) % 5 == 0, {}


@pytest.mark.parametrize('clip', [False, True])
def test_box_actions_reach_the_env_as_sampled_unless_clip_actions(monkeypatch, tmp_path, clip):
    """Spinning Up's env.step(a[0]): the sampled action as it is; clip_actions (SB3's way)
    clips it to the bounds. The buffer stores the sampled action either way."""
    envs, stored = [], []
    store = GAEBuffer.store

    def spy_store(self, obs, act, *args, **kw):
        stored.append(float(np.asarray(act).ravel()[0]))
        return store(self, obs, act, *args, **kw)
    monkeypatch.setattr(GAEBuffer, 'store', spy_store)

    def env_fn():
        envs.append(ActionRecordingEnv())
        return envs[-1]
    trpo(env_fn, ac_kwargs=dict(hidden_sizes=(4,)), steps_per_epoch=20, epochs=1,
         train_v_iters=1, clip_actions=clip,
         logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
    received = np.array(envs[-1].received)
    assert len(received) == 20 and np.abs(np.array(stored)).max() > 0.1
    if clip:
        np.testing.assert_allclose(received, np.clip(stored, -0.1, 0.1), rtol=1e-6)
    else:
        np.testing.assert_allclose(received, stored, rtol=1e-6)


@pytest.mark.parametrize('fused', [False, True])
def test_spinning_up_cg_and_adv_epsilon_reach_trpos_update(monkeypatch, tmp_path, fused):
    """--spinning_up_cg runs TRPO's CG in float32 with no early exit, --adv_epsilon 0 the
    buffer's normalisation without EPS, on both engines; off, this project's."""
    from spinup_tf.algos import natural_gradient as ng
    seen = []
    cg, get = ng.conjugate_gradient, GAEBuffer.get

    def spy_cg(Ax, b, iters=10, residual_tol=1e-10, dtype=np.float64):
        seen.append(('cg', residual_tol, np.dtype(dtype)))
        return cg(Ax, b, iters, residual_tol, dtype)

    def spy_get(self, *args, **kwargs):
        seen.append(('adv', self.adv_epsilon))
        return get(self, *args, **kwargs)
    monkeypatch.setattr(ng, 'conjugate_gradient', spy_cg)
    monkeypatch.setattr(GAEBuffer, 'get', spy_get)
    for quirks in (dict(spinning_up_cg=True, adv_epsilon=0.0), {}):
        del seen[:]
        trpo(CountEnv, ac_kwargs=dict(hidden_sizes=(4,)), steps_per_epoch=12, epochs=2,
             train_v_iters=1, fused=fused, hooks=make_hooks(**quirks),
             logger_kwargs=dict(output_dir=str(tmp_path / str(len(quirks))), quiet=True))
        if quirks:
            assert seen == [('adv', 0.0), ('cg', None, np.dtype(np.float32))] * 2
        else:
            assert seen == [('adv', 1e-8), ('cg', 1e-10, np.dtype(np.float64))] * 2
