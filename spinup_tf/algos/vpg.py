"""Vanilla Policy Gradient (with GAE-lambda advantages), as a TF1 static graph.

Read top to bottom: graph (shared on-policy pieces, VPG objective, train ops), session, the
update, then the shared on-policy loop (``spinup_tf.loops.on_policy``).
"""
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import tf, get_trainable_vars, count_vars
from spinup_tf.algos.core import mlp_actor_critic
from spinup_tf.loops.on_policy import (setup_on_policy, run_on_policy, build_policy_graph,
                                       make_buffer, policy_step_fns, value_steps, FusedOnPolicy)
from spinup_tf.loops.session import start_session


def vpg(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, pi_lr=3e-4, vf_lr=1e-3,
        train_v_iters=80, lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10,
        fused=True):
    """Vanilla Policy Gradient (with GAE-Lambda for advantage estimation).

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space and a Discrete or
            flat Box action space.

        actor_critic: A function which takes in placeholder symbols for state, ``x_ph``, and
            action, ``a_ph``, and returns the outputs described in
            :func:`spinup_tf.algos.core.mlp_actor_critic`: ``pi`` (batch, act_dim) sampled
            actions, ``logp`` (batch,) log-likelihood of ``a_ph``, ``logp_pi`` (batch,) of
            ``pi``, ``info``/``info_phs``/``d_kl`` (unused by VPG) and ``v`` (batch,) values.

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to VPG (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators.

        steps_per_epoch (int): Number of steps of interaction (state-action pairs) for the
            agent and the environment in each epoch.

        epochs (int): Number of epochs of interaction (equivalent to number of policy
            updates) to perform.

        gamma (float): Discount factor. (Always between 0 and 1.)

        pi_lr (float): Learning rate for policy optimizer.

        vf_lr (float): Learning rate for value function optimizer.

        train_v_iters (int): Number of gradient descent steps to take on value function per
            epoch.

        lam (float): Lambda for GAE-Lambda. (Always between 0 and 1, close to 1.)

        max_ep_len (int): Maximum length of trajectory / episode / rollout. Reaching it is a
            truncation: the value target bootstraps from V(s_T).

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save the current
            policy and value function.

        fused (bool): True (default): act through a numpy mirror of the policy and value
            function, pulled once per epoch (no ``sess.run`` per env step; actions sampled
            with numpy's seeded RNG), and run the ``train_v_iters`` value steps as one
            ``sess.run`` (``spinup_tf.loops.on_policy.FusedOnPolicy``). False: Spinning Up's loop,
            one ``sess.run`` per env step and per gradient step.
    """
    config = dict(locals())  # every hyperparameter, recorded in config.json below

    env, obs_dim, logger = setup_on_policy('vpg', env_fn, config, logger_kwargs,
                                           steps_per_epoch, epochs)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)

        g = build_vpg_graph(env.observation_space, env.action_space, actor_critic, ac_kwargs,
                            pi_lr, vf_lr)
        fz = (FusedOnPolicy(g, env.action_space, g.v_optimizer, train_v_iters) if fused
              else None)

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
    train_pi = sess.make_callable(g.train_pi, feed_list=g.all_phs)
    train_v = value_steps(sess, g.all_phs, g.train_v, fz.v_loop if loops_ok else None,
                          train_v_iters)
    after = sess.make_callable([g.pi_loss, g.v_loss, g.approx_kl], feed_list=g.all_phs)

    def update(buf):
        inputs = buf.get()
        pi_l_old, v_l_old, ent = losses(*inputs)

        # Policy gradient step
        train_pi(*inputs)

        # Value function learning
        train_v(inputs)

        # Log changes from update
        pi_l_new, v_l_new, kl = after(*inputs)
        logger.store(LossPi=pi_l_old, LossV=v_l_old, KL=kl, Entropy=ent,
                     DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old))

    run_on_policy(env, logger, buf, step, value, update, seed=seed,
                  steps_per_epoch=steps_per_epoch, epochs=epochs, max_ep_len=max_ep_len,
                  save_freq=save_freq,
                  diagnostics=[(k, dict(average_only=True)) for k in
                               ['LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'Entropy',
                                'KL']],
                  finite_keys=['LossPi', 'LossV', 'KL', 'VVals'],
                  save_state=lambda epoch: logger.save_state({'epoch': epoch}), session=sess,
                  new_policy=new_policy)


def build_vpg_graph(observation_space, action_space, actor_critic=mlp_actor_critic,
                    ac_kwargs=dict(), pi_lr=3e-4, vf_lr=1e-3):
    """VPG's graph: the shared on-policy pieces plus ``pi_loss = -mean(logp * adv)``, the
    sample estimates ``approx_kl = mean(logp_old - logp)`` and ``approx_ent = mean(-logp)``,
    and the Adam train ops ``train_pi`` and ``train_v``."""
    g = SimpleNamespace(**build_policy_graph(observation_space, action_space, actor_critic,
                                             ac_kwargs))

    # VPG objectives
    g.pi_loss = -tf.reduce_mean(g.logp * g.adv_ph)

    # Info (useful to watch during learning)
    g.approx_kl = tf.reduce_mean(g.logp_old_ph - g.logp)  # a sample estimate for KL-divergence
    g.approx_ent = tf.reduce_mean(-g.logp)                 # a sample estimate for entropy

    # Optimizers (kept: the fused loops apply their steps through the same objects)
    g.pi_optimizer = tf.train.AdamOptimizer(learning_rate=pi_lr)
    g.train_pi = g.pi_optimizer.minimize(g.pi_loss, var_list=get_trainable_vars('pi'))
    g.v_optimizer = tf.train.AdamOptimizer(learning_rate=vf_lr)
    g.train_v = g.v_optimizer.minimize(g.v_loss, var_list=get_trainable_vars('v'))
    return g
