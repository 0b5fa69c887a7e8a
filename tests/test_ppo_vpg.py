"""PPO's clipped objective and ClipFrac by hand, its early stop, and VPG's objective."""
import numpy as np
import gymnasium as gym

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.algos.ppo import build_ppo_graph, ppo_policy_steps
from spinup_tf.algos.vpg import build_vpg_graph

CLIP = 0.2


def _fixed_batch(env, n=64, seed=0):
    rng = np.random.RandomState(seed)
    obs = rng.randn(n, env.observation_space.shape[0]).astype(np.float32)
    act = rng.randint(0, env.action_space.n, size=n)
    adv = rng.randn(n).astype(np.float32)
    ret = rng.randn(n).astype(np.float32)
    return obs, act, adv, ret


def test_ppo_clipped_objective_and_clipfrac_by_hand():
    env = gym.make('CartPole-v1')
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        g = build_ppo_graph(env.observation_space, env.action_space,
                            ac_kwargs=dict(hidden_sizes=(8,)), clip_ratio=CLIP)
        with make_session() as sess:
            sess.run(tf.global_variables_initializer())
            obs, act, adv, ret = _fixed_batch(env)
            logp = sess.run(g.logp, {g.x_ph: obs, g.a_ph: act})
            # Old log-probs spread so that ratios land inside and outside [0.8, 1.2].
            logp_old = logp - np.random.RandomState(1).uniform(-0.5, 0.5, size=len(obs))
            feed = dict(zip(g.all_phs, [obs, act, adv, ret, logp_old.astype(np.float32)]))
            pi_loss, clipfrac, kl = sess.run([g.pi_loss, g.clipfrac, g.approx_kl], feed)
            ratio = np.exp(logp - logp_old)
            expected = -np.mean(np.minimum(ratio * adv,
                                           np.clip(ratio, 1 - CLIP, 1 + CLIP) * adv))
            np.testing.assert_allclose(pi_loss, expected, rtol=1e-5)
            outside = (ratio > 1 + CLIP) | (ratio < 1 - CLIP)
            assert 0 < outside.mean() < 1
            np.testing.assert_allclose(clipfrac, outside.mean(), rtol=1e-6)
            np.testing.assert_allclose(kl, np.mean(logp_old - logp), rtol=1e-5)


def test_ppo_early_stop_fires_above_one_and_a_half_target_kl():
    kls = iter([0.001, 0.01, 0.014, 0.016, 0.5])
    calls = []

    def step():
        calls.append(1)
        return next(kls)
    stop, stopped = ppo_policy_steps(step, train_pi_iters=80, target_kl=0.01)
    assert (stop, stopped, len(calls)) == (3, True, 4)   # 0.016 > 0.015 stops at step 3
    stop, stopped = ppo_policy_steps(lambda: 0.0, train_pi_iters=5, target_kl=0.01)
    assert (stop, stopped) == (4, False)


def test_ppo_early_stop_on_a_real_batch():
    env = gym.make('CartPole-v1')
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        g = build_ppo_graph(env.observation_space, env.action_space,
                            ac_kwargs=dict(hidden_sizes=(16,)), pi_lr=1e-2)
        with make_session() as sess:
            sess.run(tf.global_variables_initializer())
            obs, act, adv, ret = _fixed_batch(env, n=256)
            logp = sess.run(g.logp, {g.x_ph: obs, g.a_ph: act})
            inputs = [obs, act, adv, ret, logp]
            feed = dict(zip(g.all_phs, inputs))
            stop, stopped = ppo_policy_steps(
                lambda: sess.run([g.train_pi, g.approx_kl], feed)[1], 80, 0.01)
            assert stopped and stop < 79
            # The KL measured before the last step was above the threshold.
            assert sess.run(g.approx_kl, feed) > 0.015


def test_vpg_objective_by_hand():
    env = gym.make('CartPole-v1')
    with tf.Graph().as_default():
        g = build_vpg_graph(env.observation_space, env.action_space,
                            ac_kwargs=dict(hidden_sizes=(8,)))
        with make_session() as sess:
            sess.run(tf.global_variables_initializer())
            obs, act, adv, ret = _fixed_batch(env)
            logp = sess.run(g.logp, {g.x_ph: obs, g.a_ph: act})
            feed = dict(zip(g.all_phs, [obs, act, adv, ret, logp]))
            pi_loss, ent, v, v_loss = sess.run([g.pi_loss, g.approx_ent, g.v, g.v_loss], feed)
            np.testing.assert_allclose(pi_loss, -np.mean(logp * adv), rtol=1e-5)
            np.testing.assert_allclose(ent, -np.mean(logp), rtol=1e-5)
            np.testing.assert_allclose(v_loss, np.mean((ret - v) ** 2), rtol=1e-5)
