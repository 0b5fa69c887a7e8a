"""Vanilla Policy Gradient (with GAE-lambda advantages), as a TF1 static graph.

Read top to bottom, as Spinning Up's ``vpg.py``: inputs and actor-critic, the objectives and
the optimizers' train ops (a function of a batch, :func:`train_ops` inside :func:`vpg`, called
on the placeholders), then the update of each epoch, which names the ``sess.run`` lists it
runs. The on-policy loop (``spinup_tf.loops.on_policy``) collects the epochs and runs the
update, plainly or through the fast engine (``fused``).
"""
from spinup_tf.utils.tf1 import tf, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.loops.on_policy import Run


def vpg(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, pi_lr=3e-4, vf_lr=1e-3,
        train_v_iters=80, lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10,
        **options):
    """Vanilla Policy Gradient (with GAE-Lambda for advantage estimation).

    Args:
        env_fn: Makes a fresh env each time it is called. The env follows gymnasium's API, with
            a flat Box observation space (or uint8 images, read through ``core.nature_cnn``) and
            a Discrete or flat Box action space.

        actor_critic: Builds the actor-critic. Called with the observation and action tensors
            ``x_ph``, ``a_ph``, it returns the outputs described in
            :func:`spinup_tf.algos.distributions.mlp_actor_critic`: ``pi`` (batch, act_dim) sampled
            actions, ``logp`` (batch,) log-likelihood of ``a_ph``, ``logp_pi`` (batch,) of
            ``pi``, ``info``/``info_phs``/``d_kl`` (unused by VPG) and ``v`` (batch,) values.

        ac_kwargs (dict): Keyword arguments passed on to ``actor_critic`` (``hidden_sizes``,
            ``activation``).

        seed (int): Seeds numpy, the graph's random draws and the envs.

        steps_per_epoch (int): Env steps collected per epoch; each epoch ends with one update
            and one row of ``progress.txt``.

        epochs (int): How many epochs the run lasts (one policy update each).

        gamma (float): The discount :math:`\\gamma` in :math:`[0, 1]`.

        pi_lr (float): Adam's learning rate for the policy.

        vf_lr (float): Adam's learning rate for the value function.

        train_v_iters (int): Value-function steps per epoch, each on the whole epoch's data.

        lam (float): The :math:`\\lambda` of GAE-:math:`\\lambda` advantages, in :math:`[0, 1]`: 0
            is the one-step TD error, 1 the discounted return minus the value.

        max_ep_len (int): The longest an episode may run. Reaching it is a truncation, not a
            terminal state: the value target bootstraps from V(s_T).

        logger_kwargs (dict): Passed to ``EpochLogger`` (``output_dir``, ``exp_name``, ...).

        save_freq (int): Save the model every ``save_freq`` epochs (and at the last).

        options: the on-policy loop's options (``spinup_tf.loops.on_policy.OPTIONS``):
            ``fused`` (True, the default: the fast engine, ``spinup_tf.fast.on_policy``: a
            numpy mirror of the policy acts, pulled once per epoch, and the value steps run
            as one ``sess.run``; False: Spinning Up's loop, one ``sess.run`` per env step and
            per gradient step); ``num_test_episodes``, ``clip_actions``, ``tensorboard``,
            ``normalize_obs``, ``normalize_rew``; and ``hooks`` (``spinup_tf.loops.hooks``)
            where a run must differ from Spinning Up's loop.
    """
    run = Run('vpg', env_fn, locals())  # env, checks, logger and config.json, seeded graph

    with run.graph.as_default():
        # Placeholders for a batch of transitions (x_ph, a_ph, adv_ph, ret_ph, logp_old_ph, by
        # name), and the main outputs from computation graph on them (they act, and are saved);
        # ac(batch): the same actor-critic on any batch, on the same variables
        batch, outputs, ac = run.inputs()

        # Optimizers (run.optimizer(lr) is tf.train.AdamOptimizer(learning_rate=lr))
        pi_optimizer = run.optimizer(pi_lr)
        vf_optimizer = run.optimizer(vf_lr)

        def train_ops(batch):
            """VPG on ``batch`` (``x``, ``a``, ``adv``, ``ret``, ``logp_old``: tensors of
            shapes (B, obs_dim), (B, act_dim) or (B,), (B,), (B,), (B,)), as the
            ``sess.run`` lists of the update: ``'pi'``, one policy step; ``'v'``, one value
            step; ``'info'``, what the log measures before and after the update.

            With :math:`\\hat A_t` the advantages and :math:`\\hat R_t` the returns,

            .. math:: L^{\\pi} = -\\frac{1}{B} \\sum_t \\log \\pi_\\theta(a_t|s_t) \\hat A_t,
                \\qquad L^V = \\frac{1}{B} \\sum_t (\\hat R_t - V_\\phi(s_t))^2

            (the gradient of :math:`L^{\\pi}` is the policy gradient estimate).
            """
            _, logp, _, _, _, _, v = ac(batch)

            # VPG objectives
            pi_loss = -tf.reduce_mean(logp * batch['adv'])
            v_loss = tf.reduce_mean((batch['ret'] - v) ** 2)

            # Info (watched during learning): sample estimates of KL(old || new) and entropy
            approx_kl = tf.reduce_mean(batch['logp_old'] - logp)
            approx_ent = tf.reduce_mean(-logp)

            # One gradient step of each optimizer, on its own network's variables
            train_pi = pi_optimizer.minimize(pi_loss, var_list=get_trainable_vars('pi'))
            train_v = vf_optimizer.minimize(v_loss, var_list=get_trainable_vars('v'))
            return dict(pi=dict(train=train_pi), v=dict(train=train_v),
                        info=dict(LossPi=pi_loss, LossV=v_loss, KL=approx_kl,
                                  Entropy=approx_ent))

        # The graph on the placeholders: the lists the update runs
        lists = train_ops(batch)

    def update(sess_run, train):
        """One epoch's update. ``sess_run(fetches)`` is ``sess.run(fetches,
        feed_dict=inputs)`` on the epoch's data; ``train(fetches, n)`` runs ``n`` gradient
        steps of a list (``spinup_tf.loops.on_policy``)."""
        old = sess_run(lists['info'])

        # Policy gradient step
        train(lists['pi'])

        # Value function learning
        train(lists['v'], train_v_iters)

        # The changes the update made, for the log
        new = sess_run(lists['info'])
        return dict(LossPi=old['LossPi'], LossV=old['LossV'], KL=new['KL'],
                    Entropy=old['Entropy'], DeltaLossPi=(new['LossPi'] - old['LossPi']),
                    DeltaLossV=(new['LossV'] - old['LossV']))

    def log_diagnostics(logger):
        for key in ('LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'Entropy', 'KL'):
            logger.log_tabular(key, average_only=True)

    run.train(train_ops, lists, update, batch, outputs, log_diagnostics)
