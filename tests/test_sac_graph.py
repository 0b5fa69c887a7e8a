"""SAC's graph: squashed log-likelihood by hand, entropy-regularised target, automatic alpha."""
import numpy as np
from gymnasium.spaces import Box
from scipy.stats import norm

from spinup_tf.utils.tf1 import tf, get_trainable_vars, get_vars, make_session
from spinup_tf.algos.sac import build_sac_graph
from test_td3_graph import _numpy_mlp

OBS_DIM, ACT_DIM = 3, 2
UNIT = Box(-1.0, 1.0, shape=(ACT_DIM,), dtype=np.float32)


def _build(space=UNIT, **kw):
    tf.set_random_seed(0)
    g = build_sac_graph(OBS_DIM, ACT_DIM, space, ac_kwargs=dict(hidden_sizes=(8, 8)), **kw)
    sess = make_session()
    sess.run(tf.global_variables_initializer())
    sess.run(g.target_init)
    return g, sess


def _policy_by_hand(sess, scope, x):
    """Pre-squash mean and clipped log-std of the policy in ``scope``, in numpy."""
    w = sess.run(get_trainable_vars(scope))  # dense, dense_1 (relu trunk), mu, log_std
    h = np.maximum(np.maximum(x @ w[0] + w[1], 0) @ w[2] + w[3], 0)
    mu = h @ w[4] + w[5]
    log_std = np.clip(h @ w[6] + w[7], -20, 2)
    return mu, log_std


def test_squashed_log_likelihood_is_change_of_variables():
    with tf.Graph().as_default():
        g, sess = _build()
        x = np.random.RandomState(0).randn(256, OBS_DIM).astype(np.float32)
        pi, logp = sess.run([g.pi, g.logp_pi], {g.x_ph: x})
        mu, log_std = _policy_by_hand(sess, 'main/pi', x)
        keep = np.all(np.abs(pi) < 0.99, axis=1)  # atanh is ill-conditioned at the ends
        assert keep.mean() > 0.5
        u = np.arctanh(pi[keep].astype(np.float64))
        expected = (norm.logpdf(u, mu[keep], np.exp(log_std[keep])).sum(axis=1)
                    - np.log(1 - np.tanh(u) ** 2).sum(axis=1))
        np.testing.assert_allclose(logp[keep], expected, rtol=1e-3, atol=2e-3)
        # The deterministic action is the squashed mean.
        np.testing.assert_allclose(sess.run(g.mu, {g.x_ph: x}), np.tanh(mu), atol=1e-5)


def test_actions_scaled_to_the_bounds():
    space = Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 1.0], np.float32))
    with tf.Graph().as_default():
        g, sess = _build(space)
        pi = sess.run(g.pi, {g.x_ph: 50 * np.random.RandomState(1).randn(500, OBS_DIM)})
        assert np.all(pi >= space.low) and np.all(pi <= space.high)
        assert pi[:, 0].min() < -1.5 and pi[:, 1].max() > 0.9


def test_target_is_min_of_target_qs_minus_alpha_logp():
    gamma, alpha = 0.9, 0.3
    with tf.Graph().as_default():
        g, sess = _build(gamma=gamma, alpha=alpha)
        sess.run([tf.assign_add(v, 0.05 * tf.ones_like(v)) for v in get_trainable_vars('target')])
        rng = np.random.RandomState(2)
        n = 32
        feed = {g.x_ph: rng.randn(n, OBS_DIM), g.x2_ph: rng.randn(n, OBS_DIM),
                g.a_ph: rng.uniform(-1, 1, (n, ACT_DIM)), g.r_ph: rng.randn(n),
                g.d_ph: (rng.rand(n) < 0.3).astype(np.float32)}
        backup, a2, logp2 = sess.run([g.q_backup, g.pi_next, g.logp_pi_next], feed)
        xa = np.concatenate([feed[g.x2_ph], a2], axis=1)
        q1t = _numpy_mlp(sess.run(get_trainable_vars('target/q1')), xa)[:, 0]
        q2t = _numpy_mlp(sess.run(get_trainable_vars('target/q2')), xa)[:, 0]
        expected = feed[g.r_ph] + gamma * (1 - feed[g.d_ph]) * (np.minimum(q1t, q2t)
                                                                 - alpha * logp2)
        np.testing.assert_allclose(backup, expected, rtol=1e-4, atol=1e-4)


def test_auto_alpha_moves_toward_the_target_entropy():
    with tf.Graph().as_default():
        g, sess = _build(alpha='auto', lr=1e-2)
        assert [v.op.name for v in get_vars('alpha')][0] == 'alpha/log_alpha'
        assert not get_vars('target/alpha')  # not polyak-averaged
        rng = np.random.RandomState(3)
        n = 64
        feed = {g.x_ph: rng.randn(n, OBS_DIM), g.x2_ph: rng.randn(n, OBS_DIM),
                g.a_ph: rng.uniform(-1, 1, (n, ACT_DIM)), g.r_ph: rng.randn(n),
                g.d_ph: np.zeros(n, np.float32)}
        for _ in range(3):
            before = sess.run(g.log_alpha)
            outs = sess.run(g.step_ops, feed)
            logp = outs[5]
            after = sess.run(g.log_alpha)
            # Entropy below target (logp > -target = act_dim... i.e. logp + target > 0)
            # -> alpha goes up; above target -> down.
            direction = np.sign(np.mean(logp) + g.target_entropy)
            assert np.sign(after - before) == direction
        # A policy that is far too certain (entropy << target): alpha must grow.
        sess.run(tf.assign(g.log_alpha, 0.0))
        sess.run([tf.assign(v, v * 0 + (-10.0)) for v in get_trainable_vars('main/pi')
                  if 'log_std/bias' in v.op.name])
        for _ in range(5):
            sess.run(g.step_ops, feed)
        assert sess.run(g.log_alpha) > 0
