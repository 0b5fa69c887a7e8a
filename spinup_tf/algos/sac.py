"""Soft Actor-Critic (SAC), as a TF1 static graph.

Read top to bottom: graph (placeholders, squashed-Gaussian policy and twin Q functions in
``main``, target Q functions, entropy-regularised backup, losses, chained train ops, polyak
ops, optional automatic temperature), session, the step functions, then the shared
off-policy loop (``spinup_tf.loops.off_policy``).
"""
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import (tf, placeholders, get_trainable_vars, count_vars,
                                 polyak_update_op, target_init_op)
from spinup_tf.algos.core import mlp_sac_actor_critic, LOG_STD_MIN, LOG_STD_MAX
from spinup_tf.utils.errors import UserInputError
from spinup_tf.loops.off_policy import (setup_off_policy, run_off_policy, build_replay, fused_path,
                                        plain_update_window)
from spinup_tf.fast.mirrors import dense_chain, NoMirror, NumpyMLP, SquashedGaussianActor
from spinup_tf.loops.session import start_session


def sac(env_fn, actor_critic=mlp_sac_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99, polyak=0.995,
        lr=1e-3, alpha=0.2, batch_size=100, start_steps=10000, update_after=1000,
        update_every=50, num_test_episodes=10, max_ep_len=1000, logger_kwargs=dict(),
        save_freq=1, fused=True):
    """Soft Actor-Critic (SAC).

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
            ``mu``       (batch, act_dim)  | Computes mean actions from policy
                                           | given states.
            ``pi``       (batch, act_dim)  | Samples actions from policy given
                                           | states.
            ``logp_pi``  (batch,)          | Gives log probability, according to
                                           | the policy, of the action sampled by
                                           | ``pi``. Critical: must be differentiable
                                           | with respect to policy parameters all
                                           | the way through action sampling.
            ``q1``       (batch,)          | Gives one estimate of Q* for
                                           | states in ``x_ph`` and actions in
                                           | ``a_ph``.
            ``q2``       (batch,)          | Gives another estimate of Q* for
                                           | states in ``x_ph`` and actions in
                                           | ``a_ph``.
            ===========  ================  ======================================

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to SAC (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators.

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

        lr (float): Learning rate (used for policy, value and, with ``alpha='auto'``, the
            temperature).

        alpha (float or 'auto'): Entropy regularization coefficient. (Equivalent to inverse
            of reward scale in the original SAC paper.) ``'auto'`` learns it, starting at 1,
            so that the policy's entropy tracks the target ``-act_dim`` (Haarnoja et al.
            2018, "SAC: Algorithms and Applications"): the loss
            :math:`-\\log\\alpha \\cdot (\\log\\pi(a|s) + \\bar{\\mathcal{H}})` raises
            :math:`\\alpha` when the entropy is below the target.

        batch_size (int): Minibatch size for SGD.

        start_steps (int): Number of steps for uniform-random action selection, before
            running real policy. Helps exploration.

        update_after (int): Number of env interactions to collect before starting to do
            gradient descent updates. Ensures replay buffer is full enough for useful updates.

        update_every (int): Number of env interactions that should elapse between gradient
            descent updates. Note: Regardless of how long you wait between updates, the ratio
            of env steps to gradient steps is locked to 1.

        num_test_episodes (int): Number of episodes to test the deterministic policy (the
            squashed mean ``mu``) at the end of each epoch.

        max_ep_len (int): Maximum length of trajectory / episode / rollout. Reaching it is a
            truncation: the target bootstraps through it.

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save the current
            policy and value function.

        fused (bool): True (default): each update window runs as one ``sess.run`` (replay
            buffer in the graph, batches drawn in-graph; ``spinup_tf.fast.window``) and the policy
            acts through a numpy copy of its weights (its noise from numpy's seeded RNG),
            refreshed after every window. False: Spinning Up's loop, one ``sess.run`` per
            update and one per action.
    """
    config = dict(locals())  # every hyperparameter, recorded in config.json below
    if not (alpha == 'auto' or (isinstance(alpha, (int, float)) and not isinstance(alpha, bool)
                                and alpha >= 0)):
        raise UserInputError("alpha must be a non-negative number or 'auto', got %r" % (alpha,))

    env, test_env, obs_dim, act_dim, act_low, act_high, logger = setup_off_policy(
        'sac', env_fn, config, logger_kwargs, steps_per_epoch, epochs, batch_size, replay_size)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)

        g = build_sac_graph(obs_dim, act_dim, env.action_space, actor_critic, ac_kwargs,
                            gamma, polyak, lr, alpha)

        # Experience buffer (in numpy, or in the graph with the fused update window)
        actor, checks = numpy_sac_actor(g, act_low, act_high) if fused else (None, [])
        replay_buffer, window = build_replay(fused, obs_dim, act_dim, replay_size, batch_size,
                                             g.update_steps, DIAGNOSTICS, actor)

        # Count variables
        var_counts = tuple(count_vars(scope) for scope in
                           ['main/pi', 'main/q1', 'main/q2', 'main'])
        logger.log('\nNumber of parameters: \t pi: %d, \t q1: %d, \t q2: %d, \t total: %d\n'
                   % var_counts)

    sess = start_session(graph, logger, inputs={'x': g.x_ph, 'a': g.a_ph},
                         outputs={'mu': g.mu, 'pi': g.pi, 'q1': g.q1, 'q2': g.q2},
                         init_ops=[g.target_init])

    # One callable per step kind: no feed-dict building or fetch lookup in the hot loop.
    mu_fn = sess.make_callable(g.mu, feed_list=[g.x_ph])
    pi_fn = sess.make_callable(g.pi, feed_list=[g.x_ph])
    batch_phs = [g.x_ph, g.x2_ph, g.a_ph, g.r_ph, g.d_ph]
    step_fn = sess.make_callable(g.step_ops, feed_list=batch_phs)

    def act(o):
        return mu_fn(o.reshape(1, -1))[0]

    def explore(o):
        return pi_fn(o.reshape(1, -1))[0]

    def update(batch, j):
        outs = step_fn(batch['obs1'], batch['obs2'], batch['acts'], batch['rews'],
                       batch['done'])
        logger.store(**dict(zip(DIAGNOSTICS, outs)))

    on_restore = None
    if fused:
        actor, update_window, on_restore = fused_path(
            sess, logger, replay_buffer, window, actor, lambda out: logger.store(**out), checks)
        if actor is not None:
            act, explore = actor, actor.sample
    else:
        update_window = plain_update_window(replay_buffer, batch_size, update)

    diagnostics = [('Q1Vals', dict(with_min_and_max=True)),
                   ('Q2Vals', dict(with_min_and_max=True)),
                   ('LogPi', dict(with_min_and_max=True)),
                   ('LossPi', dict(average_only=True)),
                   ('LossQ1', dict(average_only=True)),
                   ('LossQ2', dict(average_only=True))]
    if alpha == 'auto':
        diagnostics.append(('Alpha', dict(average_only=True)))
    run_off_policy(
        env, test_env, logger, replay_buffer, act, explore, update_window, seed=seed,
        steps_per_epoch=steps_per_epoch, epochs=epochs, batch_size=batch_size,
        start_steps=start_steps, update_after=update_after, update_every=update_every,
        num_test_episodes=num_test_episodes, max_ep_len=max_ep_len, save_freq=save_freq,
        diagnostics=diagnostics,
        finite_keys=['LossPi', 'LossQ1', 'LossQ2', 'Q1Vals', 'Q2Vals', 'Alpha'],
        save_state=lambda epoch: logger.save_state({'epoch': epoch}), session=sess,
        on_restore=on_restore)


