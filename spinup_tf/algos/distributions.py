"""The stochastic policies (Spinning Up's TF1 ``core.py``, second half): Gaussian and
categorical log-likelihoods, their analytic KL divergences, the MLP actor-critic of VPG, TRPO
and PPO, and SAC's squashed Gaussian and discrete actor-critics.

Each on-policy policy also returns its distribution parameters (``info``), placeholders of the
same shapes for the old policy's parameters (``info_phs``) and the mean KL between the old
policy and the current one (``d_kl``), as TRPO needs. The image encoder (``features``), the Q
function and the map onto the action bounds are :mod:`spinup_tf.algos.core`'s.
"""
import numpy as np
from gymnasium.spaces import Box, Discrete

from spinup_tf.algos.core import features, q_value, scale_to_bounds
from spinup_tf.utils.tf1 import tf, EPS, LOG_STD_MIN, LOG_STD_MAX, mlp, dense, placeholder
from spinup_tf.utils.tf1 import random_normal, random_categorical


# --------------------------------------------------------------------------------------------
# Likelihoods and KLs
# --------------------------------------------------------------------------------------------
def gaussian_likelihood(x, mu, log_std):
    """Log-density of a diagonal Gaussian, summed over action dimensions.

    ===========  ===============================================  =========================
    Symbol       Shape                                            Description
    ===========  ===============================================  =========================
    ``x``        ``(batch, act_dim)``                             Actions.
    ``mu``       ``(batch, act_dim)``                             Means.
    ``log_std``  ``(batch, act_dim)`` or ``(act_dim,)``           Log standard deviations.
    return       ``(batch,)``                                     :math:`\\log \\mathcal{N}(x;
                                                                  \\mu, \\sigma^2)`.
    ===========  ===============================================  =========================
    """
    pre_sum = -0.5 * (((x - mu) / (tf.exp(log_std) + EPS)) ** 2 + 2 * log_std
                      + np.log(2 * np.pi))
    return tf.reduce_sum(pre_sum, axis=1)


def diagonal_gaussian_kl(mu0, log_std0, mu1, log_std1):
    """Mean over the batch of the analytic KL(p0 || p1) between diagonal Gaussians.

    .. math::
        D_{KL}(p_0 \\| p_1) = \\sum_i \\left[ \\frac{(\\mu_{1,i} - \\mu_{0,i})^2
        + \\sigma_{0,i}^2}{2 \\sigma_{1,i}^2} - \\frac{1}{2} + \\log \\sigma_{1,i}
        - \\log \\sigma_{0,i} \\right]

    =========================  =====================================  ======================
    Symbol                     Shape                                  Description
    =========================  =====================================  ======================
    ``mu0``, ``mu1``           ``(batch, act_dim)``                   Means of p0, p1.
    ``log_std0``, ``log_std1`` ``(batch, act_dim)`` or ``(act_dim,)`` Log stds of p0, p1.
    return                     scalar                                 Mean KL over the batch.
    =========================  =====================================  ======================
    """
    var0, var1 = tf.exp(2 * log_std0), tf.exp(2 * log_std1)
    pre_sum = 0.5 * (((mu1 - mu0) ** 2 + var0) / (var1 + EPS) - 1) + log_std1 - log_std0
    all_kls = tf.reduce_sum(pre_sum, axis=1)
    return tf.reduce_mean(all_kls)


def categorical_kl(logp0, logp1):
    """Mean over the batch of the analytic KL(p0 || p1) between categoricals.

    .. math:: D_{KL}(p_0 \\| p_1) = \\sum_a p_0(a) (\\log p_0(a) - \\log p_1(a))

    ==========  ===================  ============================================
    Symbol      Shape                Description
    ==========  ===================  ============================================
    ``logp0``   ``(batch, n_acts)``  Log-probabilities of all actions under p0.
    ``logp1``   ``(batch, n_acts)``  Log-probabilities of all actions under p1.
    return      scalar               Mean KL over the batch.
    ==========  ===================  ============================================
    """
    all_kls = tf.reduce_sum(tf.exp(logp0) * (logp0 - logp1), axis=1)
    return tf.reduce_mean(all_kls)


