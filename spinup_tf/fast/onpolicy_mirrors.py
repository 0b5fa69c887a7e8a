"""Numpy mirrors of the on-policy actor-critics (VPG, PPO, TRPO/NPG) for acting without a
``sess.run`` per env step.

The policy does not change while an epoch is collected, so the loop pulls the weights of the
policy and value networks once per epoch (one ``sess.run``) and evaluates them in numpy at
every step: the same MLP chain, the same log-likelihood formulas as the graph
(``spinup_tf.algos.core``), and actions sampled with numpy's global RNG (seeded by the
algorithm, saved and restored by checkpoints):

* categorical: ``a ~ softmax(logits)`` by inverse CDF on one uniform draw,
  ``logp_all = log_softmax(logits)`` computed as ``logits - max - log(sum(exp(logits - max)))``
  (TensorFlow's formula), ``logp = logp_all[a]``;
* diagonal Gaussian: ``a = mu + exp(log_std) * N(0, I)``, ``logp`` by
  ``gaussian_likelihood``'s formula.

:func:`actor_critic_layers` reads the networks' structure from the graph (the dense layers
that ``spinup_tf.utils.tf1.dense`` records); :func:`numpy_actor_critic` builds the mirror and checks
it against the graph (distribution parameters, ``v`` and ``logp`` of given actions) before it
is used, returning None when the actor-critic cannot be mirrored exactly.
"""
from types import SimpleNamespace

import numpy as np
from gymnasium.spaces import Box, Discrete

from spinup_tf.utils.tf1 import EPS  # first: it sets TensorFlow's environment before the import
from spinup_tf.fast.mirrors import NoMirror, NumpyMLP, dense_chain, compare_to_graph
import tensorflow as tf2  # tf2.Variable: the base class of the graph's resource variables

LOG_2PI = np.float32(np.log(2 * np.pi))


def actor_critic_layers(g, action_space):
    """The structure of an on-policy actor-critic (scopes ``pi`` and ``v``), read from the
    graph's dense-layer records (no session needed).

    Args:
        g: the acting tensors: ``x_ph`` and the policy's ``info`` dict (``log_std``), as
            ``loops.on_policy.Run.train`` gathers them from the actor-critic's outputs.
        action_space: ``Discrete`` (categorical policy) or ``Box`` (diagonal Gaussian).

    Returns:
        ``SimpleNamespace(kind, pi_layers, log_std, v_layers, act_dim)``: ``kind`` is
        ``'categorical'`` or ``'gaussian'``; ``pi_layers`` the chain in scope ``pi`` from
        ``x_ph`` to the logits ``(batch, n_acts)`` or the mean ``(batch, act_dim)``;
        ``log_std`` the Gaussian's ``(act_dim,)`` variable (None for categorical);
        ``v_layers`` the chain in scope ``v`` to ``(batch, 1)``.

    Raises:
        NoMirror: the networks are not such chains (e.g. a custom ``actor_critic``).
    """
    pi_layers, pi_out = dense_chain(g.x_ph, 'pi')
    v_layers, v_out = dense_chain(g.x_ph, 'v')
    if v_out.shape.as_list()[-1] != 1:
        raise NoMirror('the value chain ends in %s, not one unit' % v_out.shape)
    width = pi_out.shape.as_list()[-1]
    if isinstance(action_space, Discrete):
        kind, log_std, act_dim = 'categorical', None, int(action_space.n)
    elif isinstance(action_space, Box):
        kind, act_dim = 'gaussian', int(np.prod(action_space.shape))
        log_std = g.info.get('log_std') if isinstance(g.info, dict) else None
        if not isinstance(log_std, tf2.Variable) or log_std.shape.as_list() != [act_dim]:
            raise NoMirror('the Gaussian policy has no (act_dim,) log_std variable')
    else:
        raise NoMirror('no numpy policy for action space %r' % (action_space,))
    if width != act_dim:
        raise NoMirror('the policy chain ends in %s units, not %d' % (width, act_dim))
    return SimpleNamespace(kind=kind, pi_layers=pi_layers, log_std=log_std,
                           v_layers=v_layers, act_dim=act_dim)


