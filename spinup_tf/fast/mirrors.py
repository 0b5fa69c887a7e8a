"""Numpy mirrors of a graph's MLPs, for acting without a ``sess.run`` per env step.

An action ``sess.run`` costs 150-370 us on a small network; the same MLP in numpy costs
10-20 us. Between two updates the weights do not change, so an algorithm pulls them once
(after each update window, or once per epoch on-policy) and evaluates the chain of dense
layers in numpy.

The chain is read from the graph itself: ``spinup_tf.utils.tf1.dense`` records every layer it
builds (``DENSE_LAYERS``), and :func:`dense_chain` follows the layers of one variable scope
from an input tensor to the end of the chain. :func:`check_mirror` compares a mirror with
the graph on random inputs before it is used, so a network the mirror cannot reproduce
exactly is caught at start-up rather than trained on silently.
"""
import numpy as np
from scipy.special import erf

from spinup_tf.utils.tf1 import DENSE_LAYERS


class NoMirror(Exception):
    """The network cannot be mirrored in numpy (unknown activation, not a plain chain)."""


def _sigmoid(x, out=None):
    # 1 / (1 + exp(-x)), computed as 0.5 * (1 + tanh(x / 2)) to stay finite for any x
    out = np.multiply(x, 0.5, out=out)
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    return out


def _relu(x, out=None):
    return np.maximum(x, 0.0, out=out)


def _apply(fn):
    def inplace(x, out=None):
        y = fn(x)
        if out is None:
            return y
        out[...] = y
        return out
    return inplace


SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
NUMPY_ACTIVATIONS = {
    'relu': _relu,
    'tanh': lambda x, out=None: np.tanh(x, out=out),
    'sigmoid': _sigmoid,
    'elu': _apply(lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    'selu': _apply(lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA
                                                   * np.expm1(np.minimum(x, 0)))),
    'softplus': _apply(lambda x: np.logaddexp(0.0, x).astype(x.dtype)),
    'leaky_relu': _apply(lambda x: np.where(x > 0, x, 0.2 * x)),
    'relu6': _apply(lambda x: np.clip(x, 0.0, 6.0)),
    'swish': _apply(lambda x: x * _sigmoid(x)),
    'gelu': _apply(lambda x: (0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))).astype(x.dtype)),
}


def numpy_activation(activation):
    """The numpy version of a TF activation function (None stays None)."""
    if activation is None:
        return None
    name = getattr(activation, '__name__', None)
    if name not in NUMPY_ACTIVATIONS:
        raise NoMirror('no numpy version of activation %r' % (activation,))
    return NUMPY_ACTIVATIONS[name]


def dense_chain(inputs, scope, graph=None):
    """The layers built by ``tf1.dense`` in ``scope`` that form a chain starting at
    ``inputs``: each layer's input is the previous layer's output.

    Returns:
        ``(layers, output)``: the ``DenseLayer`` records in order, and the chain's last
        output tensor. The chain stops where no layer, or more than one (a fork into
        heads), reads the current tensor; copies of one layer built again with
        ``reuse=True`` on the same input count once.
    """
    graph = graph or inputs.graph
    prefix = scope.rstrip('/') + '/'
    records = [r for r in graph.get_collection(DENSE_LAYERS)
               if r.inputs.graph is graph and r.kernel.name.startswith(prefix)]
    layers, t = [], inputs
    while True:
        nxt = [r for r in records if r.inputs is t]
        # The same layer built twice on one input (reuse=True) is one computation.
        if not nxt or any(r.kernel is not nxt[0].kernel for r in nxt):
            break
        layers.append(nxt[0])
        t = nxt[0].outputs
    if not layers:
        raise NoMirror('no dense layer in scope %r reads %s' % (scope, inputs.name))
    return layers, t


