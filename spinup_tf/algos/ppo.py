"""Proximal Policy Optimization (by clipping), as a TF1 static graph.

Read top to bottom: graph (shared on-policy pieces, clipped surrogate objective, train ops),
session, the update with early stopping on KL, then the shared on-policy loop
(``spinup_tf.loops.on_policy``).
"""
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import tf, get_trainable_vars, count_vars
from spinup_tf.algos.core import mlp_actor_critic
from spinup_tf.loops.on_policy import (setup_on_policy, run_on_policy, build_policy_graph,
                                       make_buffer, policy_step_fns, value_steps, FusedOnPolicy)
from spinup_tf.loops.session import start_session


def ppo(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, clip_ratio=0.2, pi_lr=3e-4, vf_lr=1e-3,
        train_pi_iters=80, train_v_iters=80, lam=0.97, max_ep_len=1000, target_kl=0.01,
        logger_kwargs=dict(), save_freq=10, fused=True):
    """Proximal Policy Optimization (by clipping), with early stopping based on approximate KL.

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space and a Discrete or
            flat Box action space.

        actor_critic: A function which takes in placeholder symbols for state, ``x_ph``, and
            action, ``a_ph``, and returns the outputs described in
            :func:`spinup_tf.algos.core.mlp_actor_critic`: ``pi`` (batch, act_dim) sampled
            actions, ``logp`` (batch,) log-likelihood of ``a_ph``, ``logp_pi`` (batch,) of
            ``pi``, ``info``/``info_phs``/``d_kl`` (unused by PPO) and ``v`` (batch,) values.

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to PPO (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators.

        steps_per_epoch (int): Number of steps of interaction (state-action pairs) for the
            agent and the environment in each epoch.

        epochs (int): Number of epochs of interaction (equivalent to number of policy
            updates) to perform.

        gamma (float): Discount factor. (Always between 0 and 1.)

        clip_ratio (float): Hyperparameter for clipping in the policy objective. Roughly:
            how far can the new policy go from the old policy while still profiting
            (improving the objective function)? The new policy can still go farther than the
            clip_ratio says, but it doesn't help on the objective anymore. (Usually small,
            0.1 to 0.3.) Typically denoted by :math:`\\epsilon`.

        pi_lr (float): Learning rate for policy optimizer.

        vf_lr (float): Learning rate for value function optimizer.

        train_pi_iters (int): Maximum number of gradient descent steps to take on policy
            loss per epoch. (Early stopping may cause optimizer to take fewer than this.)

        train_v_iters (int): Number of gradient descent steps to take on value function per
            epoch.

        lam (float): Lambda for GAE-Lambda. (Always between 0 and 1, close to 1.)

        max_ep_len (int): Maximum length of trajectory / episode / rollout. Reaching it is a
            truncation: the value target bootstraps from V(s_T).

        target_kl (float): Roughly what KL divergence we think is appropriate between new
            and old policies after an update. This will get used for early stopping: policy
            steps stop once the approximate KL exceeds ``1.5 * target_kl``. (Usually small,
            0.01 or 0.05.)

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save the current
            policy and value function.

        fused (bool): True (default): act through a numpy mirror of the policy and value
            function, pulled once per epoch (no ``sess.run`` per env step; actions sampled
            with numpy's seeded RNG), and run the ``train_pi_iters`` policy steps (with the
            same early stop on KL) and the ``train_v_iters`` value steps as one ``sess.run``
            each (``spinup_tf.loops.on_policy.FusedOnPolicy``). False: Spinning Up's loop, one
            ``sess.run`` per env step and per gradient step.
    """
    config = dict(locals())  # every hyperparameter, recorded in config.json below

    env, obs_dim, logger = setup_on_policy('ppo', env_fn, config, logger_kwargs,
                                           steps_per_epoch, epochs)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)

        g = build_ppo_graph(env.observation_space, env.action_space, actor_critic, ac_kwargs,
                            clip_ratio, pi_lr, vf_lr)
        fz = pi_loop = None
        if fused:
            fz = FusedOnPolicy(g, env.action_space, g.v_optimizer, train_v_iters)
            # The policy steps with the plain loop's early stop: the step is taken, then the
            # loop ends if the KL measured before it (float32, compared in float64 as python
            # compares it) passed 1.5 * target_kl.
            pi_loop = fz.policy_loop(
                g.pi_optimizer, get_trainable_vars('pi'),
                lambda logp: ppo_objective(logp, g.logp_old_ph, g.adv_ph, clip_ratio)[1:],
                train_pi_iters,
                stop=lambda kl: tf.cast(kl, tf.float64) > 1.5 * target_kl)

        # Experience buffer
        buf = make_buffer(obs_dim, env.action_space, steps_per_epoch, {}, gamma, lam)

        # Count variables
        var_counts = tuple(count_vars(scope) for scope in ['pi', 'v'])
        logger.log('\nNumber of parameters: \t pi: %d, \t v: %d\n' % var_counts)

    sess = start_session(graph, logger, inputs={'x': g.x_ph}, outputs={'pi': g.pi, 'v': g.v})

    # One callable per kind of call: no feed-dict building or fetch lookup per call.
    if fz is not None:
        step, value, new_policy, loops_ok = fz.start(sess, obs_dim, logger)
    else:
        step, value = policy_step_fns(sess, g.x_ph, g.get_action_ops, g.v)
        new_policy, loops_ok = None, False
    losses = sess.make_callable([g.pi_loss, g.v_loss, g.approx_ent], feed_list=g.all_phs)
    if loops_ok and pi_loop is not None:
        fused_pi = sess.make_callable(pi_loop, feed_list=g.all_phs)

        def pi_steps(inputs):
            steps, stopped = fused_pi(*inputs)
            return int(steps) - 1, bool(stopped)
    else:
        train_pi = sess.make_callable([g.train_pi, g.approx_kl], feed_list=g.all_phs)

        def pi_steps(inputs):
            return ppo_policy_steps(lambda: train_pi(*inputs)[1], train_pi_iters, target_kl)
    train_v = value_steps(sess, g.all_phs, g.train_v, fz.v_loop if loops_ok else None,
                          train_v_iters)
    after = sess.make_callable([g.pi_loss, g.v_loss, g.approx_kl, g.clipfrac],
                               feed_list=g.all_phs)

    def update(buf):
        inputs = buf.get()
        pi_l_old, v_l_old, ent = losses(*inputs)

        # Training
        stop_iter, stopped = pi_steps(inputs)
        if stopped:
            logger.log('Early stopping at step %d due to reaching max kl.' % stop_iter,
                       'yellow')
        logger.store(StopIter=stop_iter)
        train_v(inputs)

        # Log changes from update
        pi_l_new, v_l_new, kl, cf = after(*inputs)
        logger.store(LossPi=pi_l_old, LossV=v_l_old, KL=kl, Entropy=ent, ClipFrac=cf,
                     DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old))

    run_on_policy(env, logger, buf, step, value, update, seed=seed,
                  steps_per_epoch=steps_per_epoch, epochs=epochs, max_ep_len=max_ep_len,
                  save_freq=save_freq,
                  diagnostics=[(k, dict(average_only=True)) for k in
                               ['LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'Entropy',
                                'KL', 'ClipFrac', 'StopIter']],
                  finite_keys=['LossPi', 'LossV', 'KL', 'VVals'],
                  save_state=lambda epoch: logger.save_state({'epoch': epoch}), session=sess,
                  new_policy=new_policy)


