"""Actor-critic graph builders for the deterministic-policy algorithms (DDPG, TD3).

Each builder is called inside a variable scope (``main`` or ``target``) and creates the
sub-scopes ``pi`` and ``q`` (DDPG) or ``pi``, ``q1``, ``q2`` (TD3). The Q-of-policy output
reuses the Q weights through ``variable_scope(..., reuse=True)``.
"""
import numpy as np

from spinup_tf.tf1 import tf, mlp


def scale_to_bounds(squashed, action_space):
    """Map ``squashed`` in ``[-1, 1]`` onto ``[low, high]`` per dimension.

    For the usual symmetric space (``low = -high``) this is ``high * squashed``, as in
    Spinning Up; unequal or asymmetric bounds are handled per dimension.

    Args:
        squashed: ``(batch, act_dim)`` tensor in ``[-1, 1]``.
    Returns:
        ``(batch, act_dim)`` tensor in ``[low, high]``.
    """
    low = np.asarray(action_space.low, dtype=np.float32)
    high = np.asarray(action_space.high, dtype=np.float32)
    center = (high + low) / 2.0
    half_range = (high - low) / 2.0
    if np.all(center == 0):
        return half_range * squashed
    return center + half_range * squashed


def q_value(x, a, hidden_sizes=(256, 256), activation=tf.nn.relu):
    """``(batch,)`` Q estimate from an MLP on ``concat([x, a])``."""
    return tf.squeeze(mlp(tf.concat([x, a], axis=-1), list(hidden_sizes) + [1], activation,
                          None), axis=1)


def _policy(x, act_dim, hidden_sizes, activation, output_activation, action_space):
    return scale_to_bounds(mlp(x, list(hidden_sizes) + [act_dim], activation,
                               output_activation), action_space)


def mlp_td3_actor_critic(x, a, hidden_sizes=(256, 256), activation=tf.nn.relu,
                         output_activation=tf.tanh, action_space=None):
    """TD3's deterministic actor and twin critics.

    ===========  ================  ======================================
    Symbol       Shape             Description
    ===========  ================  ======================================
    ``pi``       (batch, act_dim)  | Deterministic action for states ``x``.
    ``q1``       (batch,)          | First estimate of Q*(x, a).
    ``q2``       (batch,)          | Second estimate of Q*(x, a).
    ``q1_pi``    (batch,)          | q1(x, pi(x)), sharing q1's weights.
    ===========  ================  ======================================
    """
    act_dim = a.shape.as_list()[-1]
    with tf.variable_scope('pi'):
        pi = _policy(x, act_dim, hidden_sizes, activation, output_activation, action_space)
    with tf.variable_scope('q1'):
        q1 = q_value(x, a, hidden_sizes, activation)
    with tf.variable_scope('q2'):
        q2 = q_value(x, a, hidden_sizes, activation)
    with tf.variable_scope('q1', reuse=True):
        q1_pi = q_value(x, pi, hidden_sizes, activation)
    return pi, q1, q2, q1_pi


def mlp_ddpg_actor_critic(x, a, hidden_sizes=(256, 256), activation=tf.nn.relu,
                          output_activation=tf.tanh, action_space=None):
    """DDPG's deterministic actor and critic.

    ===========  ================  ======================================
    Symbol       Shape             Description
    ===========  ================  ======================================
    ``pi``       (batch, act_dim)  | Deterministic action for states ``x``.
    ``q``        (batch,)          | Estimate of Q*(x, a).
    ``q_pi``     (batch,)          | q(x, pi(x)), sharing q's weights.
    ===========  ================  ======================================
    """
    act_dim = a.shape.as_list()[-1]
    with tf.variable_scope('pi'):
        pi = _policy(x, act_dim, hidden_sizes, activation, output_activation, action_space)
    with tf.variable_scope('q'):
        q = q_value(x, a, hidden_sizes, activation)
    with tf.variable_scope('q', reuse=True):
        q_pi = q_value(x, pi, hidden_sizes, activation)
    return pi, q, q_pi
