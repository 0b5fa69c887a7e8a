"""Deep Deterministic Policy Gradient (DDPG), as a TF1 static graph.

Read top to bottom: graph (placeholders, main/target networks, Bellman backup, losses,
separate Adam train ops, polyak ops), session, the step functions, then the shared
off-policy loop (``spinup_tf.loops.off_policy``). The seed-000 variant (all updates at the end of
each trajectory, TensorBoard scalar summaries) is behind ``update_at_episode_end`` and
``tensorboard``.
"""
import os.path as osp
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import (tf, placeholders, get_trainable_vars, count_vars,
                                 polyak_update_op, target_init_op)
from spinup_tf.reproductions.networks import resolve_actor_critic
from spinup_tf.algos.core import mlp_ddpg_actor_critic
from spinup_tf.reproductions.noise import exploration_noise
from spinup_tf.loops.off_policy import (setup_off_policy, run_off_policy, NoisyPolicy,
                                        build_replay, fused_path, plain_update_window)
from spinup_tf.fast.mirrors import deterministic_actor
from spinup_tf.fast.window import actor_critic_updates, deterministic_policy_step, minimize_after
from spinup_tf.loops.session import start_session


def ddpg(env_fn, actor_critic=mlp_ddpg_actor_critic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99, polyak=0.995,
         pi_lr=1e-3, q_lr=1e-3, batch_size=100, start_steps=10000, update_after=1000,
         update_every=50, act_noise=0.1, num_test_episodes=10, max_ep_len=1000,
         logger_kwargs=dict(), save_freq=1, update_at_episode_end=False, tensorboard=False,
         noise='gaussian', rllab_logging=False, fused=True):
    """Deep Deterministic Policy Gradient (DDPG).

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space and a bounded flat
            Box action space.

        actor_critic: A function which takes in placeholder symbols for state, ``x_ph``, and
            action, ``a_ph``, and returns the main outputs from the agent's Tensorflow
            computation graph:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``pi``       (batch, act_dim)  | Deterministically computes actions
                                           | from policy given states.
            ``q``        (batch,)          | Gives the current estimate of Q* for
                                           | states in ``x_ph`` and actions in
                                           | ``a_ph``.
            ``q_pi``     (batch,)          | Gives the composition of ``q`` and
                                           | ``pi`` for states in ``x_ph``:
                                           | q(x, pi(x)).
            ===========  ================  ======================================

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to DDPG (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators (numpy, the graph, the env and its
            action space).

        steps_per_epoch (int): Number of steps of interaction (state-action pairs) for the
            agent and the environment in each epoch.

        epochs (int): Number of epochs to run and train agent.

        replay_size (int): Maximum length of replay buffer.

        gamma (float): Discount factor. (Always between 0 and 1.)

        polyak (float): Interpolation factor in polyak averaging for target networks.
            Target networks are updated towards main networks according to:

            .. math:: \\theta_{\\text{targ}} \\leftarrow
                \\rho \\theta_{\\text{targ}} + (1-\\rho) \\theta

            where :math:`\\rho` is polyak. (Always between 0 and 1, usually close to 1.)

        pi_lr (float): Learning rate for policy.

        q_lr (float): Learning rate for Q-networks.

        batch_size (int): Minibatch size for SGD.

        start_steps (int): Number of steps for uniform-random action selection, before
            running real policy. Helps exploration.

        update_after (int): Number of env interactions to collect before starting to do
            gradient descent updates. Ensures replay buffer is full enough for useful updates.

        update_every (int): Number of env interactions that should elapse between gradient
            descent updates. Note: Regardless of how long you wait between updates, the ratio
            of env steps to gradient steps is locked to 1.

        act_noise (float): Scale of the exploration noise added to the policy at training
            time, in action units: the stddev for Gaussian and pink noise, sigma for OU.
            (At test time, no noise is added.)

        num_test_episodes (int): Number of episodes to test the deterministic policy at the
            end of each epoch.

        max_ep_len (int): Maximum length of trajectory / episode / rollout. Reaching it is a
            truncation: the target bootstraps through it.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save the current
            policy and value function (and the checkpoint a killed run resumes from).

        noise (str): Exploration noise process (``spinup_tf.reproductions.noise``): ``'gaussian'``
            (Spinning Up's, i.i.d.), ``'ou'`` (Ornstein-Uhlenbeck, theta 0.15), ``'pink'``
            (1/f coloured noise, one episode of ``max_ep_len`` steps at a time; correlated
            noise is what solves MountainCarContinuous) or ``'uniform'`` (the TD3 blog's
            biased ``act_noise * U[0, 1)``, a quirk kept for reproducing it).

        rllab_logging (bool): Also log rllab's columns (the MXNet seed's): AverageReturn,
            StdReturn, MaxReturn, MinReturn (test episodes), AverageEsReturn, StdEsReturn,
            MaxEsReturn, MinEsReturn (exploration episodes), AverageQLoss, AveragePolicyLoss,
            AverageQ, AverageAbsQ, AverageY, AverageAbsY, AverageAbsQYDiff (Y: the backup).

        update_at_episode_end (bool): The seed-000 schedule: instead of ``update_every``
            updates every ``update_every`` steps, run all updates at the end of each
            trajectory, one (Q step, then policy step and target update) per step it had,
            once the buffer holds ``update_after`` transitions.

        tensorboard (bool): Also write scalar summaries ``pi_loss`` and ``q_loss`` (of the
            epoch's last batch, as the seed did; with ``fused``, the losses of the epoch's
            last update) to ``<run folder>/tensorboard``.

        fused (bool): True (default): each update window runs as one ``sess.run`` (replay
            buffer in the graph, batches drawn in-graph; ``spinup_tf.fast.window``) and the policy
            acts through a numpy copy of its weights, refreshed after every window. False:
            Spinning Up's loop, two ``sess.run`` calls per update and one per action.
    """
    config = dict(locals())  # every hyperparameter, recorded in config.json below
    actor_critic = resolve_actor_critic(actor_critic)  # a function, or a registered name

    exploration_noise(noise, act_noise, None, max_ep_len)  # a bad kind fails before any write
    env, test_env, obs_dim, act_dim, act_low, act_high, logger = setup_off_policy(
        'ddpg', env_fn, config, logger_kwargs, steps_per_epoch, epochs, batch_size, replay_size)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)

        g = build_ddpg_graph(obs_dim, act_dim, env.action_space, actor_critic, ac_kwargs,
                             gamma, polyak, pi_lr, q_lr)

        # Experience buffer (in numpy, or in the graph with the fused update window)
        actor = deterministic_actor(g.x_ph, 'main/pi', act_low, act_high) \
            if fused else None
        replay_buffer, window = build_replay(
            fused, obs_dim, act_dim, replay_size, batch_size, g.update_steps,
            ['LossQ', 'QVals', 'Backup', 'LossPi'], actor)

        # Count variables
        var_counts = tuple(count_vars(scope) for scope in ['main/pi', 'main/q', 'main'])
        logger.log('\nNumber of parameters: \t pi: %d, \t q: %d, \t total: %d\n' % var_counts)

        if tensorboard:
            summary_op = tf.summary.merge([tf.summary.scalar('pi_loss', g.pi_loss),
                                           tf.summary.scalar('q_loss', g.q_loss)])
            writer = tf.summary.FileWriter(osp.join(logger.output_dir, 'tensorboard'), graph)

    sess = start_session(graph, logger, inputs={'x': g.x_ph, 'a': g.a_ph},
                         outputs={'pi': g.pi, 'q': g.q},
                         init_ops=[g.target_init])

    noise_process = exploration_noise(noise, act_noise, act_dim, max_ep_len)

    # One callable per step kind: no feed-dict building or fetch lookup in the hot loop.
    pi_fn = sess.make_callable(g.pi, feed_list=[g.x_ph])
    batch_phs = [g.x_ph, g.x2_ph, g.a_ph, g.r_ph, g.d_ph]
    q_step = sess.make_callable([g.q_loss, g.q, g.backup, g.train_q_op], feed_list=batch_phs)
    pi_step = sess.make_callable([g.pi_loss, g.train_pi_then_target], feed_list=batch_phs)
    last_feeds = [None]

    last_losses = [None]

    def act(o):
        return pi_fn(o.reshape(1, -1))[0]

    def store(loss_q, q_vals, ys, loss_pi):
        logger.store(LossQ=loss_q, QVals=q_vals, LossPi=loss_pi)
        if rllab_logging:
            # stored under the column names rllab logs (each is averaged over the epoch)
            logger.store(AverageAbsQ=np.abs(q_vals), AverageY=ys, AverageAbsY=np.abs(ys),
                         AverageAbsQYDiff=np.abs(q_vals - ys))

    def update(batch, j):
        feeds = (batch['obs1'], batch['obs2'], batch['acts'], batch['rews'], batch['done'])
        # Q-learning update
        loss_q, q_vals, ys, _ = q_step(*feeds)
        # Policy update, then the target networks follow.
        loss_pi, _ = pi_step(*feeds)
        store(loss_q, q_vals, ys, loss_pi)
        last_feeds[0] = feeds

    on_restore = None
    if fused:
        def store_window(out):
            store(out['LossQ'], out['QVals'], out['Backup'], out['LossPi'])
            if len(out['LossQ']):
                last_losses[0] = (float(out['LossPi'][-1]), float(out['LossQ'][-1]))
        actor, update_window, on_restore = fused_path(
            sess, logger, replay_buffer, window, actor, store_window, [(g.x_ph, g.pi, actor)])
        act = actor or act
    else:
        update_window = plain_update_window(replay_buffer, batch_size, update)

    def write_summaries(epoch):
        if last_feeds[0] is not None:
            writer.add_summary(sess.run(summary_op, dict(zip(batch_phs, last_feeds[0]))), epoch)
        elif last_losses[0] is not None:  # fused: the losses of the epoch's last update
            writer.add_summary(tf.Summary(value=[
                tf.Summary.Value(tag=tag, simple_value=value)
                for tag, value in zip(('pi_loss', 'q_loss'), last_losses[0])]), epoch)
        writer.flush()

    try:
        run_off_policy(
            env, test_env, logger, replay_buffer, act,
            NoisyPolicy(act, noise_process, act_low, act_high), update_window, seed=seed,
            steps_per_epoch=steps_per_epoch,
            epochs=epochs, batch_size=batch_size, start_steps=start_steps,
            update_after=update_after, update_every=update_every,
            num_test_episodes=num_test_episodes, max_ep_len=max_ep_len, save_freq=save_freq,
            update_at_episode_end=update_at_episode_end,
            diagnostics=[('QVals', dict(with_min_and_max=True)),
                         ('LossPi', dict(average_only=True)),
                         ('LossQ', dict(average_only=True))]
            + (rllab_diagnostics(logger) if rllab_logging else []),
            finite_keys=['LossQ', 'LossPi', 'QVals'],
            save_state=lambda epoch: logger.save_state({'epoch': epoch}), session=sess,
            on_epoch_end=write_summaries if tensorboard else None, on_restore=on_restore)
    finally:
        if tensorboard:
            writer.close()


