"""Trust Region Policy Optimization (TRPO) and Natural Policy Gradient (NPG), TF1 graphs.

Read top to bottom, as Spinning Up's ``trpo.py``: :func:`trpo` runs :func:`build_trpo_graph`
(inputs, actor-critic, the surrogate loss, the value function's train op as a function of a
batch, the flat gradient, the KL Hessian-vector product, get/set of the flat policy
parameters) and :func:`trpo_update` (conjugate gradient, the step size from the KL bound,
TRPO's backtracking line search or NPG's full step, then the value steps) in the on-policy
loop (``spinup_tf.loops.on_policy``), plainly or through the fast engine (``fused``).
:func:`make_trpo_update` is the same update on one batch, outside a run (tests, the
benchmark).
"""
from types import SimpleNamespace

from spinup_tf.utils.tf1 import tf, get_trainable_vars
from spinup_tf.algos.distributions import mlp_actor_critic
from spinup_tf.algos import natural_gradient as ng
from spinup_tf.loops import on_policy


def trpo(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
         steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
         train_v_iters=80, damping_coeff=0.1, cg_iters=10, backtrack_iters=10,
         backtrack_coeff=0.8, lam=0.97, max_ep_len=1000, logger_kwargs=dict(), save_freq=10,
         algo='trpo', **options):
    """Trust Region Policy Optimization (with support for Natural Policy Gradient).

    Args:
        env_fn: Makes a fresh env each time it is called. The env follows gymnasium's API, with
            a flat Box observation space (or uint8 images, read through ``core.nature_cnn``) and
            a Discrete or flat Box action space.

        actor_critic: Builds the networks. Called inside a variable scope with the observation
            tensor ``x_ph`` and the action tensor ``a_ph``, it returns these tensors:

            ============  ================  ========================================
            Symbol        Shape             Description
            ============  ================  ========================================
            ``pi``        (batch, act_dim)  | An action drawn from the policy at
                                            | each observation.
            ``logp``      (batch,)          | log pi(a | x) of the rows of ``a_ph``
                                            | at ``x_ph``.
            ``logp_pi``   (batch,)          | log pi(pi | x) of that draw.
            ``info``      N/A               | The policy's distribution parameters
                                            | at ``x_ph`` (logits, or mean and
                                            | log std): what the KL needs.
            ``info_phs``  N/A               | Placeholders for the same parameters
                                            | of the policy before the update.
            ``d_kl``      ()                | The mean over the batch of
                                            | KL(old || current) at ``x_ph``, the
                                            | old policy given by ``info_phs``.
            ``v``         (batch,)          | V(x), flattened to one value per
                                            | row.
            ============  ================  ========================================

        ac_kwargs (dict): Keyword arguments passed on to ``actor_critic`` (``hidden_sizes``,
            ``activation``).

        seed (int): Seeds numpy, the graph's random draws and the envs.

        steps_per_epoch (int): Env steps collected per epoch; each epoch ends with one update
            and one row of ``progress.txt``.

        epochs (int): How many epochs the run lasts (one policy update each).

        gamma (float): The discount :math:`\\gamma` in :math:`[0, 1]`.

        delta (float): The KL radius of a TRPO / NPG step (small, e.g. 0.01 to 0.05).

        vf_lr (float): Adam's learning rate for the value function.

        train_v_iters (int): Value-function steps per epoch, each on the whole epoch's data.

        damping_coeff (float): Added to the Hessian-vector products for numerical stability,
            :math:`Hv \\rightarrow (\\alpha I + H)v` with :math:`\\alpha` this coefficient; rarely
            worth changing.

            .. math:: Hv \\rightarrow (\\alpha I + H)v

            where :math:`\\alpha` is the damping coefficient. Probably don't play with this
            hyperparameter.

        cg_iters (int): Conjugate-gradient iterations towards :math:`H^{-1} g`: more are more
            exact and slower; rarely worth changing.

        backtrack_iters (int): At most this many shrinks of the step in TRPO's line search (it
            rarely needs more than one).

        backtrack_coeff (float): Each shrink multiplies the step by this factor, in :math:`(0,
            1)`.

        lam (float): The :math:`\\lambda` of GAE-:math:`\\lambda` advantages, in :math:`[0, 1]`: 0
            is the one-step TD error, 1 the discounted return minus the value.

        max_ep_len (int): The longest an episode may run. Reaching it is a truncation, not a
            terminal state: the value target bootstraps from V(s_T).

        logger_kwargs (dict): Passed to ``EpochLogger`` (``output_dir``, ``exp_name``, ...).

        save_freq (int): Save the model every ``save_freq`` epochs (and at the last).

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
    update = trpo_update(g, algo, delta, train_v_iters, damping_coeff, cg_iters,
                         backtrack_iters, backtrack_coeff, run.logger)

    def log_diagnostics(logger):
        for key in ['LossPi', 'LossV', 'DeltaLossPi', 'DeltaLossV', 'KL'] + \
                (['BacktrackIters'] if algo == 'trpo' else []):
            logger.log_tabular(key, average_only=True)

    run.train(g.train_ops, g.lists, update, g.batch, g.outputs, log_diagnostics)


def npg(env_fn, actor_critic=mlp_actor_critic, ac_kwargs=dict(), seed=0,
        steps_per_epoch=4000, epochs=50, gamma=0.99, delta=0.01, vf_lr=1e-3,
        train_v_iters=80, damping_coeff=0.1, cg_iters=10, lam=0.97, max_ep_len=1000,
        logger_kwargs=dict(), save_freq=10, **options):
    """Natural Policy Gradient: TRPO's update with the full step ``sqrt(2δ / xᵀHx)·x`` and
    no line search.

    Args (each as :func:`trpo` describes it at length):
        env_fn: makes the env: a flat Box observation space (or uint8 images), a Discrete or
            flat Box action space.

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
        ``info_phs``, ``d_kl``, ``v``, ``pi_loss``, ``v_loss``, ``train_vf``: one value
        step, ``gradient``: the flat ``(n_pi,)`` gradient of ``pi_loss``, ``hvp``: the flat
        product of the KL Hessian with ``v_ph``, ``get_pi_params`` / ``set_pi_params``: the
        flat policy parameters), ``all_phs`` and ``get_action_ops`` (as Spinning Up orders
        them), and for ``on_policy.Run.train``: ``train_ops``, ``lists`` (``train_ops`` on
        the placeholders), ``batch`` and ``outputs``.
    """
    # Placeholders for a batch of transitions (x_ph, a_ph, adv_ph, ret_ph, logp_old_ph by name,
    # and the old policy's distribution parameters, for the KL), and the main outputs on them
    batch, outputs, ac = on_policy.actor_critic_graph(observation_space, action_space,
                                                      actor_critic, ac_kwargs, keep_info=True)
    x_ph, pi, logp, logp_pi, info, info_phs, d_kl, v = (batch['x'],) + outputs

    # The placeholders in the order of the buffer's arrays (GAEBuffer.get())
    all_phs = on_policy.feed_list(batch)

    # What one env step fetches: a ~ pi(.|s), V(s), log pi(a|s), and the distribution's
    # parameters (the buffer keeps them for the KL of the update)
    get_action_ops = [pi, v, logp_pi] + [info[k] for k in sorted(info_phs)]

    # TRPO losses: the surrogate L = -mean(r_t A_t), r_t = pi(a_t|s_t) / pi_old(a_t|s_t)
    ratio = tf.exp(logp - batch['logp_old'])  # pi(a|s) / pi_old(a|s)
    pi_loss = -tf.reduce_mean(ratio * batch['adv'])

    # Optimizer for value function
    if vf_optimizer is None:
        vf_optimizer = tf.train.AdamOptimizer(learning_rate=vf_lr)

    def train_ops(batch):
        """The value function's step on ``batch`` (its ``x`` and ``ret``: (B, obs_dim) and
        (B,) tensors) as the update's list ``'v'``: one step of ``vf_optimizer`` on
        :math:`L^V = \\frac{1}{B} \\sum_t (\\hat R_t - V_\\phi(s_t))^2`, and
        :math:`L^V` itself in the list ``'info'`` (``'LossV'``). (The policy's step is the
        natural gradient below, on the placeholders only.)"""
        v_loss = tf.reduce_mean((batch['ret'] - ac(batch)[-1]) ** 2)
        train_vf = vf_optimizer.minimize(v_loss, var_list=get_trainable_vars('v'))
        return dict(v=dict(train=train_vf), info=dict(LossV=v_loss))
    lists = train_ops(batch)
    v_loss, train_vf = lists['info']['LossV'], lists['v']['train']

    # For conjugate gradient: the flat gradient g of the surrogate and the product Hx of
    # the mean KL's Hessian with a vector (natural_gradient_step adds the damping)
    pi_params = get_trainable_vars('pi')
    gradient = ng.flat_grad(pi_loss, pi_params)
    v_ph, hvp = ng.hessian_vector_product(d_kl, pi_params)

    # The policy's parameters as one flat vector, read and written
    get_pi_params = ng.flat_concat(pi_params)
    set_pi_params = ng.assign_params_from_flat(v_ph, pi_params)
    return SimpleNamespace(**locals())


def trpo_update(g, algo='trpo', delta=0.01, train_v_iters=80, damping_coeff=0.1, cg_iters=10,
                backtrack_iters=10, backtrack_coeff=0.8, logger=None):
    """TRPO's (or NPG's) update of one epoch, in Spinning Up's words: the hook
    ``update(sess_run, train) -> dict`` of ``spinup_tf.loops.on_policy``.

    Args:
        g: :func:`build_trpo_graph`'s namespace.
        train_v_iters: value steps (list ``g.lists['v']``) per update.
        logger: told when the line search fails (optional).

    The dict holds LossPi, LossV, KL, DeltaLossPi, DeltaLossV and, for TRPO,
    BacktrackIters (``backtrack_iters`` when the line search failed and the old
    parameters were restored).
    """
    def update(sess_run, train):
        # Hx(x), and g with both losses before the step
        def Hx(x):
            return sess_run(g.hvp, {g.v_ph: x})
        grad, pi_l_old, v_l_old = sess_run([g.gradient, g.pi_loss, g.v_loss])

        # Core calculations for TRPO or NPG: x = (H + damping I)^-1 g, scaled to the KL bound
        x, alpha, full_step = ng.natural_gradient_step(grad, Hx, delta, cg_iters, damping_coeff)
        old_params = sess_run(g.get_pi_params)

        def set_and_eval(params):
            sess_run(g.set_pi_params, {g.v_ph: params})
            return sess_run([g.d_kl, g.pi_loss])

        stats = {}
        if algo == 'npg':
            # NPG: the full step, taken as it is (no line search, no KL check)
            kl, pi_l_new = set_and_eval(old_params - full_step)
        else:
            # TRPO: the full step shrunk until the KL is within delta and the surrogate
            # improves (else the old parameters stay)
            j, kl, pi_l_new = ng.backtracking_line_search(
                set_and_eval, old_params, full_step, delta, pi_l_old, backtrack_iters,
                backtrack_coeff)
            if j == backtrack_iters and logger is not None:
                logger.log('Line search failed! Keeping old params.', 'yellow')
            stats['BacktrackIters'] = j

        # Value function learning
        train(g.lists['v'], train_v_iters)
        v_l_new = sess_run(g.v_loss)

        # The changes the update made, for the log
        stats.update(LossPi=pi_l_old, LossV=v_l_old, KL=kl,
                     DeltaLossPi=(pi_l_new - pi_l_old), DeltaLossV=(v_l_new - v_l_old))
        return stats
    return update


def make_trpo_update(sess, g, algo='trpo', delta=0.01, train_v_iters=80, damping_coeff=0.1,
                     cg_iters=10, backtrack_iters=10, backtrack_coeff=0.8, fused=False):
    """:func:`trpo_update` on one epoch's data outside a run (tests, the benchmark):
    ``update_on(inputs) -> dict``, ``inputs`` in ``g.all_phs`` order, through the plain
    loop or, with ``fused``, the fast engine's value loop.

    With ``fused``, the value loop is built in ``g``'s graph now. With ``sess`` None (before
    the session) it returns an object whose ``bind(sess)`` gives ``update_on``; with
    ``sess``, the variables built since the session's initialisation are initialised and
    ``update_on`` is returned.
    """
    update = trpo_update(g, algo, delta, train_v_iters, damping_coeff, cg_iters,
                         backtrack_iters, backtrack_coeff)
    with g.x_ph.graph.as_default():
        return on_policy.updater(update, g.train_ops, g.lists, g.batch, fused, sess)
