"""Twin Delayed Deep Deterministic Policy Gradient (TD3), as a TF1 static graph.

Read top to bottom: graph (placeholders, main/target networks, clipped double-Q backup,
losses, train ops, polyak ops), session, the two step functions, then the shared off-policy
loop (``spinup_tf.loops.off_policy``).
"""
from types import SimpleNamespace

import numpy as np
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import (tf, placeholders, get_trainable_vars, count_vars,
                                 polyak_update_op, target_init_op)
from spinup_tf.reproductions.networks import resolve_actor_critic
from spinup_tf.algos.core import mlp_td3_actor_critic
from spinup_tf.reproductions.noise import exploration_noise
from spinup_tf.loops.off_policy import (setup_off_policy, run_off_policy, NoisyPolicy,
                                        build_replay, fused_path, plain_update_window)
from spinup_tf.fast.mirrors import deterministic_actor
from spinup_tf.fast.window import actor_critic_updates, deterministic_policy_step, minimize_after
from spinup_tf.loops.session import start_session


def td3(env_fn, actor_critic=mlp_td3_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99, polyak=0.995,
        pi_lr=1e-3, q_lr=1e-3, batch_size=100, start_steps=10000, update_after=1000,
        update_every=50, act_noise=0.1, target_noise=0.2, noise_clip=0.5, policy_delay=2,
        num_test_episodes=10, max_ep_len=1000, logger_kwargs=dict(), save_freq=1,
        noise='gaussian', update_at_episode_end=False, updates_per_step=1,
        normalize_rewards=False, action_range=None, fused=True):
    """Twin Delayed Deep Deterministic Policy Gradient (TD3).

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
            ``q1``       (batch,)          | Gives one estimate of Q* for
                                           | states in ``x_ph`` and actions in
                                           | ``a_ph``.
            ``q2``       (batch,)          | Gives another estimate of Q* for
                                           | states in ``x_ph`` and actions in
                                           | ``a_ph``.
            ``q1_pi``    (batch,)          | Gives the composition of ``q1`` and
                                           | ``pi`` for states in ``x_ph``:
                                           | q1(x, pi(x)).
            ===========  ================  ======================================

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to TD3 (``hidden_sizes``, ``activation``).

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

        target_noise (float): Stddev for smoothing noise added to target policy.

        noise_clip (float): Limit for absolute value of target policy smoothing noise.

        policy_delay (int): Policy will only be updated once every policy_delay times for
            each update of the Q-networks.

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

        update_at_episode_end (bool): Run the updates at the end of each trajectory, as many
            as it had steps (times ``updates_per_step``), instead of every ``update_every``
            steps (the udemy TD3's schedule).

        updates_per_step (int): Gradient steps per environment step (1 in Spinning Up; 3 in
            the TensorLayer tutorial).

        normalize_rewards (bool): Normalise the rewards of each batch to mean 0, std 1
            (``(r - mean) / (std + 1e-6)``, the TensorLayer tutorial's trick).

        action_range (float): Quirk of the TensorLayer tutorial: scale the policy's output
            (and the uniform random start actions) to ``[-action_range, action_range]``
            instead of the action space's bounds; noisy actions are still clipped to the
            action space. None (default) uses the action space.

        fused (bool): True (default): each update window runs as one ``sess.run`` (replay
            buffer in the graph, batches drawn in-graph; ``spinup_tf.fast.window``) and the policy
            acts through a numpy copy of its weights, refreshed after every window. False:
            Spinning Up's loop, two ``sess.run`` calls per update and one per action.
    """
    config = dict(locals())  # every hyperparameter, recorded in config.json below
    actor_critic = resolve_actor_critic(actor_critic)  # a function, or a registered name

    exploration_noise(noise, act_noise, None, max_ep_len)  # a bad kind fails before any write
    env, test_env, obs_dim, act_dim, act_low, act_high, logger = setup_off_policy(
        'td3', env_fn, config, logger_kwargs, steps_per_epoch, epochs, batch_size, replay_size)
    # The space the policy's tanh output is mapped onto (the env's, unless the quirk is on).
    policy_space = env.action_space if action_range is None else \
        Box(-float(action_range), float(action_range), shape=(act_dim,), dtype=np.float32)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)

        g = build_td3_graph(obs_dim, act_dim, env.action_space, actor_critic, ac_kwargs,
                            gamma, polyak, pi_lr, q_lr, target_noise, noise_clip,
                            policy_space=policy_space)

        # Experience buffer (in numpy, or in the graph with the fused update window)
        actor = deterministic_actor(g.x_ph, 'main/pi', policy_space.low,
                                          policy_space.high) if fused else None
        replay_buffer, window = build_replay(
            fused, obs_dim, act_dim, replay_size, batch_size,
            lambda batches, j: g.update_steps(batches, j, policy_delay, normalize_rewards),
            DIAGNOSTICS, actor, chunk=max(policy_delay, 2))

        # Count variables
        n_pi, n_all = count_vars('main/pi'), count_vars('main')
        logger.log('\nNumber of parameters: \t pi: %d, \t q1 + q2: %d, \t total: %d\n'
                   % (n_pi, n_all - n_pi, n_all))

    sess = start_session(graph, logger, inputs={'x': g.x_ph, 'a': g.a_ph},
                         outputs={'pi': g.pi, 'q1': g.q1, 'q2': g.q2},
                         init_ops=[g.target_init])

    noise_process = exploration_noise(noise, act_noise, act_dim, max_ep_len)

    # One callable per step kind: no feed-dict building or fetch lookup in the hot loop.
    pi_fn = sess.make_callable(g.pi, feed_list=[g.x_ph])
    batch_phs = [g.x_ph, g.x2_ph, g.a_ph, g.r_ph, g.d_ph]
    q_step = sess.make_callable([g.q_loss, g.q1, g.q2, g.train_q_op], feed_list=batch_phs)
    pi_step = sess.make_callable([g.pi_loss, g.train_pi_then_target], feed_list=batch_phs)

    def act(o):
        return pi_fn(o.reshape(1, -1))[0]

    on_restore = None
    if fused:
        def store(out):
            logger.store(LossQ=out['LossQ'], Q1Vals=out['Q1Vals'], Q2Vals=out['Q2Vals'],
                         LossPi=out['LossPi'][::policy_delay])
        actor, update_window, on_restore = fused_path(
            sess, logger, replay_buffer, window, actor, store, [(g.x_ph, g.pi, actor)])
        act = actor or act

    def update(batch, j):
        rews = normalized(batch['rews']) if normalize_rewards else batch['rews']
        feeds = (batch['obs1'], batch['obs2'], batch['acts'], rews, batch['done'])
        loss_q, q1_vals, q2_vals, _ = q_step(*feeds)
        logger.store(LossQ=loss_q, Q1Vals=q1_vals, Q2Vals=q2_vals)
        if j % policy_delay == 0:
            # Delayed policy update, then the target networks follow.
            loss_pi, _ = pi_step(*feeds)
            logger.store(LossPi=loss_pi)

    if not fused:
        update_window = plain_update_window(replay_buffer, batch_size, update)

    run_off_policy(
        env, test_env, logger, replay_buffer, act,
        NoisyPolicy(act, noise_process, act_low, act_high), update_window, seed=seed,
        steps_per_epoch=steps_per_epoch, epochs=epochs,
        batch_size=batch_size, start_steps=start_steps, update_after=update_after,
        update_every=update_every, num_test_episodes=num_test_episodes,
        max_ep_len=max_ep_len, save_freq=save_freq, update_at_episode_end=update_at_episode_end,
        updates_per_step=updates_per_step,
        random_action=None if action_range is None else policy_space.sample,
        diagnostics=[('Q1Vals', dict(with_min_and_max=True)),
                     ('Q2Vals', dict(with_min_and_max=True)),
                     ('LossPi', dict(average_only=True)),
                     ('LossQ', dict(average_only=True))],
        finite_keys=['LossQ', 'LossPi', 'Q1Vals', 'Q2Vals'],
        save_state=lambda epoch: logger.save_state({'epoch': epoch}), session=sess,
        on_restore=on_restore)


