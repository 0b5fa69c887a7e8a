"""Deep Q-Network (DQN), with Double DQN and dueling networks as flags, as a TF1 static graph.

Read top to bottom: placeholders, main and target Q networks, then ``train_ops(batch)``: the
TD target, its loss and the Adam train op (clipped by global norm when asked); the target
network's copy as a ``tf.group`` of ``tf.assign``, and the exploration schedule. The loop
(``spinup_tf.loops.off_policy``) runs it, as it runs
DDPG, TD3 and SAC.
"""

from spinup_tf.utils.tf1 import tf
from spinup_tf.utils.errors import UserInputError
from spinup_tf.algos import core
from spinup_tf.loops import off_policy

LOSSES = ('huber', 'mse')


def linear_schedule(start, end, duration):
    """``epsilon(t)``: from ``start`` at step 0 to ``end`` at step ``duration``, linearly, then
    ``end`` (SB3's and CleanRL's exploration schedule).

    .. math:: \\epsilon(t) = \\text{start} + (\\text{end} - \\text{start})
        \\min(1, t / \\text{duration})
    """
    def epsilon(t):
        if duration <= 0:
            return end
        return start + (end - start) * min(1.0, t / duration)
    return epsilon


def dqn(env_fn, actor_critic=core.mlp_q_network, ac_kwargs=None, seed=0,
        steps_per_epoch=10000, epochs=10, replay_size=int(1e6), gamma=0.99, polyak=0.0,
        lr=1e-4, batch_size=32, start_steps=100, update_after=100, update_every=4,
        gradient_steps=1, target_update_interval=10000, exploration_fraction=0.1,
        eps_start=1.0, eps_end=0.05, double=False, dueling=False, loss='huber',
        max_grad_norm=10.0, num_test_episodes=10, max_ep_len=1000, logger_kwargs=None,
        save_freq=1, **options):
    """Deep Q-Network (DQN; Mnih et al. 2015), optionally Double (van Hasselt et al. 2016)
    and dueling (Wang et al. 2016).

    The defaults are Stable-Baselines3's (``DQN``: learning rate 1e-4, batch 32, 4 env steps
    per gradient step, a hard target copy every 10,000 steps, Huber loss, gradients clipped
    to norm 10, epsilon from 1 to 0.05 over the first 10 % of the run, a [64, 64] ReLU MLP),
    over 100,000 steps. CleanRL's ``dqn.py`` differs in: MSE loss, no clipping, a [120, 84]
    network, batch 128, a target copy every 500 steps, learning from 10,000 steps and
    epsilon over the first half. rl-baselines3-zoo's tuned settings per env are what
    ``bench/dqn_vs_sb3.py`` runs both with.

    Args:
        env_fn: Makes a fresh env each time it is called (twice: one env to train on, one
            to test on). The env follows gymnasium's API, with a flat Box observation
            space (or uint8 images, read
            through ``core.nature_cnn``) and a ``Discrete``
            action space.

        actor_critic: The Q network (named ``actor_critic`` as every algorithm's network is,
            so ``run.py``, ``resume`` and ``test_policy`` treat it alike; DQN's actor is the
            greedy argmax of its critic). Called inside a variable scope with the observation tensor
            ``x_ph`` and the one-hot action tensor ``a_ph``, it returns:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``greedy``   (batch,)          | argmax_a Q(x, a), the greedy action.
            ``q_all``    (batch, n_acts)   | Q(x, .) for every action.
            ``q``        (batch,)          | Q(x, a) for the actions in ``a_ph``.
            ===========  ================  ======================================

        ac_kwargs (dict): Keyword arguments passed on to the network (``hidden_sizes``,
            ``activation``).

        seed (int): Seeds numpy, the graph's random draws and the envs.

        steps_per_epoch (int): Env steps (one action, one transition) per epoch; an epoch
            ends with the test episodes and one row of ``progress.txt``.

        epochs (int): How many epochs the run lasts.

        replay_size (int): Transitions the replay buffer holds; the oldest go
            first once it is full.

        gamma (float): The discount :math:`\\gamma` in :math:`[0, 1]`.

        polyak (float): Interpolation factor of the target network's update, made every
            ``target_update_interval`` env steps:

            .. math:: \\theta_{\\text{targ}} \\leftarrow
                \\rho \\theta_{\\text{targ}} + (1-\\rho) \\theta

            where :math:`\\rho` is polyak. 0 (the default) is DQN's hard copy; SB3's ``tau``
            is ``1 - polyak``.

        lr (float): Learning rate of Adam.

        batch_size (int): Transitions in each update's batch.

        start_steps (int): Number of steps of uniform-random actions at the start (SB3's
            ``learning_starts`` acts at random too).

        update_after (int): Env steps before the first update.

        update_every (int): Number of env interactions between two rounds of updates (SB3's
            ``train_freq``).

        gradient_steps (int): Gradient steps in each round of updates (SB3's
            ``gradient_steps``): the ratio of env steps to gradient steps is
            ``update_every / gradient_steps``, unlike Spinning Up's other algorithms, where
            it is 1.

        target_update_interval (int): Env steps between two target network updates (once
            updates have started).

        exploration_fraction (float): The fraction of the run's steps (``steps_per_epoch *
            epochs``) over which epsilon falls from ``eps_start`` to ``eps_end``.

        eps_start (float): Epsilon-greedy's first probability of a uniform-random action.

        eps_end (float): Its last, from ``exploration_fraction`` of the run on.

        double (bool): Double DQN's target: the main network chooses the next action, the
            target network values it.

            .. math:: y = r + \\gamma (1 - d) \\, Q_{\\text{targ}}(s', \\arg\\max_{a'}
                Q(s', a'))

            instead of DQN's :math:`y = r + \\gamma (1 - d) \\max_{a'} Q_{\\text{targ}}(s',
            a')`.

        dueling (bool): The dueling network's value and advantage heads (see
            ``core.mlp_q_network``).

        loss (str): ``'huber'`` (Huber with threshold 1, as SB3's ``smooth_l1_loss`` and the
            Nature paper's error clipping) or ``'mse'`` (CleanRL's) of the TD error.

        max_grad_norm (float): The gradients' global norm is clipped to it (SB3: 10); 0 turns
            clipping off.

        num_test_episodes (int): Number of episodes to test the greedy policy at the end of
            each epoch.

        max_ep_len (int): The longest an episode may run. Reaching it is a
            truncation, not a terminal state: the target bootstraps through it.

        logger_kwargs (dict): Passed to ``EpochLogger`` (``output_dir``,
            ``exp_name``, ...).

        save_freq (int): Save the model every ``save_freq`` epochs.

        options: the off-policy loop's options (``spinup_tf.loops.off_policy.OPTIONS``):
            ``fused`` (the fast engine, default True), ``update_at_episode_end``,
            ``updates_per_step``, ``videos``, ``tensorboard``, ``normalize_obs``,
            ``normalize_rew``; and ``hooks`` (``spinup_tf.loops.hooks``).
    """
    if loss not in LOSSES:
        raise UserInputError('loss must be one of %s, got %r' % (', '.join(LOSSES), loss))
    if isinstance(max_grad_norm, bool) or not isinstance(max_grad_norm, (int, float)) \
            or not max_grad_norm >= 0:
        raise UserInputError('max_grad_norm must be a number >= 0, got %r' % (max_grad_norm,))
    if 'dueling' in (ac_kwargs or {}):
        raise UserInputError('dueling is a flag of dqn (--dueling True), not an ac_kwargs key')
    run = off_policy.Run('dqn', env_fn, dict(locals()))
    ac_kwargs = dict(run.ac_kwargs, dueling=dueling)

    with run.graph.as_default():
        # Placeholders for a batch of transitions (actions as one-hot rows)
        x_ph, a_ph, x2_ph, r_ph, d_ph = core.placeholders(run.obs_dim, run.act_dim,
                                                          run.obs_dim, None, None)

        # The main networks, on the placeholders
        with tf.variable_scope('main'):
            greedy, q_all, q = actor_critic(x_ph, a_ph, **ac_kwargs)

        # Target network: the same function in its own scope
        with tf.variable_scope('target'):
            actor_critic(x2_ph, a_ph, **ac_kwargs)

        # Adam (run.optimizer(lr) is tf.train.AdamOptimizer(lr)) on the Q network's variables
        q_optimizer = run.optimizer(lr)
        q_vars = core.get_trainable_vars('main/q')

        def train_ops(batch):
            """One DQN update on ``batch`` (obs1, obs2, acts, rews, done tensors), as the one
            list Spinning Up-style code passes to ``sess.run``: a gradient step of the TD
            loss."""
            x, x2, a = batch['obs1'], batch['obs2'], batch['acts']
            with tf.variable_scope('main', reuse=True):
                _, _, q = actor_critic(x, a, **ac_kwargs)
                if double:  # the main network chooses a'
                    greedy_next, _, _ = actor_critic(x2, a, **ac_kwargs)
            with tf.variable_scope('target', reuse=True):
                _, q_targ_all, _ = actor_critic(x2, a, **ac_kwargs)
            if double:  # ... and the target network values it
                q_next = tf.reduce_sum(q_targ_all * tf.one_hot(greedy_next, run.act_dim), axis=1)
            else:
                q_next = tf.reduce_max(q_targ_all, axis=1)

            # Bellman backup. d is gymnasium's `terminated`: a truncated episode still
            # bootstraps.
            backup = tf.stop_gradient(batch['rews'] + gamma * (1 - batch['done']) * q_next)
            if loss == 'huber':
                q_loss = tf.reduce_mean(tf.losses.huber_loss(
                    backup, q, delta=1.0, reduction=tf.losses.Reduction.NONE))
            else:
                q_loss = tf.reduce_mean((q - backup) ** 2)

            if max_grad_norm:
                # Rescale the gradients to global norm max_grad_norm when theirs is larger,
                # g <- g * min(1, c / ||g||), as SB3's DQN does
                grads, variables = zip(*q_optimizer.compute_gradients(q_loss, var_list=q_vars))
                grads, _ = tf.clip_by_global_norm(list(grads), max_grad_norm)
                train_q_op = q_optimizer.apply_gradients(list(zip(grads, variables)))
            else:
                train_q_op = q_optimizer.minimize(q_loss, var_list=q_vars)
            return dict(q=dict(LossQ=q_loss, QVals=q, train=train_q_op))

        def update(j):
            """Every update runs the one list."""
            return ('q',)

        # Target network: initialised to match main, then updated every
        # target_update_interval env steps (polyak 0, the default, makes it a hard copy)
        target_init = tf.group([tf.assign(v_targ, v_main)
                                for v_main, v_targ in core.paired_vars('main', 'target')])
        target_update = tf.group([tf.assign(v_targ, polyak * v_targ + (1 - polyak) * v_main)
                                  for v_main, v_targ in core.paired_vars('main', 'target')])

    run.setup.count_vars(['main/q'], ['q'])

    def log_diagnostics(logger):
        logger.log_tabular('QVals', with_min_and_max=True)
        logger.log_tabular('LossQ', average_only=True)

    # Epsilon-greedy exploration: after start_steps, a uniform-random action with probability
    # epsilon(t), else the greedy one (the loop logs it as the Epsilon column)
    epsilon = linear_schedule(eps_start, eps_end,
                              exploration_fraction * steps_per_epoch * epochs)

    batch = dict(obs1=x_ph, obs2=x2_ph, acts=a_ph, rews=r_ph, done=d_ph)
    run.train(train_ops, update, batch, greedy, log_diagnostics, epsilon=epsilon,
              target_update=(target_update, target_update_interval),
              saved=(dict(x=x_ph, a=a_ph), dict(greedy=greedy, q_all=q_all)),
              init_ops=[target_init])
