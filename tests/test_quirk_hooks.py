"""Each seed quirk is a hook (spinup_tf.reproductions.hooks): its behaviour on a known env,
against Spinning Up's default; and the layout it leaves (the loops name no seed, a plain run
imports neither the fast engine nor the reproductions)."""
import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import gymnasium as gym
import pytest
from gymnasium.spaces import Box

from spinup_tf.loops.hooks import Hooks
from spinup_tf.loops.on_policy_hooks import OnPolicyHooks
from spinup_tf.loops.replay_buffer import ReplayBuffer
from spinup_tf.reproductions.hooks import QUIRK_FLAGS, make_hooks
from spinup_tf.utils.errors import UserInputError
from test_offpolicy_loop import LineEnv, _run, _rows, _transitions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _limited(limit):
    return lambda: gym.wrappers.TimeLimit(LineEnv(), max_episode_steps=limit)


def test_timeout_is_terminal_stores_the_envs_limit_as_done_unless_max_ep_len(tmp_path):
    """Seeds 000/001: old gym's d is true at the env's TimeLimit; ``d = False if
    ep_len==max_ep_len else d`` clears it only when max_ep_len is reached at that step."""
    buf, _ = _run(tmp_path / 'on', _limited(5), steps=10, timeout_is_terminal=True)
    assert list(_transitions(buf)[2]) == [0, 0, 0, 0, 1] * 2
    buf, _ = _run(tmp_path / 'off', _limited(5), steps=10)
    assert not _transitions(buf)[2].any()  # Spinning Up: a truncation bootstraps
    buf, _ = _run(tmp_path / 'cut', _limited(5), steps=10, max_ep_len=5,
                  timeout_is_terminal=True)
    assert not _transitions(buf)[2].any()  # the limit is max_ep_len: not terminal


@pytest.mark.parametrize('spinning_up,expected', [(False, 3), (True, 4)])
def test_spinning_up_start_steps_takes_one_more_random_action(spinning_up, expected):
    """``if t > start_steps:`` (Spinning Up's loops; seeds 000, 001, 003) acts at random for
    t <= start_steps; the old flag name still says the same (config.json of older runs)."""
    hooks = make_hooks(spinning_up_start_steps=spinning_up)
    assert sum(hooks.random_action_now(t, 3) for t in range(10)) == expected
    old = make_hooks(start_steps_inclusive=spinning_up)
    assert old.flags == hooks.flags
    assert sum(old.random_action_now(t, 3) for t in range(10)) == expected
    with pytest.raises(UserInputError, match='old name'):
        make_hooks(start_steps_inclusive=True, spinning_up_start_steps=False)


def _seed_000_rows(total_steps, steps_per_epoch):
    """Seed 000's loop (lines 160, 217-218, 233), counting: ``(epoch, the TotalEnvInteracts
    it logs, the steps taken)`` of each row."""
    rows = []
    for t in range(total_steps):
        # ... one env step ...
        if t > 0 and t % steps_per_epoch == 0:
            epoch = t // steps_per_epoch
            rows.append((epoch, t, t + 1))
    return rows


