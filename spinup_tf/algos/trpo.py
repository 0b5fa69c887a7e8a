"""Trust Region Policy Optimization (TRPO) and Natural Policy Gradient (NPG), TF1 graphs.

Read top to bottom: graph (placeholders from the spaces, actor-critic, surrogate and value
losses, the flat gradient, the KL Hessian-vector product, get/set of the flat policy
parameters), session, the update (conjugate gradient, step size from the KL bound, backtracking
line search for TRPO, the full step for NPG, value-function steps), then the shared on-policy
loop (``spinup_tf.loops.on_policy``).
"""
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import tf, get_trainable_vars, count_vars
from spinup_tf.algos.core import mlp_actor_critic
from spinup_tf.algos.natural_gradient import (flat_concat, flat_grad, hessian_vector_product,
                                              assign_params_from_flat, natural_gradient_step,
                                              backtracking_line_search)
from spinup_tf.loops.on_policy import (setup_on_policy, run_on_policy, build_policy_graph,
                                       make_buffer, policy_step_fns, value_steps, FusedOnPolicy)
from spinup_tf.loops.session import start_session
from spinup_tf.utils.errors import UserInputError


def trpo(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
         train_v_iters=80, damping_coeff=0.1, cg_iters=10, backtrack_iters=10,
         backtrack_coeff=0.8, lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10,
         algo='trpo', fused=True):
    """Trust Region Policy Optimization (with support for Natural Policy Gradient).

    Args:
        env_fn: A function which creates a copy of the environment. The environment must
            satisfy the gymnasium API, with a flat Box observation space and a Discrete or
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

        fused (bool): True (default): act through a numpy mirror of the policy and value
            function, pulled once per epoch (no ``sess.run`` per env step; actions sampled
            with numpy's seeded RNG), and run the ``train_v_iters`` value steps as one
            ``sess.run`` (``spinup_tf.loops.on_policy.FusedOnPolicy``). False: Spinning Up's loop,
            one ``sess.run`` per env step and per value step.
    """
    config = dict(locals())  # every hyperparameter, recorded in config.json below
    if algo not in ('trpo', 'npg'):
        raise UserInputError("algo must be 'trpo' or 'npg', got %r" % (algo,))

    env, obs_dim, logger = setup_on_policy(algo, env_fn, config, logger_kwargs,
                                           steps_per_epoch, epochs)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)

        g = build_trpo_graph(env.observation_space, env.action_space, actor_critic,
                             ac_kwargs, vf_lr)
        fz = (FusedOnPolicy(g, env.action_space, g.v_optimizer, train_v_iters) if fused
              else None)

        # Experience buffer
        buf = make_buffer(obs_dim, env.action_space, steps_per_epoch, g.info_shapes, gamma, lam)

        # Count variables
        var_counts = tuple(count_vars(scope) for scope in ['pi', 'v'])
        logger.log('\nNumber of parameters: \t pi: %d, \t v: %d\n' % var_counts)

    sess = start_session(graph, logger, inputs={'x': g.x_ph}, outputs={'pi': g.pi, 'v': g.v})

    # One callable per kind of call: no feed-dict building or fetch lookup per call.
    if fz is not None:
        step, value, new_policy, loops_ok = fz.start(sess, obs_dim, logger)
    else:
        step, value = policy_step_fns(sess, g.x_ph, g.get_action_ops, g.v, g.info_shapes)
        new_policy, loops_ok = None, False
    update_on = make_trpo_update(sess, g, algo, delta, train_v_iters, damping_coeff, cg_iters,
                                 backtrack_iters, backtrack_coeff,
                                 v_loop=fz.v_loop if loops_ok else None)

    def update(buf):
        stats = update_on(buf.get())
        if stats.get('BacktrackIters') == backtrack_iters:
            logger.log('Line search failed! Keeping old params.', 'yellow')
        logger.store(**stats)

    diagnostics = [(k, dict(average_only=True)) for k in
                   ['LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'KL']]
    if algo == 'trpo':
        diagnostics.append(('BacktrackIters', dict(average_only=True)))
    run_on_policy(env, logger, buf, step, value, update, seed=seed,
                  steps_per_epoch=steps_per_epoch, epochs=epochs, max_ep_len=max_ep_len,
                  save_freq=save_freq, diagnostics=diagnostics,
                  finite_keys=['LossPi', 'LossV', 'KL', 'VVals'],
                  save_state=lambda epoch: logger.save_state({'epoch': epoch}), session=sess,
                  new_policy=new_policy)


def npg(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
        train_v_iters=80, damping_coeff=0.1, cg_iters=10, lam=0.97, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=10, fused=True):
    """Natural Policy Gradient: TRPO's update with the full step ``sqrt(2δ / xᵀHx)·x`` and
    no line search. Arguments as :func:`trpo`."""
    return trpo(env_fn, actor_critic=actor_critic, ac_kwargs=ac_kwargs, seed=seed,
                steps_per_epoch=steps_per_epoch, epochs=epochs, gamma=gamma, delta=delta,
                vf_lr=vf_lr, train_v_iters=train_v_iters, damping_coeff=damping_coeff,
                cg_iters=cg_iters, lam=lam, max_ep_len=max_ep_len,
                logger_kwargs=logger_kwargs, save_freq=save_freq, algo='npg', fused=fused)


def make_trpo_update(sess, g, algo='trpo', delta=0.01, train_v_iters=80, damping_coeff=0.1,
                     cg_iters=10, backtrack_iters=10, backtrack_coeff=0.8, v_loop=None,
                     fused=False):
    """TRPO's (or NPG's) update on one epoch of data, as a python function.

    Every kind of call is one callable made once: the gradient with the old losses (computed
    once per update), the KL Hessian-vector product ``Hx`` (one ``sess.run`` per CG
    iteration), and the line search's ``set_and_eval`` (set the flat parameters, then only
    the mean KL and the surrogate loss: the gradient is never recomputed there).

    Args:
        sess: the session of the graph ``g`` (from :func:`build_trpo_graph`); or None, to
            build what the update needs in ``g``'s graph now (before the session finalizes
            it) and return an object whose ``bind(sess)`` gives ``update_on``.
        v_loop: the fused value loop (``FusedOnPolicy.v_loop``): the ``train_v_iters`` value
            steps in one ``sess.run``; None for one ``sess.run`` per step.
        fused: build that loop here (in the default graph, which must be ``g``'s and not
            finalized) when ``v_loop`` is not given.
    Returns:
        ``update_on(inputs) -> dict`` taking ``GAEBuffer.get()``'s list (in ``g.all_phs``
        order) and returning the diagnostics LossPi, LossV, KL, DeltaLossPi, DeltaLossV and,
        for TRPO, BacktrackIters (``backtrack_iters`` when the line search failed and the old
        parameters were restored).
    """
    if fused and v_loop is None:
        v_loop = FusedOnPolicy(g, g.ac_kwargs['action_space'], g.v_optimizer,
                               train_v_iters).v_loop
    if sess is None:
        return SimpleNamespace(bind=lambda sess: make_trpo_update(
            sess, g, algo, delta, train_v_iters, damping_coeff, cg_iters, backtrack_iters,
            backtrack_coeff, v_loop=v_loop))

    # One callable per kind of call: no feed-dict building or fetch lookup per call.
    grad_and_losses = sess.make_callable([g.gradient, g.pi_loss, g.v_loss],
                                         feed_list=g.all_phs)
    hvp_fn = sess.make_callable(g.hvp, feed_list=[g.v_ph] + g.all_phs)
    get_params = sess.make_callable(g.get_pi_params)
    set_params = sess.make_callable(g.set_pi_params, feed_list=[g.v_ph])
    kl_and_loss = sess.make_callable([g.d_kl, g.pi_loss], feed_list=g.all_phs)
    train_v = value_steps(sess, g.all_phs, g.train_vf, v_loop, train_v_iters)
    v_loss_fn = sess.make_callable(g.v_loss, feed_list=g.all_phs)

    def update_on(inputs):
        grad, pi_l_old, v_l_old = grad_and_losses(*inputs)

        # Core calculations for TRPO or NPG: x = (H + damping I)^-1 g, scaled to the KL bound.
        x, alpha, full_step = natural_gradient_step(
            grad, lambda v: hvp_fn(v, *inputs), delta, cg_iters, damping_coeff)
        old_params = get_params()

        def set_and_eval(params):
            set_params(params)
            return kl_and_loss(*inputs)

        stats = {}
        if algo == 'npg':
            # npg has no backtracking or hard kl constraint enforcement
            kl, pi_l_new = set_and_eval(old_params - full_step)
        else:
            # trpo augments npg with backtracking line search, hard kl
            j, kl, pi_l_new = backtracking_line_search(
                set_and_eval, old_params, full_step, delta, pi_l_old, backtrack_iters,
                backtrack_coeff)
            stats['BacktrackIters'] = j

        # Value function updates
        train_v(inputs)
        v_l_new = v_loss_fn(*inputs)

        # Changes from update
        stats.update(LossPi=pi_l_old, LossV=v_l_old, KL=kl,
                     DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old))
        return stats
    return update_on


def build_trpo_graph(observation_space, action_space, actor_critic=mlp_actor_critic,
                     ac_kwargs=dict(), vf_lr=1e-3):
    """Build TRPO's graph in the default graph; returns its tensors and ops by name.

    Everything of :func:`spinup_tf.loops.on_policy.build_policy_graph` (with the old policy's info
    placeholders, for the KL), plus ``pi_loss``, ``train_vf``, ``gradient`` the flat
    ``(n_pi,)`` gradient of ``pi_loss``, ``hvp`` the flat product of the KL Hessian with
    ``v_ph``, and ``get_pi_params`` / ``set_pi_params`` (from ``v_ph``) the flat policy
    parameters.
    """
    g = SimpleNamespace(**build_policy_graph(observation_space, action_space, actor_critic,
                                             ac_kwargs, with_info=True))

    # TRPO losses
    ratio = tf.exp(g.logp - g.logp_old_ph)  # pi(a|s) / pi_old(a|s)
    g.pi_loss = -tf.reduce_mean(ratio * g.adv_ph)

    # Optimizer for value function (kept: the fused value loop steps through the same object)
    g.v_optimizer = tf.train.AdamOptimizer(learning_rate=vf_lr)
    g.train_vf = g.v_optimizer.minimize(g.v_loss, var_list=get_trainable_vars('v'))

    # Symbols needed for CG solver (damping is added in natural_gradient_step)
    pi_params = get_trainable_vars('pi')
    g.gradient = flat_grad(g.pi_loss, pi_params)
    g.v_ph, g.hvp = hessian_vector_product(g.d_kl, pi_params)

    # Symbols for getting and setting params
    g.get_pi_params = flat_concat(pi_params)
    g.set_pi_params = assign_params_from_flat(g.v_ph, pi_params)
    return g