class NumpyCategoricalPolicy:
    """Categorical policy on an MLP's logits, in numpy.

    ==============  ====================  ==============================================
    Symbol          Shape                 Description
    ==============  ====================  ==============================================
    ``o``           ``(obs_dim,)``        One observation (``step``).
    ``obs``         ``(batch, obs_dim)``  Observations (``log_prob``, ``dist_params``).
    ``act``         ``(batch,)``          Integer actions (``log_prob``).
    ``logp_all``    ``(n_acts,)``         ``log_softmax(logits)`` (``(batch, n_acts)``
                                          for batches).
    ==============  ====================  ==============================================

    ``step(o) -> (a, logp, info)``: a sampled int action, its log-likelihood and
    ``[logp_all]`` (the graph's ``info`` in sorted-key order). ``rng`` (numpy's global RNG
    by default) draws one uniform per step.
    """
    info_keys = ('logp_all',)

    def __init__(self, logits_mlp, rng=np.random):
        self.mlp = logits_mlp
        self.variables = list(logits_mlp.variables)
        self.rng = rng

    def set_weights(self, values):
        self.mlp.set_weights(values)

    @staticmethod
    def _log_softmax(logits):
        # TensorFlow's log_softmax: shift by the max, then subtract log-sum-exp.
        shifted = logits - np.max(logits, axis=-1, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))

    def step(self, o):
        logits = self.mlp(o)
        shifted = logits - logits.max()
        cdf = np.exp(shifted).cumsum()
        total = cdf[-1]
        # inverse CDF: the first action whose cumulative weight exceeds u * total
        a = int(cdf.searchsorted(self.rng.random_sample() * total, 'right'))
        if a >= len(cdf):  # only if u * total rounds up to the total
            a = len(cdf) - 1
        logp_all = shifted - np.log(total)
        return a, logp_all[a], [logp_all]

    def dist_params(self, obs):
        """``{'logp_all': (batch, n_acts)}``."""
        return {'logp_all': self._log_softmax(self.mlp.batch(obs))}

    def log_prob(self, obs, act):
        """``(batch,)`` log-likelihoods of integer actions ``act``."""
        logp_all = self.dist_params(obs)['logp_all']
        return logp_all[np.arange(len(logp_all)), np.asarray(act, dtype=np.int64)]


class NumpyGaussianPolicy:
    """Diagonal Gaussian policy (MLP mean, state-independent ``log_std``), in numpy.

    ==============  ======================  ============================================
    Symbol          Shape                   Description
    ==============  ======================  ============================================
    ``o``           ``(obs_dim,)``          One observation (``step``).
    ``obs``         ``(batch, obs_dim)``    Observations (``log_prob``, ``dist_params``).
    ``act``         ``(batch, act_dim)``    Actions (``log_prob``).
    ``mu``          ``(act_dim,)``          Mean (``(batch, act_dim)`` for batches).
    ``log_std``     ``(act_dim,)``          Log standard deviations.
    ==============  ======================  ============================================

    ``step(o) -> (a, logp, info)``: ``a = mu + exp(log_std) * eps`` with ``eps`` drawn from
    ``rng.standard_normal`` (numpy's global RNG by default), its log-likelihood, and
    ``[log_std, mu]`` (the graph's ``info`` in sorted-key order).
    """
    info_keys = ('log_std', 'mu')

    def __init__(self, mu_mlp, log_std_var, rng=np.random):
        self.mlp = mu_mlp
        self.variables = list(mu_mlp.variables) + [log_std_var]
        self.act_dim = int(log_std_var.shape[0])
        self.rng = rng

    def set_weights(self, values):
        self.mlp.set_weights(values[:-1])
        self.log_std = np.asarray(values[-1], dtype=np.float32).copy()
        self.std = np.exp(self.log_std)
        self._std_eps = self.std + EPS
        self._twice_log_std = 2 * self.log_std

    def _logp(self, x, mu):
        # gaussian_likelihood's formula, in its order of operations, summed over the last axis
        z = (x - mu) / self._std_eps
        pre_sum = z * z
        pre_sum += self._twice_log_std
        pre_sum += LOG_2PI
        pre_sum *= -0.5
        return pre_sum.sum(axis=-1)

    def step(self, o):
        mu = self.mlp(o).copy()
        a = self.rng.standard_normal(self.act_dim).astype(np.float32)
        a *= self.std
        a += mu
        return a, self._logp(a, mu), [self.log_std, mu]

    def dist_params(self, obs):
        """``{'mu': (batch, act_dim), 'log_std': (act_dim,)}``."""
        return {'mu': self.mlp.batch(obs), 'log_std': self.log_std}

    def log_prob(self, obs, act):
        """``(batch,)`` log-likelihoods of actions ``act``."""
        return self._logp(np.asarray(act, dtype=np.float32), self.mlp.batch(obs))


