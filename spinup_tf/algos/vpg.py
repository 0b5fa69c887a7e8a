"""Vanilla Policy Gradient (with GAE-lambda advantages), as a TF1 static graph.

Read top to bottom, as Spinning Up's ``vpg.py``: inputs, actor-critic, objectives,
optimizers, then the update of each epoch. The on-policy loop (``spinup_tf.loops.on_policy``)
collects the epochs and runs the update's steps through the engine that ``fused`` picks.
"""
from spinup_tf.utils.tf1 import tf, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.engine.steps import Minimize, Repeat
from spinup_tf.loops.on_policy import Run


def vpg(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, pi_lr=3e-4, vf_lr=1e-3,
        train_v_iters=80, lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10,
        **options):
    """Vanilla Policy Gradient (with GAE-Lambda for advantage estimation).

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space (or uint8 images, read
            through ``core.nature_cnn``) and a Discrete or
            flat Box action space.

        actor_critic: A function which takes in placeholder symbols for state, ``x_ph``, and
            action, ``a_ph``, and returns the outputs described in
            :func:`spinup_tf.algos.distributions.mlp_actor_critic`: ``pi`` (batch, act_dim) sampled
            actions, ``logp`` (batch,) log-likelihood of ``a_ph``, ``logp_pi`` (batch,) of
            ``pi``, ``info``/``info_phs``/``d_kl`` (unused by VPG) and ``v`` (batch,) values.

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to VPG (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators.

        steps_per_epoch (int): Number of steps of interaction (state-action pairs) for the
            agent and the environment in each epoch.

        epochs (int): Number of epochs of interaction (equivalent to number of policy
            updates) to perform.

        gamma (float): Discount factor. (Always between 0 and 1.)

        pi_lr (float): Learning rate for policy optimizer.

        vf_lr (float): Learning rate for value function optimizer.

        train_v_iters (int): Number of gradient descent steps to take on value function per
            epoch.

        lam (float): Lambda for GAE-Lambda. (Always between 0 and 1, close to 1.)

        max_ep_len (int): Maximum length of trajectory / episode / rollout. Reaching it is a
            truncation: the value target bootstraps from V(s_T).

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save the current
            policy and value function.

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
        # Inputs to computation graph (x_ph, a_ph, adv_ph, ret_ph, logp_old_ph, by name), and
        # the main outputs from computation graph on them (they act, and are saved);
        # ac(batch): the same actor-critic on any batch
        batch, outputs, ac = run.inputs()

        # VPG objectives, as functions of a batch: an engine builds them where it trains
        def pi_objective(batch):
            logp = ac(batch)[1]
            pi_loss = -tf.reduce_mean(logp * batch['adv'])

            # Info (useful to watch during learning)
            approx_kl = tf.reduce_mean(batch['logp_old'] - logp)  # a sample estimate for KL
            approx_ent = tf.reduce_mean(-logp)                    # a sample estimate for entropy
            return pi_loss, dict(KL=approx_kl, Entropy=approx_ent)

        def v_objective(batch):
            v_loss = tf.reduce_mean((batch['ret'] - ac(batch)[-1]) ** 2)
            return v_loss, dict(LossV=v_loss)

        # The same on the placeholders, for the log
        (pi_loss, pi_info), (v_loss, _) = pi_objective(batch), v_objective(batch)

        # Optimizers (Adam: run.optimizer(lr) is tf.train.AdamOptimizer(learning_rate=lr)):
        # one policy step, then train_v_iters value steps, per epoch
        train_pi = Minimize(pi_objective, run.optimizer(pi_lr), get_trainable_vars('pi'))
        train_v = Repeat(Minimize(v_objective, run.optimizer(vf_lr), get_trainable_vars('v')),
                         train_v_iters)

    def update(train, evaluate):
        pi_l_old, v_l_old, ent = evaluate([pi_loss, v_loss, pi_info['Entropy']])

        # Policy gradient step
        train(train_pi)

        # Value function learning
        train(train_v)

        # Log changes from update
        pi_l_new, v_l_new, kl = evaluate([pi_loss, v_loss, pi_info['KL']])
        return dict(LossPi=pi_l_old, LossV=v_l_old, KL=kl, Entropy=ent,
                    DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old))

    def log_diagnostics(logger):
        for key in ('LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'Entropy', 'KL'):
            logger.log_tabular(key, average_only=True)

    run.train(update, batch, outputs, log_diagnostics, steps=[train_pi, train_v])
