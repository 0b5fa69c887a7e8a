"""DDPG's graph: Bellman backup by hand, q_pi sharing Q's weights, train-op isolation."""
import numpy as np
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, get_trainable_vars, get_vars, make_session
from spinup_tf.algos.ddpg import build_ddpg_graph
from test_td3_graph import _numpy_mlp, _batch, _feed, OBS_DIM, ACT_DIM, SPACE


def _build(**kw):
    tf.set_random_seed(0)
    g = build_ddpg_graph(OBS_DIM, ACT_DIM, SPACE, ac_kwargs=dict(hidden_sizes=(8, 8)), **kw)
    sess = make_session()
    sess.run(tf.global_variables_initializer())
    sess.run(g.target_init)
    return g, sess


def test_scopes_and_shared_q_weights():
    with tf.Graph().as_default():
        g, sess = _build()
        names = [v.op.name for v in get_trainable_vars('main')]
        assert [n for n in names if n.startswith('main/q/')] == [
            'main/q/dense/kernel', 'main/q/dense/bias', 'main/q/dense_1/kernel',
            'main/q/dense_1/bias', 'main/q/dense_2/kernel', 'main/q/dense_2/bias']
        assert len(get_trainable_vars('target')) == len(names) == 12
        # q_pi is q evaluated at pi(x): feed a = pi(x) and compare.
        x = np.random.RandomState(0).randn(5, OBS_DIM).astype(np.float32)
        pi = sess.run(g.pi, {g.x_ph: x})
        q_at_pi, q_pi = sess.run([g.q, g.q_pi], {g.x_ph: x, g.a_ph: pi})
        np.testing.assert_allclose(q_at_pi, q_pi, rtol=1e-6)


def test_bellman_backup_equals_hand_computation():
    gamma = 0.95
    with tf.Graph().as_default():
        g, sess = _build(gamma=gamma)
        sess.run([tf.assign_add(v, 0.05 * tf.ones_like(v)) for v in get_trainable_vars('target')])
        b = _batch(np.random.RandomState(3))
        backup = sess.run(g.backup, _feed(g, b))
        w_pi = sess.run(get_trainable_vars('target/pi'))
        w_q = sess.run(get_trainable_vars('target/q'))
        mid, half = (SPACE.high + SPACE.low) / 2, (SPACE.high - SPACE.low) / 2
        a2 = mid + half * _numpy_mlp(w_pi, b['x2'], np.tanh)
        q_targ = _numpy_mlp(w_q, np.concatenate([b['x2'], a2], axis=1))[:, 0]
        np.testing.assert_allclose(backup, b['r'] + gamma * (1 - b['d']) * q_targ,
                                   rtol=1e-4, atol=1e-4)


def test_train_ops_touch_only_their_networks():
    with tf.Graph().as_default():
        g, sess = _build()
        feed = _feed(g, _batch(np.random.RandomState(4)))
        pi0, q0, t0 = sess.run([get_vars('main/pi'), get_trainable_vars('main/q'),
                                get_trainable_vars('target')])
        sess.run(g.train_q_op, feed)
        pi1, q1, t1 = sess.run([get_vars('main/pi'), get_trainable_vars('main/q'),
                                get_trainable_vars('target')])
        assert all(np.array_equal(a, b) for a, b in zip(pi0, pi1))
        assert all(np.array_equal(a, b) for a, b in zip(t0, t1))
        assert not all(np.array_equal(a, b) for a, b in zip(q0, q1))
        sess.run(g.train_pi_op, feed)
        q2 = sess.run(get_trainable_vars('main/q'))
        assert all(np.array_equal(a, b) for a, b in zip(q1, q2))