def test_epochs_one_step_late_are_seed_000s(tmp_path, monkeypatch):
    from spinup_tf.loops.skeleton import EpochLoop
    ends = []
    real = EpochLoop.end_epoch
    monkeypatch.setattr(EpochLoop, 'end_epoch', lambda self, epoch, total, last: (
        ends.append(total), real(self, epoch, total, last)))
    _run(tmp_path, lambda: LineEnv(terminate_at=3), steps=4, epochs=3,
         epochs_one_step_late=True)
    rows = [(int(float(r['Epoch'])), int(float(r['TotalEnvInteracts'])), steps)
            for r, steps in zip(_rows(tmp_path), ends)]
    assert rows == _seed_000_rows(12, 4) == [(1, 4, 5), (2, 8, 9)]
    # At the seed's budget: 100 epochs of 5000 steps log epochs 1 to 99, the first after
    # 5001 steps
    hooks = make_hooks(epochs_one_step_late=True)
    hooks.bind(SimpleNamespace(steps_per_epoch=5000, epochs=100), None, True, {})
    due = [t for t in range(500000) if hooks.epoch_due(t, False)]
    logged = []  # the TotalEnvInteracts of each row the hooks write
    loop = SimpleNamespace(log_row=lambda epoch, total_steps: logged.append(total_steps))
    for t in due:
        hooks.write_row(loop, t // 5000, t + 1)
    assert list(zip([t // 5000 for t in due], logged, [t + 1 for t in due])) == \
        _seed_000_rows(500000, 5000)
    assert len(due) == 99 and due[0] + 1 == 5001
    del ends[:]
    _run(tmp_path / 'off', lambda: LineEnv(terminate_at=3), steps=4, epochs=3)
    assert [(int(float(r['Epoch'])), int(float(r['TotalEnvInteracts'])))
            for r in _rows(tmp_path / 'off')] == [(1, 4), (2, 8), (3, 12)] and ends == [4, 8, 12]


class ResetCountEnv(LineEnv):
    resets = {}

    def reset(self, *, seed=None, options=None):
        ResetCountEnv.resets[id(self)] = ResetCountEnv.resets.get(id(self), 0) + 1
        return super().reset(seed=seed, options=options)


def test_eval_at_episode_end_tests_on_the_training_env_at_episode_ends(tmp_path):
    """Seed 001 v2: evaluate at the first episode end once 4 (steps_per_epoch) steps have
    passed since the last (remainder kept), on the training env, and once after the loop.
    3-step episodes end at 3, 6, 9, 12 steps: evaluations at 6 (6 >= 4; 2 kept), 9 (5 >= 4)
    and, the loop's end, 12."""
    envs = []

    def env_fn():
        envs.append(ResetCountEnv(terminate_at=3))
        return envs[-1]
    _run(tmp_path, env_fn, steps=4, epochs=3, eval_at_episode_end=True)
    rows = _rows(tmp_path)
    assert [float(r['TotalEnvInteracts']) for r in rows] == [6, 9, 12]
    assert [float(r['Epoch']) for r in rows] == [1, 2, 3]
    assert all(float(r['AverageTestEpRet']) == 3.0 for r in rows)
    train_env, test_env = envs
    assert ResetCountEnv.resets.get(id(test_env), 0) == 0  # the test env is never used
    # training resets: 1 + one per episode end (4) + one after each evaluation (3) + 3 tests
    assert ResetCountEnv.resets[id(train_env)] == 1 + 4 + 3 + 3
    # Default: rows every 4 steps, tested on the test env.
    _run(tmp_path / 'off', lambda: ResetCountEnv(terminate_at=3), steps=4, epochs=3)
    assert [float(r['TotalEnvInteracts']) for r in _rows(tmp_path / 'off')] == [4, 8, 12]


class DrawEnv(LineEnv):
    """Each reset draws its start from the env's RNG (obs = [start, steps]); the starts of
    the episodes that are played (a step follows the reset) are kept, in order."""

    def __init__(self, terminate_at=3):
        super().__init__(terminate_at)
        self.observation_space = Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
        self.played, self.start, self.stepped = [], None, True

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.start, self.stepped = float(self.np_random.uniform()), False
        return np.array([self.start, 0.0], np.float32), {}

    def step(self, a):
        if not self.stepped:
            self.played.append(self.start)
            self.stepped = True
        o, r, terminated, truncated, info = super().step(a)
        return np.array([self.start, o[0]], np.float32), r, terminated, truncated, info


def _seed_001_v2_loop(env, max_timesteps, eval_freq, eval_episodes, seed=0):
    """Seed 001 v2's loop (lines 1474-1482, 1521, 1535, 1552-1618), counting: ``env.seed``
    (old gym's: the RNG only), an evaluation, then ``while total_timesteps <
    max_timesteps`` with the training burst and the evaluation at the top of the iteration
    after an episode ends, and one evaluation after the loop. Returns the bursts' sizes."""
    from gymnasium.utils import seeding

    def evaluate_policy():
        for _ in range(eval_episodes):
            env.reset()
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(np.zeros(1))
                done = terminated or truncated
    env.unwrapped._np_random = seeding.np_random(seed)[0]  # env.seed(seed)
    evaluate_policy()
    bursts, total_timesteps, timesteps_since_eval, done = [], 0, 0, True
    episode_timesteps = 0
    while total_timesteps < max_timesteps:
        if done:
            if total_timesteps != 0:
                bursts.append(episode_timesteps)  # policy.train(..., episode_timesteps, ...)
            if timesteps_since_eval >= eval_freq:
                timesteps_since_eval %= eval_freq
                evaluate_policy()
            env.reset()
            done, episode_timesteps = False, 0
        _, _, terminated, truncated, _ = env.step(np.zeros(1))
        done = terminated or truncated
        episode_timesteps += 1
        total_timesteps += 1
        timesteps_since_eval += 1
    evaluate_policy()
    return bursts


def _bursts(calls):
    sizes = []
    for _, j in calls:
        if j == 0:
            sizes.append(0)
        sizes[-1] += 1
    return sizes


@pytest.mark.parametrize('steps,epochs', [(4, 3), (5, 3)])
def test_udemy_loop_edges_are_seed_001_v2s(tmp_path, steps, epochs):
    """With test_at_start, eval_at_episode_end and no_final_burst, the episodes played on
    the training env (training and evaluations, each from its reset's RNG draw) and the
    training bursts are those of the seed's loop: the loop's own reset at an evaluating
    episode end is undone, the first evaluation draws from the freshly seeded RNG, and no
    burst follows the last step (3-step episodes: 12 and 15 steps end an episode)."""
    envs = []

    def env_fn():
        envs.append(DrawEnv())
        return envs[-1]
    _, calls = _run(tmp_path, env_fn, steps=steps, epochs=epochs, update_at_episode_end=True,
                    buf=ReplayBuffer(2, 1, 1000), test_at_start=True,
                    eval_at_episode_end=True, no_final_burst=True)
    seed_env = DrawEnv()
    bursts = _seed_001_v2_loop(seed_env, steps * epochs, steps, eval_episodes=1)
    assert envs[0].played == seed_env.played and len(seed_env.played) > 6
    assert _bursts(calls) == bursts
    # Without no_final_burst the last episode's burst comes too; without the undone reset,
    # the evaluations would start from other draws
    _, calls = _run(tmp_path / 'burst', lambda: DrawEnv(), steps=steps, epochs=epochs,
                    update_at_episode_end=True, buf=ReplayBuffer(2, 1, 1000),
                    test_at_start=True, eval_at_episode_end=True)
    assert _bursts(calls) == bursts + [3]


class PathsEnv(gym.Env):
    """Episodes of the given lengths in turn (terminated at the end); obs = [a step count
    that never repeats], so every stored transition is known by its observations."""
    lengths = (3, 7, 2, 9, 1, 5, 6, 4)

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.count, self.episode, self.t = 0, -1, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episode, self.t = self.episode + 1, 0
        self.count += 1
        return np.array([self.count], np.float32), {}

    def step(self, a):
        self.t += 1
        self.count += 1
        end = self.t >= self.lengths[self.episode % len(self.lengths)]
        return np.array([self.count], np.float32), float(self.count % 7), end, False, {}


class ReplayMem:
    """The MXNet example's memory that seed 002 uses (``ReplayMem(obs_dim, act_dim,
    memory_size)``, lines 271-277; ``add_sample``, ``get_batch``), as its documented
    behaviour: samples in a ring, ``top`` the newest; a batch draws ``idx`` uniformly in
    ``[0, size)`` but never ``top``, whose successor is not stored, and takes ``obss[idx +
    1]`` as the next observation."""

    def __init__(self, memory_size):
        self.obss, self.acts, self.rwds, self.ends = [None] * memory_size, [None] * \
            memory_size, [None] * memory_size, [None] * memory_size
        self.memory_size, self.top, self.size = memory_size, -1, 0

    def add_sample(self, obs, act, rwd, end):
        self.top = (self.top + 1) % self.memory_size
        self.obss[self.top], self.acts[self.top] = obs, act
        self.rwds[self.top], self.ends[self.top] = rwd, end
        self.size = min(self.size + 1, self.memory_size)

    def drawable(self):
        """Every ``(obs, act, rwd, end, next obs)`` a batch can hold."""
        return _unused_next_obs(
            (float(self.obss[i]), float(self.acts[i]), float(self.rwds[i]),
             float(self.ends[i]), float(self.obss[(i + 1) % self.memory_size]))
            for i in range(self.size) if i != self.top)


def _unused_next_obs(transitions):
    """Sorted, with a terminal sample's next observation (never used: ``(1 - end)`` zeroes
    its target's bootstrap) as 0."""
    return sorted(t[:4] + ((0.0,) if t[3] else t[4:]) for t in transitions)


def _seed_002_memory(env, steps, max_path_length, memory_size):
    """Seed 002's loop (lines 299-337) storing into ``ReplayMem``, with
    ``include_horizon_terminal=False``."""
    memory, end, path_length = ReplayMem(memory_size), False, 0
    obs, _ = env.reset()
    for _ in range(steps):
        if end:
            obs, _ = env.reset()
            path_length = 0
        act = np.zeros(1)
        nxt, rwd, end, _, _ = env.step(act)
        path_length += 1
        if not end and path_length >= max_path_length:
            end = True  # include_horizon_terminal=False: not stored
        else:
            memory.add_sample(obs[0], act[0], rwd, end)
        obs = nxt
    return memory


def _drawable(buf):
    idxs = np.flatnonzero(buf.valid[:buf.filled])
    b = buf.sample_batch(idxs=idxs)
    return _unused_next_obs(zip(*(map(float, b[k].ravel()) for k in ('obs1', 'acts', 'rews',
                                                                       'done', 'obs2'))))


def _graph_drawable(buf):
    """``_drawable`` of a ``GraphReplayBuffer``, read back from its session."""
    state = buf.state_dict()
    idxs = np.flatnonzero(state['valid'])
    return _unused_next_obs(
        (float(state['obs'][i, 0]), float(state['acts'][i, 0]), float(state['rews'][i]),
         float(state['done'][i]), float(state['obs'][(i + 1) % buf.max_size, 0]))
        for i in idxs)


def test_hold_back_newest_on_the_graph_buffer(tmp_path):
    """The fast engine's buffer, fed through the same hooks, holds what the numpy one
    holds."""
    from spinup_tf.utils.tf1 import tf, make_session
    from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer
    quirks = dict(keep_truncated=False, bootstrap_across_paths=True, update_after=10 ** 6,
                  hold_back_newest=True)
    graph = tf.Graph()
    with graph.as_default():
        buf = GraphReplayBuffer(1, 1, 80)
        sess = make_session(graph)
    buf.attach(sess)
    _run(tmp_path / 'graph', PathsEnv, steps=31, max_ep_len=5, buf=buf, **quirks)
    numpy_buf = ReplayBuffer(1, 1, 80)
    _run(tmp_path / 'numpy', PathsEnv, steps=31, max_ep_len=5, buf=numpy_buf, **quirks)
    assert _graph_drawable(buf) == _drawable(numpy_buf) == \
        _seed_002_memory(PathsEnv(), 31, 5, 31).drawable()


@pytest.mark.parametrize('steps', [1, 2, 3, 10, 29, 30, 31, 60])
def test_hold_back_newest_holds_what_seed_002s_memory_lets_a_batch_draw(tmp_path, steps):
    """rllab-mxnet's memory settings (the horizon transition dropped, the one before
    bootstrapping from the next path's first observation, the newest sample held back) and
    replay_size twice the steps: after any number of steps the buffer holds exactly what a
    batch of the seed's ReplayMem of that many samples can draw; without holding back, the
    newest sample is drawable too."""
    quirks = dict(keep_truncated=False, bootstrap_across_paths=True, update_after=10 ** 6)
    buf = ReplayBuffer(1, 1, 2 * steps + 4)
    _run(tmp_path, PathsEnv, steps=steps, max_ep_len=5, buf=buf, hold_back_newest=True,
         **quirks)
    seed = _seed_002_memory(PathsEnv(), steps, 5, steps)
    assert _drawable(buf) == seed.drawable()
    if steps >= 10:
        assert seed.size < steps  # some horizon transitions were dropped
        buf = ReplayBuffer(1, 1, 2 * steps + 4)
        _run(tmp_path / 'all', PathsEnv, steps=steps, max_ep_len=5, buf=buf, **quirks)
        newest = (float(seed.obss[seed.top]), 0.0, float(seed.rwds[seed.top]),
                  float(seed.ends[seed.top]))
        assert [d[:4] for d in _drawable(buf)] == sorted(
            [d[:4] for d in seed.drawable()] + [newest])


def test_the_held_sample_is_checkpointed_state():
    hooks = make_hooks(hold_back_newest=True)
    buf = ReplayBuffer(1, 1, 16)
    hooks.store(buf, np.array([1.0]), np.array([0.5]), 2.0, np.array([2.0]), False, False)
    assert buf.size == 0 and json.loads(json.dumps(hooks.state))['held']['o'] == [1.0]
    hooks.state = json.loads(json.dumps(hooks.state))  # as a resumed run gets it back
    hooks.store(buf, np.array([2.0]), np.array([0.1]), 3.0, np.array([3.0]), True, True)
    assert buf.size == 1 and _drawable(buf) == [(1.0, 0.5, 2.0, 0.0, 2.0)]
    assert hooks.state['held']['d'] == 1.0


def test_eval_samples_test_on_the_training_env_as_seed_002(tmp_path):
    """sample_rewards(env=self.env, ...): the evaluation after the last epoch resets the
    training env, its RNG continued (the loop's reset after the last step undone: the seed
    resets at the top of its next step, which never comes); the test env is never used."""
    envs = []

    def env_fn():
        envs.append(DrawEnv())
        return envs[-1]
    _run(tmp_path, env_fn, steps=6, epochs=2, eval_samples=3, update_after=10 ** 6,
         buf=ReplayBuffer(2, 1, 100))
    train_env, test_env = envs
    assert test_env.played == []
    seed_env = DrawEnv()
    seed_env.reset(seed=0)  # the run's seeded first reset
    for step in range(1, 13):  # 3-step paths, reset at the top of the step after each end
        _, _, end, _, _ = seed_env.step(np.zeros(1))
        if end and step < 12:
            seed_env.reset()
    for _ in range(3):  # sample_rewards: one reset per rollout
        seed_env.reset()
        done = False
        while not done:
            done = seed_env.step(np.zeros(1))[2]
    assert train_env.played == seed_env.played and len(seed_env.played) == 4 + 3


def test_updates_wait_for_memory_count_stored_samples_and_hold_rows(tmp_path):
    """Seed 002: updates and rows wait until the memory holds update_after samples. With
    5-step paths whose horizon transition is dropped, 10 samples are stored after 12 steps
    (steps 5 and 10 dropped), not 11: the first update comes one step later, and the first
    two epochs (stored 4 and 8) write no row."""
    common = dict(steps=5, epochs=4, update_every=1, update_after=10, keep_truncated=False)
    _, calls = _run(tmp_path / 'on', _limited(5), updates_wait_for_memory=True, **common)
    assert calls[0][0] == 10  # buffer size at the first update: 10 stored samples
    assert [float(r['Epoch']) for r in _rows(tmp_path / 'on')] == [3, 4]
    _, calls = _run(tmp_path / 'off', _limited(5), **common)
    assert calls[0][0] == 9  # t >= 10: the 11th step, 9 stored
    assert [float(r['Epoch']) for r in _rows(tmp_path / 'off')] == [1, 2, 3, 4]


@pytest.mark.parametrize('graph_buffer', [False, True])
def test_sampling_without_replacement_draws_distinct_transitions(graph_buffer):
    """Seed 003's ``random.sample``: every batch holds distinct held transitions, on the
    numpy buffer and in the graph."""
    rng = np.random.RandomState(0)
    if not graph_buffer:
        buf = ReplayBuffer(1, 1, 64, with_replacement=False)
        for i in range(20):
            buf.store([i], [0.0], 0.0, [i + 1], 0.0, episode_end=(i % 5 == 4))
        for _ in range(50):
            idxs = buf.sample_indices(20)
            assert len(set(idxs)) == 20 and buf.valid[idxs].all()
        with pytest.raises(ValueError, match='distinct'):
            buf.sample_indices(21)
        return
    from spinup_tf.utils.tf1 import tf, make_session
    from spinup_tf.fast.graph_replay_buffer import sample_distinct_indices
    graph = tf.Graph()
    with graph.as_default():
        valid = tf.constant(rng.rand(40) < 0.5)
        idxs = sample_distinct_indices(valid, tf.constant(40), 10)
        sess = make_session(graph)
    held = set(np.flatnonzero(sess.run(valid)))
    seen = set()
    for _ in range(30):
        got = sess.run(idxs)
        assert len(set(got)) == 10 and set(got) <= held
        seen |= set(got)
    assert seen == held  # uniform over the held ones: every one comes up


def test_adam_epsilon_is_the_hooks_and_tf1s_by_default():
    assert Hooks().optimizer(0.1)._epsilon == 1e-8
    assert make_hooks(adam_epsilon=1e-7).optimizer(0.1)._epsilon == 1e-7


def test_noisy_test_episodes_are_logged_beside_and_change_nothing_else(tmp_path):
    """Seed 003's only test adds noise: NoisyTestEpRet is logged beside TestEpRet, and the
    run's transitions, updates and other columns are those of a run without it."""
    buf_a, calls_a = _run(tmp_path / 'a', lambda: LineEnv(terminate_at=4), steps=8, epochs=2)
    buf_b, calls_b = _run(tmp_path / 'b', lambda: LineEnv(terminate_at=4), steps=8, epochs=2,
                          noisy_test_episodes=3)
    assert calls_a == calls_b
    for x, y in zip(_transitions(buf_a), _transitions(buf_b)):
        np.testing.assert_array_equal(x, y)
    rows_a, rows_b = _rows(tmp_path / 'a'), _rows(tmp_path / 'b')
    for ra, rb in zip(rows_a, rows_b):
        assert float(rb['AverageNoisyTestEpRet']) == 4.0  # 3 episodes of 4 steps
        for key in ra:
            if key != 'Time':
                assert ra[key] == rb[key], key


def _kl(space, hooks):
    from spinup_tf.utils.tf1 import tf, make_session
    from spinup_tf.algos.distributions import mlp_actor_critic
    from spinup_tf.loops.on_policy import actor_critic_graph
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        batch, out, _ = actor_critic_graph(Box(-1, 1, (3,), np.float32), space,
                                           hooks.actor_critic(mlp_actor_critic),
                                           dict(hidden_sizes=(8,)), keep_info=True)
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
        x = np.random.RandomState(1).randn(16, 3).astype(np.float32)
        info_phs, d_kl = out[4], out[5]
        feed = {batch['x']: x}
        new = {}
        for k, ph in info_phs.items():  # the old policy: the current one, shifted
            new[k] = np.broadcast_to(sess.run(out[3][k], feed), (16, ph.shape[-1]))
            feed[ph] = new[k] + 0.3 * np.random.RandomState(2).randn(*new[k].shape)
        return sess.run(d_kl, feed), {k: feed[ph] for k, ph in info_phs.items()}, new


def test_kl_new_old_reverses_the_gaussian_kl_only():
    """Seed 004 line 274: KL(new || old) for a Gaussian policy; a categorical one keeps
    KL(old || new) (line 260)."""
    box = Box(-1, 1, (2,), np.float32)
    ours, old, new = _kl(box, OnPolicyHooks())
    theirs, _, _ = _kl(box, make_hooks(kl_new_old=True))

    def gauss_kl(p, q):  # KL(p || q), diagonal Gaussians, mean over the batch
        var_p, var_q = np.exp(2 * p['log_std']), np.exp(2 * q['log_std'])
        kl = 0.5 * ((q['mu'] - p['mu']) ** 2 + var_p) / var_q - 0.5 + q['log_std'] - \
            p['log_std']
        return np.mean(np.sum(kl * np.ones_like(p['mu']), axis=1))
    np.testing.assert_allclose(ours, gauss_kl(old, new), rtol=1e-4)
    np.testing.assert_allclose(theirs, gauss_kl(new, old), rtol=1e-4)
    assert abs(ours - theirs) > 1e-3
    discrete = gym.spaces.Discrete(3)
    assert _kl(discrete, OnPolicyHooks())[0] == _kl(discrete, make_hooks(kl_new_old=True))[0]


def test_make_hooks_refuses_unknown_and_inconsistent_flags():
    with pytest.raises(UserInputError, match='unknown quirk'):
        make_hooks(reward_lagg=True)
    with pytest.raises(UserInputError, match='keep_truncated'):
        make_hooks(bootstrap_across_paths=True)
    assert make_hooks().flags == {} and make_hooks(reward_lag=False).flags == {}
    # no quirk: Spinning Up's hooks only, the points of both loops
    assert type(make_hooks()).__mro__[1:3] == (OnPolicyHooks, Hooks)


def test_every_quirk_flag_changes_a_hook_point():
    """Every flag switched on (with a value unlike its default) stacks a mixin that
    overrides a hook point of Hooks or OnPolicyHooks."""
    on = dict(action_range=1.0, update_count_from=1, adam_epsilon=1e-7, eval_samples=3,
              noisy_test_episodes=2, keep_truncated=False)
    for flag, f in QUIRK_FLAGS.items():
        value = on.get(flag, True)
        extra = dict(keep_truncated=False) if flag == 'bootstrap_across_paths' else {}
        cls = type(make_hooks(**{flag: value}, **extra))
        points = set(vars(Hooks)) | set(vars(OnPolicyHooks))
        overridden = [name for name in points if not name.startswith('_')
                      and any(name in vars(base) for base in cls.__mro__[:-3])]
        assert overridden or flag == 'cumulative_es_stats', flag


def test_the_loops_and_algorithms_name_no_seed():
    pattern = re.compile(r'rllab|udemy|tensorlayer|mxnet|blog', re.I)
    for folder in ('loops', 'algos', 'fast'):
        path = os.path.join(ROOT, 'spinup_tf', folder)
        for name in os.listdir(path):
            if name.endswith('.py'):
                text = open(os.path.join(path, name)).read()
                assert not pattern.search(text), (folder, name, pattern.findall(text))


def test_a_plain_run_imports_neither_the_fast_engine_nor_the_reproductions(tmp_path):
    code = ('import sys, runpy; sys.argv = %r; '
            'from spinup_tf.tools.cli import main; rc = main(sys.argv[1:]); '
            "print('RC', rc); "
            "print('MODULES', sorted(m for m in sys.modules if m.startswith('spinup_tf.')))"
            % (['run.py', 'td3', '--env', 'Pendulum-v1', '--epochs', '1', '--steps_per_epoch',
                '50', '--start_steps', '20', '--update_after', '20', '--update_every', '10',
                '--num_test_episodes', '1',
                '--max_ep_len', '30', '--fused', 'False', '--data_dir', str(tmp_path)],))
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and 'RC 0' in out.stdout, out.stderr[-2000:]
    modules = json.loads(out.stdout.split('MODULES ')[1].strip().replace("'", '"'))
    assert 'spinup_tf.loops.off_policy' in modules
    assert not [m for m in modules if m.startswith(('spinup_tf.fast', 'spinup_tf.reproductions'))]


def test_sigterm_then_resume_repeats_a_run_whose_epochs_end_one_step_late(tmp_path):
    """seed-000's epochs (an epoch ends after step t > 0 with t % steps_per_epoch == 0, the
    row saying TotalEnvInteracts t): stopped in the middle and resumed, the run writes the
    rows of the run without a break, epochs 1 and 2 of 3 (the last 99 steps end none)."""
    import signal
    from test_resume_cli import run_cli, _start_held, _signal_held, _assert_same_rows
    from test_resume_cli import _rows as rows_of
    args = ['ddpg', '--preset', 'seed-000', '--epochs', '3', '--steps_per_epoch', '100',
            '--max_ep_len', '30', '--start_steps', '50', '--num_test_episodes', '1',
            '--hid', '[16]', '--seed', '2', '--tensorboard', 'False']
    whole = tmp_path / 'whole' / 'x' / 'x_s2'
    res = run_cli(*args, '--exp_name', 'x', '--data_dir', tmp_path / 'whole')
    assert res.returncode == 0, res.stderr[-2000:]
    expected = rows_of(whole)
    assert [(float(r['Epoch']), float(r['TotalEnvInteracts'])) for r in expected] == \
        [(1, 100), (2, 200)]
    run = tmp_path / 'cut' / 'x' / 'x_s2'
    proc = _start_held([*args, '--exp_name', 'x', '--data_dir', tmp_path / 'cut'], run,
                       rows=1, steps=40, stderr_path=tmp_path / 'stderr.txt')
    _signal_held(proc, signal.SIGTERM)
    assert proc.returncode == 128 + signal.SIGTERM
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    _assert_same_rows(expected, rows_of(run), 2)


def test_a_loop_refuses_hooks_it_cannot_call():
    """The on-policy loop needs OnPolicyHooks (which make_hooks always gives); plain Hooks
    lack its points, and anything else is no hooks at all: a TypeError naming the class
    expected, before any env is made."""
    from spinup_tf import ppo, td3

    def no_env():
        raise AssertionError('an env was made')
    with pytest.raises(TypeError, match=r'spinup_tf\.loops\.on_policy_hooks\.OnPolicyHooks'):
        ppo(no_env, hooks=Hooks())
    with pytest.raises(TypeError, match=r'spinup_tf\.loops\.hooks\.Hooks'):
        td3(no_env, hooks=object())
    assert isinstance(make_hooks(), OnPolicyHooks)
