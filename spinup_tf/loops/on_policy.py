"""The interaction loop shared by the on-policy algorithms (VPG, PPO, TRPO, NPG).

Each epoch collects exactly ``steps_per_epoch`` steps with the current stochastic policy
into a ``GAEBuffer``, closes every trajectory with the right bootstrap value, then hands the
buffer to the algorithm's ``update`` and writes the epoch's log row.

Two ways to act and train (the algorithms' ``fused`` flag):

* plain (``fused=False``, Spinning Up's way): one ``sess.run`` per env step
  (:func:`policy_step_fns`), and one ``sess.run`` per value-function (and PPO policy)
  gradient step;
* fused (``fused=True``, :class:`FusedOnPolicy`): the policy is fixed while an epoch is
  collected, so a numpy mirror of it (``spinup_tf.fast.onpolicy_mirrors``), pulled once per epoch,
  acts; and the ``train_v_iters`` value steps (and PPO's policy steps with their early stop
  on KL) run as one ``tf.while_loop`` in one ``sess.run``, with the same optimizers.

Bootstrapping: a trajectory that *terminated* gets ``last_val = 0``; one that was *cut* (the
env's time limit, ``max_ep_len``, or the end of the epoch) gets ``last_val = V(s_T)`` of the
real next observation. (Spinning Up's ``last_val = r if d else v`` was a slip.)
"""
import time

import numpy as np
from gymnasium.spaces import Box

from spinup_tf.utils.envs import seed_env, flat_obs_dim, check_discrete_or_box, env_id_of
from spinup_tf.utils.logx import EpochLogger
from spinup_tf.loops.gae_buffer import GAEBuffer
from spinup_tf.utils.tf1 import tf, placeholders, placeholder_from_space
from spinup_tf.algos.core import gaussian_likelihood
from spinup_tf.utils.checkpoint import Checkpointer
from spinup_tf.utils.errors import check_finite, check_positive_ints
from spinup_tf.utils.signals import check_stop


def setup_on_policy(algo, env_fn, config, logger_kwargs, steps_per_epoch, epochs):
    """Make the env, check its spaces and the budget, then start the logger (config.json).

    Returns:
        ``(env, obs_dim, logger)``.
    """
    env = env_fn()
    try:
        obs_dim = flat_obs_dim(env.observation_space, algo)
        check_discrete_or_box(env.action_space, algo)
        check_positive_ints(steps_per_epoch=steps_per_epoch, epochs=epochs)
    except Exception:
        env.close()
        raise
    logger = EpochLogger(**logger_kwargs)
    if not logger.resume:  # a resumed run keeps the config it started with
        logger.save_config(dict(config, algo=algo, env_id=env_id_of(env)))
    return env, obs_dim, logger


def build_policy_graph(observation_space, action_space, actor_critic, ac_kwargs,
                       with_info=False):
    """The graph pieces VPG, PPO and TRPO share, built in the default graph.

    Placeholders come from the spaces (int32 actions for Discrete): ``x_ph``, ``a_ph``,
    ``adv_ph``, ``ret_ph``, ``logp_old_ph``. The actor-critic gives ``pi, logp, logp_pi,
    info, info_phs, d_kl, v``. ``all_phs`` lists the placeholders in the order of
    ``GAEBuffer.get()`` (with the old policy's ``info_phs``, sorted by key, when
    ``with_info``, as TRPO's KL needs); ``get_action_ops = [pi, v, logp_pi] (+ info)`` is
    what one environment step fetches; ``v_loss`` is the value regression loss.

    Returns:
        a ``dict`` of all of the above.
    """
    ac_kwargs = dict(ac_kwargs, action_space=action_space)
    x_ph = placeholder_from_space(observation_space)
    a_ph = placeholder_from_space(action_space)
    adv_ph, ret_ph, logp_old_ph = placeholders(None, None, None)
    pi, logp, logp_pi, info, info_phs, d_kl, v = actor_critic(x_ph, a_ph, **ac_kwargs)
    info_keys = sorted(info_phs) if with_info else []
    # Need all placeholders in *this* order later (to zip with data from buffer)
    all_phs = [x_ph, a_ph, adv_ph, ret_ph, logp_old_ph] + [info_phs[k] for k in info_keys]
    # Every step, get: action, value, logprob (and info for pdist, for computing kl div)
    get_action_ops = [pi, v, logp_pi] + [info[k] for k in info_keys]
    v_loss = value_loss(ret_ph, v)
    info_shapes = {k: info_phs[k].shape.as_list()[1:] for k in info_keys}
    return dict(locals(), ac_kwargs=ac_kwargs)


