"""Each seed quirk is a hook (spinup_tf.reproductions.hooks): its behaviour on a known env,
against Spinning Up's default; and the layout it leaves (the loops name no seed, a plain run
imports neither the fast engine nor the reproductions)."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import gymnasium as gym
import pytest
from gymnasium.spaces import Box

from spinup_tf.loops.hooks import Hooks
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


@pytest.mark.parametrize('inclusive,expected', [(False, 3), (True, 4)])
def test_start_steps_inclusive_takes_one_more_random_action(inclusive, expected):
    """``if t > start_steps:`` (seeds 000, 001, 003) acts at random for t <= start_steps."""
    hooks = make_hooks(start_steps_inclusive=inclusive)
    assert sum(hooks.random_action_now(t, 3) for t in range(10)) == expected


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
    ours, old, new = _kl(box, Hooks())
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
    assert _kl(discrete, Hooks())[0] == _kl(discrete, make_hooks(kl_new_old=True))[0]


def test_make_hooks_refuses_unknown_and_inconsistent_flags():
    with pytest.raises(UserInputError, match='unknown quirk'):
        make_hooks(reward_lagg=True)
    with pytest.raises(UserInputError, match='keep_truncated'):
        make_hooks(bootstrap_across_paths=True)
    assert make_hooks().flags == {} and make_hooks(reward_lag=False).flags == {}
    assert type(make_hooks()).__mro__[1] is Hooks  # no quirk: Spinning Up's hooks only


def test_every_quirk_flag_changes_a_hook_point():
    """Every flag switched on (with a value unlike its default) stacks a mixin that
    overrides a hook point of Hooks."""
    on = dict(action_range=1.0, update_count_from=1, adam_epsilon=1e-7, eval_samples=3,
              noisy_test_episodes=2, keep_truncated=False)
    for flag, f in QUIRK_FLAGS.items():
        value = on.get(flag, True)
        extra = dict(keep_truncated=False) if flag == 'bootstrap_across_paths' else {}
        cls = type(make_hooks(**{flag: value}, **extra))
        overridden = [name for name in vars(Hooks) if not name.startswith('_')
                      and any(name in vars(base) for base in cls.__mro__[:-2])]
        assert overridden or flag == 'cumulative_es_stats', flag


def test_the_loops_and_algorithms_name_no_seed():
    pattern = re.compile(r'rllab|udemy|tensorlayer|mxnet|blog', re.I)
    for folder in ('loops', 'algos', 'engine'):
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
