"""Numpy mirrors of the deterministic actors and SAC's policy match the graph exactly."""
import numpy as np
import pytest
from scipy.stats import ks_2samp
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, make_session, placeholders, ACTIVATIONS, activation_by_name
from spinup_tf.reproductions.networks import ACTOR_CRITICS
from spinup_tf.algos.distributions import mlp_sac_actor_critic
from spinup_tf.fast.mirrors import (NoMirror, check_mirror, NUMPY_ACTIVATIONS, dense_chain,
                                    NumpyMLP, deterministic_actor, policy_mirror)

OBS, ACT = 5, 3


@pytest.mark.parametrize('name', sorted(ACTOR_CRITICS))
@pytest.mark.parametrize('low, high', [(-2.0, 2.0), ([-1.0, 0.0, 3.0], [1.0, 0.5, 9.0])])
def test_deterministic_actors_match_the_graph(name, low, high):
    space = Box(np.array(low, np.float32) * np.ones(ACT, np.float32),
                np.array(high, np.float32) * np.ones(ACT, np.float32))
    with tf.Graph().as_default():
        x, a = placeholders(OBS, ACT)
        with tf.variable_scope('main'):
            pi = ACTOR_CRITICS[name](x, a, action_space=space)[0]
        actor = deterministic_actor(x, 'main/pi', space.low, space.high)
        sess = make_session()
        sess.run(tf.global_variables_initializer())
        # Non-trivial weights: the initial output bias is zero for most actors.
        sess.run([tf.assign_add(v, 0.05 * tf.random_normal(tf.shape(v)))
                  for v in tf.trainable_variables()])
        actor.pull(sess)
        check_mirror(sess, x, pi, actor, OBS, n=64)
        obs = np.random.RandomState(0).randn(OBS).astype(np.float32)
        act = actor(obs)
        assert np.all(act >= space.low) and np.all(act <= space.high)
        # Weights refreshed from values (as the fused window hands them over).
        sess.run([tf.assign_add(v, tf.ones_like(v)) for v in actor.variables])
        actor.set_weights(sess.run(actor.variables))
        np.testing.assert_allclose(actor(obs), sess.run(pi, {x: obs[None]})[0], rtol=1e-4,
                                   atol=1e-5)


@pytest.mark.parametrize('activation', ACTIVATIONS)
def test_every_activation_has_an_exact_numpy_twin(activation):
    fn = activation_by_name(activation)
    xs = np.linspace(-8, 8, 101, dtype=np.float32)
    with tf.Graph().as_default():
        expected = make_session().run(fn(tf.constant(xs)))
    np.testing.assert_allclose(NUMPY_ACTIVATIONS[fn.__name__](xs.copy()), expected,
                               rtol=1e-5, atol=1e-6)


def test_a_network_without_a_numpy_twin_is_refused():
    with tf.Graph().as_default():
        x, a = placeholders(OBS, ACT)
        with tf.variable_scope('main'):
            ACTOR_CRITICS['mlp_td3'](x, a, activation=tf.nn.crelu,
                                     action_space=Box(-1.0, 1.0, (ACT,)))
        assert deterministic_actor(x, 'main/pi', -1.0, 1.0) is None
        with pytest.raises(NoMirror):
            dense_chain(x, 'nothing/here')


def test_a_wrong_mirror_fails_the_check():
    with tf.Graph().as_default():
        x, a = placeholders(OBS, ACT)
        with tf.variable_scope('main'):
            pi = ACTOR_CRITICS['mlp_td3'](x, a, action_space=Box(-1.0, 1.0, (ACT,)))[0]
        layers, _ = dense_chain(x, 'main/pi')
        mirror = NumpyMLP(layers[:-1] + [layers[-1]._replace(activation=tf.nn.sigmoid)])
        sess = make_session()
        sess.run(tf.global_variables_initializer())
        mirror.pull(sess)
        with pytest.raises(NoMirror):
            check_mirror(sess, x, pi, mirror, OBS)


def test_sac_actor_matches_mean_and_samples_the_squashed_gaussian():
    space = Box(np.array([-1.0, 0.0, 2.0], np.float32), np.array([1.0, 4.0, 3.0], np.float32))
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x_ph, a_ph = placeholders(OBS, ACT)
        with tf.variable_scope('main'):
            mu, pi, _, _, _ = mlp_sac_actor_critic(x_ph, a_ph, hidden_sizes=(16, 16),
                                                   action_space=space)
        actor, checks = policy_mirror(x_ph, mu, pi, 'main/pi', space)
        sess = make_session()
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign_add(v, 0.2 * tf.random_normal(tf.shape(v)))
                  for v in tf.trainable_variables()])
        actor.pull(sess)
        for tensor, mirror in checks:
            mirror.pull(sess)
            check_mirror(sess, x_ph, tensor, mirror, OBS, n=64)
        # Samples: same distribution as the graph's pi for one observation.
        obs = np.random.RandomState(1).randn(OBS).astype(np.float32)
        np.random.seed(0)
        ours = np.stack([actor.sample(obs) for _ in range(4000)])
        theirs = sess.run(pi, {x_ph: np.repeat(obs[None], 4000, axis=0)})
    assert np.all(ours >= space.low) and np.all(ours <= space.high)
    for dim in range(ACT):  # two-sample Kolmogorov-Smirnov distance per action dimension
        assert ks_2samp(ours[:, dim], theirs[:, dim]).statistic < 0.05
    # A sampler with the wrong spread is told apart by the same test.
    narrow = np.stack([actor(obs) + 0.5 * (actor.sample(obs) - actor(obs))
                       for _ in range(4000)])
    assert max(ks_2samp(narrow[:, d], theirs[:, d]).statistic for d in range(ACT)) > 0.1
