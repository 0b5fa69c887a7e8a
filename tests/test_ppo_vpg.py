"""The on-policy update paths on fixed batches, each against an independent computation.

* the objectives of VPG and PPO (clipped surrogate, ClipFrac, KL, entropy) by hand in numpy;
* the plain loop's gradient steps (the algorithms' own ``optimizer.minimize`` ops) against
  Adam's first step on a gradient derived by hand;
* PPO's early stop against the KL measured before each step, step by step;
* the fast engine's loops (``spinup_tf.fast.on_policy``, built from the algorithms' own
  ``train_ops``) against the plain loop's ``sess.run`` calls, for VPG, PPO (with and without
  the KL stop firing) and TRPO/NPG's value steps: every variable (networks, Adam's slots and
  beta powers) and every diagnostic of two updates;
* the fast engine's fallback to the plain loop for a list it cannot loop.

The graphs are the algorithms' own: each algorithm runs up to ``Run.train``, which hands
over its ``train_ops``, its lists, its update, placeholders and actor-critic outputs
instead of looping.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from gymnasium.spaces import Discrete

from spinup_tf.utils.tf1 import tf, make_session, get_trainable_vars
from spinup_tf.utils.envs import EnvFn
from spinup_tf.algos import get_algo
from spinup_tf.loops import on_policy
from spinup_tf.fast.on_policy import FastTraining

CLIP = 0.2


class _Log:
    def __init__(self):
        self.lines = []

    def log(self, msg, color=None):
        self.lines.append(msg)


def built(algo, tmp_path, monkeypatch, env_id='CartPole-v1', **kwargs):
    """The algorithm's graph and hook as it hands them to ``Run.train`` (no loop runs)."""
    got = {}

    def train(self, train_ops, lists, update, batch, outputs, log_diagnostics):
        keys = []  # the columns log_diagnostics logs
        log_diagnostics(SimpleNamespace(log_tabular=lambda key, *a, **k: keys.append(key)))
        got.update(run=self, train_ops=train_ops, lists=lists, update=update, batch=batch,
                   outputs=outputs, log=keys)
    monkeypatch.setattr(on_policy.Run, 'train', train)
    get_algo(algo)(EnvFn(env_id), seed=0, logger_kwargs=dict(output_dir=str(tmp_path),
                                                              quiet=True), **kwargs)
    got['run'].setup.close_envs()
    return SimpleNamespace(**got)


def fixed_inputs(b, sess, n=256, seed=0):
    """A fixed batch in ``GAEBuffer.get()``'s order: random observations, actions,
    advantages and returns; the old log-likelihoods (and, for TRPO, the old distribution
    parameters) are the current policy's."""
    rng = np.random.RandomState(seed)
    space = b.run.env.action_space
    obs = rng.normal(size=(n, b.run.obs_dim)).astype(np.float32)
    if isinstance(space, Discrete):
        act = rng.randint(0, space.n, n).astype(np.int32)
    else:
        act = rng.normal(size=(n,) + space.shape).astype(np.float32)
    adv = rng.normal(size=n).astype(np.float32)
    ret = (3 * rng.normal(size=n) + 2).astype(np.float32)
    info = b.outputs[3]
    keys = sorted(b.batch.get('info', {}))
    logp, *old_info = sess.run([b.outputs[1]] + [info[k] for k in keys],
                               {b.batch['x']: obs, b.batch['a']: act})
    old_info = [np.broadcast_to(x, (n,) + x.shape[-1:]).copy() for x in old_info]
    return [obs, act, adv, ret, logp] + old_info


def _session(graph):
    with graph.as_default():
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
        return sess, tf.global_variables()