def value_loss(ret_ph, v):
    """The value regression loss ``mean((ret - v)^2)`` (``ret_ph``, ``v``: ``(batch,)``)."""
    return tf.reduce_mean((ret_ph - v) ** 2)


def make_buffer(obs_dim, action_space, steps_per_epoch, info_shapes, gamma, lam):
    """A ``GAEBuffer`` for one epoch, storing scalar actions for Discrete spaces."""
    act_shape = action_space.shape if isinstance(action_space, Box) else ()
    return GAEBuffer(obs_dim, act_shape, steps_per_epoch, info_shapes, gamma, lam)


def policy_step_fns(sess, x_ph, get_action_ops, v, info_shapes=None):
    """``(step, value)`` callables for the loop, each one ``sess.run`` per call.

    ``info_shapes`` (sorted-key order, as ``build_policy_graph``'s) reshapes each fetched
    ``info`` entry to its per-step shape: a batched ``(1, d)`` one and an unbatched ``(d,)``
    one (the Gaussian's ``log_std``) both become ``(d,)``.
    """
    step_fn = sess.make_callable(get_action_ops, feed_list=[x_ph])
    v_fn = sess.make_callable(v, feed_list=[x_ph])
    shapes = [tuple(info_shapes[k]) for k in sorted(info_shapes)] if info_shapes else None

    def step(o):
        a, v_t, logp_t, *info_t = step_fn(o.reshape(1, -1))
        if shapes is not None:
            info_t = [np.reshape(x, s) for x, s in zip(info_t, shapes)]
        else:
            info_t = [x[0] for x in info_t]
        return a[0], v_t[0], logp_t[0], info_t

    def value(o):
        return v_fn(o.reshape(1, -1))[0]
    return step, value


def value_steps(sess, all_phs, train_op, v_loop, train_v_iters):
    """``train_v(inputs)``: ``train_v_iters`` value-function steps on the full batch
    (``GAEBuffer.get()``'s list, in ``all_phs`` order).

    With ``v_loop`` (``FusedOnPolicy.v_loop``) they run as one ``sess.run``; with None, as
    ``train_v_iters`` runs of ``train_op`` (Spinning Up's loop).
    """
    if v_loop is not None:
        fused = sess.make_callable(v_loop, feed_list=all_phs)
        return lambda inputs: fused(*inputs)
    plain = sess.make_callable(train_op, feed_list=all_phs)

    def train_v(inputs):
        for _ in range(train_v_iters):
            plain(*inputs)
    return train_v


def run_on_policy(env, logger, buf, step, value, update, *, seed, steps_per_epoch, epochs,
                  max_ep_len, save_freq, diagnostics, finite_keys, save_state=None,
                  session=None, new_policy=None):
    """Collect an epoch, update, log; ``epochs`` times.

    Args:
        step: ``step(o) -> (a, v, logp, info)`` samples an action ``(act_dim,)`` (a scalar for
            Discrete) with its value estimate, log-likelihood and the policy's distribution
            parameters (a sequence in sorted-key order), all in one ``sess.run``.
        value: ``value(o) -> V(o)``, for bootstrapping cut trajectories.
        update: ``update(buf)`` trains on the full buffer and stores its diagnostics.
        diagnostics: ``(key, log_tabular kwargs)`` logged after TotalEnvInteracts.
        finite_keys: diagnostics that must stay finite (else ``NonFiniteError``).
        save_state: ``save_state(epoch)``; called every ``save_freq`` epochs, at the last one,
            and with ``None`` on Ctrl-C.
        session: closed, with the logger and env, when the loop ends for any reason.
        new_policy: called before each epoch's collection (after a checkpoint restore, and
            after each update): the fused path pulls the policy's weights into its numpy
            mirror there.

    A Box action is clipped to the action space when it is sent to the env, but stored
    unclipped, so that its log-likelihood matches what the policy sampled.
    """
    checkpointer = Checkpointer(logger, [env], buf)
    loop_state = dict(t=0, epoch=0, elapsed=0.0, o=None)
    started = time.time()
    try:
        _loop(env, logger, buf, step, value, update, seed, steps_per_epoch, epochs,
              max_ep_len, save_freq, diagnostics, finite_keys, save_state, checkpointer,
              loop_state, new_policy)
    except KeyboardInterrupt:
        logger.log('Interrupted: saving the model and a checkpoint before exiting.', 'yellow')
        if save_state is not None:
            save_state(None)
        # The open trajectory is cut here: close it with V(s_T), as at an epoch boundary.
        if buf.path_start_idx < buf.ptr and loop_state['o'] is not None:
            buf.finish_path(value(loop_state['o']))
        checkpointer.save(dict(loop_state, o=None,
                               elapsed=loop_state['elapsed'] + time.time() - started))
        raise
    finally:
        logger.close()
        env.close()
        if session is not None:
            session.close()


