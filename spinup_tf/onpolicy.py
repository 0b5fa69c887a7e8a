"""The interaction loop shared by the on-policy algorithms (TRPO, NPG; VPG and PPO later).

Each epoch collects exactly ``steps_per_epoch`` steps with the current stochastic policy
into a ``GAEBuffer``, closes every trajectory with the right bootstrap value, then hands the
buffer to the algorithm's ``update`` and writes the epoch's log row.

Bootstrapping: a trajectory that *terminated* gets ``last_val = 0``; one that was *cut* (the
env's time limit, ``max_ep_len``, or the end of the epoch) gets ``last_val = V(s_T)`` of the
real next observation. (Spinning Up's ``last_val = r if d else v`` was a slip.)
"""
import time

import numpy as np
from gymnasium.spaces import Box

from spinup_tf.envs import seed_env, flat_obs_dim, check_discrete_or_box, env_id_of
from spinup_tf.logx import EpochLogger
from spinup_tf.onpolicy_buffer import GAEBuffer
from spinup_tf.tf1 import tf, placeholders, placeholder_from_space
from spinup_tf.checkpoint import Checkpointer
from spinup_tf.training import check_finite, check_positive_ints, check_stop


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
    v_loss = tf.reduce_mean((ret_ph - v) ** 2)
    info_shapes = {k: info_phs[k].shape.as_list()[1:] for k in info_keys}
    return dict(locals(), ac_kwargs=ac_kwargs)


def make_buffer(obs_dim, action_space, steps_per_epoch, info_shapes, gamma, lam):
    """A ``GAEBuffer`` for one epoch, storing scalar actions for Discrete spaces."""
    act_shape = action_space.shape if isinstance(action_space, Box) else ()
    return GAEBuffer(obs_dim, act_shape, steps_per_epoch, info_shapes, gamma, lam)


def policy_step_fns(sess, x_ph, get_action_ops, v):
    """``(step, value)`` callables for the loop, each one ``sess.run`` per call."""
    step_fn = sess.make_callable(get_action_ops, feed_list=[x_ph])
    v_fn = sess.make_callable(v, feed_list=[x_ph])

    def step(o):
        a, v_t, logp_t, *info_t = step_fn(o.reshape(1, -1))
        return a[0], v_t[0], logp_t[0], [x[0] for x in info_t]

    def value(o):
        return v_fn(o.reshape(1, -1))[0]
    return step, value


def run_on_policy(env, logger, buf, step, value, update, *, seed, steps_per_epoch, epochs,
                  max_ep_len, save_freq, diagnostics, finite_keys, save_state=None,
                  session=None):
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

    A Box action is clipped to the action space when it is sent to the env, but stored
    unclipped, so that its log-likelihood matches what the policy sampled.
    """
    checkpointer = Checkpointer(logger, [env], buf)
    loop_state = dict(t=0, epoch=0, elapsed=0.0, o=None)
    started = time.time()
    try:
        _loop(env, logger, buf, step, value, update, seed, steps_per_epoch, epochs,
              max_ep_len, save_freq, diagnostics, finite_keys, save_state, checkpointer,
              loop_state)
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
          save_freq, diagnostics, finite_keys, save_state, checkpointer, loop_state):
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
