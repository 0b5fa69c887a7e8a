"""TRPO / NPG updates on a real batch: KL bound, surrogate improvement, NPG's full step."""
import numpy as np
import gymnasium as gym
import pytest

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.algos.trpo import build_trpo_graph
from spinup_tf.algos.natural_gradient import natural_gradient_step, backtracking_line_search
from spinup_tf.loops.gae_buffer import GAEBuffer

DELTA = 0.01
KL_BOUND = DELTA * (1 + 1e-6)  # float32 round-off is far below this; a breach is a bug


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


def _np_kl_old_new(g, sess, feed):
    """Mean KL(old || current) in float64 numpy, from the old policy's distribution
    parameters stored in the batch (``feed``) and the current policy's, fetched from the
    graph's ``info`` tensors (not from ``d_kl``)."""
    keys = sorted(g.info_phs)
    old = {k: feed[g.info_phs[k]].astype(np.float64) for k in keys}
    new = {k: v.astype(np.float64) for k, v in
           zip(keys, sess.run([g.info[k] for k in keys], {g.x_ph: feed[g.x_ph]}))}
    if keys == ['logp_all']:
        p0, p1 = old['logp_all'], new['logp_all']
        return np.mean(np.sum(np.exp(p0) * (p0 - p1), axis=1))
    mu0, ls0, mu1 = old['mu'], old['log_std'], new['mu']
    ls1 = np.broadcast_to(new['log_std'], mu1.shape)
    kl = ls1 - ls0 + (np.exp(2 * ls0) + (mu0 - mu1) ** 2) / (2 * np.exp(2 * ls1)) - 0.5
    return np.mean(np.sum(kl, axis=1))


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
            # Measured again with the parameters that were left set: in numpy and in the graph.
            kl_np = _np_kl_old_new(g, sess, feed)
            kl_meas, loss_meas = sess.run([g.d_kl, g.pi_loss], feed)
            assert 0 < kl_np <= KL_BOUND, (env_id, kl_np)
            assert loss_meas <= loss_old
            np.testing.assert_allclose([kl_meas, loss_meas], [kl, loss_new], rtol=1e-5,
                                       atol=1e-8)
            np.testing.assert_allclose(kl_meas, kl_np, rtol=1e-4)
            sess.close()


@pytest.mark.parametrize('env_id', ['CartPole-v1', 'Pendulum-v1'])
def test_real_trpo_update_keeps_kl_old_new_within_delta(env_id):
    """One whole TRPO update (make_trpo_update: gradient, CG, line search, value steps) on a
    real batch; then KL(old || new), recomputed in numpy from the batch's old distribution
    parameters and the policy's new ones, lies in [0, delta (1 + 1e-6)] and is the KL the
    update reported. On this CartPole batch, with delta 0.03, the full step's KL is about
    1.04 delta, so the line search must backtrack (j >= 1) for the bound to hold: accepting
    the full step, or testing the KL against the wrong bound, fails here."""
    from spinup_tf.algos.trpo import make_trpo_update
    delta = 0.03 if env_id == 'CartPole-v1' else DELTA
    bound = delta * (1 + 1e-6)
    with tf.Graph().as_default():
        g, sess, feed, grad, loss_old, hvp, old, set_and_eval = _setup(env_id)
        inputs = [feed[ph] for ph in g.all_phs]
        x, alpha, full_step = natural_gradient_step(grad, hvp, delta, 10, 0.1)
        full_kl, _ = set_and_eval(old - full_step)
        set_and_eval(old)
        update_on = make_trpo_update(sess, g, 'trpo', delta=delta, train_v_iters=5)
        stats = update_on(inputs)
        kl = _np_kl_old_new(g, sess, feed)
        assert 0 <= kl <= bound, kl
        assert kl > 0 and stats['BacktrackIters'] < 10  # a step was taken
        np.testing.assert_allclose(stats['KL'], kl, rtol=1e-4)
        if env_id == 'CartPole-v1':
            assert full_kl > bound and stats['BacktrackIters'] >= 1, (full_kl, stats)
        np.testing.assert_allclose(sess.run(g.get_pi_params),
                                   old - 0.8 ** stats['BacktrackIters'] * full_step,
                                   rtol=1e-5, atol=1e-6)
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


def test_npg_update_takes_the_full_step_scaled_to_the_kl_model():
    """NPG's step s: its damped quadratic KL model 0.5 s^T (H + damping I) s is delta, and H
    (the graph's Hessian-vector product) is the curvature of the measured KL: with
    f(t) = KL(old || old - t s) (numpy) = q t^2 + c t^3 + ..., q = 0.5 s^T H s, the
    Richardson combination 2 f(t/2) / (t/2)^2 - f(t) / t^2 at t = 0.5 cancels the cubic term
    and gives q to 0.2 % (CartPole, seed 0; 1.15 q unextrapolated at t = 1). The real npg
    update then moves the parameters by exactly -s, with no line search."""
    from spinup_tf.algos.trpo import make_trpo_update
    with tf.Graph().as_default():
        g, sess, feed, grad, loss_old, hvp, old, set_and_eval = _setup('CartPole-v1')
        damping = 0.1
        x, alpha, full_step = natural_gradient_step(grad, hvp, DELTA, 10, damping)
        Hs = hvp(full_step)
        np.testing.assert_allclose(0.5 * full_step @ (Hs + damping * full_step), DELTA,
                                   rtol=1e-5)
        q = 0.5 * full_step @ Hs

        def f(t):
            set_and_eval(old - t * full_step)
            return _np_kl_old_new(g, sess, feed)
        t = 0.5
        np.testing.assert_allclose(2 * f(t / 2) / (t / 2) ** 2 - f(t) / t ** 2, q, rtol=1e-2)

        set_and_eval(old)
        update_on = make_trpo_update(sess, g, 'npg', delta=DELTA, train_v_iters=5,
                                     damping_coeff=damping, cg_iters=10)
        stats = update_on([feed[ph] for ph in g.all_phs])
        assert 'BacktrackIters' not in stats
        np.testing.assert_allclose(sess.run(g.get_pi_params), old - full_step, rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(stats['KL'], _np_kl_old_new(g, sess, feed), rtol=1e-4)
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
