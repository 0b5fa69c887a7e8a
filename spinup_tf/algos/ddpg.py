"""Deep Deterministic Policy Gradient (DDPG), as a TF1 static graph.

Read top to bottom: placeholders, the main and target networks, the two optimizers, then
``train_ops(batch)``: the Q loss and ``train_q_op``, the policy loss and ``train_pi_op``
(``optimizer.minimize``), the polyak ``target_update`` (a ``tf.group`` of ``tf.assign``), as
the ``sess.run`` lists of one update; ``update(j)`` names the lists an update runs. The loop
(``spinup_tf.loops.off_policy``) runs them.
"""
from spinup_tf.utils.tf1 import tf
from spinup_tf.algos import core
from spinup_tf.loops import off_policy


def ddpg(env_fn, actor_critic=core.mlp_ddpg_actor_critic, ac_kwargs=None, seed=0,
         steps_per_epoch=4000, epochs=100, replay_size=int(1e6), gamma=0.99, polyak=0.995,
         pi_lr=1e-3, q_lr=1e-3, batch_size=100, start_steps=10000, update_after=1000,
         update_every=50, act_noise=0.1, num_test_episodes=10, max_ep_len=1000,
         logger_kwargs=None, save_freq=1, **options):
    """Deep Deterministic Policy Gradient (DDPG).

    Args:
        env_fn: Makes a fresh env each time it is called (twice: one env to train on, one
            to test on). The env follows gymnasium's API, with a flat Box observation
            space and a bounded flat Box action space.

        actor_critic: Builds the networks. Called inside a variable scope with the observation
            tensor ``x_ph`` and the action tensor ``a_ph``, it returns these tensors:

            ===========  ================  ======================================
            Symbol       Shape             Description
            ===========  ================  ======================================
            ``pi``       (batch, act_dim)  | The policy's action at each
                                           | observation, with no noise.
            ``q``        (batch,)          | The critic's Q(x, a) for the rows of
                                           | ``x_ph`` and ``a_ph``.
            ``q_pi``     (batch,)          | The critic at the policy's own
                                           | action: q(x, pi(x)).
            ===========  ================  ======================================

            Its variables come from ``tf.get_variable`` under the sub-scope ``pi`` (the
            policy) and any others (the critic). A registered name also works.

        ac_kwargs (dict): Keyword arguments passed on to ``actor_critic``
            (``hidden_sizes``, ``activation``).

        seed (int): Seeds numpy, the graph's random draws and the envs.

        steps_per_epoch (int): Env steps (one action, one transition) per epoch; an epoch
            ends with the test episodes and one row of ``progress.txt``.

        epochs (int): How many epochs the run lasts.

        replay_size (int): Transitions the replay buffer holds; the oldest go
            first once it is full.

        gamma (float): The discount :math:`\\gamma` in :math:`[0, 1]`.

        polyak (float): How much of its old value a target variable keeps at each update:

            .. math:: \\theta_{\\text{targ}} \\leftarrow
                \\rho \\theta_{\\text{targ}} + (1-\\rho) \\theta

            with :math:`\\rho` = polyak in :math:`[0, 1]`; near 1, the targets trail the main
            networks slowly.

        pi_lr (float): Adam's learning rate for the policy.

        q_lr (float): Adam's learning rate for the critics.

        batch_size (int): Transitions in each update's batch.

        start_steps (int): The first ``start_steps`` env steps act uniformly at random over
            the action space, so the buffer starts with varied data.

        update_after (int): Env steps before the first update, so the first batches are
            drawn from more than a handful of transitions.

        update_every (int): Updates come in rounds, one every ``update_every`` env steps,
            each of ``update_every`` updates: one update per env step on average, whatever
            this value.

        act_noise (float): Scale of the exploration noise added to the policy at training
            time, in action units (the stddev of Gaussian noise; see the ``noise`` option).

        num_test_episodes (int): Noise-free episodes run at the end of every epoch, on
            the test env.

        max_ep_len (int): The longest an episode may run. Reaching it is a
            truncation, not a terminal state: the target bootstraps through it.

        logger_kwargs (dict): Passed to ``EpochLogger`` (``output_dir``,
            ``exp_name``, ...).

        save_freq (int): Save the model every ``save_freq`` epochs (and the checkpoint a
            killed run resumes from).

        options: the off-policy loop's options (``spinup_tf.loops.off_policy.OPTIONS``):
            ``fused`` (the fast engine, default True), ``noise`` (``'gaussian'``, ``'ou'``,
            ``'pink'``, ``'uniform'``), ``update_at_episode_end``, ``updates_per_step``,
            ``videos``, ``tensorboard``, ``normalize_obs``, ``normalize_rew``; and ``hooks``
            (``spinup_tf.loops.hooks``) where a run must differ from Spinning Up's loop (a
            source document's quirks: ``spinup_tf.reproductions``).
    """
    run = off_policy.Run('ddpg', env_fn, dict(locals()))
    ac_kwargs = run.ac_kwargs  # with the action space the policy's output is scaled to

    with run.graph.as_default():
        # Placeholders for a batch of transitions
        x_ph, a_ph, x2_ph, r_ph, d_ph = core.placeholders(run.obs_dim, run.act_dim,
                                                          run.obs_dim, None, None)

        # The main networks, on the placeholders
        with tf.variable_scope('main'):
            pi, q, q_pi = actor_critic(x_ph, a_ph, **ac_kwargs)

        # Target networks: the same function in its own scope (built on batches in train_ops)
        with tf.variable_scope('target'):
            actor_critic(x2_ph, a_ph, **ac_kwargs)

        # One Adam per train op (run.optimizer(lr) is tf.train.AdamOptimizer(lr)), and the
        # variables each one trains, picked by exact scope prefix
        pi_optimizer = run.optimizer(pi_lr)
        q_optimizer = run.optimizer(q_lr)
        pi_vars = core.get_trainable_vars('main/pi')
        q_vars = core.get_trainable_vars('main/q')

        def train_ops(batch):
            """One DDPG update on ``batch`` (obs1, obs2, acts, rews, done tensors), as the two
            lists Spinning Up passes to ``sess.run``: ``'q'`` and ``'pi'``. ``Backup``, the
            Bellman target, is fetched but not logged (a reproduction's columns read it)."""
            with tf.variable_scope('main', reuse=True):
                _, q, _ = actor_critic(batch['obs1'], batch['acts'], **ac_kwargs)
            with tf.variable_scope('target', reuse=True):
                # Only q_targ(s', pi_targ(s')) is used: the action input does not matter
                _, _, q_pi_targ = actor_critic(batch['obs2'], batch['acts'], **ac_kwargs)

            # Bellman target; d is gymnasium's `terminated` (a truncated episode still
            # bootstraps)
            backup = tf.stop_gradient(batch['rews'] + gamma * (1 - batch['done']) * q_pi_targ)
            q_loss = tf.reduce_mean((q - backup) ** 2)
            train_q_op = q_optimizer.minimize(q_loss, var_list=q_vars)

            # The policy's loss has a forward pass of its own: its list runs after the Q
            # list, so it reads the critic that train_q_op left
            with tf.variable_scope('main', reuse=True):
                _, _, q_pi = actor_critic(batch['obs1'], batch['acts'], **ac_kwargs)
            pi_loss = -tf.reduce_mean(q_pi)
            train_pi_op = pi_optimizer.minimize(pi_loss, var_list=pi_vars)

            # Polyak averaging of the targets, reading the policy that train_pi_op wrote
            with tf.control_dependencies([train_pi_op]):
                target_update = tf.group([
                    tf.assign(v_targ, polyak * v_targ + (1 - polyak) * v_main)
                    for v_main, v_targ in core.paired_vars('main', 'target')])

            return dict(q=dict(LossQ=q_loss, QVals=q, Backup=backup, train=train_q_op),
                        pi=dict(LossPi=pi_loss, train=train_pi_op, target=target_update))

        def update(j):
            """The lists update ``j`` runs: a Q step, then a policy step and the targets."""
            return ('q', 'pi')

        # The targets start as copies of the main networks
        target_init = tf.group([tf.assign(v_targ, v_main)
                                for v_main, v_targ in core.paired_vars('main', 'target')])

    run.setup.count_vars(['main/pi', 'main/q', 'main'], ['pi', 'q', 'total'])

    def log_diagnostics(logger):
        logger.log_tabular('QVals', with_min_and_max=True)
        logger.log_tabular('LossPi', average_only=True)
        logger.log_tabular('LossQ', average_only=True)

    batch = dict(obs1=x_ph, obs2=x2_ph, acts=a_ph, rews=r_ph, done=d_ph)
    run.train(train_ops, update, batch, pi, log_diagnostics,
              saved=(dict(x=x_ph, a=a_ph), dict(pi=pi, q=q)), init_ops=[target_init])
