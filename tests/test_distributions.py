import numpy as np
import scipy.special
import scipy.stats
from gymnasium.spaces import Box, Discrete

from spinup_tf.utils.tf1 import tf, placeholder, placeholder_from_space, get_trainable_vars
from spinup_tf.algos.distributions import (gaussian_likelihood, diagonal_gaussian_kl,
                                           categorical_kl, mlp_categorical_policy,
                                           mlp_gaussian_policy, mlp_actor_critic)


def _np_gauss_kl(mu0, log_std0, mu1, log_std1):
    s0, s1 = np.exp(log_std0), np.exp(log_std1)
    kl = np.log(s1 / s0) + (s0 ** 2 + (mu0 - mu1) ** 2) / (2 * s1 ** 2) - 0.5
    return kl.sum(axis=1).mean()


def _np_cat_kl(logp0, logp1):
    return (np.exp(logp0) * (logp0 - logp1)).sum(axis=1).mean()


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


# --------------------------------------------------------------------------------------------
# Likelihoods and KLs
# --------------------------------------------------------------------------------------------
def test_gaussian_likelihood_matches_scipy():
    rng = np.random.RandomState(0)
    x, mu = rng.normal(size=(2, 7, 3)).astype(np.float32)
    log_std = rng.uniform(-1.5, 0.5, size=3).astype(np.float32)
    with tf.Graph().as_default():
        out = gaussian_likelihood(tf.constant(x), tf.constant(mu), tf.constant(log_std))
        assert out.shape.as_list() == [7]
        val = _run(out)
    ref = scipy.stats.norm.logpdf(x, loc=mu, scale=np.exp(log_std)).sum(axis=1)
    np.testing.assert_allclose(val, ref, rtol=1e-5, atol=1e-5)


def test_diagonal_gaussian_kl():
    rng = np.random.RandomState(1)
    mu0, mu1 = rng.normal(size=(2, 5, 3)).astype(np.float32)
    ls0, ls1 = rng.uniform(-1, 0.5, size=(2, 5, 3)).astype(np.float32)
    with tf.Graph().as_default():
        c = tf.constant
        kl = diagonal_gaussian_kl(c(mu0), c(ls0), c(mu1), c(ls1))
        kl_rev = diagonal_gaussian_kl(c(mu1), c(ls1), c(mu0), c(ls0))
        kl_self = diagonal_gaussian_kl(c(mu0), c(ls0), c(mu0), c(ls0))
        kl_v, kl_rev_v, kl_self_v = _run([kl, kl_rev, kl_self])
    np.testing.assert_allclose(kl_v, _np_gauss_kl(mu0, ls0, mu1, ls1), rtol=1e-5)
    np.testing.assert_allclose(kl_rev_v, _np_gauss_kl(mu1, ls1, mu0, ls0), rtol=1e-5)
    assert abs(kl_self_v) < 1e-6
    # the closed form itself: Monte-Carlo estimate of E_p0[log p0 - log p1] for one row
    xs = mu0[0] + np.exp(ls0[0]) * rng.normal(size=(200000, 3))
    mc = (scipy.stats.norm.logpdf(xs, mu0[0], np.exp(ls0[0]))
          - scipy.stats.norm.logpdf(xs, mu1[0], np.exp(ls1[0]))).sum(axis=1).mean()
    np.testing.assert_allclose(_np_gauss_kl(mu0[:1], ls0[:1], mu1[:1], ls1[:1]), mc, rtol=3e-2)


def test_categorical_kl():
    rng = np.random.RandomState(2)
    logp0 = scipy.special.log_softmax(rng.normal(size=(6, 4)), axis=1).astype(np.float32)
    logp1 = scipy.special.log_softmax(rng.normal(size=(6, 4)), axis=1).astype(np.float32)
    with tf.Graph().as_default():
        kl = categorical_kl(tf.constant(logp0), tf.constant(logp1))
        kl_self = categorical_kl(tf.constant(logp0), tf.constant(logp0))
        kl_v, kl_self_v = _run([kl, kl_self])
    np.testing.assert_allclose(kl_v, _np_cat_kl(logp0, logp1), rtol=1e-5)
    assert kl_v > 0 and abs(kl_self_v) < 1e-7