class NumpyMLP:
    """A chain of dense layers evaluated in numpy with weights pulled from the graph.

    Args:
        layers: ``DenseLayer`` records (from :func:`dense_chain`).

    ``variables`` lists the graph variables (kernel, bias, kernel, bias, ...) whose values
    ``set_weights`` expects in that order. ``__call__`` maps one ``(in_dim,)`` input to a
    ``(out_dim,)`` output through preallocated buffers; ``batch`` maps ``(batch, in_dim)``.
    """

    def __init__(self, layers):
        self.activations = [numpy_activation(layer.activation) for layer in layers]
        self.variables = [v for layer in layers for v in (layer.kernel, layer.bias)]
        widths = [int(layer.kernel.shape[1]) for layer in layers]
        self._bufs = [np.zeros(w, np.float32) for w in widths]
        self.weights = None

    def set_weights(self, values):
        """Weights in the order of ``variables`` (as ``sess.run(variables)`` returns them)."""
        values = [np.asarray(v, dtype=np.float32) for v in values]
        self.weights = list(zip(values[0::2], values[1::2]))

    def pull(self, sess):
        """Read the current weights from the session."""
        self.set_weights(sess.run(self.variables))

    def __call__(self, x):
        h = np.asarray(x, dtype=np.float32)
        for (kernel, bias), act, buf in zip(self.weights, self.activations, self._bufs):
            np.dot(h, kernel, out=buf)
            buf += bias
            if act is not None:
                act(buf, out=buf)
            h = buf
        return h

    def batch(self, x):
        h = np.asarray(x, dtype=np.float32)
        for (kernel, bias), act in zip(self.weights, self.activations):
            h = h @ kernel + bias
            if act is not None:
                h = act(h)
        return h


class BoundedActor:
    """A deterministic actor in numpy: ``center + half_range * mlp(o)``, the numpy side of
    ``actor_critics.scale_to_bounds`` (``half_range * mlp(o)`` for symmetric bounds).

    Args:
        mlp: the actor's ``NumpyMLP`` (ending in its squashing activation).
        low, high: ``(act_dim,)`` bounds the graph's policy maps onto.
    """

    def __init__(self, mlp, low, high):
        self.mlp = mlp  # (None when only the scaling is used)
        low = np.asarray(low, np.float32)
        high = np.asarray(high, np.float32)
        self.center = (high + low) / np.float32(2.0)
        self.half_range = (high - low) / np.float32(2.0)
        self.symmetric = bool(np.all(self.center == 0))
        self.variables = mlp.variables if mlp is not None else []

    def set_weights(self, values):
        self.mlp.set_weights(values)

    def pull(self, sess):
        self.mlp.pull(sess)

    def __call__(self, o):
        out = self.half_range * self.mlp(o)
        return out if self.symmetric else self.center + out

    def batch(self, obs):
        out = self.half_range * self.mlp.batch(obs)
        return out if self.symmetric else self.center + out


class SquashedGaussianActor:
    """SAC's policy in numpy (``spinup_tf.algos.distributions.mlp_squashed_gaussian_policy``):
    a trunk, then the heads ``mu`` and ``log_std`` (clipped to ``[log_std_min, log_std_max]``).

    ``actor(o)`` is the deterministic action ``scale(tanh(mu))``; ``actor.sample(o)`` draws
    ``scale(tanh(mu + exp(log_std) * eps))`` with ``eps`` from numpy's global RNG.
    """

    def __init__(self, trunk, mu_head, log_std_head, low, high, log_std_min, log_std_max):
        self.trunk, self.mu_head, self.log_std_head = trunk, mu_head, log_std_head
        self.log_std_min, self.log_std_max = log_std_min, log_std_max
        self.bounds = BoundedActor(None, low, high)
        self.variables = trunk.variables + mu_head.variables + log_std_head.variables
        self._splits = (len(trunk.variables), len(trunk.variables) + len(mu_head.variables))

    def set_weights(self, values):
        i, k = self._splits
        self.trunk.set_weights(values[:i])
        self.mu_head.set_weights(values[i:k])
        self.log_std_head.set_weights(values[k:])

    def pull(self, sess):
        self.set_weights(sess.run(self.variables))

    def _scale(self, squashed):
        out = self.bounds.half_range * squashed
        return out if self.bounds.symmetric else self.bounds.center + out

    def __call__(self, o):
        return self._scale(np.tanh(self.mu_head(self.trunk(o))))

    def batch(self, obs):
        return self._scale(np.tanh(self.mu_head.batch(self.trunk.batch(obs))))

    def log_std(self, obs):
        """``(batch, act_dim)`` clipped log standard deviations."""
        return np.clip(self.log_std_head.batch(self.trunk.batch(obs)), self.log_std_min,
                       self.log_std_max)

    def sample(self, o):
        h = self.trunk(o)
        mu = self.mu_head(h).copy()
        log_std = np.clip(self.log_std_head(h), self.log_std_min, self.log_std_max)
        u = mu + np.exp(log_std) * np.random.standard_normal(mu.shape).astype(np.float32)
        return self._scale(np.tanh(u))