# --------------------------------------------------------------------------------------------
# The objectives by hand
# --------------------------------------------------------------------------------------------
def test_ppo_clipped_objective_and_clipfrac_by_hand(tmp_path, monkeypatch):
    b = built('ppo', tmp_path, monkeypatch, clip_ratio=CLIP, ac_kwargs=dict(hidden_sizes=(8,)))
    info = b.lists['info']
    pi_loss, pi_info = info['LossPi'], {k: info[k] for k in ('KL', 'Entropy', 'ClipFrac')}
    sess, _ = _session(b.run.graph)
    obs, act, adv, ret, logp = fixed_inputs(b, sess, n=64)
    # Old log-probs spread so that ratios land inside and outside [0.8, 1.2].
    logp_old = (logp - np.random.RandomState(1).uniform(-0.5, 0.5, size=len(obs))).astype(
        np.float32)
    feed = dict(zip(on_policy.feed_list(b.batch), [obs, act, adv, ret, logp_old]))
    loss, d = sess.run([pi_loss, pi_info], feed)
    ratio = np.exp(logp - logp_old)
    expected = -np.mean(np.minimum(ratio * adv, np.clip(ratio, 1 - CLIP, 1 + CLIP) * adv))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    outside = (ratio > 1 + CLIP) | (ratio < 1 - CLIP)
    assert 0 < outside.mean() < 1
    np.testing.assert_allclose(d['ClipFrac'], outside.mean(), rtol=1e-6)
    np.testing.assert_allclose(d['KL'], np.mean(logp_old - logp), rtol=1e-5)
    np.testing.assert_allclose(d['Entropy'], -np.mean(logp), rtol=1e-5)
    sess.close()


def test_vpg_objectives_by_hand(tmp_path, monkeypatch):
    b = built('vpg', tmp_path, monkeypatch, ac_kwargs=dict(hidden_sizes=(8,)))
    info = b.lists['info']
    pi_loss, pi_info = info['LossPi'], {k: info[k] for k in ('KL', 'Entropy')}
    v_loss, v_info = info['LossV'], {'LossV': info['LossV']}
    sess, _ = _session(b.run.graph)
    inputs = fixed_inputs(b, sess, n=64)
    obs, act, adv, ret, logp = inputs
    logp = logp - 0.1
    feed = dict(zip(on_policy.feed_list(b.batch), [obs, act, adv, ret, logp]))
    got = sess.run([pi_loss, pi_info, v_loss, v_info, b.outputs[1], b.outputs[-1]], feed)
    loss, d, lv, dv, logp_now, v = got
    np.testing.assert_allclose(loss, -np.mean(logp_now * adv), rtol=1e-5)
    np.testing.assert_allclose(d['KL'], np.mean(logp - logp_now), rtol=1e-5)
    np.testing.assert_allclose(d['Entropy'], -np.mean(logp_now), rtol=1e-5)
    np.testing.assert_allclose([lv, dv['LossV']], [np.mean((ret - v) ** 2)] * 2, rtol=1e-5)
    sess.close()


