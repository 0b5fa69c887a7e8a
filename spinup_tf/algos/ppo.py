"""Proximal Policy Optimization (by clipping), as a TF1 static graph.

Read top to bottom, as Spinning Up's ``ppo.py``: inputs and actor-critic, the clipped
surrogate objective and the optimizers' train ops (a function of a batch, :func:`train_ops`
inside :func:`ppo`, called on the placeholders), then the update of each epoch with its early
stop on KL, which names the ``sess.run`` lists it runs. The on-policy loop
(``spinup_tf.loops.on_policy``) collects the epochs and runs the update, plainly or through
the fast engine (``fused``).
"""
from spinup_tf.utils.tf1 import tf, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.loops.on_policy import Run


def ppo(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, clip_ratio=0.2, pi_lr=3e-4, vf_lr=1e-3,
        train_pi_iters=80, train_v_iters=80, lam=0.97, max_ep_len=1000, target_kl=0.01,
        logger_kwargs=dict(), save_freq=10, **options):
    """Proximal Policy Optimization (by clipping), with early stopping based on approximate KL.

    Args:
        env_fn: Makes a fresh env each time it is called. The env follows gymnasium's API, with
            a flat Box observation space (or uint8 images, read through ``core.nature_cnn``) and
            a Discrete or flat Box action space.

        actor_critic: Builds the actor-critic. Called with the observation and action tensors
            ``x_ph``, ``a_ph``, it returns the outputs described in
            :func:`spinup_tf.algos.distributions.mlp_actor_critic`: ``pi`` (batch, act_dim) sampled
            actions, ``logp`` (batch,) log-likelihood of ``a_ph``, ``logp_pi`` (batch,) of
            ``pi``, ``info``/``info_phs``/``d_kl`` (unused by PPO) and ``v`` (batch,) values.

        ac_kwargs (dict): Keyword arguments passed on to ``actor_critic`` (``hidden_sizes``,
            ``activation``).

        seed (int): Seeds numpy, the graph's random draws and the envs.

        steps_per_epoch (int): Env steps collected per epoch; each epoch ends with one update
            and one row of ``progress.txt``.

        epochs (int): How many epochs the run lasts (one policy update each).

        gamma (float): The discount :math:`\\gamma` in :math:`[0, 1]`.

        clip_ratio (float): The clip :math:`\\epsilon` of the probability ratio in PPO's
            objective: once the ratio leaves :math:`[1-\\epsilon, 1+\\epsilon]` in the direction
            the advantage favours, the objective stops rewarding further change (typically 0.1
            to 0.3).

        pi_lr (float): Adam's learning rate for the policy.

        vf_lr (float): Adam's learning rate for the value function.

        train_pi_iters (int): At most this many policy steps per epoch; the KL early stop may
            end them sooner.

        train_v_iters (int): Value-function steps per epoch, each on the whole epoch's data.

        lam (float): The :math:`\\lambda` of GAE-:math:`\\lambda` advantages, in :math:`[0, 1]`: 0
            is the one-step TD error, 1 the discounted return minus the value.

        max_ep_len (int): The longest an episode may run. Reaching it is a truncation, not a
            terminal state: the value target bootstraps from V(s_T).

        target_kl (float): The KL between the old and the new policy that an update aims at: the
            policy steps of an epoch stop once the approximate KL exceeds ``1.5 * target_kl``
            (typically 0.01 to 0.05).

        logger_kwargs (dict): Passed to ``EpochLogger`` (``output_dir``, ``exp_name``, ...).

        save_freq (int): Save the model every ``save_freq`` epochs (and at the last).

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
        # Placeholders for a batch of transitions (x_ph, a_ph, adv_ph, ret_ph, logp_old_ph, by
        # name), and the main outputs from computation graph on them (they act, and are saved);
        # ac(batch): the same actor-critic on any batch, on the same variables
        batch, outputs, ac = run.inputs()

        # Optimizers (run.optimizer(lr) is tf.train.AdamOptimizer(learning_rate=lr))
        pi_optimizer = run.optimizer(pi_lr)
        vf_optimizer = run.optimizer(vf_lr)

        def train_ops(batch):
            """PPO on ``batch`` (``x``, ``a``, ``adv``, ``ret``, ``logp_old``: tensors of
            shapes (B, obs_dim), (B, act_dim) or (B,), (B,), (B,), (B,)), as the
            ``sess.run`` lists of the update: ``'pi'``, one policy step with the KL measured
            before it and ``stop``, whether the policy steps end after it; ``'v'``, one value
            step; ``'info'``, what the log measures before and after the update.

            With the probability ratio :math:`r_t = \\pi_\\theta(a_t|s_t) /
            \\pi_{\\theta_{old}}(a_t|s_t)` and the clip :math:`\\epsilon` (``clip_ratio``),

            .. math:: L^{\\pi} = -\\frac{1}{B} \\sum_t \\min\\big(r_t \\hat A_t,\\;
                \\text{clip}(r_t, 1-\\epsilon, 1+\\epsilon) \\hat A_t\\big),
                \\qquad L^V = \\frac{1}{B} \\sum_t (\\hat R_t - V_\\phi(s_t))^2

            where the clipped term equals :math:`(1+\\epsilon) \\hat A_t` for
            :math:`\\hat A_t > 0` and :math:`(1-\\epsilon) \\hat A_t` otherwise (the
            ``tf.where`` below).
            """
            _, logp, _, _, _, _, v = ac(batch)
            adv = batch['adv']

            # PPO objectives
            ratio = tf.exp(logp - batch['logp_old'])  # pi(a|s) / pi_old(a|s)
            min_adv = tf.where(adv > 0, (1 + clip_ratio) * adv, (1 - clip_ratio) * adv)
            pi_loss = -tf.reduce_mean(tf.minimum(ratio * adv, min_adv))
            v_loss = tf.reduce_mean((batch['ret'] - v) ** 2)

            # Info (watched during learning): sample estimates of KL(old || new) and
            # entropy, and the fraction of ratios outside [1 - eps, 1 + eps]
            approx_kl = tf.reduce_mean(batch['logp_old'] - logp)
            approx_ent = tf.reduce_mean(-logp)
            clipped = tf.logical_or(ratio > (1 + clip_ratio), ratio < (1 - clip_ratio))
            clipfrac = tf.reduce_mean(tf.cast(clipped, tf.float32))

            # One gradient step of each optimizer, on its own network's variables
            train_pi = pi_optimizer.minimize(pi_loss, var_list=get_trainable_vars('pi'))
            train_v = vf_optimizer.minimize(v_loss, var_list=get_trainable_vars('v'))

            # Early stopping: the policy steps end after the first whose KL passes
            # 1.5 * target_kl. approx_kl comes from the forward pass the gradient is taken
            # on, so it measures the parameters before train_pi writes them. (Compared in
            # float64, as Spinning Up compares its averaged KL.)
            kl_too_far = tf.cast(approx_kl, tf.float64) > 1.5 * target_kl
            return dict(pi=dict(train=train_pi, KL=approx_kl, stop=kl_too_far),
                        v=dict(train=train_v),
                        info=dict(LossPi=pi_loss, LossV=v_loss, KL=approx_kl,
                                  Entropy=approx_ent, ClipFrac=clipfrac))

        # The graph on the placeholders: the lists the update runs
        lists = train_ops(batch)

    def update(sess_run, train):
        """One epoch's update. ``sess_run(fetches)`` is ``sess.run(fetches,
        feed_dict=inputs)`` on the epoch's data; ``train(fetches, n)`` runs up to ``n``
        gradient steps of a list, stopping after one whose ``stop`` is true, and returns
        the last step's index and whether it stopped (``spinup_tf.loops.on_policy``)."""
        old = sess_run(lists['info'])

        # Training
        i, stopped = train(lists['pi'], train_pi_iters)
        if stopped:
            run.logger.log('Policy steps stopped after step %d: the KL passed 1.5 * target_kl.'
                           % i, 'yellow')
        train(lists['v'], train_v_iters)

        # The changes the update made, for the log
        new = sess_run(lists['info'])
        return dict(LossPi=old['LossPi'], LossV=old['LossV'], KL=new['KL'],
                    Entropy=old['Entropy'], ClipFrac=new['ClipFrac'],
                    DeltaLossPi=(new['LossPi'] - old['LossPi']),
                    DeltaLossV=(new['LossV'] - old['LossV']), StopIter=i)

    def log_diagnostics(logger):
        for key in ('LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'Entropy', 'KL',
                    'ClipFrac', 'StopIter'):
            logger.log_tabular(key, average_only=True)

    run.train(train_ops, lists, update, batch, outputs, log_diagnostics)
