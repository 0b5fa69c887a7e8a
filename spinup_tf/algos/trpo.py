"""Trust Region Policy Optimization (TRPO) and Natural Policy Gradient (NPG), TF1 graphs.

Read top to bottom, as Spinning Up's ``trpo.py``: :func:`trpo` runs :func:`build_trpo_graph`
(inputs, actor-critic, the surrogate and value losses, the flat gradient, the KL
Hessian-vector product, get/set of the flat policy parameters) and :func:`trpo_update`
(conjugate gradient, the step size from the KL bound, TRPO's backtracking line search or
NPG's full step, then the value steps) in the on-policy loop (``spinup_tf.loops.on_policy``),
through the engine that ``fused`` picks. :func:`make_trpo_update` is the same update on one
batch, outside a run (tests, the benchmark).
"""
from types import SimpleNamespace

from spinup_tf.utils.tf1 import tf, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.algos import natural_gradient as ng
from spinup_tf.engine.steps import Minimize, Repeat
from spinup_tf.loops import on_policy


def trpo(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
         train_v_iters=80, damping_coeff=0.1, cg_iters=10, backtrack_iters=10,
         backtrack_coeff=0.8, lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10,
         algo='trpo', **options):
    """Trust Region Policy Optimization (with support for Natural Policy Gradient).

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space (or uint8 images, read
            through ``core.nature_cnn``) and a Discrete or
            flat Box action space.

        actor_critic: A function which takes in placeholder symbols for state, ``x_ph``, and
            action, ``a_ph``, and returns the main outputs from the agent's Tensorflow
            computation graph:

            ============  ================  ========================================
            Symbol        Shape             Description
            ============  ================  ========================================
            ``pi``        (batch, act_dim)  | Samples actions from policy given
                                            | states.
            ``logp``      (batch,)          | Gives log probability, according to
                                            | the policy, of taking actions ``a_ph``
                                            | in states ``x_ph``.
            ``logp_pi``   (batch,)          | Gives log probability, according to
                                            | the policy, of the action sampled by
                                            | ``pi``.
            ``info``      N/A               | A dict of any intermediate quantities
                                            | (from calculating the policy or log
                                            | probabilities) which are needed for
                                            | analytically computing KL divergence.
                                            | (eg sufficient statistics of the
                                            | distributions)
            ``info_phs``  N/A               | A dict of placeholders for old values
                                            | of the entries in ``info``.
            ``d_kl``      ()                | A symbol for computing the mean KL
                                            | divergence between the current policy
                                            | (``pi``) and the old policy (as
                                            | specified by the inputs to
                                            | ``info_phs``) over the batch of
                                            | states given in ``x_ph``.
            ``v``         (batch,)          | Gives the value estimate for states
                                            | in ``x_ph``. (Critical: make sure
                                            | to flatten this!)
            ============  ================  ========================================

        ac_kwargs (dict): Any kwargs appropriate for the actor_critic function you provided
            to TRPO (``hidden_sizes``, ``activation``).

        seed (int): Seed for random number generators (numpy, the graph, the env and its
            action space).

        steps_per_epoch (int): Number of steps of interaction (state-action pairs) for the
            agent and the environment in each epoch.

        epochs (int): Number of epochs of interaction (equivalent to number of policy
            updates) to perform.

        gamma (float): Discount factor. (Always between 0 and 1.)

        delta (float): KL-divergence limit for TRPO / NPG update. (Should be small for
            stability. Values like 0.01, 0.05.)

        vf_lr (float): Learning rate for value function optimizer.

        train_v_iters (int): Number of gradient descent steps to take on value function per
            epoch.

        damping_coeff (float): Artifact for numerical stability, should be smallish.
            Adjusts Hessian-vector product calculation:

            .. math:: Hv \\rightarrow (\\alpha I + H)v

            where :math:`\\alpha` is the damping coefficient. Probably don't play with this
            hyperparameter.

        cg_iters (int): Number of iterations of conjugate gradient to perform. Increasing
            this will lead to a more accurate approximation to :math:`H^{-1} g`, and possibly
            slightly-improved performance, but at the cost of slowing things down. Also
            probably don't play with this hyperparameter.

        backtrack_iters (int): Maximum number of steps allowed in the backtracking line
            search. Since the line search usually doesn't backtrack, and usually only steps
            back once when it does, this hyperparameter doesn't often matter.

        backtrack_coeff (float): How far back to step during backtracking line search.
            (Always between 0 and 1, usually above 0.5.)

        lam (float): Lambda for GAE-Lambda. (Always between 0 and 1, close to 1.)

        max_ep_len (int): Maximum length of trajectory / episode / rollout. Reaching it is a
            truncation: the value target bootstraps from V(s_T).

        logger_kwargs (dict): Keyword args for EpochLogger.

        save_freq (int): How often (in terms of gap between epochs) to save the current
            policy and value function.

        algo: Either 'trpo' or 'npg': this code supports both, since they are almost the
            same.

        options: the on-policy loop's options (``spinup_tf.loops.on_policy.OPTIONS``):
            ``fused`` (True, the default: the fast engine, ``spinup_tf.fast.on_policy``: a
            numpy mirror of the policy acts, pulled once per epoch, and the ``train_v_iters``
            value steps run as one ``sess.run``; the natural-gradient step is the plain
            graph's either way; False: Spinning Up's loop, one ``sess.run`` per env step and
            per value step); ``num_test_episodes``, ``clip_actions``, ``tensorboard``,
            ``normalize_obs``, ``normalize_rew``; and ``hooks`` (``spinup_tf.loops.hooks``)
            where a run must differ from Spinning Up's loop.
    """
    run = on_policy.Run(algo, env_fn, locals(), choices=dict(algo=('trpo', 'npg')))
    with run.graph.as_default():
        g = build_trpo_graph(run.env.observation_space, run.env.action_space,
                             run.actor_critic, run.ac_kwargs, vf_lr, run.optimizer(vf_lr))
    train_v = Repeat(g.train_vf, train_v_iters)
    update = trpo_update(g, train_v, algo, delta, damping_coeff, cg_iters, backtrack_iters,
                         backtrack_coeff, run.logger)
    def log_diagnostics(logger):
        for key in ['LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'KL'] + \
                (['BacktrackIters'] if algo == 'trpo' else []):
            logger.log_tabular(key, average_only=True)

    run.train(update, g.batch, g.outputs, log_diagnostics, steps=[train_v])


def npg(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
        train_v_iters=80, damping_coeff=0.1, cg_iters=10, lam=0.97, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=10, **options):
    """Natural Policy Gradient: TRPO's update with the full step ``sqrt(2δ / xᵀHx)·x`` and
    no line search.

    Args (each as :func:`trpo` describes it at length):
        env_fn: makes the env: a flat Box observation space (or uint8 images), a Discrete or flat Box action
            space.

        actor_critic: the actor-critic, with the Symbol/Shape contract of :func:`trpo`
            (``pi``, ``logp``, ``logp_pi``, ``info``, ``info_phs``, ``d_kl``, ``v``).

        ac_kwargs (dict): its keyword arguments (``hidden_sizes``, ``activation``).

        seed (int): seed of numpy, the graph, the env and its action space.

        steps_per_epoch (int): env steps (state-action pairs) per epoch.

        epochs (int): epochs, one policy update each.

        gamma (float): discount factor.

        delta (float): the KL step size; NPG's step reaches it to second order.

        vf_lr (float): learning rate of the value function.

        train_v_iters (int): value function steps per epoch.

        damping_coeff (float): damping of the Hessian-vector product, ``(αI + H)v``.

        cg_iters (int): conjugate gradient iterations for ``H⁻¹g``.

        lam (float): GAE lambda.

        max_ep_len (int): longest episode; reaching it is a truncation (bootstrap from
            V(s_T)).

        logger_kwargs (dict): keyword arguments of the EpochLogger.

        save_freq (int): epochs between two saves of the model.

        options: the on-policy loop's options (``spinup_tf.loops.on_policy.OPTIONS``), as
            for :func:`trpo`.
    """
    return trpo(env_fn, actor_critic=actor_critic, ac_kwargs=ac_kwargs, seed=seed,
                steps_per_epoch=steps_per_epoch, epochs=epochs, gamma=gamma, delta=delta,
                vf_lr=vf_lr, train_v_iters=train_v_iters, damping_coeff=damping_coeff,
                cg_iters=cg_iters, lam=lam, max_ep_len=max_ep_len,
                logger_kwargs=logger_kwargs, save_freq=save_freq, algo='npg', **options)


def build_trpo_graph(observation_space, action_space, actor_critic=mlp_actor_critic,
                     ac_kwargs=dict(), vf_lr=1e-3, vf_optimizer=None):
    """TRPO's graph, built in the default graph in Spinning Up's order (``vf_optimizer``:
    the value function's, ``tf.train.AdamOptimizer(learning_rate=vf_lr)`` when None).

    Returns:
        its tensors by Spinning Up's names (``x_ph``, ``pi``, ``logp``, ``info``,
        ``info_phs``, ``d_kl``, ``v``, ``pi_loss``, ``v_loss``, ``gradient``: the flat
        ``(n_pi,)`` gradient of ``pi_loss``, ``hvp``: the flat product of the KL Hessian
        with ``v_ph``, ``get_pi_params`` / ``set_pi_params``: the flat policy parameters),
        ``all_phs`` and ``get_action_ops`` (as Spinning Up orders them), the value step
        ``train_vf``, and ``batch``/``outputs`` for ``on_policy.Run.train``.
    """
    # Inputs to computation graph (x_ph, a_ph, adv_ph, ret_ph, logp_old_ph by name, and the
    # placeholders for old pdist, for KL), and the main outputs from computation graph
    batch, outputs, ac = on_policy.actor_critic_graph(observation_space, action_space,
                                                      actor_critic, ac_kwargs, keep_info=True)
    x_ph, pi, logp, logp_pi, info, info_phs, d_kl, v = (batch['x'],) + outputs

    # Need all placeholders in *this* order later (to zip with data from buffer)
    all_phs = on_policy.feed_list(batch)

    # Every step, get: action, value, logprob, & info for pdist (for computing kl div)
    get_action_ops = [pi, v, logp_pi] + [info[k] for k in sorted(info_phs)]

    # TRPO losses
    ratio = tf.exp(logp - batch['logp_old'])  # pi(a|s) / pi_old(a|s)
    pi_loss = -tf.reduce_mean(ratio * batch['adv'])

    def v_objective(batch):  # on any batch (the fast engine builds it in its loop)
        v_loss = tf.reduce_mean((batch['ret'] - ac(batch)[-1]) ** 2)
        return v_loss, dict(LossV=v_loss)
    v_loss, _ = v_objective(batch)

    # Optimizer for value function
    if vf_optimizer is None:
        vf_optimizer = tf.train.AdamOptimizer(learning_rate=vf_lr)
    train_vf = Minimize(v_objective, vf_optimizer, get_trainable_vars('v'))

    # Symbols needed for CG solver (damping is added in natural_gradient_step)
    pi_params = get_trainable_vars('pi')
    gradient = ng.flat_grad(pi_loss, pi_params)
    v_ph, hvp = ng.hessian_vector_product(d_kl, pi_params)

    # Symbols for getting and setting params
    get_pi_params = ng.flat_concat(pi_params)
    set_pi_params = ng.assign_params_from_flat(v_ph, pi_params)
    return SimpleNamespace(**locals())


def trpo_update(g, train_v, algo='trpo', delta=0.01, damping_coeff=0.1, cg_iters=10,
                backtrack_iters=10, backtrack_coeff=0.8, logger=None):
    """TRPO's (or NPG's) update of one epoch, in Spinning Up's words: the hook
    ``update(train, evaluate) -> dict`` of ``spinup_tf.loops.on_policy``.

    Args:
        g: :func:`build_trpo_graph`'s namespace.
        train_v: the value steps, ``Repeat(g.train_vf, train_v_iters)``.
        logger: told when the line search fails (optional).

    The dict holds LossPi, LossV, KL, DeltaLossPi, DeltaLossV and, for TRPO,
    BacktrackIters (``backtrack_iters`` when the line search failed and the old
    parameters were restored).
    """
    def update(train, evaluate):
        # Prepare hessian func, gradient eval
        def Hx(x):
            return evaluate(g.hvp, {g.v_ph: x})
        grad, pi_l_old, v_l_old = evaluate([g.gradient, g.pi_loss, g.v_loss])

        # Core calculations for TRPO or NPG: x = (H + damping I)^-1 g, scaled to the KL bound
        x, alpha, full_step = ng.natural_gradient_step(grad, Hx, delta, cg_iters, damping_coeff)
        old_params = evaluate(g.get_pi_params)

        def set_and_eval(params):
            evaluate(g.set_pi_params, {g.v_ph: params})
            return evaluate([g.d_kl, g.pi_loss])

        stats = {}
        if algo == 'npg':
            # npg has no backtracking or hard kl constraint enforcement
            kl, pi_l_new = set_and_eval(old_params - full_step)
        else:
            # trpo augments npg with backtracking line search, hard kl
            j, kl, pi_l_new = ng.backtracking_line_search(
                set_and_eval, old_params, full_step, delta, pi_l_old, backtrack_iters,
                backtrack_coeff)
            if j == backtrack_iters and logger is not None:
                logger.log('Line search failed! Keeping old params.', 'yellow')
            stats['BacktrackIters'] = j

        # Value function updates
        train(train_v)
        v_l_new = evaluate(g.v_loss)

        # Log changes from update
        stats.update(LossPi=pi_l_old, LossV=v_l_old, KL=kl,
                     DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old))
        return stats
    return update


def make_trpo_update(sess, g, algo='trpo', delta=0.01, train_v_iters=80, damping_coeff=0.1,
                     cg_iters=10, backtrack_iters=10, backtrack_coeff=0.8, fused=False):
    """:func:`trpo_update` on one epoch's data outside a run (tests, the benchmark):
    ``update_on(inputs) -> dict``, ``inputs`` in ``g.all_phs`` order, through the plain
    engine or, with ``fused``, the fast one's value loop.

    Its steps are built in ``g``'s graph now. With ``sess`` None (before the session) it
    returns an object whose ``bind(sess)`` gives ``update_on``; with ``sess``, the
    variables it built (Adam's slots) are initialised and ``update_on`` is returned.
    """
    train_v = Repeat(g.train_vf, train_v_iters)
    update = trpo_update(g, train_v, algo, delta, damping_coeff, cg_iters, backtrack_iters,
                         backtrack_coeff)
    with g.x_ph.graph.as_default():
        return on_policy.updater(update, [train_v], g.batch, fused, sess)