DIAGNOSTICS = ['LossPi', 'LossQ1', 'LossQ2', 'Q1Vals', 'Q2Vals', 'LogPi', 'Alpha']


def numpy_sac_actor(g, act_low, act_high):
    """SAC's policy in numpy (``SquashedGaussianActor``) and the checks that must pass
    before it acts: its deterministic action against ``g.mu`` and its ``log_std`` head
    against the graph's. ``(None, [])`` when the policy is not the squashed Gaussian MLP."""
    try:
        trunk, fork = dense_chain(g.x_ph, 'main/pi')
        heads = {}
        for name in ('mu', 'log_std'):
            layers, _ = dense_chain(fork, 'main/pi/' + name)
            if len(layers) != 1:
                raise NoMirror('unexpected %s head' % name)
            heads[name] = layers[0]
    except NoMirror:
        return None, []
    actor = SquashedGaussianActor(NumpyMLP(trunk), NumpyMLP([heads['mu']]),
                                  NumpyMLP([heads['log_std']]), act_low, act_high,
                                  LOG_STD_MIN, LOG_STD_MAX)
    log_std_head = NumpyMLP(trunk + [heads['log_std']])
    return actor, [(g.x_ph, g.mu, actor), (g.x_ph, heads['log_std'].outputs, log_std_head)]


