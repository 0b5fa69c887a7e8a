"""TD3's graph: Bellman backup by hand, clipped smoothing noise, who each train op moves."""
import numpy as np
import gymnasium as gym
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, get_trainable_vars, make_session
from spinup_tf.algos.td3 import build_td3_graph

OBS_DIM, ACT_DIM = 3, 2
SPACE = Box(low=np.array([-2.0, -0.5], dtype=np.float32),
            high=np.array([2.0, 1.5], dtype=np.float32))


def _build(**kw):
    tf.set_random_seed(0)
    g = build_td3_graph(OBS_DIM, ACT_DIM, SPACE, ac_kwargs=dict(hidden_sizes=(8, 8)), **kw)
    sess = make_session()
    sess.run(tf.global_variables_initializer())
    sess.run(g.target_init)
    return g, sess


def _numpy_mlp(weights, x, out_act=None):
    """Forward pass of an mlp given its [kernel, bias, kernel, bias, ...] values (relu)."""
    n = len(weights) // 2
    for i in range(n):
        x = x @ weights[2 * i] + weights[2 * i + 1]
        if i < n - 1:
            x = np.maximum(x, 0)
    return out_act(x) if out_act else x


def _batch(rng, n=64):
    return dict(x=rng.randn(n, OBS_DIM).astype(np.float32),
                x2=rng.randn(n, OBS_DIM).astype(np.float32),
                a=rng.uniform(SPACE.low, SPACE.high, size=(n, ACT_DIM)).astype(np.float32),
                r=rng.randn(n).astype(np.float32),
                d=(rng.rand(n) < 0.3).astype(np.float32))


def _feed(g, b):
    return {g.x_ph: b['x'], g.x2_ph: b['x2'], g.a_ph: b['a'], g.r_ph: b['r'], g.d_ph: b['d']}


def test_target_networks_equal_main_after_init():
    with tf.Graph().as_default():
        g, sess = _build()
        for scope in ('pi', 'q1', 'q2'):
            m, t = sess.run([get_trainable_vars('main/' + scope),
                             get_trainable_vars('target/' + scope)])
            assert len(m) == len(t) == 6
            for a, b in zip(m, t):
                np.testing.assert_array_equal(a, b)


def test_policy_respects_per_dimension_bounds():
    with tf.Graph().as_default():
        g, sess = _build()
        pi = sess.run(g.pi, {g.x_ph: 100 * np.random.RandomState(1).randn(500, OBS_DIM)})
        assert np.all(pi >= SPACE.low - 1e-6) and np.all(pi <= SPACE.high + 1e-6)
        # Saturated outputs reach both ends of the asymmetric second dimension.
        assert pi[:, 1].min() < -0.45 and pi[:, 1].max() > 1.45


def test_bellman_backup_equals_hand_computation_with_clipped_noise():
    gamma, target_noise, noise_clip = 0.9, 1.0, 0.3
    with tf.Graph().as_default():
        g, sess = _build(gamma=gamma, target_noise=target_noise, noise_clip=noise_clip)
        # Make the target differ from main so that using the wrong network would show.
        sess.run([tf.assign_add(v, 0.1 * tf.ones_like(v)) for v in get_trainable_vars('target')])
        b = _batch(np.random.RandomState(0))
        backup, eps, pi_targ = sess.run([g.backup, g.epsilon, g.pi_targ], _feed(g, b))
        # Noise: N(0, 1) clipped at 0.3 -> every |eps| <= 0.3 and many are exactly at the clip.
        assert np.all(np.abs(eps) <= noise_clip + 1e-7)
        assert np.mean(np.isclose(np.abs(eps), noise_clip)) > 0.5
        w = {s: sess.run(get_trainable_vars('target/' + s)) for s in ('pi', 'q1', 'q2')}
        mu = SPACE.high / 2 + SPACE.low / 2
        half = (SPACE.high - SPACE.low) / 2
        np.testing.assert_allclose(pi_targ, mu + half * _numpy_mlp(w['pi'], b['x2'], np.tanh),
                                   rtol=1e-4, atol=1e-5)
        a2 = np.clip(pi_targ + eps, SPACE.low, SPACE.high)
        xa = np.concatenate([b['x2'], a2], axis=1)
        q1t = _numpy_mlp(w['q1'], xa)[:, 0]
        q2t = _numpy_mlp(w['q2'], xa)[:, 0]
        expected = b['r'] + gamma * (1 - b['d']) * np.minimum(q1t, q2t)
        np.testing.assert_allclose(backup, expected, rtol=1e-4, atol=1e-4)
        # Terminal transitions do not bootstrap at all.
        np.testing.assert_allclose(backup[b['d'] == 1], b['r'][b['d'] == 1], rtol=1e-6)


def test_q_step_moves_only_q_and_pi_step_moves_only_pi():
    with tf.Graph().as_default():
        g, sess = _build()
        feed = _feed(g, _batch(np.random.RandomState(2)))
        groups = {s: get_trainable_vars(s) for s in
                  ('main/pi', 'main/q1', 'main/q2', 'target')}

        def snapshot():
            return {k: sess.run(v) for k, v in groups.items()}

        def changed(before, after):
            return {k for k in before
                    if any(np.any(x != y) for x, y in zip(before[k], after[k]))}

        s0 = snapshot()
        sess.run(g.train_q_op, feed)
        s1 = snapshot()
        assert changed(s0, s1) == {'main/q1', 'main/q2'}
        sess.run(g.train_pi_op, feed)
        s2 = snapshot()
        assert changed(s1, s2) == {'main/pi'}
        sess.run(g.target_update)
        assert changed(s2, snapshot()) == {'target'}
