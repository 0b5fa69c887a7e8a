"""The on-policy fused path: numpy mirrors of the policies, the fused training loops, and
whole runs with ``fused=True`` / ``False``."""
import csv
import json

import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

from spinup_tf.utils.tf1 import tf, make_session, get_trainable_vars, get_vars
from spinup_tf.utils.envs import EnvFn
from spinup_tf.algos.trpo import build_trpo_graph
from spinup_tf.algos.ppo import build_ppo_graph, ppo_objective, ppo_policy_steps
from spinup_tf.loops.on_policy import FusedOnPolicy, value_steps, policy_step_fns
from spinup_tf.fast.mirrors import NoMirror
from spinup_tf.fast.onpolicy_mirrors import (actor_critic_layers, numpy_actor_critic,
                                             check_actor_critic, make_numpy_actor_critic)

OBS = Box(-np.inf, np.inf, (5,), np.float32)
SPACES = {'categorical': Discrete(3), 'gaussian': Box(-1, 1, (2,), np.float32)}


class _Log:
    def __init__(self):
        self.lines = []

    def log(self, msg, color=None):
        self.lines.append(msg)


def _graph(kind, ac_kwargs=None, seed=0):
    tf.set_random_seed(seed)
    g = build_trpo_graph(OBS, SPACES[kind], ac_kwargs=ac_kwargs or dict(hidden_sizes=(16, 16)))
    sess = make_session()
    sess.run(tf.global_variables_initializer())
    return g, sess


def _perturb(sess, scope, seed):
    """Give every variable of ``scope`` new random values (so a re-pull is visible)."""
    rng = np.random.RandomState(seed)
    for v in get_trainable_vars(scope):
        v.load(rng.normal(0, 0.5, v.shape.as_list()).astype(np.float32), sess)