class NumpyActorCritic:
    """A numpy policy with its value function, pulled from the session in one ``sess.run``.

    ``step(o) -> (a, v, logp, info)`` is what the loop of ``spinup_tf.loops.on_policy``
    expects of one env step (``v`` a float32 scalar, ``info`` a list in sorted-key order);
    ``value(o)`` is :math:`V(o)`; ``value_batch(obs)`` maps ``(batch, obs_dim)`` to
    ``(batch,)``.
    """

    def __init__(self, policy, value_mlp):
        self.policy = policy
        self.value_mlp = value_mlp
        self._n_pi = len(policy.variables)
        self.variables = list(policy.variables) + list(value_mlp.variables)
        self._pull = None

    def set_weights(self, values):
        self.policy.set_weights(values[:self._n_pi])
        self.value_mlp.set_weights(values[self._n_pi:])

    def pull(self, sess):
        """Read every weight of the policy and value function (one ``sess.run``)."""
        if self._pull is None:
            self._pull = sess.make_callable(self.variables)
        self.set_weights(self._pull())

    def step(self, o):
        a, logp, info = self.policy.step(o)
        return a, self.value_mlp(o)[0], logp, info

    def value(self, o):
        return self.value_mlp(o)[0]

    def value_batch(self, obs):
        return self.value_mlp.batch(obs)[:, 0]


def make_numpy_actor_critic(layers):
    """An (unpulled) :class:`NumpyActorCritic` for ``actor_critic_layers``'s structure.

    Raises:
        NoMirror: an activation has no numpy version.
    """
    pi_mlp = NumpyMLP(layers.pi_layers)
    if layers.kind == 'categorical':
        policy = NumpyCategoricalPolicy(pi_mlp)
    else:
        policy = NumpyGaussianPolicy(pi_mlp, layers.log_std)
    return NumpyActorCritic(policy, NumpyMLP(layers.v_layers))


def check_actor_critic(sess, g, ac, obs_dim, n=16, seed=0, rtol=1e-4, atol=1e-5):
    """Raise ``NoMirror`` unless the numpy actor-critic ``ac`` matches the graph ``g`` on
    ``n`` random observations: the distribution parameters (``info``: ``logp_all``, or
    ``mu`` and ``log_std``), ``v``, and ``logp`` of given actions, for batches and through
    ``step`` one observation at a time (whose sampled actions are fed back to the graph).

    The check draws from its own ``RandomState(seed)``, never from numpy's global RNG.
    """
    rng = np.random.RandomState(seed)
    obs = rng.uniform(-3, 3, size=(n, obs_dim)).astype(np.float32)
    keys = sorted(g.info)
    policy = ac.policy
    saved_rng, policy.rng = policy.rng, rng
    try:
        steps = [ac.step(o) for o in obs]
    finally:
        policy.rng = saved_rng
    acts = np.array([s[0] for s in steps])
    fetched = sess.run([g.info[k] for k in keys] + [g.v, g.logp], {g.x_ph: obs, g.a_ph: acts})
    info_graph, v_graph, logp_graph = fetched[:-2], fetched[-2], fetched[-1]
    params = policy.dist_params(obs)
    for k, expected in zip(keys, info_graph):
        if k not in params:
            raise NoMirror('the graph policy has info %r, the numpy policy does not' % k)
        compare_to_graph(k, params[k], expected, rtol, atol)
        single = np.stack([s[3][keys.index(k)] for s in steps])
        compare_to_graph(k + ' (one step)', single, np.broadcast_to(expected, single.shape), rtol,
                 atol)
    compare_to_graph('v', ac.value_batch(obs), v_graph, rtol, atol)
    compare_to_graph('v (one step)', [s[1] for s in steps], v_graph, rtol, atol)
    compare_to_graph('logp', policy.log_prob(obs, acts), logp_graph, rtol, atol)
    compare_to_graph('logp (one step)', [s[2] for s in steps], logp_graph, rtol, atol)


def numpy_actor_critic(sess, g, layers, obs_dim, logger=None):
    """A pulled and checked :class:`NumpyActorCritic` of the graph ``g``, or None (with a
    line in the log) when it cannot be mirrored.

    Args:
        layers: :func:`actor_critic_layers`'s structure, or None when it failed.
    """
    try:
        if layers is None:
            raise NoMirror('the actor-critic is not a chain of dense layers')
        ac = make_numpy_actor_critic(layers)
        ac.pull(sess)
        check_actor_critic(sess, g, ac, obs_dim)
        return ac
    except NoMirror as e:
        if logger is not None:
            logger.log('Acting through the graph (one sess.run per step): %s' % e, 'yellow')
        return None
