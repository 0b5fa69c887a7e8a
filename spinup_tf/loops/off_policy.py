"""The interaction loop shared by the off-policy algorithms (DDPG, TD3, SAC).

An algorithm builds its graph and session, then hands this loop three callables: ``act``
(one observation to one action), ``explore`` (the training action) and ``update_window``
(``n`` gradient steps: the fused in-graph window of ``spinup_tf.fast.window``, or
:func:`plain_update_window`'s loop of ``sess.run`` calls), and the names of its
diagnostics. The loop owns everything they have in common: uniform-random actions for
the first ``start_steps``, exploration noise, gymnasium's terminated/truncated handling,
the update schedule, the deterministic test episodes, the epoch log and the model saves.
"""
import time

import numpy as np

from spinup_tf.utils.envs import seed_env, flat_obs_dim, box_action_bounds, env_id_of
from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.logx import EpochLogger
from spinup_tf.utils.checkpoint import Checkpointer
from spinup_tf.utils.errors import check_finite, check_positive_ints
from spinup_tf.utils.signals import check_stop
from spinup_tf.loops.replay_buffer import ReplayBuffer, MIN_SLOTS
from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer
from spinup_tf.fast.window import build_update_window, FusedUpdater
from spinup_tf.fast.mirrors import NoMirror, check_mirror


def setup_off_policy(algo, env_fn, config, logger_kwargs, steps_per_epoch, epochs, batch_size,
                     replay_size):
    """Make the envs, check spaces and budget, then start the logger and write config.json.

    The checks come first so that bad input leaves no run folder behind.

    Returns:
        ``(env, test_env, obs_dim, act_dim, act_low, act_high, logger)`` with ``act_low`` and
        ``act_high`` the ``(act_dim,)`` float32 action bounds.
    """
    env, test_env = env_fn(), env_fn()
    try:
        obs_dim = flat_obs_dim(env.observation_space, algo)
        act_low, act_high = box_action_bounds(env.action_space, algo)
        check_positive_ints(steps_per_epoch=steps_per_epoch, epochs=epochs,
                            batch_size=batch_size, replay_size=replay_size)
        if replay_size < MIN_SLOTS:
            raise UserInputError('replay_size must be at least %d, got %d'
                                 % (MIN_SLOTS, replay_size))
        if batch_size > replay_size:
            raise UserInputError('batch_size (%d) is larger than the replay buffer can hold '
                                 '(replay_size %d)' % (batch_size, replay_size))
    except Exception:
        env.close()
        test_env.close()
        raise
    logger = EpochLogger(**logger_kwargs)
    if not logger.resume:  # a resumed run keeps the config it started with
        logger.save_config(dict(config, algo=algo, env_id=env_id_of(env)))
    return env, test_env, obs_dim, act_low.shape[0], act_low, act_high, logger


def build_replay(fused, obs_dim, act_dim, replay_size, batch_size, update_steps=None,
                 diagnostics=(), actor=None, chunk=1):
    """The replay buffer, and for the fused path its update window (in the default graph).

    Args:
        fused (bool): False: a numpy ``ReplayBuffer`` for Spinning Up's plain loop. True: a
            ``GraphReplayBuffer`` and the fused window of ``update_steps``, ``chunk`` updates
            per loop iteration (see ``spinup_tf.fast.window.build_update_window``), returning
            ``diagnostics``.
        actor: the numpy actor (``spinup_tf.fast.mirrors``) or None; the window also
            returns the values of its ``variables``.

    Returns:
        ``(replay_buffer, window)``; ``window`` is None on the plain path.
    """
    if not fused:
        return ReplayBuffer(obs_dim, act_dim, replay_size), None
    buffer = GraphReplayBuffer(obs_dim, act_dim, replay_size)
    weights = actor.variables if actor is not None else []
    window = build_update_window(buffer, batch_size, update_steps, list(diagnostics), weights,
                                 chunk=chunk)
    return buffer, window


def fused_path(sess, logger, buffer, window, actor, store, checks=()):
    """Acting and updates of the fused path, once the session is up.

    The numpy ``actor`` (weights refreshed by every window) is used only after each
    ``(x_ph, tensor, mirror)`` of ``checks`` matched the graph on random inputs
    (``numpy_policy.check_mirror``).

    Args:
        store: ``store(outputs)`` gets each window's dict of stacked diagnostics.

    Returns:
        ``(actor, update_window, on_restore)``: ``actor`` is None when acting must stay in the
        graph (no actor, or a check failed, which is logged).
    """
    if actor is not None:
        try:
            actor.pull(sess)
            for x_ph, tensor, mirror in checks:
                if mirror is not actor:
                    mirror.pull(sess)
                check_mirror(sess, x_ph, tensor, mirror, int(x_ph.shape[-1]))
        except NoMirror as e:
            logger.log('Acting through the graph: %s' % e, 'yellow')
            actor = None
    updater = FusedUpdater(sess, buffer, window, store,
                           on_weights=actor.set_weights if actor is not None else None)
    on_restore = (lambda: actor.pull(sess)) if actor is not None else None
    return actor, updater, on_restore