def build_ddpg_graph(obs_dim, act_dim, action_space, actor_critic=mlp_ddpg_actor_critic,
                     ac_kwargs=dict(), gamma=0.99, polyak=0.995, pi_lr=1e-3, q_lr=1e-3):
    """Build DDPG's graph in the default graph; returns its tensors and ops by name.

    Placeholders ``x_ph, a_ph, x2_ph`` ``(batch, obs_dim|act_dim)``, ``r_ph, d_ph``
    ``(batch,)``; outputs ``pi`` ``(batch, act_dim)``, ``q, q_pi, q_pi_targ, backup``
    ``(batch,)``; the losses, ``train_pi_op``, ``train_q_op``, ``target_update`` (alone),
    ``train_pi_then_target`` (policy step, then targets) and ``target_init``.

    ``update_steps(batches, j)`` builds the same updates again on batch tensors, with the
    same variables and optimizers, for the fused window (``spinup_tf.fast.window``): for each
    batch the Q step, then the policy step, then the target networks
    (``fused.actor_critic_updates``). It returns ``(train_op, outputs)``, one dict per update
    with LossQ, QVals, Backup and LossPi.
    """
    # Share information about action space with policy architecture
    ac_kwargs = dict(ac_kwargs, action_space=action_space)

    def q_learning(x, x2, a, r, d, reuse, main_after=(), target_after=()):
        """Main networks on (x, a), the backup and the Q loss. The main and target networks
        read their weights after the ops ``main_after`` and ``target_after`` (the fused
        window's ordering; none in the plain graph)."""
        # Main outputs from computation graph
        with tf.control_dependencies(main_after), tf.variable_scope('main', reuse=reuse):
            pi, q, q_pi = actor_critic(x, a, **ac_kwargs)

        # Target networks
        with tf.control_dependencies(target_after), tf.variable_scope('target', reuse=reuse):
            # Note that the action placeholder going to actor_critic here is irrelevant,
            # because we only need q_targ(s, pi_targ(s)).
            pi_targ, _, q_pi_targ = actor_critic(x2, a, **ac_kwargs)

        # Bellman backup for Q function; d is gymnasium's `terminated` (truncation
        # bootstraps)
        backup = tf.stop_gradient(r + gamma * (1 - d) * q_pi_targ)
        q_loss = tf.reduce_mean((q - backup) ** 2)
        return SimpleNamespace(pi=pi, q=q, q_pi=q_pi, pi_targ=pi_targ, q_pi_targ=q_pi_targ,
                               backup=backup, q_loss=q_loss)

    # Inputs to computation graph
    x_ph, a_ph, x2_ph, r_ph, d_ph = placeholders(obs_dim, act_dim, obs_dim, None, None)
    nets = q_learning(x_ph, x2_ph, a_ph, r_ph, d_ph, reuse=False)
    pi, q, q_pi, pi_targ, q_pi_targ = nets.pi, nets.q, nets.q_pi, nets.pi_targ, nets.q_pi_targ
    backup, q_loss = nets.backup, nets.q_loss

    # DDPG policy loss
    pi_loss = -tf.reduce_mean(q_pi)

    # Separate train ops for pi, q (variables picked by exact scope prefix)
    pi_optimizer = tf.train.AdamOptimizer(learning_rate=pi_lr)
    q_optimizer = tf.train.AdamOptimizer(learning_rate=q_lr)
    pi_vars, q_vars = get_trainable_vars('main/pi'), get_trainable_vars('main/q')
    train_pi_op = pi_optimizer.minimize(pi_loss, var_list=pi_vars)
    train_q_op = q_optimizer.minimize(q_loss, var_list=q_vars)

    # Polyak averaging for target variables; initializing targets to match main variables.
    # The policy step's own op runs the update first and the targets after it: within one
    # sess.run, ops without a dependency run in any order, and a target that sometimes reads
    # the old and sometimes the new policy weights makes runs unrepeatable.
    target_update = polyak_update_op(polyak)
    with tf.control_dependencies([train_pi_op]):
        train_pi_then_target = polyak_update_op(polyak)
    target_init = target_init_op()

    def update_steps(batches, j):
        def q_step(batch, main_after, target_after, apply_after):
            x, x2, a, r, d = batch
            step = q_learning(x, x2, a, r, d, True, main_after, target_after)
            train_q = minimize_after(q_optimizer, step.q_loss, q_vars, apply_after)
            return dict(LossQ=step.q_loss, QVals=step.q, Backup=step.backup), train_q

        policy_step = deterministic_policy_step(
            lambda x, a: actor_critic(x, a, **ac_kwargs)[2],  # (pi, q, q_pi)
            pi_optimizer, pi_vars)
        return actor_critic_updates(batches, j, q_step, policy_step, polyak, ('q',))

    return SimpleNamespace(**{k: v for k, v in locals().items()
                              if k not in ('ac_kwargs', 'actor_critic', 'action_space', 'nets',
                                           'q_learning')})


def rllab_diagnostics(logger):
    """rllab's column names (the MXNet DDPG seed), from the epoch's statistics."""
    def stat(key, i):
        return lambda: logger.last_stats.get(key, (np.nan,) * 4)[i]
    cols = []
    for name, key in (('Return', 'TestEpRet'), ('EsReturn', 'EpRet')):
        cols += [('Average' + name, stat(key, 0)), ('Std' + name, stat(key, 1)),
                 ('Max' + name, stat(key, 3)), ('Min' + name, stat(key, 2))]
    cols += [('AverageQLoss', stat('LossQ', 0)), ('AveragePolicyLoss', stat('LossPi', 0)),
             ('AverageQ', stat('QVals', 0))]
    cols += [(name, dict(average_only=True)) for name in
             ('AverageAbsQ', 'AverageY', 'AverageAbsY', 'AverageAbsQYDiff')]
    return cols