# --------------------------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------------------------
def mlp_categorical_policy(x, a, hidden_sizes, activation, output_activation, action_space):
    """Categorical policy on MLP logits (``output_activation`` is unused, as in Spinning Up).

    ===============  ===================  ==================================================
    Symbol           Shape                Description
    ===============  ===================  ==================================================
    ``x``            ``(batch, obs_dim)``  Observations.
    ``a``            ``(batch,)``         int32 actions taken.
    ``pi``           ``(batch,)``         Actions sampled from the policy (int64).
    ``logp``         ``(batch,)``         :math:`\\log \\pi(a|x)`.
    ``logp_pi``      ``(batch,)``         :math:`\\log \\pi(\\text{pi}|x)`.
    ``info``         dict                 ``{'logp_all': (batch, n_acts)}``.
    ``info_phs``     dict                 ``{'logp_all': (batch, n_acts)}`` placeholder for
                                          the old policy's log-probabilities.
    ``d_kl``         scalar               Mean KL(old || current).
    ===============  ===================  ==================================================

    Returns:
        ``pi, logp, logp_pi, info, info_phs, d_kl``.
    """
    act_dim = action_space.n
    logits = mlp(features(x), list(hidden_sizes) + [act_dim], activation, None)
    logp_all = tf.nn.log_softmax(logits)
    pi = random_categorical(logits)
    logp = tf.reduce_sum(tf.one_hot(a, depth=act_dim) * logp_all, axis=1)
    logp_pi = tf.reduce_sum(tf.one_hot(pi, depth=act_dim) * logp_all, axis=1)

    old_logp_all = placeholder(act_dim)
    d_kl = categorical_kl(old_logp_all, logp_all)

    info = {'logp_all': logp_all}
    info_phs = {'logp_all': old_logp_all}
    return pi, logp, logp_pi, info, info_phs, d_kl


def mlp_gaussian_policy(x, a, hidden_sizes, activation, output_activation, action_space):
    """Diagonal Gaussian policy: MLP mean, state-independent ``log_std`` variable.

    ``log_std`` is ``tf.get_variable('log_std')`` initialised to ``-0.5 * ones(act_dim)``.

    ===============  ======================  ===============================================
    Symbol           Shape                   Description
    ===============  ======================  ===============================================
    ``x``            ``(batch, obs_dim)``    Observations.
    ``a``            ``(batch, act_dim)``    Actions taken.
    ``pi``           ``(batch, act_dim)``    Actions sampled from the policy.
    ``logp``         ``(batch,)``            :math:`\\log \\pi(a|x)`.
    ``logp_pi``      ``(batch,)``            :math:`\\log \\pi(\\text{pi}|x)`.
    ``info``         dict                    ``{'mu': (batch, act_dim),
                                             'log_std': (act_dim,)}``.
    ``info_phs``     dict                    ``{'mu': (batch, act_dim),
                                             'log_std': (batch, act_dim)}`` placeholders
                                             for the old policy.
    ``d_kl``         scalar                  Mean KL(old || current).
    ===============  ======================  ===============================================

    Returns:
        ``pi, logp, logp_pi, info, info_phs, d_kl``.
    """
    act_dim = a.shape.as_list()[-1]
    mu = mlp(features(x), list(hidden_sizes) + [act_dim], activation, output_activation)
    log_std = tf.get_variable(name='log_std',
                              initializer=-0.5 * np.ones(act_dim, dtype=np.float32))
    std = tf.exp(log_std)
    pi = mu + random_normal(tf.shape(mu)) * std
    logp = gaussian_likelihood(a, mu, log_std)
    logp_pi = gaussian_likelihood(pi, mu, log_std)

    old_mu_ph, old_log_std_ph = placeholder(act_dim), placeholder(act_dim)
    d_kl = diagonal_gaussian_kl(old_mu_ph, old_log_std_ph, mu, log_std)

    info = {'mu': mu, 'log_std': log_std}
    info_phs = {'mu': old_mu_ph, 'log_std': old_log_std_ph}
    return pi, logp, logp_pi, info, info_phs, d_kl