class GreedyQ:
    """DQN's greedy policy in numpy: ``argmax_a Q(o, a)``, with ``Q`` a chain of dense
    layers (``core.mlp_q_network``), or a trunk with an ``advantage`` head: the dueling
    form ``V + A - mean(A)`` has the argmax of ``A``, so acting needs only that head."""

    def __init__(self, trunk, advantage_head=None):
        self.trunk, self.advantage_head = trunk, advantage_head
        self.variables = trunk.variables + (
            advantage_head.variables if advantage_head is not None else [])
        self._split = len(trunk.variables)

    def set_weights(self, values):
        self.trunk.set_weights(values[:self._split])
        if self.advantage_head is not None:
            self.advantage_head.set_weights(values[self._split:])

    def pull(self, sess):
        self.set_weights(sess.run(self.variables))

    def __call__(self, o):
        h = self.trunk(o)
        return int(np.argmax(h if self.advantage_head is None else self.advantage_head(h)))

    def batch(self, obs):
        h = self.trunk.batch(obs)
        return np.argmax(h if self.advantage_head is None else self.advantage_head.batch(h),
                         axis=1)


class CategoricalActor:
    """Discrete SAC's policy in numpy: logits from a chain of dense layers; ``actor(o)`` is
    the most probable action, ``actor.sample(o)`` draws one (numpy's global RNG)."""

    def __init__(self, mlp):
        self.mlp, self.variables = mlp, mlp.variables

    def set_weights(self, values):
        self.mlp.set_weights(values)

    def pull(self, sess):
        self.mlp.pull(sess)

    def __call__(self, o):
        return int(np.argmax(self.mlp(o)))

    def batch(self, obs):
        return np.argmax(self.mlp.batch(obs), axis=1)

    def sample(self, o):
        logits = self.mlp(o).astype(np.float64)
        p = np.exp(logits - logits.max())
        cdf = np.cumsum(p)
        return int(min(np.searchsorted(cdf, np.random.random_sample() * cdf[-1], 'right'),
                       len(p) - 1))


def greedy_q(x_ph, act, scope):
    """``(GreedyQ, checks)`` of DQN's Q network under ``scope`` (``'main/q'``) reading
    ``x_ph``, checked against the graph's greedy action ``act``; ``(None, [])`` for another
    structure."""
    try:
        layers, out = dense_chain(x_ph, scope)
        advantage = None
        if any(r.inputs is out for r in x_ph.graph.get_collection(DENSE_LAYERS)
               if r.kernel.name.startswith(scope + '/advantage/')):
            head, _ = dense_chain(out, scope + '/advantage')
            if len(head) != 1:
                raise NoMirror('unexpected advantage head')
            advantage = NumpyMLP(head)
    except NoMirror:
        return None, []
    mirror = GreedyQ(NumpyMLP(layers), advantage)
    return mirror, [(act, mirror)]


