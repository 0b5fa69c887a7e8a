"""The deterministic networks (Spinning Up's TF1 ``core.py``, first half): the image
encoder, Q functions, DDPG's and TD3's actor-critics and DQN's Q network.

Deterministic actor-critics (DDPG, TD3): called inside a variable scope (``main`` or
``target``), they create the sub-scopes ``pi`` and ``q`` (DDPG) or ``pi``, ``q1``, ``q2``
(TD3); the Q-of-policy output reuses the Q weights through ``variable_scope(..., reuse=True)``.
The stochastic policies (VPG, TRPO, PPO, SAC) are in :mod:`spinup_tf.algos.distributions`.
"""
import numpy as np

from spinup_tf.utils.tf1 import tf, mlp, dense, conv2d
# Spinning Up's core.py helpers, for the algorithm files (defined in spinup_tf.utils.tf1)
from spinup_tf.utils.tf1 import (placeholders, get_trainable_vars, count_vars,  # noqa: F401
                                 paired_vars, target_init_op, random_normal)


# --------------------------------------------------------------------------------------------
# Image observations: the Nature-DQN encoder
# --------------------------------------------------------------------------------------------
def nature_cnn(x):
    """The convolutional layers of the Nature DQN (Mnih et al. 2015): 32 8x8 filters of
    stride 4, 64 4x4 of stride 2, 64 3x3 of stride 1, each with ReLU, flattened.

    Args:
        x: ``(batch, H, W, C)`` or ``(batch, C, H, W)`` images, 0-255 (uint8 or float):
            scaled to [0, 1]; the channels are taken to be the axis of size at most 4 (a
            stack of 4 frames or RGB), last when both ends qualify.
    Returns:
        ``(batch, features)``: 3136 features for 84x84 frames.
    """
    shape = x.shape.as_list()
    if shape[-1] > 4 and shape[1] <= 4:  # channels first (gymnasium's frame stack)
        x = tf.transpose(x, [0, 2, 3, 1])
    h = tf.cast(x, tf.float32) / 255.0
    h = conv2d(h, 32, 8, 4, name='conv')
    h = conv2d(h, 64, 4, 2, name='conv_1')
    h = conv2d(h, 64, 3, 1, name='conv_2')
    return tf.reshape(h, [-1, int(np.prod(h.shape.as_list()[1:]))])


def features(x):
    """What a network's MLP reads: the observations ``(batch, obs_dim)`` themselves, or the
    :func:`nature_cnn` features of images ``(batch, H, W, C)``. Each network calls it in its
    own scope, so every network (policy, each Q) has its own encoder."""
    return x if len(x.shape) == 2 else nature_cnn(x)


# --------------------------------------------------------------------------------------------
# Deterministic actor-critics (DDPG, TD3)
# --------------------------------------------------------------------------------------------
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
    return tf.squeeze(mlp(tf.concat([features(x), a], axis=-1), list(hidden_sizes) + [1],
                          activation, None), axis=1)


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


# --------------------------------------------------------------------------------------------
# Discrete actions: DQN. An action is fed as its one-hot row ``a`` ``(batch, n_acts)`` (the
# replay buffer stores it so), so Q(x, a) = sum(q_all * a, axis=1).
# --------------------------------------------------------------------------------------------
def mlp_q_network(x, a, hidden_sizes=(64, 64), activation=tf.nn.relu, output_activation=None,
                  action_space=None, dueling=False):
    """DQN's Q network (scope ``q``): the values of all actions from one MLP (Mnih et al.
    2015), or, with ``dueling``, from a value and an advantage head on a shared trunk (Wang
    et al. 2016):

    .. math:: Q(x, a) = V(x) + A(x, a) - \\frac{1}{|\\mathcal{A}|} \\sum_{a'} A(x, a')

    ==========  ===================  =============================================
    Symbol      Shape                Description
    ==========  ===================  =============================================
    ``greedy``  (batch,)             | argmax_a Q(x, a): the greedy action (int64).
    ``q_all``   (batch, n_acts)      | Q(x, .) for every action.
    ``q``       (batch,)             | Q(x, a) of the one-hot actions ``a``.
    ==========  ===================  =============================================

    ``output_activation`` is unused (Q values are unbounded); it is accepted so the
    command line's ``ac_kwargs`` mean the same for every algorithm.
    """
    n_acts = action_space.n
    with tf.variable_scope('q'):
        h = features(x)  # images: the Nature-DQN encoder first
        if not dueling:
            q_all = mlp(h, list(hidden_sizes) + [n_acts], activation, None)
        else:
            trunk = mlp(h, list(hidden_sizes), activation, activation)
            value = dense(trunk, 1, None, name='value')
            advantage = dense(trunk, n_acts, None, name='advantage')
            q_all = value + advantage - tf.reduce_mean(advantage, axis=1, keepdims=True)
    greedy = tf.argmax(q_all, axis=1)
    q = tf.reduce_sum(q_all * a, axis=1)
    return greedy, q_all, q
