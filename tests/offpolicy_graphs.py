"""Test helpers: an off-policy algorithm's real graph, built by calling the algorithm with
``Run.train`` replaced by a capture, and the tools to check it against numpy.

``random_normal`` of ``core`` and ``distributions`` is replaced by :func:`fixed_draw` while
the graph is built, so every "random" draw (TD3's target smoothing, SAC's policy samples) is
a known pattern that a numpy re-implementation can use too, and both engines see the same
noise.
"""
from types import SimpleNamespace

import numpy as np
import gymnasium as gym

from spinup_tf.algos import core, distributions
from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.algos.td3 import td3
from spinup_tf.algos.ddpg import ddpg
from spinup_tf.algos.sac import sac
from spinup_tf.algos.dqn import dqn
from spinup_tf.loops import off_policy
from spinup_tf.reproductions.hooks import QUIRK_FLAGS, make_hooks
from spinup_tf.reproductions.networks import resolve_actor_critic

ALGOS = {'td3': td3, 'ddpg': ddpg, 'sac': sac, 'dqn': dqn}
OBS_DIM = 3  # Pendulum's


def pattern(n):
    """The numpy side of :func:`fixed_normal`: ``n`` values in [-1.7, 1.7]."""
    return 1.7 * np.sin(np.arange(n, dtype=np.float32) * np.float32(0.7) + np.float32(0.3))


def fixed_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None):
    """Stand-in for ``tf.random_normal``: ``mean + stddev * pattern`` of ``shape`` (row-major),
    so ``stddev`` still matters."""
    n = tf.reduce_prod(shape)
    values = 1.7 * tf.sin(tf.cast(tf.range(n), dtype) * 0.7 + 0.3)
    return mean + stddev * tf.reshape(values, shape)


def fixed_draw(shape, stddev=1.0):
    """Stand-in for ``spinup_tf.utils.tf1.random_normal`` (what ``core``, ``distributions``
    and TD3 draw with)."""
    return fixed_normal(shape, stddev=stddev)


def noise_like(shape):
    return pattern(int(np.prod(shape))).reshape(shape)


def capture(monkeypatch, tmp_path, algo, env_fn=None, hidden=(8, 8), ac_kwargs=None,
            **kwargs):
    """Build ``algo``'s graph as a run does (Pendulum unless ``env_fn``) and return a
    namespace: ``run``, ``batch`` (placeholders), ``train_ops``, ``update``, ``init_ops``,
    ``act``, ``explore``, ``lists`` (``train_ops`` on the placeholders: the ``sess.run``
    lists by name), ``losses`` (list name -> its diagnostics, the tensors alone, which
    run without training) and ``sess`` (variables initialised, targets copied)."""
    got = {}

    def fake_train(self, train_ops, update, batch, act, log_diagnostics, explore=None,
                   saved=None, init_ops=(), epsilon=None, target_update=None):
        got.update(run=self, batch=batch, train_ops=train_ops, update=update,
                   init_ops=init_ops, act=act, explore=explore, saved=saved, epsilon=epsilon,
                   target_update=target_update)

    monkeypatch.setattr(off_policy.Run, 'train', fake_train)
    monkeypatch.setattr(core, 'random_normal', fixed_draw)  # the algorithms' draws
    monkeypatch.setattr(distributions, 'random_normal', fixed_draw)  # SAC's policy's
    quirks = {k: kwargs.pop(k) for k in list(kwargs) if k in QUIRK_FLAGS}
    if quirks:
        kwargs['hooks'] = make_hooks(**quirks)
    if isinstance(kwargs.get('actor_critic'), str):
        kwargs['actor_critic'] = resolve_actor_critic(kwargs['actor_critic'])
    ALGOS[algo](env_fn or (lambda: gym.make('Pendulum-v1')),
                ac_kwargs=dict(hidden_sizes=hidden) if ac_kwargs is None else ac_kwargs,
                logger_kwargs=dict(output_dir=str(tmp_path), quiet=True), **kwargs)
    g = SimpleNamespace(**got)
    with g.run.graph.as_default():
        g.lists = g.train_ops(g.batch)
        g.losses = {name: {k: v for k, v in fetches.items() if isinstance(v, tf.Tensor)}
                    for name, fetches in g.lists.items()}
        g.sess = make_session(g.run.graph)
        g.sess.run(tf.global_variables_initializer())
        g.sess.run(g.init_ops)
    return g


def random_batch(rng, n, act_low, act_high):
    return dict(obs1=rng.randn(n, OBS_DIM).astype(np.float32),
                obs2=rng.randn(n, OBS_DIM).astype(np.float32),
                acts=rng.uniform(act_low, act_high, size=(n, len(act_low))).astype(np.float32),
                rews=rng.randn(n).astype(np.float32),
                done=(rng.rand(n) < 0.3).astype(np.float32))


def one_hot_batch(rng, n, n_acts, obs_dim):
    """A random batch of a Discrete-action env: actions as one-hot rows ``(n, n_acts)``."""
    return dict(obs1=rng.randn(n, obs_dim).astype(np.float32),
                obs2=rng.randn(n, obs_dim).astype(np.float32),
                acts=np.eye(n_acts, dtype=np.float32)[rng.randint(n_acts, size=n)],
                rews=rng.randn(n).astype(np.float32),
                done=(rng.rand(n) < 0.3).astype(np.float32))


def feed(g, batch):
    return {g.batch[k]: v for k, v in batch.items()}


def run_call(g, name, batch):
    """Run the ``sess.run`` list ``name`` (it trains) on a numpy batch; its diagnostics."""
    values = g.sess.run(g.lists[name], feed(g, batch))
    return {k: v for k, v in values.items() if v is not None}


def calls(g):
    """The names of the lists the update runs, in the order first run."""
    out = []
    for j in range(12):
        for name in g.update(j):
            if name not in out:
                out.append(name)
    return out


def weights(g, scope):
    from spinup_tf.utils.tf1 import get_trainable_vars
    with g.run.graph.as_default():
        return g.sess.run(get_trainable_vars(scope))


def shift_targets(g, by=0.1):
    """Make the target networks differ from the main ones (so a wrong network shows)."""
    from spinup_tf.utils.tf1 import get_trainable_vars
    with g.run.graph.as_default():
        for v in get_trainable_vars('target'):
            v.load(g.sess.run(v) + by, g.sess)


def numpy_mlp(w, x, out_act=None):
    """Forward pass of an mlp given its [kernel, bias, ...] values (relu between layers)."""
    n = len(w) // 2
    for i in range(n):
        x = x @ w[2 * i] + w[2 * i + 1]
        if i < n - 1:
            x = np.maximum(x, 0)
    return out_act(x) if out_act else x


def scale(squashed, low, high):
    return (high + low) / 2 + (high - low) / 2 * squashed