DIAGNOSTICS = ['LossQ', 'Q1Vals', 'Q2Vals', 'LossPi']


def build_td3_graph(obs_dim, act_dim, action_space, actor_critic=mlp_td3_actor_critic,
                    ac_kwargs=dict(), gamma=0.99, polyak=0.995, pi_lr=1e-3, q_lr=1e-3,
                    target_noise=0.2, noise_clip=0.5, policy_space=None):
    """Build TD3's graph in the default graph; returns its tensors and ops by name.

    Placeholders ``x_ph, a_ph, x2_ph`` ``(batch, obs_dim|act_dim)``, ``r_ph, d_ph``
    ``(batch,)``; outputs ``pi`` ``(batch, act_dim)``, ``q1, q2, q1_pi`` ``(batch,)``; the
    target-smoothing noise ``epsilon`` and target action ``a2`` ``(batch, act_dim)``, the
    ``backup`` ``(batch,)``; the losses, ``train_pi_op``, ``train_q_op``, ``target_update``
    (alone), ``train_pi_then_target`` (policy step, then targets) and ``target_init``.

    ``update_steps(batches, j, policy_delay, normalize_rewards)`` builds the same updates
    again on batch tensors, with the same variables and optimizers, for the fused window
    (``spinup_tf.fast.window``): for each batch the Q step, then every ``policy_delay``-th update
    the policy step and the target networks (``fused.actor_critic_updates``). It returns
    ``(train_op, outputs)``, one dict per update with LossQ, Q1Vals, Q2Vals and LossPi (0
    where the policy was not updated).
    """
    act_low = np.asarray(action_space.low, dtype=np.float32)
    act_high = np.asarray(action_space.high, dtype=np.float32)

    # Share information about action space with policy architecture
    ac_kwargs = dict(ac_kwargs, action_space=policy_space or action_space)

    def q_learning(x, x2, a, r, d, reuse, main_after=(), target_after=()):
        """Main Q values on (x, a) and the clipped double-Q backup: ``(batch,)`` each. The
        main and target networks read their weights after the ops ``main_after`` and
        ``target_after`` (the fused window's ordering; none in the plain graph)."""
        # Main outputs from computation graph
        with tf.control_dependencies(main_after), tf.variable_scope('main', reuse=reuse):
            pi, q1, q2, q1_pi = actor_critic(x, a, **ac_kwargs)

        # Target policy network
        with tf.control_dependencies(target_after), tf.variable_scope('target', reuse=reuse):
            pi_targ, _, _, _ = actor_critic(x2, a, **ac_kwargs)

        # Target Q networks
        with tf.control_dependencies(target_after), tf.variable_scope('target', reuse=True):
            # Target policy smoothing, by adding clipped noise to target actions
            epsilon = tf.random_normal(tf.shape(pi_targ), stddev=target_noise)
            epsilon = tf.clip_by_value(epsilon, -noise_clip, noise_clip)
            a2 = tf.clip_by_value(pi_targ + epsilon, act_low, act_high)

            # Target Q-values, using action from target policy
            _, q1_targ, q2_targ, _ = actor_critic(x2, a2, **ac_kwargs)

        # Bellman backup for Q functions, using Clipped Double-Q target.
        # d is gymnasium's `terminated`: a truncated episode still bootstraps.
        min_q_targ = tf.minimum(q1_targ, q2_targ)
        backup = tf.stop_gradient(r + gamma * (1 - d) * min_q_targ)

        # TD3 Q loss
        q1_loss = tf.reduce_mean((q1 - backup) ** 2)
        q2_loss = tf.reduce_mean((q2 - backup) ** 2)
        return SimpleNamespace(pi=pi, q1=q1, q2=q2, q1_pi=q1_pi, epsilon=epsilon, a2=a2,
                               pi_targ=pi_targ, q1_targ=q1_targ, q2_targ=q2_targ,
                               backup=backup, q1_loss=q1_loss, q2_loss=q2_loss,
                               q_loss=q1_loss + q2_loss)

    # Inputs to computation graph
    x_ph, a_ph, x2_ph, r_ph, d_ph = placeholders(obs_dim, act_dim, obs_dim, None, None)
    nets = q_learning(x_ph, x2_ph, a_ph, r_ph, d_ph, reuse=False)
    pi, q1, q2, q1_pi = nets.pi, nets.q1, nets.q2, nets.q1_pi
    epsilon, a2, backup, q_loss = nets.epsilon, nets.a2, nets.backup, nets.q_loss
    pi_targ, q1_targ, q2_targ = nets.pi_targ, nets.q1_targ, nets.q2_targ
    q1_loss, q2_loss = nets.q1_loss, nets.q2_loss

    # TD3 policy loss
    pi_loss = -tf.reduce_mean(q1_pi)

    # Separate train ops for pi, q (variables picked by exact scope prefix)
    pi_optimizer = tf.train.AdamOptimizer(learning_rate=pi_lr)
    q_optimizer = tf.train.AdamOptimizer(learning_rate=q_lr)
    pi_vars = get_trainable_vars('main/pi')
    q_vars = [v for v in get_trainable_vars('main') if v not in pi_vars]
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

    def update_steps(batches, j, policy_delay=2, normalize_rewards=False):
        def q_step(batch, main_after, target_after, apply_after):
            x, x2, a, r, d = batch
            if normalize_rewards:
                mean, var = tf.nn.moments(r, axes=[0])
                r = (r - mean) / (tf.sqrt(var) + 1e-6)
            step = q_learning(x, x2, a, r, d, True, main_after, target_after)
            train_q = minimize_after(q_optimizer, step.q_loss, q_vars, apply_after)
            return dict(LossQ=step.q_loss, Q1Vals=step.q1, Q2Vals=step.q2), train_q

        policy_step = deterministic_policy_step(
            lambda x, a: actor_critic(x, a, **ac_kwargs)[3],  # (pi, q1, q2, q1_pi)
            pi_optimizer, pi_vars)
        return actor_critic_updates(batches, j, q_step, policy_step, polyak, ('q1', 'q2'),
                                    policy_delay)

    return SimpleNamespace(**{k: v for k, v in locals().items()
                              if k not in ('ac_kwargs', 'actor_critic', 'action_space',
                                           'policy_space', 'nets', 'q_learning')})


def normalized(rews):
    """Batch reward normalisation (the TensorLayer tutorial's): ``(r - mean) / (std + 1e-6)``
    over the ``(batch,)`` rewards of one batch."""
    return (rews - rews.mean()) / (rews.std() + 1e-6)
