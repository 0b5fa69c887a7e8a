"""Soft Actor-Critic (SAC), as a TF1 static graph, for continuous and (Christodoulou 2019)
discrete actions.

Read top to bottom: inputs, main and target networks, the entropy temperature, SAC's losses
(all from one forward pass of a batch; discrete SAC's take expectations over the actions
where continuous SAC samples one), train steps, polyak update, and the update in Spinning
Up's words. The loop (``spinup_tf.loops.off_policy``) runs it.
"""
import numpy as np

from spinup_tf.utils.tf1 import tf
from spinup_tf.utils.errors import UserInputError
from spinup_tf.algos import core
from spinup_tf.algos.distributions import mlp_sac_actor_critic
from spinup_tf.loops import off_policy


def sac(env_fn, actor_critic=mlp_sac_actor_critic, ac_kwargs=None, seed=0,
        steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99, polyak=0.995,
        lr=1e-3, alpha=0.2, batch_size=100, start_steps=10000, update_after=1000,
        update_every=50, num_test_episodes=10, max_ep_len=1000, logger_kwargs=None,
        save_freq=1, target_entropy=None, **options):
    """Soft Actor-Critic (SAC).

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space (or uint8 images, read
            through ``core.nature_cnn``) and a bounded flat
            Box action space, or a ``Discrete`` one (discrete SAC, below).

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

            With a ``Discrete`` action space (discrete SAC, Christodoulou 2019; actions fed
            one-hot, ``(batch, n_acts)``), it returns ``mu`` and ``pi`` as ``(batch,)``
            actions (the most probable, a sample), then ``logp_all``, ``q1_all``, ``q2_all``,
            each ``(batch, n_acts)``: the policy's log-probabilities and both Q functions'
            values of every action (``mlp_discrete_sac_actor_critic``, which the default
            chooses for such a space). The losses then take expectations over actions:

            .. math::
                y = r + \\gamma (1 - d) \\sum_{a'} \\pi(a'|s') \\left[
                \\min_i Q_{\\text{targ},i}(s', a') - \\alpha \\log \\pi(a'|s') \\right],
                \\quad L_\\pi = \\sum_a \\pi(a|s) \\left[ \\alpha \\log \\pi(a|s)
                - \\min_i Q_i(s, a) \\right]

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
            :math:`\\alpha` when the entropy is below the target (for discrete actions,
            :math:`\\log\\pi(a|s)` is replaced by its expectation over the policy).

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

        target_entropy (float): The entropy :math:`\\bar{\\mathcal{H}}` that ``alpha='auto'``
            aims at. None: ``-act_dim`` for a ``Box`` action space, and ``0.98 log(n_acts)``
            (98 % of the uniform policy's, as Christodoulou 2019; CleanRL uses 0.89) for a
            ``Discrete`` one.

        options: the off-policy loop's options (``spinup_tf.loops.off_policy.OPTIONS``):
            ``fused`` (the fast engine, default True), ``update_at_episode_end``,
            ``updates_per_step``, ``videos``, ``tensorboard``, ``normalize_obs``,
            ``normalize_rew``; and ``hooks`` (``spinup_tf.loops.hooks``).
    """
    if not (alpha == 'auto' or (isinstance(alpha, (int, float)) and not isinstance(alpha, bool)
                                and alpha >= 0)):
        raise UserInputError("alpha must be a non-negative number or 'auto', got %r" % (alpha,))
    if target_entropy is not None and (isinstance(target_entropy, bool) or not isinstance(
            target_entropy, (int, float)) or not np.isfinite(target_entropy)):
        raise UserInputError('target_entropy must be a number, got %r' % (target_entropy,))
    run = off_policy.Run('sac', env_fn, dict(locals()))
    actor_critic, ac_kwargs = run.actor_critic, run.ac_kwargs
    if target_entropy is None:
        target_entropy = 0.98 * np.log(run.act_dim) if run.discrete else -run.act_dim

    with run.graph.as_default():
        # Inputs to computation graph
        x_ph, a_ph, x2_ph, r_ph, d_ph = core.placeholders(run.obs_dim, run.act_dim,
                                                          run.obs_dim, None, None)

        # Main outputs from computation graph
        with tf.variable_scope('main'):
            mu, pi, logp_pi, q1, q2 = actor_critic(x_ph, a_ph, **ac_kwargs)

        # Target value networks (their outputs are built in the losses)
        with tf.variable_scope('target'):
            actor_critic(x2_ph, a_ph, **ac_kwargs)

        # Entropy temperature: a constant, or learned towards the target entropy -act_dim
        if alpha == 'auto':
            with tf.variable_scope('alpha'):
                tf.get_variable('log_alpha', shape=(), initializer=tf.zeros_initializer())

        def temperature(logp_pi):
            """``(alpha, losses)``: the temperature as a tensor and, with ``alpha='auto'``,
            ``{'alpha': -log(alpha) * (log pi + target entropy)}``, whose descent raises
            alpha while the policy's entropy is below the target (``{}`` otherwise)."""
            if alpha != 'auto':
                return tf.constant(float(alpha), dtype=tf.float32), {}
            with tf.variable_scope('alpha', reuse=True):
                log_alpha = tf.get_variable('log_alpha', shape=())
            return tf.exp(log_alpha), {'alpha': -tf.reduce_mean(
                log_alpha * tf.stop_gradient(logp_pi + float(target_entropy)))}

        def sac_losses(batch):
            """SAC's policy, value and temperature losses from one forward pass of a batch."""
            x, x2, a = batch['obs1'], batch['obs2'], batch['acts']
            with tf.variable_scope('main', reuse=True):
                _, pi, logp_pi, q1, q2 = actor_critic(x, a, **ac_kwargs)
                # compose q with pi, for pi-learning
                _, _, _, q1_pi, q2_pi = actor_critic(x, pi, **ac_kwargs)
                # get actions and log probs of actions for next states, for Q-learning
                _, pi_next, logp_pi_next, _, _ = actor_critic(x2, a, **ac_kwargs)
            with tf.variable_scope('target', reuse=True):
                # target q values, using actions from *current* policy
                _, _, _, q1_targ, q2_targ = actor_critic(x2, pi_next, **ac_kwargs)
            alpha_t, losses = temperature(logp_pi)

            # Min Double-Q:
            min_q_pi = tf.minimum(q1_pi, q2_pi)
            min_q_targ = tf.minimum(q1_targ, q2_targ)

            # Entropy-regularized Bellman backup for Q functions, using Clipped Double-Q
            # targets. d is gymnasium's `terminated`: a truncated episode still bootstraps.
            q_backup = tf.stop_gradient(batch['rews'] + gamma * (1 - batch['done']) * (
                min_q_targ - alpha_t * logp_pi_next))

            # Soft actor-critic losses
            losses['pi'] = tf.reduce_mean(alpha_t * logp_pi - min_q_pi)
            q1_loss = 0.5 * tf.reduce_mean((q_backup - q1) ** 2)
            q2_loss = 0.5 * tf.reduce_mean((q_backup - q2) ** 2)
            losses['value'] = q1_loss + q2_loss
            return losses, dict(LossPi=losses['pi'], LossQ1=q1_loss, LossQ2=q2_loss,
                                Q1Vals=q1, Q2Vals=q2, LogPi=logp_pi, Alpha=alpha_t)

        def discrete_sac_losses(batch):
            """Discrete SAC's losses: SAC's, with expectations over all actions in place of
            the sampled action (Christodoulou 2019)."""
            x, x2, a = batch['obs1'], batch['obs2'], batch['acts']
            with tf.variable_scope('main', reuse=True):
                _, _, logp_all, q1_all, q2_all = actor_critic(x, a, **ac_kwargs)
                _, _, logp_all_next, _, _ = actor_critic(x2, a, **ac_kwargs)
            with tf.variable_scope('target', reuse=True):
                _, _, _, q1_targ_all, q2_targ_all = actor_critic(x2, a, **ac_kwargs)
            probs, probs_next = tf.exp(logp_all), tf.exp(logp_all_next)
            # E_{a ~ pi}[log pi(a|s)]: minus the policy's entropy at s, (batch,)
            logp_pi = tf.reduce_sum(probs * logp_all, axis=1)
            alpha_t, losses = temperature(logp_pi)

            # Soft state value of s' under the current policy, from the target Q functions
            min_q_targ_all = tf.minimum(q1_targ_all, q2_targ_all)
            v_next = tf.reduce_sum(probs_next * (min_q_targ_all - alpha_t * logp_all_next),
                                   axis=1)
            # Bellman backup; d is gymnasium's `terminated` (a truncation bootstraps)
            q_backup = tf.stop_gradient(batch['rews'] + gamma * (1 - batch['done']) * v_next)

            # Q of the stored actions (one-hot rows), and the losses
            q1 = tf.reduce_sum(q1_all * a, axis=1)
            q2 = tf.reduce_sum(q2_all * a, axis=1)
            min_q_all = tf.minimum(q1_all, q2_all)
            losses['pi'] = tf.reduce_mean(tf.reduce_sum(
                probs * (alpha_t * logp_all - min_q_all), axis=1))
            q1_loss = 0.5 * tf.reduce_mean((q_backup - q1) ** 2)
            q2_loss = 0.5 * tf.reduce_mean((q_backup - q2) ** 2)
            losses['value'] = q1_loss + q2_loss
            return losses, dict(LossPi=losses['pi'], LossQ1=q1_loss, LossQ2=q2_loss,
                                Q1Vals=q1, Q2Vals=q2, LogPi=logp_pi, Alpha=alpha_t)

        if run.discrete:
            sac_losses = discrete_sac_losses

        # One Adam per train op (run.optimizer(lr) is tf.train.AdamOptimizer(lr)), and the
        # variables each one trains, picked by exact scope prefix
        pi_optimizer = run.optimizer(lr)
        value_optimizer = run.optimizer(lr)
        alpha_optimizer = run.optimizer(lr)
        pi_vars = core.get_trainable_vars('main/pi')
        value_vars = core.get_trainable_vars('main/q1') + core.get_trainable_vars('main/q2')

        def train_ops(batch):
            """One SAC update on ``batch`` (obs1, obs2, acts, rews, done tensors), as the one
            list Spinning Up passes to ``sess.run``: every loss from the parameters before the
            update, then the policy and value steps, the targets (which read both steps'
            results) and, with ``alpha='auto'``, the temperature step."""
            losses, diagnostics = sac_losses(batch)

            # Every loss comes from the parameters before the update: the steps that change
            # them wait for all the losses (policy, value and, with alpha='auto', temperature)
            with tf.control_dependencies(list(losses.values())):
                train_pi_op = pi_optimizer.minimize(losses['pi'], var_list=pi_vars)
                train_value_op = value_optimizer.minimize(losses['value'], var_list=value_vars)
                ops = dict(train_pi=train_pi_op, train_value=train_value_op)
                if alpha == 'auto':
                    ops['train_alpha'] = alpha_optimizer.minimize(
                        losses['alpha'], var_list=core.get_trainable_vars('alpha'))

            # Polyak averaging for the targets, reading what both steps wrote
            with tf.control_dependencies([train_pi_op, train_value_op]):
                ops['target'] = tf.group([
                    tf.assign(v_targ, polyak * v_targ + (1 - polyak) * v_main)
                    for v_main, v_targ in core.paired_vars('main', 'target')])
            return dict(step=dict(diagnostics, **ops))

        def update(j):
            """Every update runs the one list."""
            return ('step',)

        # Initializing targets to match main variables
        target_init = tf.group([tf.assign(v_targ, v_main)
                                for v_main, v_targ in core.paired_vars('main', 'target')])

    run.setup.count_vars(['main/pi', 'main/q1', 'main/q2', 'main'], ['pi', 'q1', 'q2', 'total'])

    def log_diagnostics(logger):
        logger.log_tabular('Q1Vals', with_min_and_max=True)
        logger.log_tabular('Q2Vals', with_min_and_max=True)
        logger.log_tabular('LogPi', with_min_and_max=True)
        logger.log_tabular('LossPi', average_only=True)
        logger.log_tabular('LossQ1', average_only=True)
        logger.log_tabular('LossQ2', average_only=True)
        if alpha == 'auto':
            logger.log_tabular('Alpha', average_only=True)

    batch = dict(obs1=x_ph, obs2=x2_ph, acts=a_ph, rews=r_ph, done=d_ph)
    run.train(train_ops, update, batch, mu, log_diagnostics, explore=pi,
              saved=(dict(x=x_ph, a=a_ph), dict(mu=mu, pi=pi, q1=q1, q2=q2)),
              init_ops=[target_init])
