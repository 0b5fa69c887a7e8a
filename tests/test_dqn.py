"""DQN against numpy: the TD loss of DQN, Double DQN and the dueling network on the real graph,
gradient clipping, the epsilon schedule, the target network's update schedule in a run, and
the fast engine's numpy mirror of the greedy policy."""
import glob
import os.path as osp

import numpy as np
import gymnasium as gym
import pytest

import offpolicy_graphs
from offpolicy_graphs import capture, run_call, calls, weights, shift_targets, numpy_mlp
from spinup_tf.algos.dqn import dqn, linear_schedule
from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.utils.errors import UserInputError
from spinup_tf.loops import off_policy
from spinup_tf.fast.mirrors import policy_mirror, check_mirror

N_ACTS = 2  # CartPole's


def cartpole():
    return gym.make('CartPole-v1')


def one_hot_batch(rng, n):
    return offpolicy_graphs.one_hot_batch(rng, n, N_ACTS, 4)


def q_by_hand(w, x, dueling):
    """Q(x, .) of a [kernel, bias, ...] list: an MLP, or a ReLU trunk with value and
    advantage heads (V + A - mean A)."""
    if not dueling:
        return numpy_mlp(w, x)
    h = x
    for i in range(0, len(w) - 4, 2):
        h = np.maximum(h @ w[i] + w[i + 1], 0)
    value, adv = h @ w[-4] + w[-3], h @ w[-2] + w[-1]
    return value + adv - adv.mean(axis=1, keepdims=True)


def huber(delta):
    a = np.abs(delta)
    return np.where(a <= 1.0, 0.5 * delta ** 2, a - 0.5)


@pytest.mark.parametrize('double,dueling,loss', [
    (False, False, 'huber'), (True, False, 'huber'), (False, True, 'mse'), (True, True, 'mse')])
def test_td_loss_matches_numpy(monkeypatch, tmp_path, double, dueling, loss):
    gamma, n = 0.9, 64
    g = capture(monkeypatch, tmp_path, 'dqn', env_fn=cartpole, gamma=gamma, double=double,
                dueling=dueling, loss=loss)
    shift_targets(g, 0.05)  # so a wrong network in the target shows
    b = one_hot_batch(np.random.RandomState(3), n)
    b['rews'] *= 3  # TD errors on both sides of Huber's threshold
    got = g.sess.run(g.losses['q'], {g.batch[k]: v for k, v in b.items()})

    main, targ = weights(g, 'main/q'), weights(g, 'target/q')
    q = (q_by_hand(main, b['obs1'], dueling) * b['acts']).sum(axis=1)
    q_targ_next = q_by_hand(targ, b['obs2'], dueling)
    rows = np.arange(n)
    chosen = np.argmax(q_by_hand(main, b['obs2'], dueling), axis=1)  # Double: main chooses
    next_double, next_dqn = q_targ_next[rows, chosen], q_targ_next.max(axis=1)
    assert np.abs(next_double - next_dqn).max() > 1e-3  # the two targets differ on this batch
    backup = b['rews'] + gamma * (1 - b['done']) * (next_double if double else next_dqn)
    delta = q - backup
    expected = huber(delta).mean() if loss == 'huber' else (delta ** 2).mean()
    if loss == 'huber':
        assert (np.abs(delta) > 1).any() and (np.abs(delta) < 1).any()
    np.testing.assert_allclose(got['QVals'], q, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got['LossQ'], expected, rtol=1e-4)
    # The greedy action is argmax Q.
    np.testing.assert_array_equal(g.sess.run(g.act, {g.batch['obs1']: b['obs1']}),
                                  np.argmax(q_by_hand(main, b['obs1'], dueling), axis=1))


def test_update_is_one_step_on_the_q_network_only(monkeypatch, tmp_path):
    g = capture(monkeypatch, tmp_path, 'dqn', env_fn=cartpole, lr=1e-2)
    (call,) = calls(g)
    assert [k for k, v in g.lists[call].items() if isinstance(v, tf.Operation)] == ['train']
    before_main, before_targ = weights(g, 'main/q'), weights(g, 'target/q')
    run_call(g, call, one_hot_batch(np.random.RandomState(0), 32))
    after_main, after_targ = weights(g, 'main/q'), weights(g, 'target/q')
    assert any(np.abs(a - b).max() > 0 for a, b in zip(after_main, before_main))
    assert all(np.array_equal(a, b) for a, b in zip(after_targ, before_targ))
    # The target update given to the loop is a hard copy at polyak 0.
    op, interval = g.target_update
    assert interval == 10000
    g.sess.run(op)
    assert all(np.array_equal(a, b) for a, b in zip(weights(g, 'target/q'), after_main))


