"""SAC's graph against numpy: the squashed log-likelihood, the bounds, the entropy-
regularised clipped double-Q target recomputed in numpy (next action and log-prob with the
same noise), and the automatic temperature."""
import numpy as np
import gymnasium as gym
from scipy.stats import norm

from offpolicy_graphs import (capture, random_batch, run_call, calls, weights, shift_targets,
                              numpy_mlp, noise_like, scale)

LOW, HIGH = np.array([-2.0], np.float32), np.array([2.0], np.float32)


def policy_by_hand(g, x):
    """Pre-squash mean and clipped log-std of ``main/pi`` in numpy."""
    w = weights(g, 'main/pi')  # dense, dense_1 (relu trunk), mu, log_std
    h = np.maximum(np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3], 0)
    return h @ w[4] + w[5], np.clip(h @ w[6] + w[7], -20, 2)


def log_prob(u, mu, log_std):
    """log pi(tanh(u)) by the change of variables (float64)."""
    u = u.astype(np.float64)
    return (norm.logpdf(u, mu, np.exp(log_std)).sum(axis=1)
            - np.log(1 - np.tanh(u) ** 2).sum(axis=1))


def test_squashed_log_likelihood_is_change_of_variables(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'sac')
    x = np.random.RandomState(0).randn(256, 3).astype(np.float32)
    b = random_batch(np.random.RandomState(1), 256, LOW, HIGH)
    b['obs1'] = x
    got = g.sess.run(g.losses['step'], {g.batch[k]: v for k, v in b.items()})
    mu, log_std = policy_by_hand(g, x)
    u = mu + np.exp(log_std) * noise_like((256, 1))  # the sample the graph drew
    np.testing.assert_allclose(got['LogPi'], log_prob(u, mu, log_std), rtol=1e-3, atol=2e-3)
    # The deterministic action is the squashed mean, scaled to the bounds.
    np.testing.assert_allclose(g.sess.run(g.act, {g.batch['obs1']: x}), 2 * np.tanh(mu),
                               atol=1e-5)


def test_actions_scaled_to_the_bounds(monkeypatch, tmp_path):
    low, high = np.array([0.0], np.float32), np.array([1.0], np.float32)
    g = capture(monkeypatch, tmp_path, 'sac', env_fn=lambda: gym.wrappers.RescaleAction(
        gym.make('Pendulum-v1'), low, high))
    pi = g.sess.run(g.explore, {g.batch['obs1']: 50 * np.random.RandomState(1).randn(500, 3)})
    assert np.all(pi >= low) and np.all(pi <= high)
    assert pi.min() < 0.1 and pi.max() > 0.9


def test_value_losses_use_min_of_target_qs_minus_alpha_logp(monkeypatch, tmp_path):
    gamma, alpha, n = 0.9, 0.3, 32
    g = capture(monkeypatch, tmp_path, 'sac', gamma=gamma, alpha=alpha)
    shift_targets(g, 0.05)
    b = random_batch(np.random.RandomState(2), n, LOW, HIGH)
    got = g.sess.run(g.losses['step'], {g.batch[k]: v for k, v in b.items()})
    # Next action and its log-prob, recomputed from the policy's weights and the noise.
    mu2, log_std2 = policy_by_hand(g, b['obs2'])
    u2 = mu2 + np.exp(log_std2) * noise_like((n, 1))
    a2, logp2 = scale(np.tanh(u2), LOW, HIGH), log_prob(u2, mu2, log_std2)
    xa2 = np.concatenate([b['obs2'], a2], axis=1)
    q1t = numpy_mlp(weights(g, 'target/q1'), xa2)[:, 0]
    q2t = numpy_mlp(weights(g, 'target/q2'), xa2)[:, 0]
    backup = b['rews'] + gamma * (1 - b['done']) * (np.minimum(q1t, q2t) - alpha * logp2)
    xa = np.concatenate([b['obs1'], b['acts']], axis=1)
    for k in ('1', '2'):
        q = numpy_mlp(weights(g, 'main/q' + k), xa)[:, 0]
        np.testing.assert_allclose(got['Q%sVals' % k], q, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got['LossQ' + k], 0.5 * np.mean((backup - q) ** 2),
                                   rtol=2e-3, atol=1e-4)


def test_auto_alpha_moves_toward_the_target_entropy(monkeypatch, tmp_path):
    from spinup_tf.utils.tf1 import get_vars
    g = capture(monkeypatch, tmp_path, 'sac', alpha='auto', lr=1e-2)
    with g.run.graph.as_default():
        log_alpha = get_vars('alpha')[0]
        assert log_alpha.op.name == 'alpha/log_alpha'
        assert not get_vars('target/alpha')  # not polyak-averaged
    (step,) = calls(g)
    b = random_batch(np.random.RandomState(3), 64, LOW, HIGH)
    b['done'][:] = 0
    for _ in range(3):
        before = g.sess.run(log_alpha)
        logp = run_call(g, step, b)['LogPi']
        # Entropy below the target -act_dim (logp > act_dim): alpha goes up; else down.
        assert np.sign(g.sess.run(log_alpha) - before) == np.sign(np.mean(logp) - 1.0)
    # A policy far too certain (entropy << target): alpha must grow.
    log_alpha.load(0.0, g.sess)
    with g.run.graph.as_default():
        for v in get_vars('main/pi'):
            if 'log_std/bias' in v.op.name and 'Adam' not in v.op.name:
                v.load(np.full(v.shape.as_list(), -10.0, np.float32), g.sess)
    for _ in range(5):
        run_call(g, step, b)
    assert g.sess.run(log_alpha) > 0