def _loop(env, logger, buf, step, value, update, seed, steps_per_epoch, epochs, max_ep_len,
          save_freq, diagnostics, finite_keys, save_state, checkpointer, loop_state,
          new_policy=None):
    space = env.action_space
    clip = (isinstance(space, Box) and np.all(np.isfinite(space.low))
            and np.all(np.isfinite(space.high)))
    start_time = time.time()
    if logger.resume:
        loop_state.update(checkpointer.restore())
        logger.log('Resuming at step %d of epoch %d (%d of %d epochs done).'
                   % (loop_state['t'], loop_state['epoch'] + 1, loop_state['epoch'], epochs),
                   'cyan')
        if loop_state['t'] > buf.ptr:
            # Interrupted inside the update, after the buffer was handed over: collect the
            # epoch again rather than train on nothing.
            loop_state['t'] = buf.ptr
        o, _ = env.reset()  # a fresh episode; the env's RNG state was restored
    else:
        o = seed_env(env, seed)
    ep_ret, ep_len = 0.0, 0

    for epoch in range(loop_state['epoch'] + 1, epochs + 1):
        if new_policy is not None:
            new_policy()  # the policy's weights changed (update, restore) since the last pull
        for t in range(loop_state['t'], steps_per_epoch):
            check_stop()  # Ctrl-C / SIGTERM take effect here, between two steps
            a, v_t, logp_t, info_t = step(o)
            o2, r, terminated, truncated, _ = env.step(np.clip(a, space.low, space.high)
                                                       if clip else a)
            ep_ret += r
            ep_len += 1

            # save and log
            buf.store(o, a, r, v_t, logp_t, info_t)
            logger.store(VVals=v_t)
            loop_state['t'] = t + 1

            # Update obs (critical!)
            o = o2
            loop_state['o'] = o

            truncated = truncated or ep_len == max_ep_len
            epoch_ended = t == steps_per_epoch - 1
            if terminated or truncated or epoch_ended:
                if epoch_ended and not (terminated or truncated):
                    logger.log('Warning: trajectory cut off by epoch at %d steps.' % ep_len,
                               'yellow')
                # Terminal state: nothing follows. Cut trajectory: bootstrap from V(s_T).
                buf.finish_path(0.0 if terminated else value(o))
                if terminated or truncated:
                    # only save EpRet / EpLen if the episode really ended
                    logger.store(EpRet=ep_ret, EpLen=ep_len)
                o, _ = env.reset()
                loop_state['o'] = None
                ep_ret, ep_len = 0.0, 0

        # Perform the update, check it, then save.
        update(buf)
        check_finite(logger, finite_keys, epoch)
        last = epoch == epochs
        if save_state is not None and ((save_freq and epoch % save_freq == 0) or last):
            save_state(epoch)

        # Log info about epoch
        logger.log_tabular('Epoch', epoch)
        logger.log_tabular('EpRet', with_min_and_max=True)
        logger.log_tabular('EpLen', average_only=True)
        logger.log_tabular('VVals', with_min_and_max=True)
        logger.log_tabular('TotalEnvInteracts', epoch * steps_per_epoch)
        for key, kwargs in diagnostics:
            logger.log_tabular(key, **kwargs)
        logger.log_tabular('Time', loop_state['elapsed'] + time.time() - start_time)
        logger.dump_tabular()
        loop_state.update(epoch=epoch, t=0)
        if (save_freq and epoch % save_freq == 0) or last:
            checkpointer.save(dict(loop_state, o=None, elapsed=loop_state['elapsed']
                                   + time.time() - start_time))