def mlp_actor_critic(x, a, hidden_sizes=(64, 64), activation=tf.tanh, output_activation=None,
                     policy=None, action_space=None):
    """Policy (scope ``pi``) and state-value function (scope ``v``) on MLPs.

    The policy is chosen from ``action_space`` unless given: ``Box`` -> Gaussian,
    ``Discrete`` -> categorical.

    ===============  ======================  ===============================================
    Symbol           Shape                   Description
    ===============  ======================  ===============================================
    ``pi``           ``(batch, act_dim)``    Sampled actions (``(batch,)`` for Discrete).
    ``logp``         ``(batch,)``            :math:`\\log \\pi(a|x)` of the fed actions.
    ``logp_pi``      ``(batch,)``            :math:`\\log \\pi(\\text{pi}|x)`.
    ``info``         dict                    Distribution parameters of the policy.
    ``info_phs``     dict                    Placeholders for the old policy's ones.
    ``d_kl``         scalar                  Mean KL(old || current).
    ``v``            ``(batch,)``            :math:`V(x)`.
    ===============  ======================  ===============================================

    Returns:
        ``pi, logp, logp_pi, info, info_phs, d_kl, v``.
    """
    if policy is None and isinstance(action_space, Box):
        policy = mlp_gaussian_policy
    elif policy is None and isinstance(action_space, Discrete):
        policy = mlp_categorical_policy
    elif policy is None:
        raise NotImplementedError('no default policy for action space %r' % (action_space,))

    with tf.variable_scope('pi'):
        pi, logp, logp_pi, info, info_phs, d_kl = policy(
            x, a, hidden_sizes, activation, output_activation, action_space)
    with tf.variable_scope('v'):
        v = tf.squeeze(mlp(features(x), list(hidden_sizes) + [1], activation, None), axis=1)
    return pi, logp, logp_pi, info, info_phs, d_kl, v


# --------------------------------------------------------------------------------------------
# SAC: tanh-squashed Gaussian policy
# --------------------------------------------------------------------------------------------
def mlp_squashed_gaussian_policy(x, act_dim, hidden_sizes, activation, output_activation):
    """Gaussian policy with state-dependent ``log_std`` (clipped to [−20, 2]), then ``tanh``.

    Returns ``mu, pi, logp_pi``: the squashed mean ``(batch, act_dim)`` (deterministic
    action), a squashed sample ``(batch, act_dim)`` in ``(-1, 1)`` and its log-likelihood
    ``(batch,)`` with the exact change-of-variables correction
    :math:`\\log\\pi(a) = \\log\\mathcal{N}(u) - \\sum_i \\log(1 - \\tanh^2 u_i)`, computed in the
    numerically stable form :math:`\\log(1-\\tanh^2 u) = 2(\\log 2 - u - \\text{softplus}(-2u))`.
    """
    net = mlp(features(x), list(hidden_sizes), activation, activation)
    mu = dense(net, act_dim, output_activation, name='mu')
    log_std = dense(net, act_dim, None, name='log_std')
    log_std = tf.clip_by_value(log_std, LOG_STD_MIN, LOG_STD_MAX)
    u = mu + random_normal(tf.shape(mu)) * tf.exp(log_std)
    logp_pi = gaussian_likelihood(u, mu, log_std)
    logp_pi -= tf.reduce_sum(2 * (np.log(2) - u - tf.nn.softplus(-2 * u)), axis=1)
    return tf.tanh(mu), tf.tanh(u), logp_pi