def ppo_policy_steps(train_step, train_pi_iters, target_kl):
    """Run up to ``train_pi_iters`` policy steps; stop once the KL passes ``1.5 * target_kl``.

    Args:
        train_step: callable taking one gradient step and returning the approximate KL
            (measured in the same ``sess.run``, i.e. before that step's change is applied).
    Returns:
        ``(i, stopped)``: the index of the last step taken (``StopIter`` in the log) and
        whether the KL stopped it early.
    """
    for i in range(train_pi_iters):
        kl = train_step()
        if kl > 1.5 * target_kl:
            return i, True
    return i, False


def build_ppo_graph(observation_space, action_space, actor_critic=mlp_actor_critic,
                    ac_kwargs=dict(), clip_ratio=0.2, pi_lr=3e-4, vf_lr=1e-3):
    """PPO's graph: the shared on-policy pieces plus the clipped surrogate

    .. math:: L = -\\mathbb{E}\\left[\\min\\left(r A,\\ \\text{clip}(r, 1-\\epsilon, 1+\\epsilon)
        A\\right)\\right], \\qquad r = \\pi(a|s) / \\pi_{\\text{old}}(a|s),

    ``approx_kl``, ``approx_ent``, ``clipfrac`` (fraction of samples whose ratio lies outside
    ``[1-ε, 1+ε]``), and the Adam train ops ``train_pi`` and ``train_v``.
    """
    g = SimpleNamespace(**build_policy_graph(observation_space, action_space, actor_critic,
                                             ac_kwargs))

    # PPO objectives
    g.ratio, g.pi_loss, g.approx_kl = ppo_objective(g.logp, g.logp_old_ph, g.adv_ph,
                                                    clip_ratio)

    # Info (useful to watch during learning)
    g.approx_ent = tf.reduce_mean(-g.logp)                 # a sample estimate for entropy
    clipped = tf.logical_or(g.ratio > (1 + clip_ratio), g.ratio < (1 - clip_ratio))
    g.clipfrac = tf.reduce_mean(tf.cast(clipped, tf.float32))

    # Optimizers (kept: the fused loops apply their steps through the same objects)
    g.pi_optimizer = tf.train.AdamOptimizer(learning_rate=pi_lr)
    g.train_pi = g.pi_optimizer.minimize(g.pi_loss, var_list=get_trainable_vars('pi'))
    g.v_optimizer = tf.train.AdamOptimizer(learning_rate=vf_lr)
    g.train_v = g.v_optimizer.minimize(g.v_loss, var_list=get_trainable_vars('v'))
    return g


def ppo_objective(logp, logp_old_ph, adv_ph, clip_ratio):
    """The clipped surrogate and the sample KL estimate, from ``(batch,)`` tensors.

    Returns:
        ``(ratio, pi_loss, approx_kl)``: ``ratio = exp(logp - logp_old)`` ``(batch,)``,
        ``pi_loss = -mean(min(ratio * adv, clip(ratio, 1-ε, 1+ε) * adv))`` and
        ``approx_kl = mean(logp_old - logp)`` (scalars).
    """
    ratio = tf.exp(logp - logp_old_ph)  # pi(a|s) / pi_old(a|s)
    min_adv = tf.where(adv_ph > 0, (1 + clip_ratio) * adv_ph, (1 - clip_ratio) * adv_ph)
    pi_loss = -tf.reduce_mean(tf.minimum(ratio * adv_ph, min_adv))
    approx_kl = tf.reduce_mean(logp_old_ph - logp)  # a sample estimate for KL-divergence
    return ratio, pi_loss, approx_kl