# --------------------------------------------------------------------------------------------
# The fused path: numpy acting, training loops in one sess.run
# --------------------------------------------------------------------------------------------
def chain_on_reads(x, layers, reads):
    """The dense chain ``layers`` applied to ``x`` with each variable replaced by
    ``reads[variable.name]``: the ops of ``tf1.dense`` (``act(x @ kernel + bias)``)."""
    h = x
    for layer in layers:
        h = tf.matmul(h, reads[layer.kernel.name]) + reads[layer.bias.name]
        if layer.activation is not None:
            h = layer.activation(h)
    return h


def value_on_reads(g, layers, reads):
    """``(batch,)`` value of ``g.x_ph`` rebuilt on ``reads`` (``layers``:
    ``numpy_onpolicy.actor_critic_layers``'s structure)."""
    return tf.squeeze(chain_on_reads(g.x_ph, layers.v_layers, reads), axis=1)


def logp_on_reads(g, layers, reads):
    """``(batch,)`` log-likelihood of ``g.a_ph`` at ``g.x_ph`` rebuilt on ``reads``, with the
    formulas of ``spinup_tf.algos.core``' categorical and Gaussian policies."""
    out = chain_on_reads(g.x_ph, layers.pi_layers, reads)
    if layers.kind == 'categorical':
        logp_all = tf.nn.log_softmax(out)
        return tf.reduce_sum(tf.one_hot(g.a_ph, depth=layers.act_dim) * logp_all, axis=1)
    return gaussian_likelihood(g.a_ph, out, reads[layers.log_std.name])


def _chain_variables(layers):
    out = [v for layer in layers.pi_layers + layers.v_layers for v in (layer.kernel, layer.bias)]
    return out + ([layers.log_std] if layers.log_std is not None else [])


def fused_train_loop(optimizer, var_list, read_vars, objective, n_iters, stop=None):
    """Up to ``n_iters`` gradient steps as one ``tf.compat.v1.while_loop`` (one ``sess.run``).

    Each iteration reads ``read_vars`` afresh (the reads carry a control dependency on the
    loop counter, which the previous iteration's ``apply_gradients`` op gates), builds
    ``loss, aux = objective(reads)`` on those reads, and applies the gradient of ``loss``
    with respect to ``var_list`` through ``optimizer``: the optimizer object of the plain
    train op, so both paths use the same Adam slots and step counts, and one iteration does
    exactly what one ``sess.run(train_op)`` of the plain loop does.

    Args:
        read_vars: every variable the loss reads (``var_list`` among them).
        stop: optional ``stop(aux) -> bool tensor``; the loop ends after the step whose
            ``aux`` (measured before that step, as the plain loop's fetch is) makes it true.

    Returns:
        ``(steps, stopped)``: int32 number of steps taken, bool whether ``stop`` ended it.
    """
    def cond(i, stopped):
        return tf.logical_and(i < n_iters, tf.logical_not(stopped))

    def body(i, stopped):
        with tf.control_dependencies([i, stopped]):
            reads = {v.name: tf.identity(v) for v in read_vars}
            loss, aux = objective(reads)
            grads = tf.gradients(loss, [reads[v.name] for v in var_list])
            apply = optimizer.apply_gradients(
                [(gr, v) for gr, v in zip(grads, var_list) if gr is not None])
        with tf.control_dependencies([apply]):
            return i + 1, (stop(aux) if stop is not None else tf.identity(stopped))

    return tf.while_loop(cond, body, [tf.constant(0), tf.constant(False)],
                         parallel_iterations=1, back_prop=False, name='fused_train_loop')