def build_sac_graph(obs_dim, act_dim, action_space, actor_critic=mlp_sac_actor_critic,
                    ac_kwargs=dict(), gamma=0.99, polyak=0.995, lr=1e-3, alpha=0.2):
    """Build SAC's graph in the default graph; returns its tensors and ops by name.

    Placeholders ``x_ph, a_ph, x2_ph`` ``(batch, obs_dim|act_dim)``, ``r_ph, d_ph``
    ``(batch,)``; ``mu, pi`` ``(batch, act_dim)``; ``logp_pi, q1, q2, q_backup`` ``(batch,)``;
    ``alpha`` (a constant, or ``exp(log_alpha)`` of the variable ``alpha/log_alpha`` when
    ``alpha='auto'``); ``step_ops`` = ``[pi_loss, q1_loss, q2_loss, q1, q2, logp_pi, alpha,``
    train ops chained policy → Q → target (→ temperature)``]``.

    ``update_steps(batches, j)`` builds the same step again on each batch's tensors, one
    after the other, with the same variables and optimizers, for the fused window
    (``spinup_tf.fast.window``); it returns ``(train_op, outputs)``, one dict per step named as the
    logger's diagnostics (LossPi, LossQ1, LossQ2, Q1Vals, Q2Vals, LogPi, Alpha).
    """
    # Share information about action space with policy architecture
    ac_kwargs = dict(ac_kwargs, action_space=action_space)
    learn_alpha = alpha == 'auto'
    alpha_value = None if learn_alpha else float(alpha)  # (`alpha` is the tensor at the end)

    # One optimizer per train op, shared by the plain step and the fused window's steps.
    pi_optimizer = tf.train.AdamOptimizer(learning_rate=lr)
    value_optimizer = tf.train.AdamOptimizer(learning_rate=lr)
    alpha_optimizer = tf.train.AdamOptimizer(learning_rate=lr) if learn_alpha else None

    def sac_step(x, x2, a, r, d, reuse):
        """Everything one SAC update computes and runs, on batch tensors."""
        # Main outputs from computation graph
        with tf.variable_scope('main', reuse=reuse):
            mu, pi, logp_pi, q1, q2 = actor_critic(x, a, **ac_kwargs)

        with tf.variable_scope('main', reuse=True):
            # compose q with pi, for pi-learning
            _, _, _, q1_pi, q2_pi = actor_critic(x, pi, **ac_kwargs)
            # get actions and log probs of actions for next states, for Q-learning
            _, pi_next, logp_pi_next, _, _ = actor_critic(x2, a, **ac_kwargs)

        # Target value networks
        with tf.variable_scope('target', reuse=reuse):
            # target q values, using actions from *current* policy
            _, _, _, q1_targ, q2_targ = actor_critic(x2, pi_next, **ac_kwargs)

        # Entropy temperature: a constant, or learned towards the target entropy -act_dim.
        if learn_alpha:
            with tf.variable_scope('alpha', reuse=reuse):
                log_alpha = tf.get_variable('log_alpha', shape=(), dtype=tf.float32,
                                            initializer=tf.zeros_initializer())
            alpha_t = tf.exp(log_alpha)
            target_entropy = -float(act_dim)
            alpha_loss = -tf.reduce_mean(log_alpha
                                         * tf.stop_gradient(logp_pi + target_entropy))
        else:
            alpha_t = tf.constant(alpha_value, dtype=tf.float32)

        # Min Double-Q:
        min_q_pi = tf.minimum(q1_pi, q2_pi)
        min_q_targ = tf.minimum(q1_targ, q2_targ)

        # Entropy-regularized Bellman backup for Q functions, using Clipped Double-Q targets.
        # d is gymnasium's `terminated`: a truncated episode still bootstraps.
        q_backup = tf.stop_gradient(r + gamma * (1 - d) * (min_q_targ
                                                           - alpha_t * logp_pi_next))

        # Soft actor-critic losses
        pi_loss = tf.reduce_mean(alpha_t * logp_pi - min_q_pi)
        q1_loss = 0.5 * tf.reduce_mean((q_backup - q1) ** 2)
        q2_loss = 0.5 * tf.reduce_mean((q_backup - q2) ** 2)
        value_loss = q1_loss + q2_loss

        # Policy train op
        # (has to be separate from value train op, because q1_pi appears in pi_loss)
        # (and after the backup: q_backup reads the policy's weights through pi_next, and
        # ops without a dependency run in any order within one sess.run)
        with tf.control_dependencies([q_backup]):
            train_pi_op = pi_optimizer.minimize(pi_loss, var_list=get_trainable_vars('main/pi'))

        # Value train op
        # (control dep of train_pi_op because sess.run otherwise evaluates in
        # nondeterministic order)
        value_params = get_trainable_vars('main/q1') + get_trainable_vars('main/q2')
        with tf.control_dependencies([train_pi_op]):
            train_value_op = value_optimizer.minimize(value_loss, var_list=value_params)

        # Polyak averaging for target variables
        # (control flow because sess.run otherwise evaluates in nondeterministic order)
        with tf.control_dependencies([train_value_op]):
            target_update = polyak_update_op(polyak)
        train_ops = [train_pi_op, train_value_op, target_update]
        if learn_alpha:
            with tf.control_dependencies([target_update]):
                train_alpha_op = alpha_optimizer.minimize(alpha_loss, var_list=[log_alpha])
            train_ops.append(train_alpha_op)
        return SimpleNamespace(**locals())

    # Inputs to computation graph
    x_ph, a_ph, x2_ph, r_ph, d_ph = placeholders(obs_dim, act_dim, obs_dim, None, None)
    step = sac_step(x_ph, x2_ph, a_ph, r_ph, d_ph, reuse=False)
    mu, pi, logp_pi, q1, q2 = step.mu, step.pi, step.logp_pi, step.q1, step.q2
    q_backup, pi_loss, q1_loss, q2_loss = step.q_backup, step.pi_loss, step.q1_loss, step.q2_loss
    train_pi_op, train_value_op = step.train_pi_op, step.train_value_op
    target_update, train_ops, alpha = step.target_update, step.train_ops, step.alpha_t
    pi_next, logp_pi_next, q1_pi, q2_pi = step.pi_next, step.logp_pi_next, step.q1_pi, \
        step.q2_pi
    q1_targ, q2_targ = step.q1_targ, step.q2_targ
    if learn_alpha:
        log_alpha, alpha_loss, train_alpha_op = step.log_alpha, step.alpha_loss, \
            step.train_alpha_op
        target_entropy = step.target_entropy

    # All ops to call during one training step
    step_ops = [pi_loss, q1_loss, q2_loss, q1, q2, logp_pi, alpha] + train_ops

    # Initializing targets to match main variables
    target_init = target_init_op()

    def update_steps(batches, j):
        train_op, outputs = None, []
        for batch in batches:  # each step after the previous one's train ops
            with tf.control_dependencies([train_op] if train_op is not None else []):
                s = sac_step(*batch, reuse=True)
            outputs.append(dict(LossPi=s.pi_loss, LossQ1=s.q1_loss, LossQ2=s.q2_loss,
                                Q1Vals=s.q1, Q2Vals=s.q2, LogPi=s.logp_pi, Alpha=s.alpha_t))
            train_op = s.train_ops[-1]
        return train_op, outputs

    return SimpleNamespace(**{k: v for k, v in locals().items()
                              if k not in ('ac_kwargs', 'actor_critic', 'action_space', 'step',
                                           'sac_step')})