def mlp_sac_actor_critic(x, a, hidden_sizes=(256, 256), activation=tf.nn.relu,
                         output_activation=None, action_space=None):
    """SAC's squashed Gaussian policy (scope ``pi``) and twin Q functions (``q1``, ``q2``);
    for a ``Discrete`` action space, :func:`mlp_discrete_sac_actor_critic`.

    ===========  ================  ======================================
    Symbol       Shape             Description
    ===========  ================  ======================================
    ``mu``       (batch, act_dim)  | Deterministic action (squashed mean),
                                   | scaled to the action bounds.
    ``pi``       (batch, act_dim)  | Sampled action, scaled likewise.
    ``logp_pi``  (batch,)          | log pi(pi|x) of the squashed sample.
    ``q1``       (batch,)          | First estimate of Q(x, a).
    ``q2``       (batch,)          | Second estimate of Q(x, a).
    ===========  ================  ======================================

    ``logp_pi`` is the density of the ``tanh`` output in ``(-1, 1)``, as in Spinning Up; the
    affine map onto ``[low, high]`` only adds a constant.
    """
    if isinstance(action_space, Discrete):
        return mlp_discrete_sac_actor_critic(x, a, hidden_sizes, activation, output_activation,
                                             action_space)
    act_dim = a.shape.as_list()[-1]
    with tf.variable_scope('pi'):
        mu, pi, logp_pi = mlp_squashed_gaussian_policy(x, act_dim, hidden_sizes, activation,
                                                       output_activation)
    mu, pi = scale_to_bounds(mu, action_space), scale_to_bounds(pi, action_space)
    with tf.variable_scope('q1'):
        q1 = q_value(x, a, hidden_sizes, activation)
    with tf.variable_scope('q2'):
        q2 = q_value(x, a, hidden_sizes, activation)
    return mu, pi, logp_pi, q1, q2


# --------------------------------------------------------------------------------------------
# Discrete SAC. An action is fed as its one-hot row ``a`` ``(batch, n_acts)`` (the replay
# buffer stores it so), so Q(x, a) = sum(q_all * a, axis=1).
# --------------------------------------------------------------------------------------------
def mlp_discrete_sac_actor_critic(x, a, hidden_sizes=(256, 256), activation=tf.nn.relu,
                                  output_activation=None, action_space=None):
    """Discrete SAC's categorical policy (scope ``pi``) and twin Q functions (``q1``,
    ``q2``), each Q network giving the values of all actions at once (Christodoulou 2019).

    ============  ===================  =============================================
    Symbol        Shape                Description
    ============  ===================  =============================================
    ``mu``        (batch,)             | Deterministic action: the most probable one
                                       | (int64).
    ``pi``        (batch,)             | Action sampled from the policy (int64).
    ``logp_all``  (batch, n_acts)      | :math:`\\log\\pi(\\cdot|x)` of every action.
    ``q1_all``    (batch, n_acts)      | First estimate of Q(x, .) for every action.
    ``q2_all``    (batch, n_acts)      | Second estimate of Q(x, .) for every action.
    ============  ===================  =============================================

    ``a`` (the one-hot actions) is not read: the expectations over actions replace SAC's
    sampled action, and Q(x, a) of a stored action is a row sum (see ``sac``).
    ``output_activation`` is unused, as in :func:`mlp_categorical_policy`.
    """
    n_acts = action_space.n
    with tf.variable_scope('pi'):
        logits = mlp(features(x), list(hidden_sizes) + [n_acts], activation, None)
    logp_all = tf.nn.log_softmax(logits)
    mu = tf.argmax(logits, axis=1)
    pi = random_categorical(logits)
    with tf.variable_scope('q1'):
        q1_all = mlp(features(x), list(hidden_sizes) + [n_acts], activation, None)
    with tf.variable_scope('q2'):
        q2_all = mlp(features(x), list(hidden_sizes) + [n_acts], activation, None)
    return mu, pi, logp_all, q1_all, q2_all