# --------------------------------------------------------------------------------------------
# The plain loop's steps against Adam on a gradient derived by hand
# --------------------------------------------------------------------------------------------
def _adam_first_step(grad, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = (1 - beta1) * grad, (1 - beta2) * grad ** 2
    return -lr * np.sqrt(1 - beta2) / (1 - beta1) * m / (np.sqrt(v) + eps)


def _mlp_grads(x, w1, b1, w2, b2, d_out):
    """Backprop of ``d_out`` (the loss's gradient w.r.t. the outputs) through
    ``tanh(x @ w1 + b1) @ w2 + b2``: the gradients of ``w1, b1, w2, b2``."""
    h = np.tanh(x @ w1 + b1)
    dz = (d_out @ w2.T) * (1 - h ** 2)
    return [x.T @ dz, dz.sum(0), h.T @ d_out, d_out.sum(0)]


def test_plain_steps_are_adam_on_the_gradient_by_hand(tmp_path, monkeypatch):
    """One VPG update with one value step, from a fresh start: each parameter moves by
    Adam's first step on the gradient of -mean(logp * adv) (policy) and mean((ret - v)^2)
    (value), both derived by hand in float64 for a one-hidden-layer tanh network."""
    pi_lr, vf_lr = 3e-4, 1e-3
    b = built('vpg', tmp_path, monkeypatch, ac_kwargs=dict(hidden_sizes=(8,)), pi_lr=pi_lr,
              vf_lr=vf_lr, train_v_iters=1)
    with b.run.graph.as_default():
        updater = on_policy.Updater(b.update, b.train_ops, b.lists, b.batch)
        pi_vars, v_vars = get_trainable_vars('pi'), get_trainable_vars('v')
    sess, _ = _session(b.run.graph)
    obs, act, adv, ret, logp = inputs = fixed_inputs(b, sess)
    start_pi, start_v = sess.run(pi_vars), sess.run(v_vars)
    updater.bind(sess)(inputs)
    x = obs.astype(np.float64)

    w1, b1, w2, b2 = [np.float64(p) for p in start_pi]
    logits = np.tanh(x @ w1 + b1) @ w2 + b2
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    # d(-mean(adv * log softmax(logits)[a])) / d logits
    d_logits = -(adv[:, None] / len(x)) * (np.eye(2)[act] - probs)
    for new, old, g in zip(sess.run(pi_vars), start_pi, _mlp_grads(x, w1, b1, w2, b2,
                                                                    d_logits)):
        np.testing.assert_allclose(new - old, _adam_first_step(g, pi_lr), rtol=1e-3,
                                   atol=pi_lr * 1e-3)

    w1, b1, w2, b2 = [np.float64(p) for p in start_v]
    v = (np.tanh(x @ w1 + b1) @ w2 + b2)[:, 0]
    d_v = (-2 * (ret - v) / len(x))[:, None]
    for new, old, g in zip(sess.run(v_vars), start_v, _mlp_grads(x, w1, b1, w2, b2, d_v)):
        np.testing.assert_allclose(new - old, _adam_first_step(g, vf_lr), rtol=1e-3,
                                   atol=vf_lr * 1e-3)
    sess.close()


def test_ppo_stops_after_the_step_whose_kl_before_it_passes_the_bound(tmp_path, monkeypatch):
    """The plain loop's early stop, against a loop that measures the KL, then takes the
    step: the same number of steps, stopped at the first KL above 1.5 * target_kl (with
    every KL before it below), and the same parameters."""
    b = built('ppo', tmp_path, monkeypatch, ac_kwargs=dict(hidden_sizes=(16,)), pi_lr=1e-2,
              train_pi_iters=60, target_kl=0.01)
    kl, train_pi = b.lists['info']['KL'], b.lists['pi']['train']
    sess, variables = _session(b.run.graph)
    inputs = fixed_inputs(b, sess)
    phs = on_policy.feed_list(b.batch)
    train = on_policy.plain_train(on_policy.SessRun(sess, phs))
    start = sess.run(variables)

    i, stopped = train(inputs, b.lists['pi'], 60)
    after = sess.run(variables)

    for var, value in zip(variables, start):
        var.load(value, sess)
    kls = []
    for _ in range(60):
        kls.append(sess.run(kl, dict(zip(phs, inputs))))
        sess.run(train_pi, dict(zip(phs, inputs)))
        if kls[-1] > 0.015:
            break
    assert stopped and i < 59 and (i, len(kls)) == (len(kls) - 1, i + 1)
    assert kls[-1] > 0.015 and max(kls[:-1]) <= 0.015
    for a, c in zip(after, sess.run(variables)):
        np.testing.assert_array_equal(a, c)
    sess.close()


# --------------------------------------------------------------------------------------------
# The fast engine's loops against the plain loop's sess.run calls
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize('algo,env_id,kwargs,stops', [
    ('vpg', 'CartPole-v1', dict(train_v_iters=30), None),
    ('vpg', 'Pendulum-v1', dict(train_v_iters=30, ac_kwargs=dict(hidden_sizes=(256, 256))),
     None),
    ('ppo', 'CartPole-v1', dict(pi_lr=3e-2, train_pi_iters=40, train_v_iters=20), True),
    ('ppo', 'Pendulum-v1', dict(pi_lr=1e-5, train_pi_iters=15, train_v_iters=20), False),
    ('trpo', 'CartPole-v1', dict(train_v_iters=30), None),
    ('npg', 'Pendulum-v1', dict(train_v_iters=30), None),
])
def test_fast_engine_equals_plain_engine(tmp_path, monkeypatch, algo, env_id, kwargs, stops):
    """Two updates on one fixed batch (the second starts from the Adam state the first
    left), through each engine from the same start: every variable and every diagnostic
    agree, and PPO's policy steps stop at the same step."""
    kwargs = dict(dict(ac_kwargs=dict(hidden_sizes=(32, 32))), **kwargs)
    b = built(algo, tmp_path, monkeypatch, env_id, **kwargs)
    with b.run.graph.as_default():
        plain = on_policy.Updater(b.update, b.train_ops, b.lists, b.batch, fused=False)
        fast = on_policy.Updater(b.update, b.train_ops, b.lists, b.batch, fused=True)
    # a loop for every list that trains: VPG's and PPO's 'pi' and 'v', TRPO's 'v'
    assert sorted(fast.fast.loops) == (['v'] if algo in ('trpo', 'npg') else ['pi', 'v'])
    assert not fast.fast.reasons
    plain_steps = []  # (engine, n) of every train(fetches, n) the plain loop ran
    plain_train = on_policy.plain_train

    def counted(sess_run):
        train = plain_train(sess_run)

        def counted_train(inputs, fetches, n=1):
            plain_steps.append((engine, n))
            return train(inputs, fetches, n)
        return counted_train
    monkeypatch.setattr(on_policy, 'plain_train', counted)
    sess, variables = _session(b.run.graph)
    inputs = fixed_inputs(b, sess)
    start = sess.run(variables)
    results = []
    for engine, updater in (('plain', plain), ('fast', fast)):
        for var, value in zip(variables, start):
            var.load(value, sess)
        update_on = updater.bind(sess)
        stats = [update_on(inputs) for _ in range(2)]
        results.append((stats, sess.run(variables)))
    (plain_stats, plain_vars), (fast_stats, fast_vars) = results
    # the fast engine ran its loops: the plain loop took only single steps (VPG's policy step)
    assert all(n == 1 for engine, n in plain_steps if engine == 'fast')
    assert any(n > 1 for engine, n in plain_steps if engine == 'plain')
    for p, f in zip(plain_stats, fast_stats):
        assert sorted(p) == sorted(f) and set(b.log) <= set(p)
        for key in p:
            np.testing.assert_allclose(f[key], p[key], rtol=1e-5, atol=1e-7, err_msg=key)
    moved = 0
    for var, p, f, s in zip(variables, plain_vars, fast_vars, start):
        np.testing.assert_allclose(f, p, rtol=1e-6, atol=1e-7, err_msg=var.op.name)
        moved += not np.array_equal(p, s)
    assert moved > len(variables) // 2
    if stops is not None:
        n = kwargs['train_pi_iters']
        assert (plain_stats[0]['StopIter'] < n - 1) == stops
        assert plain_stats[0]['StopIter'] == fast_stats[0]['StopIter']
    sess.close()


def test_fast_engine_falls_back_for_a_list_it_cannot_loop():
    """A list whose variable is a reference variable (not a resource one) has reads and
    writes the fast engine cannot see: that list runs through the plain loop, with one log
    line, and gives the plain loop's result."""
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, (None,))
        w = tf.Variable(2.0, use_resource=False)
        batch = dict(x=x, a=x, adv=x, ret=x, logp_old=x)
        optimizer = tf.train.GradientDescentOptimizer(0.1)

        def train_ops(batch):
            loss = tf.reduce_mean((w * batch['x'] - 1) ** 2)
            return dict(w=dict(train=optimizer.minimize(loss, var_list=[w])))
        lists = train_ops(batch)
        fast = FastTraining(train_ops, lists, batch)
        assert not fast.loops and 'writes no resource variable' in fast.reasons[0]
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
    phs = on_policy.feed_list(batch)
    log = _Log()
    train = fast.bind(sess, phs, on_policy.plain_train(on_policy.SessRun(sess, phs)), log)
    assert log.lines == ['Training loops through the plain engine: ' + fast.reasons[0]]
    data = [np.ones(4, np.float32)] * 5
    assert train(data, lists['w'], 5) == (4, False)
    np.testing.assert_allclose(sess.run(w), 1 + 0.8 ** 5, rtol=1e-6)  # w - 1 <- 0.8 (w - 1)
    sess.close()


def test_an_actor_critic_that_does_not_reuse_its_variables_is_refused(tmp_path):
    """The losses call the actor-critic again on a batch; one that makes new variables
    there (tf.Variable instead of tf.get_variable) would train a copy that never acts."""
    from spinup_tf.algos.distributions import mlp_actor_critic

    def fresh_variables(x, a, **kwargs):
        pi, logp, logp_pi, info, info_phs, d_kl, v = mlp_actor_critic(x, a, **kwargs)
        return pi, logp, logp_pi, info, info_phs, d_kl, v * tf.Variable(1.0)
    with pytest.raises(ValueError, match='made new variables'):
        get_algo('vpg')(EnvFn('CartPole-v1'), actor_critic=fresh_variables,
                        logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