class NoisyPolicy:
    """Training-time actions of a deterministic policy: ``clip(act(o) + noise, low, high)``.

    ``reset()`` (called at the start of every episode) resets the noise process, which
    matters for the temporally correlated ones (OU, coloured noise).
    """

    def __init__(self, act, noise, act_low, act_high):
        self.act, self.noise = act, noise
        self.act_low, self.act_high = act_low, act_high
        self.act_dim = int(np.prod(act_low.shape))

    def __call__(self, o):
        return np.clip(self.act(o) + self.noise(self.act_dim), self.act_low, self.act_high)

    def reset(self):
        self.noise.reset()


def plain_update_window(replay_buffer, batch_size, update):
    """Spinning Up's update loop: ``window(n)`` calls ``update(batch, j)`` for ``j < n``,
    each on a fresh numpy batch from ``replay_buffer``."""
    def window(n_updates):
        for j in range(n_updates):
            update(replay_buffer.sample_batch(batch_size), j)
    return window


def run_off_policy(env, test_env, logger, replay_buffer, act, explore, update_window, *, seed,
                   steps_per_epoch, epochs, batch_size, start_steps,
                   update_after, update_every, num_test_episodes, max_ep_len, save_freq,
                   diagnostics, finite_keys, update_at_episode_end=False, updates_per_step=1,
                   random_action=None,
                   save_state=None, session=None, on_epoch_end=None, on_restore=None):
    """Collect experience, update, test and log, epoch after epoch.

    Args:
        act: ``act(o)`` maps an observation ``(obs_dim,)`` to the deterministic action
            ``(act_dim,)`` of the current policy (used in the test episodes).
        explore: ``explore(o)`` gives the training action after ``start_steps`` (e.g. a
            ``NoisyPolicy``, or SAC's sampled action); its ``reset()``, if any, is called at
            the start of every episode.
        update_window: ``update_window(n)`` runs ``n`` gradient steps on batches from
            ``replay_buffer`` and stores their diagnostics in the logger.
        update_at_episode_end (bool): run all updates at the end of each trajectory, one per
            step it had (the DDPG seed's schedule) instead of ``update_every`` steps at a time.
        updates_per_step (int): gradient steps per env step (a window of ``n`` steps runs
            ``n * updates_per_step`` updates).
        random_action: ``random_action()`` for the first ``start_steps`` (default: the env's
            seeded ``action_space.sample``).
        diagnostics: list of ``(key, log_tabular kwargs)`` the algorithm adds after
            TotalEnvInteracts; instead of kwargs, a callable giving the value to log.
        finite_keys: diagnostics that must stay finite; a NaN/Inf stops the run with
            ``NonFiniteError`` before the model is saved again.
        save_state: ``save_state(epoch)`` saves the model (skipped when None). On Ctrl-C
            (``KeyboardInterrupt``) it is called with ``None`` before the interrupt goes on.

    A checkpoint (``spinup_tf.utils.checkpoint``) is written after the log row of every
    ``save_freq``-th epoch and of the last one, and on Ctrl-C; with ``logger.resume`` the loop
    starts from it.
        session: closed, with the logger and both envs, when the loop ends for any reason.
        on_epoch_end: ``on_epoch_end(epoch)`` called after each epoch's row is written.
        on_restore: ``on_restore()`` called after a checkpoint was loaded (e.g. to pull the
            numpy actor's weights).
    """
    checkpointer = Checkpointer(logger, [env, test_env], replay_buffer)
    loop_state = dict(t=0, epoch=0, elapsed=0.0, test_seeded=False)
    started = time.time()
    try:
        _loop(env, test_env, logger, replay_buffer, act, explore, update_window, seed,
              steps_per_epoch, epochs, batch_size, start_steps, update_after, update_every,
              num_test_episodes, max_ep_len, save_freq, diagnostics, finite_keys,
              update_at_episode_end, updates_per_step, random_action or env.action_space.sample,
              save_state, on_epoch_end, on_restore, checkpointer, loop_state)
    except KeyboardInterrupt:
        logger.log('Interrupted: saving the model and a checkpoint before exiting.', 'yellow')
        if save_state is not None:
            save_state(None)
        checkpointer.save(dict(loop_state, elapsed=loop_state['elapsed'] + time.time() - started))
        raise
    finally:
        logger.close()
        env.close()
        test_env.close()
        if session is not None:
            session.close()


