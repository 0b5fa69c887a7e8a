"""TRPO / NPG updates on a real batch: KL bound, surrogate improvement, NPG's full step."""
import numpy as np
import gymnasium as gym

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.algos.trpo import build_trpo_graph
from spinup_tf.algos.natural_gradient import natural_gradient_step, backtracking_line_search
from spinup_tf.loops.gae_buffer import GAEBuffer

DELTA = 0.01


def _batch(env_id, sess, g, n=500, seed=0):
    """Collect n steps with the current policy into a GAEBuffer; returns buf.get()."""
    env = gym.make(env_id)
    o, _ = env.reset(seed=seed)
    info_shapes = {k: v.shape.as_list()[1:] for k, v in g.info_phs.items()}
    act_shape = env.action_space.shape
    buf = GAEBuffer(o.shape[0], act_shape, n, info_shapes, 0.99, 0.97)
    for t in range(n):
        a, v, logp, *info = sess.run(g.get_action_ops, {g.x_ph: o[None]})
        o2, r, term, trunc, _ = env.step(np.clip(a[0], -2, 2) if act_shape else a[0])
        buf.store(o, a[0], r, v[0], logp[0], [x[0] for x in info])
        o = o2
        if term or trunc or t == n - 1:
            buf.finish_path(0.0 if term else sess.run(g.v, {g.x_ph: o[None]})[0])
            o, _ = env.reset()
    return buf.get()


def _setup(env_id):
    env = gym.make(env_id)
    tf.set_random_seed(0)
    g = build_trpo_graph(env.observation_space, env.action_space,
                         ac_kwargs=dict(hidden_sizes=(16,)))
    sess = make_session()
    sess.run(tf.global_variables_initializer())
    inputs = _batch(env_id, sess, g)
    feed = dict(zip(g.all_phs, inputs))
    grad, loss_old = sess.run([g.gradient, g.pi_loss], feed)
    hvp = lambda v: sess.run(g.hvp, {**feed, g.v_ph: v})  # noqa: E731
    old = sess.run(g.get_pi_params)

    def set_and_eval(p):
        sess.run(g.set_pi_params, {g.v_ph: p})
        return sess.run([g.d_kl, g.pi_loss], feed)
    return g, sess, feed, grad, loss_old, hvp, old, set_and_eval


def test_trpo_step_respects_kl_bound_and_improves_surrogate():
    for env_id in ('CartPole-v1', 'Pendulum-v1'):
        with tf.Graph().as_default():
            g, sess, feed, grad, loss_old, hvp, old, set_and_eval = _setup(env_id)
            # KL of the policy with itself is 0 before the step.
            assert abs(sess.run(g.d_kl, feed)) < 1e-7
            x, alpha, full_step = natural_gradient_step(grad, hvp, DELTA, 10, 0.1)
            j, kl, loss_new = backtracking_line_search(set_and_eval, old, full_step, DELTA,
                                                       loss_old)
            assert j < 10, env_id
            # Measured again from the graph with the parameters that were left set.
            kl_meas, loss_meas = sess.run([g.d_kl, g.pi_loss], feed)
            assert kl_meas <= DELTA + 1e-7 and kl_meas > 0
            assert loss_meas <= loss_old
            np.testing.assert_allclose([kl_meas, loss_meas], [kl, loss_new], rtol=1e-5,
                                       atol=1e-8)
            sess.close()


def test_failed_line_search_restores_old_params():
    with tf.Graph().as_default():
        g, sess, feed, grad, loss_old, hvp, old, set_and_eval = _setup('CartPole-v1')
        _, _, full_step = natural_gradient_step(grad, hvp, DELTA, 10, 0.1)
        # A step in the wrong direction never improves the surrogate.
        j, _, _ = backtracking_line_search(set_and_eval, old, -full_step, DELTA, loss_old)
        assert j == 10
        np.testing.assert_array_equal(sess.run(g.get_pi_params), old)
        sess.close()


def test_npg_takes_the_full_step():
    with tf.Graph().as_default():
        g, sess, feed, grad, loss_old, hvp, old, set_and_eval = _setup('CartPole-v1')
        damping = 0.1
        x, alpha, full_step = natural_gradient_step(grad, hvp, DELTA, 10, damping)
        Hx = hvp(x) + damping * x
        np.testing.assert_allclose(full_step, np.sqrt(2 * DELTA / x.dot(Hx)) * x, rtol=1e-5)
        set_and_eval(old - full_step)
        np.testing.assert_allclose(sess.run(g.get_pi_params), old - full_step, rtol=1e-5,
                                   atol=1e-6)
        # The quadratic model of the KL predicts delta; the measured KL is close to it.
        kl = sess.run(g.d_kl, feed)
        assert 0.3 * DELTA < kl < 3 * DELTA
        sess.close()


def test_update_built_before_the_session_fused_equals_plain():
    """make_trpo_update(None, g, fused=...) builds its graph pieces first, then binds; the
    fused value loop gives the plain loop's numbers on the same batch."""
    from spinup_tf.algos.trpo import make_trpo_update
    stats = []
    for fused in (False, True):
        with tf.Graph().as_default() as graph:
            env = gym.make('CartPole-v1')
            tf.set_random_seed(0)
            g = build_trpo_graph(env.observation_space, env.action_space,
                                 ac_kwargs=dict(hidden_sizes=(16,)))
            unbound = make_trpo_update(None, g, 'trpo', train_v_iters=20, fused=fused)
            sess = make_session()
            sess.run(tf.global_variables_initializer())
            inputs = _batch('CartPole-v1', sess, g, n=300)
            graph.finalize()
            update_on = unbound.bind(sess)
            stats.append([update_on(inputs), sess.run(g.v, {g.x_ph: inputs[0]})])
            sess.close()
    (plain, v_plain), (fused, v_fused) = stats
    assert plain.keys() == fused.keys()
    for k in plain:
        np.testing.assert_allclose(fused[k], plain[k], rtol=1e-6, atol=1e-8, err_msg=k)
    np.testing.assert_allclose(v_fused, v_plain, rtol=1e-6, atol=1e-7)