@pytest.mark.parametrize('kind', ['categorical', 'gaussian'])
def test_mirror_matches_graph(kind):
    with tf.Graph().as_default():
        g, sess = _graph(kind)
        ac = numpy_actor_critic(sess, g, actor_critic_layers(g, SPACES[kind]), 5)
        assert ac is not None
        check_actor_critic(sess, g, ac, 5, n=64, rtol=1e-5, atol=1e-6)
        # New weights in the graph: the mirror is stale until it pulls them.
        _perturb(sess, 'pi', 1)
        _perturb(sess, 'v', 2)
        with pytest.raises(NoMirror):
            check_actor_critic(sess, g, ac, 5)
        ac.pull(sess)
        check_actor_critic(sess, g, ac, 5, n=64, rtol=1e-5, atol=1e-6)

        # By hand: logits / mu, v and logp of given actions on a batch.
        obs = np.random.RandomState(3).uniform(-2, 2, (32, 5)).astype(np.float32)
        if kind == 'categorical':
            act = np.arange(32) % 3
            logp_all, v, logp = sess.run([g.info['logp_all'], g.v, g.logp],
                                         {g.x_ph: obs, g.a_ph: act})
            np.testing.assert_allclose(ac.policy.dist_params(obs)['logp_all'], logp_all,
                                       rtol=1e-5, atol=1e-6)
        else:
            act = np.random.RandomState(4).normal(size=(32, 2)).astype(np.float32)
            mu, log_std, v, logp = sess.run([g.info['mu'], g.info['log_std'], g.v, g.logp],
                                            {g.x_ph: obs, g.a_ph: act})
            np.testing.assert_allclose(ac.policy.dist_params(obs)['mu'], mu, rtol=1e-5,
                                       atol=1e-6)
            np.testing.assert_array_equal(ac.policy.log_std, log_std)
        np.testing.assert_allclose(ac.value_batch(obs), v, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose([ac.value(o) for o in obs], v, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ac.policy.log_prob(obs, act), logp, rtol=1e-5, atol=1e-6)
        sess.close()


def test_categorical_sampling_follows_softmax():
    with tf.Graph().as_default():
        g, sess = _graph('categorical')
        # Output bias (0, 1, 2) and a zero output kernel: probabilities (0.09, 0.245, 0.665).
        layers = actor_critic_layers(g, SPACES['categorical'])
        out = layers.pi_layers[-1]
        out.kernel.load(np.zeros(out.kernel.shape.as_list(), np.float32), sess)
        out.bias.load(np.array([0.0, 1.0, 2.0], np.float32), sess)
        ac = numpy_actor_critic(sess, g, layers, 5)
        probs = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
        ac.policy.rng = np.random.RandomState(0)
        o = np.ones(5, np.float32)
        n = 20000
        steps = [ac.step(o) for _ in range(n)]
        acts = np.array([s[0] for s in steps])
        freq = np.bincount(acts, minlength=3) / n
        # 4 standard errors (<= 0.0134): a reversed, uniform or unnormalised sampler fails.
        np.testing.assert_allclose(freq, probs, atol=4 * np.sqrt(0.25 / n))
        np.testing.assert_allclose([s[2] for s in steps[:50]], np.log(probs[acts[:50]]),
                                   rtol=1e-5)
        np.testing.assert_allclose(steps[0][3][0], np.log(probs), rtol=1e-5)
        sess.close()


def test_gaussian_sampling_mean_and_std():
    with tf.Graph().as_default():
        g, sess = _graph('gaussian')
        layers = actor_critic_layers(g, SPACES['gaussian'])
        layers.log_std.load(np.array([-1.0, 0.3], np.float32), sess)
        ac = numpy_actor_critic(sess, g, layers, 5)
        ac.policy.rng = np.random.RandomState(0)
        o = np.full(5, 0.5, np.float32)
        mu = sess.run(g.info['mu'], {g.x_ph: o[None]})[0]
        n = 20000
        steps = [ac.step(o) for _ in range(n)]
        acts = np.array([s[0] for s in steps])
        std = np.exp([-1.0, 0.3])
        assert np.all(np.abs(acts.mean(0) - mu) < 4 * std / np.sqrt(n))
        np.testing.assert_allclose(acts.std(0), std, rtol=0.03)
        # logp of the samples: the graph's value for the same actions
        obs = np.tile(o, (50, 1))
        np.testing.assert_allclose([s[2] for s in steps[:50]],
                                   sess.run(g.logp, {g.x_ph: obs, g.a_ph: acts[:50]}),
                                   rtol=1e-5, atol=1e-6)
        # info: [log_std (act_dim,), mu (act_dim,)], the buffer's sorted-key order
        np.testing.assert_allclose(steps[0][3][0], [-1.0, 0.3])
        np.testing.assert_allclose(steps[0][3][1], mu, rtol=1e-5, atol=1e-6)
        sess.close()


def test_unknown_activation_is_not_mirrored_and_falls_back():
    with tf.Graph().as_default():
        g, sess = _graph('categorical', dict(hidden_sizes=(8,), activation=lambda x: tf.tanh(x)))
        log = _Log()
        layers = actor_critic_layers(g, SPACES['categorical'])
        assert numpy_actor_critic(sess, g, layers, 5, log) is None
        assert 'Acting through the graph' in log.lines[0]
        # A mirror with wrong weights is caught by the check.
        with tf.Graph().as_default():
            g2, sess2 = _graph('categorical')
            ac = make_numpy_actor_critic(actor_critic_layers(g2, SPACES['categorical']))
            values = sess2.run(ac.variables)
            values[0] = values[0] * 1.01
            ac.set_weights(values)
            with pytest.raises(NoMirror):
                check_actor_critic(sess2, g2, ac, 5)
            sess2.close()
        sess.close()


def test_graph_step_keeps_the_whole_log_std():
    """The plain step stores (act_dim,) log_std, not its first entry broadcast."""
    with tf.Graph().as_default():
        g, sess = _graph('gaussian')
        g.info['log_std'].load(np.array([-1.0, 0.3], np.float32), sess)
        step, _ = policy_step_fns(sess, g.x_ph, g.get_action_ops, g.v, g.info_shapes)
        a, v, logp, info = step(np.zeros(5, np.float32))
        assert sorted(g.info_shapes) == ['log_std', 'mu']
        np.testing.assert_allclose(info[0], [-1.0, 0.3])
        assert info[1].shape == (2,) and a.shape == (2,)
        sess.close()


# --------------------------------------------------------------------------------------------
# Fused training loops against the plain ones
# --------------------------------------------------------------------------------------------
def _batch(kind, n=512, seed=0):
    rng = np.random.RandomState(seed)
    obs = rng.normal(size=(n, 5)).astype(np.float32)
    act = (rng.randint(0, 3, n).astype(np.int32) if kind == 'categorical'
           else rng.normal(size=(n, 2)).astype(np.float32))
    adv = rng.normal(size=n).astype(np.float32)
    ret = (3 * rng.normal(size=n) + 2).astype(np.float32)
    return obs, act, adv, ret


def _snapshot(sess):
    variables = tf.global_variables()  # networks, Adam slots, beta powers
    return variables, sess.run(variables)


def _restore(sess, snapshot):
    for v, value in zip(*snapshot):
        v.load(value, sess)


@pytest.mark.parametrize('kind', ['categorical', 'gaussian'])
def test_fused_value_loop_equals_plain_loop(kind):
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        g = build_trpo_graph(OBS, SPACES[kind], ac_kwargs=dict(hidden_sizes=(32, 32)))
        fz = FusedOnPolicy(g, SPACES[kind], g.v_optimizer, 40)
        assert fz.v_loop is not None
        sess = make_session()
        sess.run(tf.global_variables_initializer())
        assert fz._check_loops(sess, 5, _Log())
        obs, act, adv, ret = _batch(kind)
        logp_old, *info = sess.run([g.logp] + [g.info[k] for k in sorted(g.info)],
                                   {g.x_ph: obs, g.a_ph: act})
        info = [np.broadcast_to(x, (len(obs),) + x.shape[-1:]) for x in info]
        inputs = [obs, act, adv, ret, logp_old] + info
        start = _snapshot(sess)
        v_vars = get_vars('v')  # weights and their Adam slots
        beta = [v for v in tf.global_variables() if 'beta' in v.op.name]
        results = []
        for v_loop in (None, fz.v_loop):
            _restore(sess, start)
            train_v = value_steps(sess, g.all_phs, g.train_vf, v_loop, 40)
            train_v(inputs)
            train_v(inputs)  # twice: Adam's step count carries over
            results.append(sess.run(v_vars + beta))
        plain, fused = results
        assert len(plain) == 3 * 6 + 2
        for a, b in zip(plain, fused):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(plain[-2:], [0.9 ** 81, 0.999 ** 81], rtol=1e-5)
        # the loop actually trained
        assert not np.allclose(plain[0], start[1][start[0].index(v_vars[0])])
        sess.close()


@pytest.mark.parametrize('kind,pi_lr,stops', [('categorical', 3e-2, True),
                                              ('gaussian', 1e-5, False)])
def test_fused_ppo_policy_loop_equals_plain_loop(kind, pi_lr, stops):
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        g = build_ppo_graph(OBS, SPACES[kind], ac_kwargs=dict(hidden_sizes=(32,)),
                            pi_lr=pi_lr)
        fz = FusedOnPolicy(g, SPACES[kind], g.v_optimizer, 5)
        pi_vars = get_trainable_vars('pi')
        pi_loop = fz.policy_loop(g.pi_optimizer, pi_vars,
                                 lambda logp: ppo_objective(logp, g.logp_old_ph, g.adv_ph,
                                                            0.2)[1:],
                                 30, stop=lambda kl: tf.cast(kl, tf.float64) > 1.5 * 0.01)
        sess = make_session()
        sess.run(tf.global_variables_initializer())
        obs, act, adv, ret = _batch(kind)
        logp_old = sess.run(g.logp, {g.x_ph: obs, g.a_ph: act})
        inputs = [obs, act, adv, ret, logp_old]
        feed = dict(zip(g.all_phs, inputs))
        start = _snapshot(sess)
        watched = get_vars('pi') + [v for v in tf.global_variables() if 'beta' in v.op.name]

        train_pi = sess.make_callable([g.train_pi, g.approx_kl], feed_list=g.all_phs)
        plain_stop = ppo_policy_steps(lambda: train_pi(*inputs)[1], 30, 0.01)
        plain = sess.run(watched)
        _restore(sess, start)
        steps, stopped = sess.run(pi_loop, feed)
        fused = sess.run(watched)
        assert (int(steps) - 1, bool(stopped)) == plain_stop
        assert plain_stop[1] == stops and (plain_stop[0] < 29) == stops
        for a, b in zip(plain, fused):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
        sess.close()


# --------------------------------------------------------------------------------------------
# Whole runs
# --------------------------------------------------------------------------------------------
def _rows_without_time(path):
    with open(path) as f:
        rows = list(csv.reader(f, delimiter='\t'))
    t = rows[0].index('Time')
    return [r[:t] + r[t + 1:] for r in rows]


def _trpo(out, seed=3, **kwargs):
    from spinup_tf.algos.trpo import trpo
    trpo(EnvFn('CartPole-v1'), seed=seed, steps_per_epoch=400, epochs=3, train_v_iters=10,
         ac_kwargs=dict(hidden_sizes=(16,)), logger_kwargs=dict(output_dir=str(out),
                                                                quiet=True), **kwargs)


def test_fused_trpo_same_seed_same_progress(tmp_path):
    _trpo(tmp_path / 'a')
    _trpo(tmp_path / 'b')
    a = _rows_without_time(tmp_path / 'a' / 'progress.txt')
    assert len(a) == 4 and a == _rows_without_time(tmp_path / 'b' / 'progress.txt')
    _trpo(tmp_path / 'c', seed=4)
    assert _rows_without_time(tmp_path / 'c' / 'progress.txt') != a
    _trpo(tmp_path / 'd', fused=False)  # other sampler: another run of the same seed
    assert _rows_without_time(tmp_path / 'd' / 'progress.txt') != a
    assert json.loads((tmp_path / 'a' / 'config.json').read_text())['fused'] is True


def test_fused_mirror_is_pulled_after_restore(tmp_path, monkeypatch):
    """A resumed fused run acts with the checkpoint's weights, not the initial ones."""
    from spinup_tf.fast import onpolicy_mirrors as numpy_onpolicy
    from spinup_tf.algos.trpo import trpo
    kwargs = dict(seed=3, steps_per_epoch=300, train_v_iters=5,
                  ac_kwargs=dict(hidden_sizes=(8,)))
    trpo(EnvFn('CartPole-v1'), epochs=2, logger_kwargs=dict(output_dir=str(tmp_path),
                                                           quiet=True), **kwargs)
    saved = tf.train.load_checkpoint(str(tmp_path / 'checkpoint' / 'variables'))
    kernel = saved.get_tensor('pi/dense/kernel')
    pulled = []
    original = numpy_onpolicy.NumpyActorCritic.set_weights
    monkeypatch.setattr(numpy_onpolicy.NumpyActorCritic, 'set_weights',
                        lambda self, values: (pulled.append(values[0].copy()),
                                              original(self, values))[1])
    trpo(EnvFn('CartPole-v1'), epochs=3, logger_kwargs=dict(
        output_dir=str(tmp_path), quiet=True, resume=True), **kwargs)
    # pulls: the start-up check (initial weights), then epoch 3 after the restore
    assert len(pulled) == 2
    assert not np.allclose(pulled[0], kernel)
    np.testing.assert_array_equal(pulled[1], kernel)


@pytest.mark.parametrize('fused', [None, False])
def test_cli_trpo_fused_and_plain(tmp_path, cli, fused):
    args = ['trpo', '--env', 'CartPole-v1', '--epochs', 2, '--steps_per_epoch', 300,
            '--train_v_iters', 5, '--hid', '[16]', '--exp_name', 'x',
            '--data_dir', tmp_path]
    if fused is not None:
        args += ['--fused', fused]
    r = cli(*args)
    assert r.returncode == 0, r.stderr[-2000:]
    run = tmp_path / 'x' / 'x_s0'
    config = json.loads((run / 'config.json').read_text())
    assert config['fused'] is (fused is None)
    rows = list(csv.DictReader(open(run / 'progress.txt'), delimiter='\t'))
    assert [int(float(r['Epoch'])) for r in rows] == [1, 2]
    assert all(np.isfinite(float(r['LossV'])) for r in rows)
    assert 'Acting through the graph' not in r.stdout
