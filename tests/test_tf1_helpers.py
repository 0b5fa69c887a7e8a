"""Graph helpers: dense/mlp weight sharing, exact-scope variable lookup, target ops."""
import numpy as np
import pytest

from spinup_tf.utils.tf1 import (tf, placeholder, mlp, dense, get_vars, get_trainable_vars,
                                 count_vars, paired_vars, polyak_update_op, target_init_op,
                                 make_session)


def _two_scopes():
    x = placeholder(3)
    for scope in ('main', 'target'):
        with tf.variable_scope(scope):
            with tf.variable_scope('q'):
                mlp(x, [4, 1])
            with tf.variable_scope('q1'):
                mlp(x, [4, 1])
    return x


def test_mlp_reuse_shares_weights_and_names():
    with tf.Graph().as_default():
        x = placeholder(3)
        with tf.variable_scope('net'):
            y1 = mlp(x, [5, 2], tf.nn.relu)
        with tf.variable_scope('net', reuse=True):
            y2 = mlp(x, [5, 2], tf.nn.relu)
        names = [v.op.name for v in tf.global_variables()]
        assert names == ['net/dense/kernel', 'net/dense/bias', 'net/dense_1/kernel',
                         'net/dense_1/bias']
        with make_session() as sess:
            sess.run(tf.global_variables_initializer())
            xs = np.random.RandomState(0).randn(7, 3)
            a, b = sess.run([y1, y2], {x: xs})
            np.testing.assert_array_equal(a, b)
            # Zero bias, glorot-uniform kernel within its bound.
            k, bias = sess.run(get_vars('net/dense'))
            assert np.all(bias == 0)
            assert np.abs(k).max() <= np.sqrt(6.0 / (3 + 5))
            assert k.std() > 0


def test_dense_output_matches_numpy():
    with tf.Graph().as_default():
        x = placeholder(2)
        y = dense(x, 3, tf.tanh, name='layer')
        with make_session() as sess:
            sess.run(tf.global_variables_initializer())
            k, b = sess.run(get_vars('layer'))
            xs = np.array([[1.0, -2.0]], dtype=np.float32)
            np.testing.assert_allclose(sess.run(y, {x: xs}), np.tanh(xs @ k + b), rtol=1e-6)


def test_get_vars_uses_exact_scope_prefix():
    with tf.Graph().as_default():
        _two_scopes()
        q = [v.op.name for v in get_vars('main/q')]
        assert q == ['main/q/dense/kernel', 'main/q/dense/bias', 'main/q/dense_1/kernel',
                     'main/q/dense_1/bias']
        assert all(not n.startswith('main/q1') for n in q)
        assert count_vars('main/q') == 3 * 4 + 4 + 4 + 1
        assert count_vars('main') == 2 * count_vars('main/q')
        # Optimizer slots are global but not trainable.
        loss = tf.reduce_sum([tf.reduce_sum(v) for v in get_trainable_vars('main')])
        tf.train.AdamOptimizer().minimize(loss, var_list=get_trainable_vars('main'))
        assert len(get_vars('main')) > len(get_trainable_vars('main'))
        assert count_vars('main') == 2 * (3 * 4 + 4 + 4 + 1)


def test_main_and_target_pair_up_in_order_and_shape():
    with tf.Graph().as_default():
        _two_scopes()
        pairs = paired_vars('main', 'target')
        assert len(pairs) == 8
        for m, t in pairs:
            assert m.op.name.replace('main/', 'target/', 1) == t.op.name
            assert m.shape.as_list() == t.shape.as_list()


def test_paired_vars_rejects_mismatched_scopes():
    with tf.Graph().as_default():
        x = placeholder(3)
        with tf.variable_scope('main'):
            mlp(x, [4, 1])
        with tf.variable_scope('target'):
            mlp(x, [5, 1])
        with pytest.raises(ValueError):
            paired_vars('main', 'target')


def test_target_init_then_polyak_moves_exactly_one_minus_rho():
    rho = 0.9
    with tf.Graph().as_default():
        _two_scopes()
        init, update = target_init_op(), polyak_update_op(rho)
        mains, targs = zip(*paired_vars('main', 'target'))
        with make_session() as sess:
            sess.run(tf.global_variables_initializer())
            before_m, before_t = sess.run([mains, targs])
            assert any(np.any(m != t) for m, t in zip(before_m, before_t) if m.ndim == 2)
            sess.run(init)
            for m, t in zip(*sess.run([mains, targs])):
                np.testing.assert_array_equal(m, t)
            # Move main away, then one polyak step.
            sess.run([tf.assign_add(v, tf.ones_like(v)) for v in mains])
            m1, t1 = sess.run([mains, targs])
            sess.run(update)
            t2 = sess.run(list(targs))
            for m, ta, tb in zip(m1, t1, t2):
                np.testing.assert_allclose(tb, rho * ta + (1 - rho) * m, rtol=1e-6, atol=1e-7)
                np.testing.assert_allclose(tb - ta, (1 - rho) * (m - ta), rtol=1e-5, atol=1e-6)