# --------------------------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------------------------
def test_categorical_policy_logp_and_kl():
    rng = np.random.RandomState(3)
    space = Discrete(4)
    obs = rng.normal(size=(9, 3)).astype(np.float32)
    acts = rng.randint(4, size=9).astype(np.int32)
    with tf.Graph().as_default():
        x_ph, a_ph = placeholder(3), placeholder_from_space(space)
        assert a_ph.dtype == tf.int32
        with tf.variable_scope('pi'):
            pi, logp, logp_pi, info, info_phs, d_kl = mlp_categorical_policy(
                x_ph, a_ph, (8,), tf.tanh, None, space)
        assert set(info) == {'logp_all'} and set(info_phs) == {'logp_all'}
        assert info_phs['logp_all'].shape.as_list() == [None, 4]
        assert pi.shape.as_list() == [None] and logp.shape.as_list() == [None]
        params = get_trainable_vars('pi')
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            W0, b0, W1, b1 = sess.run(params)
            feed = {x_ph: obs, a_ph: acts}
            pi_v, logp_v, logp_pi_v, logp_all_v = sess.run(
                [pi, logp, logp_pi, info['logp_all']], feed)
            kl_self = sess.run(d_kl, {**feed, info_phs['logp_all']: logp_all_v})
            old = logp_all_v + rng.normal(scale=0.3, size=logp_all_v.shape)
            old = scipy.special.log_softmax(old, axis=1).astype(np.float32)
            kl_v = sess.run(d_kl, {**feed, info_phs['logp_all']: old})
    ref_logp_all = scipy.special.log_softmax(np.tanh(obs @ W0 + b0) @ W1 + b1, axis=1)
    np.testing.assert_allclose(logp_all_v, ref_logp_all, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(logp_v, ref_logp_all[np.arange(9), acts], rtol=1e-5, atol=1e-5)
    assert pi_v.shape == (9,) and np.all((0 <= pi_v) & (pi_v < 4))
    np.testing.assert_allclose(logp_pi_v, ref_logp_all[np.arange(9), pi_v], rtol=1e-5, atol=1e-5)
    assert abs(kl_self) < 1e-6
    np.testing.assert_allclose(kl_v, _np_cat_kl(old, logp_all_v), rtol=1e-4)  # KL(old || new)


def test_gaussian_policy_logp_and_kl():
    rng = np.random.RandomState(4)
    space = Box(-1, 1, shape=(2,), dtype=np.float32)
    obs = rng.normal(size=(9, 3)).astype(np.float32)
    acts = rng.normal(size=(9, 2)).astype(np.float32)
    with tf.Graph().as_default():
        x_ph, a_ph = placeholder(3), placeholder_from_space(space)
        with tf.variable_scope('pi'):
            pi, logp, logp_pi, info, info_phs, d_kl = mlp_gaussian_policy(
                x_ph, a_ph, (8,), tf.tanh, None, space)
        assert set(info) == {'mu', 'log_std'} and set(info_phs) == {'mu', 'log_std'}
        assert pi.shape.as_list() == [None, 2] and logp.shape.as_list() == [None]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x_ph: obs, a_ph: acts}
            pi_v, logp_v, logp_pi_v, mu_v, ls_v = sess.run(
                [pi, logp, logp_pi, info['mu'], info['log_std']], feed)
            old_mu = mu_v + 0.2 * rng.normal(size=mu_v.shape).astype(np.float32)
            old_ls = np.tile(ls_v + np.float32(0.1), (9, 1))
            kl_self = sess.run(d_kl, {**feed, info_phs['mu']: mu_v,
                                      info_phs['log_std']: np.tile(ls_v, (9, 1))})
            kl_v = sess.run(d_kl, {**feed, info_phs['mu']: old_mu, info_phs['log_std']: old_ls})
    np.testing.assert_allclose(ls_v, [-0.5, -0.5])
    ref = scipy.stats.norm.logpdf(acts, mu_v, np.exp(ls_v)).sum(axis=1)
    np.testing.assert_allclose(logp_v, ref, rtol=1e-5, atol=1e-5)
    ref_pi = scipy.stats.norm.logpdf(pi_v, mu_v, np.exp(ls_v)).sum(axis=1)
    np.testing.assert_allclose(logp_pi_v, ref_pi, rtol=1e-5, atol=1e-5)
    assert abs(kl_self) < 1e-6
    np.testing.assert_allclose(kl_v, _np_gauss_kl(old_mu, old_ls, mu_v, np.tile(ls_v, (9, 1))),
                               rtol=1e-4)  # KL(old || new)


def test_actor_critic_box():
    space = Box(-1, 1, shape=(2,), dtype=np.float32)
    with tf.Graph().as_default():
        x_ph, a_ph = placeholder(3), placeholder_from_space(space)
        pi, logp, logp_pi, info, info_phs, d_kl, v = mlp_actor_critic(
            x_ph, a_ph, hidden_sizes=(8, 8), action_space=space)
        names = [var.op.name for var in tf.global_variables()
                 if not var.op.name.startswith('random_counters/')]  # the sampler's counter
        assert names == ['pi/dense/kernel', 'pi/dense/bias', 'pi/dense_1/kernel',
                         'pi/dense_1/bias', 'pi/dense_2/kernel', 'pi/dense_2/bias',
                         'pi/log_std', 'v/dense/kernel', 'v/dense/bias', 'v/dense_1/kernel',
                         'v/dense_1/bias', 'v/dense_2/kernel', 'v/dense_2/bias']
        assert v.shape.as_list() == [None]
        log_std = [var for var in tf.global_variables() if var.op.name == 'pi/log_std'][0]
        obs = np.random.RandomState(5).normal(size=(4, 3)).astype(np.float32)
        ls_v, v_v, pi_v = _run([log_std, v, pi], {x_ph: obs})
    np.testing.assert_array_equal(ls_v, [-0.5, -0.5])
    assert v_v.shape == (4,) and pi_v.shape == (4, 2)


def test_actor_critic_discrete():
    space = Discrete(3)
    rng = np.random.RandomState(6)
    with tf.Graph().as_default():
        x_ph, a_ph = placeholder(4), placeholder_from_space(space)
        pi, logp, logp_pi, info, info_phs, d_kl, v = mlp_actor_critic(
            x_ph, a_ph, hidden_sizes=(8,), action_space=space)
        assert a_ph.dtype == tf.int32
        assert not any('log_std' in var.op.name for var in tf.global_variables())
        assert len(get_trainable_vars('pi')) == 4 and len(get_trainable_vars('v')) == 4
        obs = rng.normal(size=(5, 4)).astype(np.float32)
        acts = np.array([0, 1, 2, 1, 0], dtype=np.int32)
        pi_v, logp_v, v_v, logp_all = _run([pi, logp, v, info['logp_all']],
                                           {x_ph: obs, a_ph: acts})
    assert pi_v.shape == (5,) and v_v.shape == (5,) and logp_v.shape == (5,)
    np.testing.assert_allclose(logp_v, logp_all[np.arange(5), acts], rtol=1e-6)
    np.testing.assert_allclose(np.exp(logp_all).sum(axis=1), 1.0, rtol=1e-5)