def _loop(env, test_env, logger, replay_buffer, act, explore, update_window, seed,
          steps_per_epoch, epochs, batch_size, start_steps, update_after, update_every,
          num_test_episodes, max_ep_len, save_freq, diagnostics, finite_keys,
          update_at_episode_end, updates_per_step, random_action, save_state, on_epoch_end,
          on_restore, checkpointer, loop_state):
    """The loop itself. ``loop_state`` (next step ``t``, finished ``epoch``s, ``elapsed``
    seconds before this process, ``test_seeded``) is kept current so that an interrupt can
    checkpoint it."""
    reset_exploration = getattr(explore, 'reset', lambda: None)

    def test_agent():
        for _ in range(num_test_episodes):
            if not loop_state['test_seeded']:
                o = seed_env(test_env, seed + 10000)
                loop_state['test_seeded'] = True
            else:
                o, _ = test_env.reset()
            ep_ret, ep_len, done = 0.0, 0, False
            while not done:
                # Take deterministic actions at test time (no noise).
                o, r, terminated, truncated, _ = test_env.step(act(o))
                ep_ret += r
                ep_len += 1
                done = terminated or truncated or ep_len == max_ep_len
            logger.store(TestEpRet=ep_ret, TestEpLen=ep_len)

    def run_updates(n_steps):
        update_window(n_steps * updates_per_step)

    def end_epoch(epoch, t):
        check_finite(logger, finite_keys, epoch)
        last = epoch == epochs
        if save_state is not None and ((save_freq and epoch % save_freq == 0) or last):
            save_state(epoch)
        test_agent()

        logger.log_tabular('Epoch', epoch)
        logger.log_tabular('EpRet', with_min_and_max=True)
        logger.log_tabular('TestEpRet', with_min_and_max=True)
        logger.log_tabular('EpLen', average_only=True)
        logger.log_tabular('TestEpLen', average_only=True)
        logger.log_tabular('TotalEnvInteracts', t + 1)
        for key, how in diagnostics:
            if callable(how):  # a value computed now, e.g. from logger.last_stats
                logger.log_tabular(key, how())
            else:
                logger.log_tabular(key, **how)
        logger.log_tabular('Time', loop_state['elapsed'] + time.time() - start_time)
        logger.dump_tabular()
        loop_state['epoch'] = epoch
        if (save_freq and epoch % save_freq == 0) or last:
            checkpointer.save(dict(loop_state, elapsed=loop_state['elapsed']
                                   + time.time() - start_time))
        if on_epoch_end is not None:
            on_epoch_end(epoch)

    start_time = time.time()
    total_steps = steps_per_epoch * epochs
    if logger.resume:
        loop_state.update(checkpointer.restore())
        if on_restore is not None:
            on_restore()
        t0 = loop_state['t']
        logger.log('Resuming at step %d (epoch %d of %d done).'
                   % (t0, loop_state['epoch'], epochs), 'cyan')
        # Killed between an epoch's last step and its log row: finish that epoch first.
        if t0 % steps_per_epoch == 0 and loop_state['epoch'] < t0 // steps_per_epoch:
            end_epoch(t0 // steps_per_epoch, t0 - 1)
        o, _ = env.reset()  # a fresh episode; the env's RNG state was restored
    else:
        t0 = 0
        o = seed_env(env, seed)
    reset_exploration()
    ep_ret, ep_len = 0.0, 0

    for t in range(t0, total_steps):
        check_stop()  # Ctrl-C / SIGTERM take effect here, between two steps
        # Until start_steps have elapsed, sample actions uniformly at random for better
        # exploration (the action space is seeded). Afterwards, explore with the policy.
        if t >= start_steps:
            a = explore(o)
        else:
            a = random_action()

        o2, r, terminated, truncated, _ = env.step(a)
        ep_ret += r
        ep_len += 1
        # Hitting the time horizon (the env's TimeLimit or our max_ep_len) is a truncation,
        # not a terminal state: store d = terminated only, so the target bootstraps through it.
        truncated = truncated or ep_len == max_ep_len
        replay_buffer.store(o, a, r, o2, float(terminated),
                            episode_end=terminated or truncated)
        loop_state['t'] = t + 1

        # Super critical, easy to overlook step: make sure to update most recent observation!
        o = o2

        if terminated or truncated:
            if update_at_episode_end and replay_buffer.size >= update_after:
                run_updates(ep_len)
            logger.store(EpRet=ep_ret, EpLen=ep_len)
            o, _ = env.reset()
            reset_exploration()
            ep_ret, ep_len = 0.0, 0

        if not update_at_episode_end and t >= update_after and t % update_every == 0:
            run_updates(update_every)

        # End of epoch wrap-up
        if (t + 1) % steps_per_epoch == 0:
            end_epoch((t + 1) // steps_per_epoch, t)
