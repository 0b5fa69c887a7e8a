"""The on-policy fast engine's acting: numpy mirrors of the policies against the graph, the
fallbacks, and whole runs with ``fused=True`` / ``False`` (each repeats byte for byte for a
seed)."""
import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

from spinup_tf.utils.tf1 import tf, make_session, get_trainable_vars
from spinup_tf.utils.envs import EnvFn
from spinup_tf.algos import get_algo
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.loops.on_policy import actor_critic_graph, policy_step_fns
from spinup_tf.fast.mirrors import NoMirror
from spinup_tf.fast.on_policy import FastActing
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
    """The acting tensors of the default actor-critic (as ``Run.train`` gathers them), with
    ``info_shapes`` of the buffer and ``get_action_ops``, and a session."""
    tf.set_random_seed(seed)
    batch, outputs, _ = actor_critic_graph(OBS, SPACES[kind], mlp_actor_critic,
                                           ac_kwargs or dict(hidden_sizes=(16, 16)),
                                           keep_info=True)
    pi, logp, logp_pi, info, info_phs, d_kl, v = outputs
    keys = sorted(info_phs)
    g = SimpleNamespace(x_ph=batch['x'], a_ph=batch['a'], logp=logp, info=info, v=v,
                        info_shapes={k: info_phs[k].shape.as_list()[1:] for k in keys},
                        get_action_ops=[pi, v, logp_pi] + [info[k] for k in keys])
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


def test_fast_acting_falls_back_to_the_graph_for_an_unknown_structure():
    """A Gaussian policy without an (act_dim,) log_std variable has no mirror: the graph's
    step and value are used, with one log line."""
    with tf.Graph().as_default():
        g, sess = _graph('gaussian')
        g.info = {'mu': g.info['mu'], 'log_std': g.info['mu']}  # a state-dependent std
        acting = FastActing(g, SPACES['gaussian'])
        log = _Log()
        step, value = object(), object()
        assert acting.start(sess, 5, log, step, value) == (step, value, None)
        assert log.lines == ['Acting through the graph (one sess.run per step): the '
                             'Gaussian policy has no (act_dim,) log_std variable']
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
# Whole runs
# --------------------------------------------------------------------------------------------
def _rows_without_time(path):
    with open(path) as f:
        rows = list(csv.reader(f, delimiter='\t'))
    t = rows[0].index('Time')
    return [r[:t] + r[t + 1:] for r in rows]


def _run(algo, out, seed=3, env_id='CartPole-v1', **kwargs):
    kwargs = dict(dict(steps_per_epoch=300, epochs=2, train_v_iters=10,
                       ac_kwargs=dict(hidden_sizes=(16,))), **kwargs)
    if algo == 'ppo':
        kwargs.setdefault('train_pi_iters', 10)
    get_algo(algo)(EnvFn(env_id), seed=seed, logger_kwargs=dict(output_dir=str(out),
                                                                 quiet=True), **kwargs)
    return _rows_without_time(out / 'progress.txt')


@pytest.mark.parametrize('algo,env_id', [('vpg', 'CartPole-v1'), ('ppo', 'Pendulum-v1'),
                                         ('trpo', 'Pendulum-v1'), ('npg', 'CartPole-v1')])
def test_same_seed_same_progress_on_both_paths(tmp_path, algo, env_id):
    """Each path repeats byte for byte (apart from Time); the two paths sample actions
    from different RNGs (numpy's, the graph's), so they are two different runs."""
    rows = {}
    for fused in (True, False):
        rows[fused] = _run(algo, tmp_path / ('a%s' % fused), env_id=env_id, fused=fused)
        assert len(rows[fused]) == 3
        assert _run(algo, tmp_path / ('b%s' % fused), env_id=env_id, fused=fused) == \
            rows[fused]
    assert rows[True] != rows[False]
    assert _run(algo, tmp_path / 'c', seed=4, env_id=env_id) != rows[True]
    assert json.loads((tmp_path / 'aTrue' / 'config.json').read_text())['fused'] is True


def test_fused_run_with_an_unmirrorable_policy_acts_through_the_graph(tmp_path, capsys):
    """A policy the mirror cannot reproduce (an activation it does not know) acts through
    the graph, with one log line and no traceback; its loops still run fused, so the run
    equals the plain one but for float rounding in training."""
    kwargs = dict(ac_kwargs=dict(hidden_sizes=(8,), activation=lambda x: tf.tanh(x)),
                  steps_per_epoch=200, train_v_iters=5, train_pi_iters=5)
    get_algo('ppo')(EnvFn('CartPole-v1'), seed=3, epochs=2,
                    logger_kwargs=dict(output_dir=str(tmp_path / 'fused')), **kwargs)
    out = capsys.readouterr().out
    assert out.count('Acting through the graph') == 1, out
    assert 'Training loops through the plain engine' not in out
    plain = _run('ppo', tmp_path / 'plain', seed=3, fused=False, **kwargs)
    fused = _rows_without_time(tmp_path / 'fused' / 'progress.txt')
    assert fused[0] == plain[0]
    np.testing.assert_allclose(np.array(fused[1:], float), np.array(plain[1:], float), rtol=1e-5)


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
