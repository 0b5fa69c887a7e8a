"""TD3's graph against numpy: the clipped double-Q loss with clipped smoothing noise (a
stddev other than 1), the policy's bounds, and which variables each train step moves."""
import numpy as np
import gymnasium as gym

from offpolicy_graphs import (capture, random_batch, run_call, calls, weights, shift_targets,
                              numpy_mlp, noise_like, scale)

LOW, HIGH = np.array([-0.5], np.float32), np.array([1.5], np.float32)


def asymmetric_pendulum():
    return gym.wrappers.RescaleAction(gym.make('Pendulum-v1'), LOW, HIGH)


def test_target_networks_equal_main_after_init(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'td3')
    for scope in ('pi', 'q1', 'q2'):
        m, t = weights(g, 'main/' + scope), weights(g, 'target/' + scope)
        assert len(m) == len(t) == 6
        for a, b in zip(m, t):
            np.testing.assert_array_equal(a, b)


def test_policy_respects_asymmetric_bounds(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'td3', env_fn=asymmetric_pendulum)
    x = 100 * np.random.RandomState(1).randn(500, 3)
    pi = g.sess.run(g.act, {g.batch['obs1']: x})
    assert np.all(pi >= LOW - 1e-6) and np.all(pi <= HIGH + 1e-6)
    assert pi.min() < -0.45 and pi.max() > 1.45  # saturated outputs reach both ends


def test_q_loss_equals_hand_computation_with_clipped_smoothing_noise(monkeypatch, tmp_path):
    gamma, target_noise, noise_clip = 0.9, 0.3, 0.4
    g = capture(monkeypatch, tmp_path, 'td3', env_fn=asymmetric_pendulum, gamma=gamma,
                target_noise=target_noise, noise_clip=noise_clip)
    shift_targets(g)
    b = random_batch(np.random.RandomState(0), 64, LOW, HIGH)
    got = g.sess.run(g.losses['q'], {g.batch[k]: v for k, v in b.items()})

    # The noise: stddev * N(0, 1) (here a fixed pattern), clipped at noise_clip. With
    # stddev 0.3 some draws lie inside the clip and some outside, so both matter.
    eps = np.clip(target_noise * noise_like((64, 1)), -noise_clip, noise_clip)
    assert 0 < np.mean(np.abs(eps) == noise_clip) < 1
    w = {s: weights(g, 'target/' + s) for s in ('pi', 'q1', 'q2')}
    pi_targ = scale(numpy_mlp(w['pi'], b['obs2'], np.tanh), LOW, HIGH)
    a2 = np.clip(pi_targ + eps, LOW, HIGH)
    xa2 = np.concatenate([b['obs2'], a2], axis=1)
    q_targ = np.minimum(numpy_mlp(w['q1'], xa2)[:, 0], numpy_mlp(w['q2'], xa2)[:, 0])
    backup = b['rews'] + gamma * (1 - b['done']) * q_targ  # terminal: no bootstrap
    xa = np.concatenate([b['obs1'], b['acts']], axis=1)
    q1 = numpy_mlp(weights(g, 'main/q1'), xa)[:, 0]
    q2 = numpy_mlp(weights(g, 'main/q2'), xa)[:, 0]
    np.testing.assert_allclose(got['Q1Vals'], q1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got['Q2Vals'], q2, rtol=1e-4, atol=1e-5)
    expected = np.mean((q1 - backup) ** 2) + np.mean((q2 - backup) ** 2)
    np.testing.assert_allclose(got['LossQ'], expected, rtol=1e-4)


def test_policy_loss_is_minus_q1_of_the_policy(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'td3')
    b = random_batch(np.random.RandomState(5), 32, np.array([-2.0]), np.array([2.0]))
    got = g.sess.run(g.losses['pi'], {g.batch[k]: v for k, v in b.items()})
    pi = 2.0 * numpy_mlp(weights(g, 'main/pi'), b['obs1'], np.tanh)
    q1_pi = numpy_mlp(weights(g, 'main/q1'), np.concatenate([b['obs1'], pi], axis=1))[:, 0]
    np.testing.assert_allclose(got['LossPi'], -np.mean(q1_pi), rtol=1e-4, atol=1e-5)


def test_q_step_moves_only_q_and_policy_step_moves_pi_then_targets(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'td3')
    q_call, pi_call = calls(g)
    b = random_batch(np.random.RandomState(2), 32, np.array([-2.0]), np.array([2.0]))
    scopes = ('main/pi', 'main/q1', 'main/q2', 'target/pi', 'target/q1', 'target/q2')

    def snapshot():
        return {s: weights(g, s) for s in scopes}

    def changed(before, after):
        return {s for s in scopes if any(np.any(x != y) for x, y in zip(before[s], after[s]))}

    s0 = snapshot()
    run_call(g, q_call, b)
    s1 = snapshot()
    assert changed(s0, s1) == {'main/q1', 'main/q2'}
    run_call(g, pi_call, b)
    s2 = snapshot()
    assert changed(s1, s2) == {'main/pi', 'target/pi', 'target/q1', 'target/q2'}
    # The targets followed the new weights: polyak of the values after the policy step.
    for s in ('pi', 'q1'):
        for t1, m2, t2 in zip(s1['target/' + s], s2['main/' + s], s2['target/' + s]):
            np.testing.assert_allclose(t2, 0.995 * t1 + 0.005 * m2, rtol=1e-5, atol=1e-7)
