"""The seed systems' networks, rebuilt as TF1 graphs (used by the presets in
``spinup_tf.reproductions.presets``), and the registry of actor-critics by name.
"""
import numpy as np

from spinup_tf.utils.tf1 import tf, mlp, dense
from spinup_tf.algos.core import scale_to_bounds, mlp_td3_actor_critic, mlp_ddpg_actor_critic


def _torch_linear(x, units, activation=None, name='dense'):
    """A layer initialised as PyTorch's ``nn.Linear``: kernel and bias ~ U(±1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(x.shape.as_list()[-1])
    init = tf.random_uniform_initializer(-bound, bound)
    return dense(x, units, activation, name=name, kernel_initializer=init,
                 bias_initializer=init)


def udemy_td3_actor_critic(x, a, hidden_sizes=(400, 300), activation=tf.nn.relu,
                           output_activation=tf.tanh, action_space=None):
    """The udemy PyTorch TD3 (seed 001 v2): a 400-300 ReLU actor (scope ``pi``, called
    ``Actor`` there) and both critics in one ``critic`` scope (``critic/q1``, ``critic/q2``:
    the ``Critic`` class with layers l1-l3 and l4-l6), each layer initialised as PyTorch's
    ``nn.Linear``. Returns ``pi, q1, q2, q1_pi`` like :func:`mlp_td3_actor_critic`.
    """
    act_dim = a.shape.as_list()[-1]

    def net(inp, sizes, out_act):
        for i, h in enumerate(sizes[:-1]):
            inp = _torch_linear(inp, h, activation, name='l%d' % (i + 1))
        return _torch_linear(inp, sizes[-1], out_act, name='l%d' % len(sizes))

    def q(inp_x, inp_a):
        return tf.squeeze(net(tf.concat([inp_x, inp_a], axis=-1), list(hidden_sizes) + [1],
                              None), axis=1)

    with tf.variable_scope('pi'):
        pi = scale_to_bounds(net(x, list(hidden_sizes) + [act_dim], output_activation),
                             action_space)
    with tf.variable_scope('critic'):
        with tf.variable_scope('q1'):
            q1 = q(x, a)
        with tf.variable_scope('q2'):
            q2 = q(x, a)
    with tf.variable_scope('critic/q1', reuse=True):
        q1_pi = q(x, pi)
    return pi, q1, q2, q1_pi


def tensorlayer_td3_actor_critic(x, a, hidden_sizes=(32, 32), activation=tf.nn.relu,
                                 output_activation=tf.tanh, action_space=None, init_w=3e-3):
    """The TensorLayer TD3 tutorial's networks (seed 003): a policy with three hidden layers
    of ``hidden_sizes[0]`` units (32), Q networks with two, every kernel (and the policy's
    output bias) ~ U(±``init_w``), other biases zero. Returns ``pi, q1, q2, q1_pi``."""
    act_dim = a.shape.as_list()[-1]
    w_init = tf.random_uniform_initializer(-init_w, init_w)
    h = hidden_sizes[0]

    def q(inp_x, inp_a):
        return tf.squeeze(mlp(tf.concat([inp_x, inp_a], axis=-1), [h, h, 1], activation, None,
                              kernel_initializer=w_init), axis=1)

    with tf.variable_scope('pi'):
        net = mlp(x, [h, h, h], activation, activation, kernel_initializer=w_init)
        out = dense(net, act_dim, output_activation, name='dense_3', kernel_initializer=w_init,
                    bias_initializer=w_init)
        pi = scale_to_bounds(out, action_space)
    with tf.variable_scope('q1'):
        q1 = q(x, a)
    with tf.variable_scope('q2'):
        q2 = q(x, a)
    with tf.variable_scope('q1', reuse=True):
        q1_pi = q(x, pi)
    return pi, q1, q2, q1_pi


def rllab_ddpg_actor_critic(x, a, hidden_sizes=(32, 32), activation=tf.nn.relu,
                            output_activation=tf.tanh, action_space=None, init_std=0.01,
                            unit_actions=True):
    """The MXNet rllab-style DDPG's networks (seed 002): policy obs→32→32→tanh, Q obs→32→32,
    then the action concatenated →32→1; kernels ~ N(0, ``init_std``) (MXNet's
    ``initializer.Normal()``), biases zero. Returns ``pi, q, q_pi`` like
    :func:`mlp_ddpg_actor_critic`.

    ``unit_actions``: the seed's run script wraps its env in rllab's ``normalize(env)``, so
    both networks work on actions in ``[-1, 1]`` and the env maps them onto its bounds. Here
    the buffer and the env keep env units (``a``, ``pi``: ``(batch, act_dim)`` in
    ``[low, high]``), and the Q network is fed ``u = (a - center) / half_range``, the
    action rllab's Q sees; ``q_pi`` takes the policy's tanh output ``u_pi`` itself, so
    ``pi = center + half_range * u_pi``. With ``unit_actions=False`` the Q network sees env
    units (``half_range`` times larger inputs: 3x on InvertedPendulum).
    """
    act_dim = a.shape.as_list()[-1]
    w_init = tf.random_normal_initializer(0.0, init_std)
    h1, h2 = hidden_sizes[0], hidden_sizes[-1]
    if unit_actions:
        low = np.asarray(action_space.low, dtype=np.float32)
        high = np.asarray(action_space.high, dtype=np.float32)
        center, half_range = (high + low) / 2.0, (high - low) / 2.0
        to_q_input = lambda act: (act - center) / half_range  # noqa: E731
    else:
        to_q_input = lambda act: act  # noqa: E731

    def q(inp_x, inp_a):
        net = mlp(inp_x, [h1, h2], activation, activation, kernel_initializer=w_init)
        net = dense(tf.concat([net, inp_a], axis=-1), h2, activation, name='dense_2',
                    kernel_initializer=w_init)
        return tf.squeeze(dense(net, 1, None, name='dense_3', kernel_initializer=w_init),
                          axis=1)

    with tf.variable_scope('pi'):
        u_pi = mlp(x, [h1, h2, act_dim], activation, output_activation,
                   kernel_initializer=w_init)
        pi = scale_to_bounds(u_pi, action_space)
    with tf.variable_scope('q'):
        q_val = q(x, to_q_input(a))
    with tf.variable_scope('q', reuse=True):
        q_pi = q(x, u_pi if unit_actions else pi)
    return pi, q_val, q_pi


ACTOR_CRITICS = {
    'mlp_td3': mlp_td3_actor_critic,
    'mlp_ddpg': mlp_ddpg_actor_critic,
    'udemy': udemy_td3_actor_critic,
    'tensorlayer': tensorlayer_td3_actor_critic,
    'rllab': rllab_ddpg_actor_critic,
}


def resolve_actor_critic(actor_critic):
    """A callable actor-critic: ``actor_critic`` itself, or the one registered under that name
    in ``ACTOR_CRITICS`` (short name, or the function's qualified name as config.json
    records it)."""
    if callable(actor_critic):
        return actor_critic
    name = str(actor_critic)
    for key, fn in ACTOR_CRITICS.items():
        # (a qualified name of an older layout, 'spinup_tf.actor_critics.udemy_...', matches)
        if name in (key, fn.__name__) or name.rsplit('.', 1)[-1] == fn.__name__:
            return fn
    from spinup_tf.utils.errors import UserInputError
    raise UserInputError('unknown actor_critic %r; registered: %s'
                         % (name, ', '.join(ACTOR_CRITICS)))
