"""Proximal Policy Optimization (by clipping), as a TF1 static graph.

Read top to bottom, as Spinning Up's ``ppo.py``: inputs, actor-critic, the clipped surrogate
objective, optimizers, then the update of each epoch with its early stop on KL. The
on-policy loop (``spinup_tf.loops.on_policy``) collects the epochs and runs the update's
steps through the engine that ``fused`` picks.
"""
from spinup_tf.utils.tf1 import tf, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.engine.steps import Minimize, Repeat
from spinup_tf.loops.on_policy import Run


def ppo(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, clip_ratio=0.2, pi_lr=3e-4, vf_lr=1e-3,
        train_pi_iters=80, train_v_iters=80, lam=0.97, max_ep_len=1000, target_kl=0.01,
        logger_kwargs=dict(), save_freq=10, **options):
    """Proximal Policy Optimization (by clipping), with early stopping based on approximate KL.

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space (or uint8 images, read
            through ``core.nature_cnn``) and a Discrete or
            flat Box action space.

        actor_critic: A function which takes in placeholder symbols for state, ``x_ph``, and
            action, ``a_ph``, and returns the outputs described in
            :func:`spinup_tf.algos.distributions.mlp_actor_critic`: ``pi`` (batch, act_dim) sampled
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

        options: the on-policy loop's options (``spinup_tf.loops.on_policy.OPTIONS``):
            ``fused`` (True, the default: the fast engine, ``spinup_tf.fast.on_policy``: a
            numpy mirror of the policy acts, pulled once per epoch, and the
            ``train_pi_iters`` policy steps, with their early stop on KL, run as one
            ``sess.run``, as do the ``train_v_iters`` value steps; False: Spinning Up's loop,
            one ``sess.run`` per env step and per gradient step); ``num_test_episodes``,
            ``clip_actions``, ``tensorboard``, ``normalize_obs``, ``normalize_rew``; and
            ``hooks`` (``spinup_tf.loops.hooks``) where a run must differ from Spinning Up's
            loop.
    """
    run = Run('ppo', env_fn, locals())  # env, checks, logger and config.json, seeded graph

    with run.graph.as_default():
        # Inputs to computation graph (x_ph, a_ph, adv_ph, ret_ph, logp_old_ph, by name), and
        # the main outputs from computation graph on them (they act, and are saved);
        # ac(batch): the same actor-critic on any batch
        batch, outputs, ac = run.inputs()

        # PPO objectives, as functions of a batch: an engine builds them where it trains
        def pi_objective(batch):
            logp, adv = ac(batch)[1], batch['adv']
            ratio = tf.exp(logp - batch['logp_old'])  # pi(a|s) / pi_old(a|s)
            min_adv = tf.where(adv > 0, (1 + clip_ratio) * adv, (1 - clip_ratio) * adv)
            pi_loss = -tf.reduce_mean(tf.minimum(ratio * adv, min_adv))

            # Info (useful to watch during learning)
            approx_kl = tf.reduce_mean(batch['logp_old'] - logp)  # a sample estimate for KL
            approx_ent = tf.reduce_mean(-logp)                    # a sample estimate for entropy
            clipped = tf.logical_or(ratio > (1 + clip_ratio), ratio < (1 - clip_ratio))
            clipfrac = tf.reduce_mean(tf.cast(clipped, tf.float32))
            return pi_loss, dict(KL=approx_kl, Entropy=approx_ent, ClipFrac=clipfrac)

        def v_objective(batch):
            v_loss = tf.reduce_mean((batch['ret'] - ac(batch)[-1]) ** 2)
            return v_loss, dict(LossV=v_loss)

        # The same on the placeholders, for the log
        (pi_loss, pi_info), (v_loss, _) = pi_objective(batch), v_objective(batch)

        # Optimizers: up to train_pi_iters policy steps, each measuring the KL before its
        # change, stopped once that KL passes 1.5 * target_kl; then train_v_iters value steps
        # (Adam: run.optimizer(lr) is tf.train.AdamOptimizer(learning_rate=lr))
        train_pi = Repeat(Minimize(pi_objective, run.optimizer(pi_lr), get_trainable_vars('pi')),
                          train_pi_iters, stop=lambda pi_info: pi_info['KL'] > 1.5 * target_kl)
        train_v = Repeat(Minimize(v_objective, run.optimizer(vf_lr), get_trainable_vars('v')),
                         train_v_iters)

    def update(train, evaluate):
        pi_l_old, v_l_old, ent = evaluate([pi_loss, v_loss, pi_info['Entropy']])

        # Training
        i, stopped = train(train_pi)
        if stopped:
            run.logger.log('Early stopping at step %d due to reaching max kl.' % i, 'yellow')
        train(train_v)

        # Log changes from update
        pi_l_new, v_l_new, kl, cf = evaluate([pi_loss, v_loss, pi_info['KL'],
                                              pi_info['ClipFrac']])
        return dict(LossPi=pi_l_old, LossV=v_l_old, KL=kl, Entropy=ent, ClipFrac=cf,
                    DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old),
                    StopIter=i)

    def log_diagnostics(logger):
        for key in ('LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'Entropy', 'KL',
                    'ClipFrac', 'StopIter'):
            logger.log_tabular(key, average_only=True)

    run.train(update, batch, outputs, log_diagnostics, steps=[train_pi, train_v])