class FusedOnPolicy:
    """The fused path of an on-policy algorithm. Build it in the algorithm's graph before the
    session starts (the graph is then finalized), then call :meth:`start` once it runs.

    Args:
        g: the graph namespace of :func:`build_policy_graph` (with ``v_loss``).
        action_space: the env's action space.
        v_optimizer: the optimizer of the plain value train op (built before this).
        train_v_iters: value-function steps per epoch.

    At build time it reads the actor-critic's structure
    (``numpy_onpolicy.actor_critic_layers``) and builds ``v_loop``, the ``train_v_iters``
    value steps as one while loop; :meth:`policy_loop` builds a policy loop (PPO).
    :meth:`start` checks the numpy mirror and the rebuilt ``v``/``logp`` against the graph;
    whatever fails its check falls back to the plain path, with a line in the log.
    """

    def __init__(self, g, action_space, v_optimizer, train_v_iters):
        from spinup_tf.fast.onpolicy_mirrors import actor_critic_layers, NoMirror
        self.g = g
        self.layers, self.reason = None, None
        self.v_loop = self.check_tensors = None
        try:
            self.layers = actor_critic_layers(g, action_space)
        except NoMirror as e:
            self.reason = str(e)
            return
        variables = _chain_variables(self.layers)
        with tf.name_scope('fused'):
            # The rebuilt v and logp outside any loop, compared with the graph's at start-up.
            reads = {v.name: tf.identity(v) for v in variables}
            self.check_tensors = [value_on_reads(g, self.layers, reads),
                                  logp_on_reads(g, self.layers, reads)]
            v_vars = [v for layer in self.layers.v_layers for v in (layer.kernel, layer.bias)]
            self.v_loop = fused_train_loop(
                v_optimizer, v_vars, v_vars,
                lambda r: (value_loss(g.ret_ph, value_on_reads(g, self.layers, r)), None),
                train_v_iters)

    def policy_loop(self, optimizer, var_list, objective, n_iters, stop=None):
        """A fused policy loop (see :func:`fused_train_loop`) on the rebuilt ``logp``:
        ``objective(logp) -> (loss, aux)``. None when the structure is unknown."""
        if self.layers is None:
            return None
        with tf.name_scope('fused'):
            return fused_train_loop(
                optimizer, var_list, _chain_variables(self.layers),
                lambda r: objective(logp_on_reads(self.g, self.layers, r)), n_iters, stop)

    def start(self, sess, obs_dim, logger):
        """Check the numpy mirror and the rebuilt graph pieces.

        Returns:
            ``(step, value, new_policy, loops_ok)``: ``step``/``value`` of the numpy mirror
            and ``new_policy`` pulling its weights (or the graph's per-step ``sess.run``
            callables and None when it cannot be mirrored), and whether the fused training
            loops may be used.
        """
        from spinup_tf.fast.onpolicy_mirrors import numpy_actor_critic
        g = self.g
        if self.layers is None:
            logger.log('Fused path off (acting and training through the plain graph ops): %s'
                       % self.reason, 'yellow')
            step, value = policy_step_fns(sess, g.x_ph, g.get_action_ops, g.v, g.info_shapes)
            return step, value, None, False
        loops_ok = self._check_loops(sess, obs_dim, logger)
        ac = numpy_actor_critic(sess, g, self.layers, obs_dim, logger)
        if ac is None:
            step, value = policy_step_fns(sess, g.x_ph, g.get_action_ops, g.v, g.info_shapes)
            return step, value, None, loops_ok
        return ac.step, ac.value, lambda: ac.pull(sess), loops_ok

    def _check_loops(self, sess, obs_dim, logger, n=16, seed=1):
        g = self.g
        rng = np.random.RandomState(seed)
        obs = rng.uniform(-3, 3, size=(n, obs_dim)).astype(np.float32)
        if self.layers.kind == 'categorical':
            act = rng.randint(0, self.layers.act_dim, size=n)
        else:
            act = rng.randn(n, self.layers.act_dim).astype(np.float32)
        got = sess.run(self.check_tensors + [g.v, g.logp], {g.x_ph: obs, g.a_ph: act})
        for name, a, b in (('v', got[0], got[2]), ('logp', got[1], got[3])):
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6):
                logger.log('Training loops through the plain graph ops: the rebuilt %s '
                           'differs from the graph' % name, 'yellow')
                return False
        return True