def compare_to_graph(what, got, expected, rtol=1e-4, atol=1e-5):
    """Raise ``NoMirror`` unless the mirror's ``got`` equals the graph's ``expected`` (same
    shape, ``allclose``)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=rtol, atol=atol):
        diff = (np.max(np.abs(got - expected)) if got.shape == expected.shape
                else 'shapes %s vs %s' % (got.shape, expected.shape))
        raise NoMirror('numpy mirror of %s differs from the graph (max abs diff %s)'
                       % (what, diff))


def check_mirror(sess, x_ph, tensor, mirror, obs_dim, n=16, seed=0, rtol=1e-4, atol=1e-5):
    """Raise ``NoMirror`` unless ``mirror`` (single inputs and batches) matches ``tensor``
    evaluated by the graph on ``n`` random ``(obs_dim,)`` inputs."""
    obs = np.random.RandomState(seed).uniform(-3, 3, size=(n, obs_dim)).astype(np.float32)
    expected = sess.run(tensor, {x_ph: obs})
    compare_to_graph(tensor.name, mirror.batch(obs), expected, rtol, atol)
    compare_to_graph(tensor.name + ' (one input)', np.stack([np.array(mirror(o)) for o in obs]),
                     expected, rtol, atol)


def deterministic_actor(x_ph, scope, low, high):
    """A numpy ``BoundedActor`` of the chain of layers in ``scope`` (e.g. ``'main/pi'``)
    that reads ``x_ph``, or None when the policy is not such a chain. Built with the graph
    (no session); pull its weights and ``check_mirror`` it before acting with it."""
    try:
        return BoundedActor(NumpyMLP(dense_chain(x_ph, scope)[0]), low, high)
    except NoMirror:
        return None


def squashed_gaussian_actor(x_ph, scope, low, high):
    """SAC's policy in numpy (``SquashedGaussianActor``) from the graph's layers under
    ``scope``: a trunk reading ``x_ph``, then one-layer heads ``mu`` and ``log_std``.

    Returns:
        ``(actor, log_std_check)``: the actor, and the ``(tensor, NumpyMLP)`` pair that checks
        its ``log_std`` head against the graph; ``(None, None)`` for another structure.
    """
    from spinup_tf.utils.tf1 import LOG_STD_MIN, LOG_STD_MAX
    try:
        trunk, fork = dense_chain(x_ph, scope)
        heads = {}
        for name in ('mu', 'log_std'):
            layers, _ = dense_chain(fork, scope + '/' + name)
            if len(layers) != 1:
                raise NoMirror('unexpected %s head' % name)
            heads[name] = layers[0]
    except NoMirror:
        return None, None
    actor = SquashedGaussianActor(NumpyMLP(trunk), NumpyMLP([heads['mu']]),
                                  NumpyMLP([heads['log_std']]), low, high,
                                  LOG_STD_MIN, LOG_STD_MAX)
    return actor, (heads['log_std'].outputs, NumpyMLP(trunk + [heads['log_std']]))


def policy_mirror(x_ph, act, explore, scope, space):
    """The numpy mirror of an off-policy algorithm's policy under ``scope``.

    Args:
        act: the deterministic action tensor (of ``x_ph``).
        explore: the training action tensor of a stochastic policy (SAC's), or None for a
            deterministic one (the loop adds noise).
        space: the ``Box`` the policy maps onto.

    Returns:
        ``(mirror, checks)``: ``checks`` lists the ``(tensor, numpy function)`` pairs that
        must match before the mirror acts; ``(None, [])`` when the policy is not a chain of
        the project's dense layers.
    """
    from gymnasium.spaces import Discrete
    if isinstance(space, Discrete) and explore is None:  # DQN: greedy in its Q network
        return greedy_q(x_ph, act, scope.rsplit('/', 1)[0] + '/q')
    if isinstance(space, Discrete):  # discrete SAC: the categorical policy's logits
        try:
            layers, logits = dense_chain(x_ph, scope)
        except NoMirror:
            return None, []
        actor = CategoricalActor(NumpyMLP(layers))
        return actor, [(logits, actor.mlp)]
    if explore is None:
        actor = deterministic_actor(x_ph, scope, space.low, space.high)
        return (actor, [(act, actor)]) if actor is not None else (None, [])
    actor, log_std_check = squashed_gaussian_actor(x_ph, scope, space.low, space.high)
    return (actor, [(act, actor), log_std_check]) if actor is not None else (None, [])
