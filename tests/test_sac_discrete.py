"""Discrete SAC's graph against numpy (Christodoulou 2019): the soft value of the next state
as an expectation over actions, the Q losses on the stored (one-hot) actions, the policy loss,
the entropy, the temperature's direction, and the policy it acts with."""
import numpy as np
import gymnasium as gym
import pytest
from scipy.special import log_softmax

import offpolicy_graphs
from offpolicy_graphs import capture, run_call, calls, weights, shift_targets, numpy_mlp
from spinup_tf.fast.mirrors import policy_mirror, check_mirror

N_ACTS = 3  # Acrobot's


def acrobot():
    return gym.make('Acrobot-v1')


def one_hot_batch(rng, n):
    return offpolicy_graphs.one_hot_batch(rng, n, N_ACTS, 6)


def feed(g, b):
    return {g.batch[k]: v for k, v in b.items()}


@pytest.mark.parametrize('alpha', [0.3, 'auto'])
def test_losses_match_numpy(monkeypatch, tmp_path, alpha):
    gamma, n = 0.9, 48
    g = capture(monkeypatch, tmp_path, 'sac', env_fn=acrobot, gamma=gamma, alpha=alpha)
    shift_targets(g, 0.05)
    b = one_hot_batch(np.random.RandomState(4), n)
    got = g.sess.run(g.losses['step'], feed(g, b))
    a_val = 1.0 if alpha == 'auto' else alpha  # log_alpha starts at 0

    def net(scope, x):
        return numpy_mlp(weights(g, scope), x).astype(np.float64)
    logp = log_softmax(net('main/pi', b['obs1']), 1)
    logp2 = log_softmax(net('main/pi', b['obs2']), 1)
    p, p2 = np.exp(logp), np.exp(logp2)
    q1_all, q2_all = net('main/q1', b['obs1']), net('main/q2', b['obs1'])
    q_targ = np.minimum(net('target/q1', b['obs2']), net('target/q2', b['obs2']))
    v_next = (p2 * (q_targ - a_val * logp2)).sum(1)
    backup = b['rews'] + gamma * (1 - b['done']) * v_next
    q1, q2 = (q1_all * b['acts']).sum(1), (q2_all * b['acts']).sum(1)
    np.testing.assert_allclose(got['Q1Vals'], q1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got['LossQ1'], 0.5 * ((backup - q1) ** 2).mean(), rtol=1e-4)
    np.testing.assert_allclose(got['LossQ2'], 0.5 * ((backup - q2) ** 2).mean(), rtol=1e-4)
    np.testing.assert_allclose(
        got['LossPi'], (p * (a_val * logp - np.minimum(q1_all, q2_all))).sum(1).mean(),
        rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got['LogPi'], (p * logp).sum(1), rtol=1e-4, atol=1e-6)
    # Acting: the deterministic action is the most probable one; samples are actions.
    np.testing.assert_array_equal(g.sess.run(g.act, {g.batch['obs1']: b['obs1']}),
                                  np.argmax(logp, axis=1))
    sampled = g.sess.run(g.explore, {g.batch['obs1']: np.repeat(b['obs1'][:1], 3000, 0)})
    freq = np.bincount(sampled, minlength=N_ACTS) / 3000.0
    np.testing.assert_allclose(freq, p[0], atol=0.04)


@pytest.mark.parametrize('target_entropy,up', [(5.0, True), (-5.0, False)])
def test_temperature_rises_when_entropy_is_below_target(monkeypatch, tmp_path, target_entropy,
                                                        up):
    """The entropy of any 3-action policy lies in [0, log 3 = 1.10]: a target of 5 is above
    it (alpha must rise), -5 below (alpha must fall)."""
    g = capture(monkeypatch, tmp_path, 'sac', env_fn=acrobot, alpha='auto',
                target_entropy=target_entropy)
    b = one_hot_batch(np.random.RandomState(0), 32)
    assert 'train_alpha' in g.lists[calls(g)[0]]
    before = weights(g, 'alpha')[0]
    run_call(g, calls(g)[0], b)
    after = weights(g, 'alpha')[0]
    assert (after > before) == up, (before, after)


def test_default_target_entropy_is_98_percent_of_uniform(monkeypatch, tmp_path):
    """d(alpha loss)/d(log alpha) = mean entropy - target: alpha rises exactly when the
    batch's mean entropy is below 0.98 log 3 = 1.077. This batch's is about 1.03: above
    CleanRL's 0.89 log 3 and continuous SAC's -act_dim, so only the right target raises it."""
    g = capture(monkeypatch, tmp_path, 'sac', env_fn=acrobot, alpha='auto')
    b = one_hot_batch(np.random.RandomState(1), 32)
    entropy = -g.sess.run(g.losses['step'], feed(g, b))['LogPi'].mean()
    assert 0.89 * np.log(3) < entropy < 0.98 * np.log(3)
    before = weights(g, 'alpha')[0]
    run_call(g, calls(g)[0], b)
    assert weights(g, 'alpha')[0] > before


def test_numpy_mirror_acts_and_samples_as_the_graph(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'sac', env_fn=acrobot)
    with g.run.graph.as_default():
        mirror, checks = policy_mirror(g.batch['obs1'], g.act, g.explore, 'main/pi',
                                       g.run.policy_space)
    assert mirror is not None
    mirror.pull(g.sess)
    for tensor, check in checks:
        check_mirror(g.sess, g.batch['obs1'], tensor, check, 6)
    obs = np.random.RandomState(2).randn(100, 6).astype(np.float32)
    np.testing.assert_array_equal(mirror.batch(obs),
                                  g.sess.run(g.act, {g.batch['obs1']: obs}))
    np.random.seed(0)
    draws = np.bincount([mirror.sample(obs[0]) for _ in range(3000)], minlength=N_ACTS) / 3000.0
    p = np.exp(log_softmax(numpy_mlp(weights(g, 'main/pi'), obs[:1])[0]))
    np.testing.assert_allclose(draws, p, atol=0.04)


def test_continuous_sac_is_unchanged_by_the_discrete_path(monkeypatch, tmp_path):
    """On a Box space SAC still builds its reparameterised losses (the discrete ones are
    not used), and its default target entropy is -act_dim."""
    g = capture(monkeypatch, tmp_path, 'sac', alpha='auto')
    assert set(g.lists) == {'step'} and 'train_alpha' in g.lists['step']
    assert g.losses['step']['LogPi'].shape.as_list() == [None]
