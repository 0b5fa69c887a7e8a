"""DDPG's graph against numpy: scopes, the shared Q weights of q_pi, the Bellman backup and
loss, and which variables each train step moves."""
import numpy as np

from offpolicy_graphs import (capture, random_batch, run_call, calls, weights, shift_targets,
                              numpy_mlp)

LOW, HIGH = np.array([-2.0], np.float32), np.array([2.0], np.float32)


def test_scopes_and_shared_q_weights(monkeypatch, tmp_path):
    from spinup_tf.utils.tf1 import get_trainable_vars
    g = capture(monkeypatch, tmp_path, 'ddpg')
    with g.run.graph.as_default():
        names = [v.op.name for v in get_trainable_vars('main')]
        assert [n for n in names if n.startswith('main/q/')] == [
            'main/q/dense/kernel', 'main/q/dense/bias', 'main/q/dense_1/kernel',
            'main/q/dense_1/bias', 'main/q/dense_2/kernel', 'main/q/dense_2/bias']
        assert len(get_trainable_vars('target')) == len(names) == 12
    b = random_batch(np.random.RandomState(0), 5, LOW, HIGH)
    pi = g.sess.run(g.act, {g.batch['obs1']: b['obs1']})
    b['acts'] = pi
    got = g.sess.run([g.losses['q'], g.losses['pi']],
                     {g.batch[k]: v for k, v in b.items()})
    # -LossPi is the mean of q(x, pi(x)): the same as Q evaluated at a = pi(x).
    np.testing.assert_allclose(-got[1]['LossPi'], np.mean(got[0]['QVals']), rtol=1e-5)


def test_bellman_backup_and_loss_equal_hand_computation(monkeypatch, tmp_path):
    gamma = 0.95
    g = capture(monkeypatch, tmp_path, 'ddpg', gamma=gamma)
    shift_targets(g, 0.05)
    b = random_batch(np.random.RandomState(3), 64, LOW, HIGH)
    got = g.sess.run(g.losses['q'], {g.batch[k]: v for k, v in b.items()})
    a2 = 2.0 * numpy_mlp(weights(g, 'target/pi'), b['obs2'], np.tanh)
    q_targ = numpy_mlp(weights(g, 'target/q'), np.concatenate([b['obs2'], a2], axis=1))[:, 0]
    backup = b['rews'] + gamma * (1 - b['done']) * q_targ
    np.testing.assert_allclose(got['Backup'], backup, rtol=1e-4, atol=1e-4)
    q = numpy_mlp(weights(g, 'main/q'), np.concatenate([b['obs1'], b['acts']], axis=1))[:, 0]
    np.testing.assert_allclose(got['LossQ'], np.mean((q - backup) ** 2), rtol=1e-4)


def test_train_steps_touch_only_their_networks(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'ddpg')
    q_call, pi_call = calls(g)
    b = random_batch(np.random.RandomState(4), 32, LOW, HIGH)
    pi0, q0, t0 = weights(g, 'main/pi'), weights(g, 'main/q'), weights(g, 'target')
    run_call(g, q_call, b)
    pi1, q1, t1 = weights(g, 'main/pi'), weights(g, 'main/q'), weights(g, 'target')
    assert all(np.array_equal(a, c) for a, c in zip(pi0, pi1))
    assert all(np.array_equal(a, c) for a, c in zip(t0, t1))
    assert not all(np.array_equal(a, c) for a, c in zip(q0, q1))
    run_call(g, pi_call, b)
    q2, pi2 = weights(g, 'main/q'), weights(g, 'main/pi')
    assert all(np.array_equal(a, c) for a, c in zip(q1, q2))
    assert not all(np.array_equal(a, c) for a, c in zip(pi1, pi2))
