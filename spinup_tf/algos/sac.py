"""Soft Actor-Critic (SAC), as a TF1 static graph, for continuous and (Christodoulou 2019)
discrete actions.

Read top to bottom: inputs, main and target networks, the entropy temperature, SAC's losses
(all from one forward pass of a batch; discrete SAC's take expectations over the actions
where continuous SAC samples one), then ``train_ops(batch)``: one ``minimize`` per loss and
the polyak ``tf.group`` of ``tf.assign``, as the one ``sess.run`` list of an update. The loop
(``spinup_tf.loops.off_policy``) runs it.
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
        env_fn: Makes a fresh env each time it is called (twice: one env to train on, one
            to test on). The env follows gymnasium's API, with a flat Box observation
            space (or uint8 images, read
            through ``core.nature_cnn``) and a bounded flat
            Box action space, or a ``Discrete`` one (discrete SAC, below).

        actor_critic: Builds the networks. Called inside a variable scope with the observation
            tensor ``x_ph`` and the action tensor ``a_ph``, it returns these tensors:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``mu``       (batch, act_dim)  | The squashed mean action: what the
                                           | policy does when tested.
            ``pi``       (batch, act_dim)  | A squashed action drawn from the
                                           | policy: how it explores.
            ``logp_pi``  (batch,)          | log pi(pi | x) of that draw. The draw
                                           | is reparameterised, so this is
                                           | differentiable in the policy's
                                           | weights through the sample.
            ``q1``       (batch,)          | The first critic's Q(x, a) for the
                                           | rows of ``x_ph`` and ``a_ph``.
            ``q2``       (batch,)          | The second critic's Q(x, a), trained
                                           | on the same target.
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

        ac_kwargs (dict): Keyword arguments passed on to ``actor_critic``
            (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators.

        steps_per_epoch (int): Env steps (one action, one transition) per epoch; an epoch
            ends with the test episodes and one row of ``progress.txt``.

        epochs (int): How many epochs the run lasts.

        replay_size (int): Transitions the replay buffer holds; the oldest go
            first once it is full.

        gamma (float): The discount :math:`\\gamma` in :math:`[0, 1]`.

        polyak (float): Interpolation factor in polyak averaging for target networks.
            Target networks are updated towards main networks according to:

            .. math:: \\theta_{\\text{targ}} \\leftarrow
                \\rho \\theta_{\\text{targ}} + (1-\\rho) \\theta

            with :math:`\\rho` = polyak in :math:`[0, 1]`; near 1, the targets trail the main
            networks slowly.

        lr (float): Learning rate (used for policy, value and, with ``alpha='auto'``, the
            temperature).

        alpha (float or 'auto'): The weight of the entropy bonus in the
            objective (the larger, the more random the policy stays; scaling the rewards
            by ``1 / alpha`` would do the same). ``'auto'`` learns it, starting at 1,
            so that the policy's entropy tracks the target ``-act_dim`` (Haarnoja et al.
            2018, "SAC: Algorithms and Applications"): the loss
            :math:`-\\log\\alpha \\cdot (\\log\\pi(a|s) + \\bar{\\mathcal{H}})` raises
            :math:`\\alpha` when the entropy is below the target (for discrete actions,
            :math:`\\log\\pi(a|s)` is replaced by its expectation over the policy).

        batch_size (int): Transitions in each update's batch.

        start_steps (int): The first ``start_steps`` env steps act uniformly at random over
            the action space, so the buffer starts with varied data.

        update_after (int): Env steps before the first update, so the first batches are
            drawn from more than a handful of transitions.

        update_every (int): Updates come in rounds, one every ``update_every`` env steps,
            each of ``update_every`` updates: one update per env step on average, whatever
            this value.

        num_test_episodes (int): Number of episodes to test the deterministic policy (the
            squashed mean ``mu``) at the end of each epoch.

        max_ep_len (int): The longest an episode may run. Reaching it is a
            truncation, not a terminal state: the target bootstraps through it.

        logger_kwargs (dict): Passed to ``EpochLogger`` (``output_dir``,
            ``exp_name``, ...).

        save_freq (int): Save the model every ``save_freq`` epochs.

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
    ac_kwargs = run.ac_kwargs  # with the action space the policy's output is scaled to
    if target_entropy is None:
        target_entropy = 0.98 * np.log(run.act_dim) if run.discrete else -run.act_dim

    with run.graph.as_default():
        # Placeholders for a batch of transitions
        x_ph, a_ph, x2_ph, r_ph, d_ph = core.placeholders(run.obs_dim, run.act_dim,
                                                          run.obs_dim, None, None)

        # The main networks, on the placeholders
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
                # Both critics at the policy's sampled action: the policy's objective
                _, _, _, q1_pi, q2_pi = actor_critic(x, pi, **ac_kwargs)
                # A fresh action at s' and its log-probability: the critics' target
                _, pi_next, logp_pi_next, _, _ = actor_critic(x2, a, **ac_kwargs)
            with tf.variable_scope('target', reuse=True):
                # The target critics at that action
                _, _, _, q1_targ, q2_targ = actor_critic(x2, pi_next, **ac_kwargs)
            alpha_t, losses = temperature(logp_pi)

            # The smaller of the two critics, at s and at s'
            min_q_pi = tf.minimum(q1_pi, q2_pi)
            min_q_targ = tf.minimum(q1_targ, q2_targ)

            # The soft Bellman target: the smaller target critic minus alpha times
            # the log-probability of the next action. d is gymnasium's `terminated`: a
            # truncated episode still bootstraps.
            q_backup = tf.stop_gradient(batch['rews'] + gamma * (1 - batch['done']) * (
                min_q_targ - alpha_t * logp_pi_next))

            # The policy's and the critics' losses
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

            # Every loss comes from the parameters before the update: the gradients are
            # taken at once, and the steps that write them wait for all the losses (policy,
            # value and, with alpha='auto', temperature), as in one Spinning Up sess.run
            pi_grads = pi_optimizer.compute_gradients(losses['pi'], var_list=pi_vars)
            value_grads = value_optimizer.compute_gradients(losses['value'],
                                                            var_list=value_vars)
            if alpha == 'auto':
                alpha_grads = alpha_optimizer.compute_gradients(
                    losses['alpha'], var_list=core.get_trainable_vars('alpha'))
            with tf.control_dependencies(list(losses.values())):
                train_pi_op = pi_optimizer.apply_gradients(pi_grads)
                train_value_op = value_optimizer.apply_gradients(value_grads)
                ops = dict(train_pi=train_pi_op, train_value=train_value_op)
                if alpha == 'auto':
                    ops['train_alpha'] = alpha_optimizer.apply_gradients(alpha_grads)

            # Polyak averaging for the targets, reading what both steps wrote
            with tf.control_dependencies([train_pi_op, train_value_op]):
                ops['target'] = tf.group([
                    tf.assign(v_targ, polyak * v_targ + (1 - polyak) * v_main)
                    for v_main, v_targ in core.paired_vars('main', 'target')])
            return dict(step=dict(diagnostics, **ops))

        def update(j):
            """Every update runs the one list."""
            return ('step',)

        # The targets start as copies of the main networks
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