@pytest.mark.parametrize('clip', [None, 1e-3, 1e6])
def test_gradients_are_clipped_to_the_global_norm(monkeypatch, tmp_path, clip):
    """With plain gradient descent in place of Adam, one step of DQN's train op moves the
    Q network by lr * g, where g is rescaled to global norm max_grad_norm when larger:
    g <- g * min(1, c / ||g||)."""
    lr = 0.1
    monkeypatch.setattr(off_policy.Run, 'optimizer',
                        lambda self, rate: tf.train.GradientDescentOptimizer(rate))
    g = capture(monkeypatch, tmp_path, 'dqn', env_fn=cartpole, lr=lr, max_grad_norm=clip or 0)
    b = one_hot_batch(np.random.RandomState(0), 32)
    with g.run.graph.as_default():
        q_vars = tf.trainable_variables('main/q')
        grads = tf.gradients(g.losses['q']['LossQ'], q_vars)
    raw = g.sess.run(grads, offpolicy_graphs.feed(g, b))
    norm = np.sqrt(sum((x ** 2).sum() for x in raw))
    scale = 1.0 if not clip else min(1.0, clip / norm)
    before = weights(g, 'main/q')
    run_call(g, 'q', b)
    for w0, w1, gr in zip(before, weights(g, 'main/q'), raw):
        np.testing.assert_allclose(w1, w0 - lr * scale * gr, rtol=1e-4, atol=1e-7)
    assert clip != 1e-3 or scale < 1e-2  # the small clip really clips


def test_epsilon_schedule_is_linear_then_flat():
    eps = linear_schedule(1.0, 0.05, 1000)
    assert eps(0) == 1.0 and eps(1000) == pytest.approx(0.05) and eps(5000) == pytest.approx(0.05)
    assert eps(500) == pytest.approx(0.525)
    assert linear_schedule(1.0, 0.1, 0)(0) == 0.1  # no exploration phase: flat from the start


def test_bad_settings_are_user_errors(tmp_path):
    for kwargs in (dict(loss='l1'), dict(max_grad_norm=-1), dict(ac_kwargs=dict(dueling=True))):
        with pytest.raises(UserInputError):
            dqn(cartpole, logger_kwargs=dict(output_dir=str(tmp_path / 'x'), quiet=True),
                **kwargs)
    with pytest.raises(UserInputError, match='Discrete action space'):
        dqn(lambda: gym.make('Pendulum-v1'),
            logger_kwargs=dict(output_dir=str(tmp_path / 'y'), quiet=True))


@pytest.mark.parametrize('dueling', [False, True])
def test_numpy_mirror_acts_as_the_graph(monkeypatch, tmp_path, dueling):
    g = capture(monkeypatch, tmp_path, 'dqn', env_fn=cartpole, dueling=dueling)
    with g.run.graph.as_default():
        mirror, checks = policy_mirror(g.batch['obs1'], g.act, None, 'main/pi',
                                       g.run.policy_space)
    assert mirror is not None
    mirror.pull(g.sess)
    for tensor, check in checks:
        check_mirror(g.sess, g.batch['obs1'], tensor, check, 4)
    obs = np.random.RandomState(5).randn(200, 4).astype(np.float32)
    graph_actions = g.sess.run(g.act, {g.batch['obs1']: obs})
    np.testing.assert_array_equal(mirror.batch(obs), graph_actions)
    assert [mirror(o) for o in obs[:20]] == list(graph_actions[:20])


def _variables(run_dir):
    reader = tf.train.load_checkpoint(osp.join(run_dir, 'tf1_save', 'variables', 'variables'))
    names = [n for n in reader.get_variable_to_shape_map()
             if n.startswith('main/q/') and 'Adam' not in n]
    return {n: (reader.get_tensor(n), reader.get_tensor('target' + n[4:])) for n in names}


@pytest.mark.parametrize('fused', [True, False])
def test_target_network_follows_its_interval_and_epsilon_its_schedule(tmp_path, fused):
    """In a run: with an interval of 1 the target equals the main network at the end; with
    one longer than the run it keeps its initial weights. The Epsilon column follows the
    schedule."""
    ends = {}
    for interval in (1, 10 ** 6):
        out = str(tmp_path / str(interval))
        dqn(cartpole, seed=1, steps_per_epoch=200, epochs=2, start_steps=50, update_after=50,
            update_every=4, target_update_interval=interval, exploration_fraction=0.75,
            num_test_episodes=1, ac_kwargs=dict(hidden_sizes=(16,)), fused=fused,
            logger_kwargs=dict(output_dir=out, quiet=True))
        ends[interval] = _variables(out)
        with open(osp.join(out, 'progress.txt')) as f:
            header, *rows = [line.rstrip('\n').split('\t') for line in f]
        eps = [float(r[header.index('Epsilon')]) for r in rows]
        np.testing.assert_allclose(eps, [1.0 - 0.95 * 200 / 300, 0.05])
    for main, target in ends[1].values():
        np.testing.assert_array_equal(main, target)
    assert all(not np.array_equal(main, target) for main, target in ends[10 ** 6].values())
    assert not glob.glob(osp.join(str(tmp_path), '*', 'videos'))
