"""The interaction loop of the on-policy algorithms (VPG, PPO, TRPO, NPG), and its plain
engine.

An algorithm opens a :class:`Run` (Spinning Up's preamble, ``loops.session.Setup``: the env,
the checks, the logger and ``config.json``, a seeded graph), builds its graph in
``run.graph`` on :meth:`Run.actor_critic`, and hands :meth:`Run.train` its one hook,
``update(train, evaluate)``, called once per epoch on the epoch's data (``GAEBuffer.get()``
fed to the placeholders) and returning the epoch's diagnostics, which the loop stores:

* ``train(step)`` runs a step of ``spinup_tf.engine.steps`` on the batch: a ``Minimize`` is
  one gradient step (one Spinning Up ``sess.run``); a ``Repeat`` is up to ``n`` of them,
  ending early once its ``stop`` holds for the diagnostics measured with a step, and
  returns ``(i, stopped)``: the index of the last step taken (Spinning Up's ``StopIter``)
  and whether ``stop`` ended the steps;
* ``evaluate(fetches, feed=None)`` is ``sess.run(fetches)`` with the batch (and ``feed``)
  fed.

The loop owns the rest: exactly ``steps_per_epoch`` steps per epoch with the current
stochastic policy, every trajectory closed with the right bootstrap value, the epoch's log
row, the model saves and the checkpoints. Bootstrapping: a trajectory that *terminated* gets
``last_val = 0``; one that was *cut* (the env's time limit, ``max_ep_len``, or the end of
the epoch) gets ``last_val = V(s_T)`` of the real next observation. (Spinning Up's
``last_val = r if d else v`` was a slip.)

Two engines (the algorithms' ``fused`` flag):

* plain (``fused=False``), Spinning Up's way (:class:`PlainEngine`): one ``sess.run`` per env
  step and per gradient step;
* fast (``fused=True``): ``spinup_tf.fast.on_policy``: a numpy mirror of the policy acts and
  each ``Repeat`` runs as one ``tf.while_loop``, falling back, with a log line, to the plain
  engine for whatever it cannot mirror or loop.
"""
import time
from types import SimpleNamespace

import numpy as np
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, placeholders, placeholder_from_space
from spinup_tf.utils.envs import flat_obs_dim, check_discrete_or_box
from spinup_tf.utils.errors import UserInputError, check_finite, check_positive_ints
from spinup_tf.utils.signals import check_stop
from spinup_tf.loops.episode_replay import EpisodeRecorder
from spinup_tf.utils.checkpoint import Checkpointer
from spinup_tf.utils.progress import Progress
from spinup_tf.loops.evaluation import (run_test_episodes, keep_best, save_best,
                                        deterministic_action)
from spinup_tf.engine.steps import Repeat
from spinup_tf.loops.session import Setup, run_loop, split_config
from spinup_tf.loops.gae_buffer import GAEBuffer

LOOP_PARAMETERS = ('seed', 'steps_per_epoch', 'epochs', 'gamma', 'lam', 'max_ep_len',
                   'save_freq')
OPTIONS = dict(
    fused=True,                   # the fast engine (spinup_tf.fast.on_policy); False: Spinning Up's
    reward_lag=False,             # store the previous step's reward (the TRPO blog's order)
    bootstrap_with_reward=False,  # an ended trajectory bootstraps with its last reward
    timeout_is_terminal=False,    # the time limit ends a trajectory as a terminal state
    normalize_obs=False,          # running mean/std observations (spinup_tf.loops.normalize)
    normalize_rew=False,          # rewards / running std of the discounted return (same)
    num_test_episodes=0,          # deterministic test episodes per epoch (mean / argmax action)
    clip_actions=False,           # clip a Box action to its bounds for env.step (SB3's way)
    tensorboard=False,            # every progress column as a TensorBoard scalar too
)
"""The loop's options (flags of every on-policy algorithm besides its own parameters).

``clip_actions``: Spinning Up sends the sampled Gaussian action to ``env.step`` as it is
(its ``o, r, d, _ = env.step(a[0])``), and so does this loop by default; a MuJoCo env clamps
the control itself but charges its control cost on the action it was given, so an
unclipped action costs more (PPO on HalfCheetah-v5, seed 0, first epoch: AverageEpRet -389
unclipped, -139 clipped). ``True`` clips it to the bounds first, as Stable-Baselines3 does.
Either way the buffer stores the sampled action, whose log-likelihood the policy gave.

``reward_lag``, ``bootstrap_with_reward`` and ``timeout_is_terminal`` are the TRPO blog's
(seed 004) quirks, which its preset switches on: it called
``buf.store(o, a, r)`` before ``env.step`` (so each step stored the reward of the step
before, 0 at an episode's start), ended a trajectory with ``last_val = r if d else V(o)``,
and old gym's ``d`` was also true at the time limit."""
FINITE_KEYS = ('LossPi', 'LossV', 'KL', 'VVals')  # a NaN or Inf here stops the run
BATCH_KEYS = ('x', 'a', 'adv', 'ret', 'logp_old')  # the order of GAEBuffer.get()


class Run:
    """One on-policy run, from the algorithm's ``locals()``.

    Args:
        algo (str): the algorithm's name.
        env_fn: makes the env.
        config (dict): the algorithm's ``locals()``: its hyperparameters (``config.json``)
            and the loop's (``LOOP_PARAMETERS``).
        choices (dict): parameters that must take one of the values listed (TRPO's
            ``algo``), checked with the spaces and budgets before anything is written.

    Attributes: ``graph``, ``logger``, ``env``, ``obs_dim``, ``setup``.
    """

    def __init__(self, algo, env_fn, config, choices=None):
        self.options, self.p, config = split_config(algo, config, OPTIONS, LOOP_PARAMETERS)

        def check(env):
            flat_obs_dim(env.observation_space, algo)
            check_discrete_or_box(env.action_space, algo)
            check_positive_ints(steps_per_epoch=self.p.steps_per_epoch, epochs=self.p.epochs)
            n_test = self.options.num_test_episodes
            if isinstance(n_test, bool) or not isinstance(n_test, int) or n_test < 0:
                raise UserInputError('num_test_episodes must be a non-negative integer, got %r'
                                     % (n_test,))
            for name, allowed in (choices or {}).items():
                if config[name] not in allowed:
                    raise UserInputError('%s must be one of %s, got %r'
                                         % (name, ', '.join(map(repr, allowed)), config[name]))

        n_envs = 2 if self.options.num_test_episodes else 1  # a test env for test episodes
        self.setup = Setup(algo, env_fn, config, check, n_envs=n_envs,
                           tensorboard=self.options.tensorboard)
        self.graph, self.logger = self.setup.graph, self.setup.logger
        self.env = self.setup.envs[0]
        self.test_env = self.setup.envs[1] if n_envs == 2 else None
        self.test_act = None
        self.obs_dim = flat_obs_dim(self.env.observation_space, algo)

    def actor_critic(self, actor_critic, ac_kwargs, keep_info=False):
        """:func:`actor_critic_graph` in the run's graph, for the env's spaces."""
        with self.graph.as_default():
            return actor_critic_graph(self.env.observation_space, self.env.action_space,
                                      actor_critic, ac_kwargs, keep_info)

    def train(self, update, steps, batch, outputs, log):
        """Build the engine, start the session and run the loop.

        Args:
            update: ``update(train, evaluate) -> dict``, the algorithm's update of one epoch
                (see the module's docstring); the loop stores the dict it returns.
            steps: every step ``update`` passes to ``train`` (the engines build them before
                the session starts, as Spinning Up builds its train ops).
            batch: the placeholders by name (``BATCH_KEYS``), and ``info``: the old
                policy's ``info_phs`` when the buffer must keep them (TRPO's KL).
            outputs: the actor-critic's outputs on ``batch['x']``, ``batch['a']``: ``pi,
                logp, logp_pi, info, info_phs, d_kl, v``. They act, and are saved.
            log: the keys of ``update``'s diagnostics, logged (averages) after
                ``TotalEnvInteracts`` in this order.
        """
        p, logger = self.p, self.logger
        pi, logp, logp_pi, info, _, _, v = outputs
        policy = SimpleNamespace(x_ph=batch['x'], a_ph=batch['a'], logp=logp, info=info, v=v)
        info_keys = sorted(batch.get('info', {}))
        info_shapes = {k: batch['info'][k].shape.as_list()[1:] for k in info_keys}
        with self.graph.as_default():
            updater = Updater(update, steps, batch, fused=self.options.fused)
            fast_acting = None
            if self.options.fused:
                from spinup_tf.fast.on_policy import FastActing
                fast_acting = FastActing(policy, self.env.action_space)
            act_shape = self.env.action_space.shape if isinstance(self.env.action_space, Box) \
                else ()
            # Experience buffer
            buf = GAEBuffer(self.obs_dim, act_shape, p.steps_per_epoch, info_shapes, p.gamma,
                            p.lam)
            saved = {'pi': pi, 'v': v}
            if self.test_env is not None:  # test episodes (and test_policy) act with mu
                saved['mu'] = deterministic_action(info, self.env.action_space)
        self.setup.count_vars(['pi', 'v'], ['pi', 'v'])
        sess = self.setup.start_session(inputs={'x': batch['x']}, outputs=saved)
        if 'mu' in saved:
            self.test_act = _test_policy(sess, batch['x'], saved['mu'], self.env.action_space,
                                         self.options.clip_actions)

        # Every step, get: action, value, logprob (and the policy's info, for TRPO's KL)
        step, value = policy_step_fns(sess, batch['x'], [pi, v, logp_pi]
                                      + [info[k] for k in info_keys], v, info_shapes)
        new_policy = None
        if fast_acting is not None:
            step, value, new_policy = fast_acting.start(sess, self.obs_dim, logger, step, value)
        update_on = updater.bind(sess, logger)

        def update_epoch():
            logger.store(**update_on(buf.get()))

        loop = _Loop(self, buf, step, value, update_epoch, new_policy, log, sess)
        loop.run()


def _test_policy(sess, x_ph, mu, space, clip):
    """``act(o)``: the deterministic action at one observation (a Box one clipped to the
    bounds when ``clip``, as training's)."""
    fn = sess.make_callable(mu, feed_list=[x_ph])
    bounded = clip and isinstance(space, Box) and np.all(np.isfinite(space.low)) and \
        np.all(np.isfinite(space.high))

    def act(o):
        a = fn(o.reshape(1, -1))[0]
        return np.clip(a, space.low, space.high) if bounded else a
    return act


def actor_critic_graph(observation_space, action_space, actor_critic, ac_kwargs,
                       keep_info=False):
    """Spinning Up's first lines of graph, in the default graph: the inputs, and the
    actor-critic's main outputs on them.

    Args:
        keep_info: the buffer keeps the old policy's distribution parameters (TRPO's KL).

    Returns:
        ``(batch, outputs, ac)``: ``batch`` maps ``BATCH_KEYS`` to the placeholders
        ``x_ph`` (from the observation space), ``a_ph`` (int32 for ``Discrete``),
        ``adv_ph``, ``ret_ph``, ``logp_old_ph`` (float32 ``(batch,)``), and with
        ``keep_info``, ``info`` to the ``info_phs``; ``outputs`` is ``pi, logp, logp_pi,
        info, info_phs, d_kl, v = actor_critic(x_ph, a_ph, **ac_kwargs)`` (with the
        action space in ``ac_kwargs``); ``ac(batch)`` is the actor-critic on any such
        batch, on the same variables (``reuse=True``): the loss functions build on it.
    """
    # Share information about action space with policy architecture
    ac_kwargs = dict(ac_kwargs, action_space=action_space)

    # Inputs to computation graph
    x_ph = placeholder_from_space(observation_space)
    a_ph = placeholder_from_space(action_space)
    adv_ph, ret_ph, logp_old_ph = placeholders(None, None, None)

    # Main outputs from computation graph
    outputs = actor_critic(x_ph, a_ph, **ac_kwargs)

    # Need all placeholders by name later (to zip with data from buffer)
    batch = dict(x=x_ph, a=a_ph, adv=adv_ph, ret=ret_ph, logp_old=logp_old_ph)
    if keep_info:
        batch['info'] = outputs[4]

    def ac(batch):
        n_vars = len(tf.trainable_variables())  # (a random op's counter is not trained)
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            out = actor_critic(batch['x'], batch['a'], **ac_kwargs)
        if len(tf.trainable_variables()) != n_vars:  # the losses would train another copy
            raise ValueError('the actor_critic made new variables when called again on a '
                             'batch: create them with tf.get_variable (as tf1.dense does) '
                             'so that a second call reuses them')
        return out
    return batch, outputs, ac


def feed_list(batch):
    """The placeholders of ``batch`` in the order of ``GAEBuffer.get()``: ``BATCH_KEYS``,
    then the old policy's info by sorted key."""
    info = batch.get('info', {})
    return [batch[k] for k in BATCH_KEYS] + [info[k] for k in sorted(info)]


def policy_step_fns(sess, x_ph, get_action_ops, v, info_shapes=None):
    """``(step, value)`` callables for the loop, each one ``sess.run`` per call.

    ``get_action_ops`` is ``[pi, v, logp_pi] + info`` (sorted keys); ``info_shapes``
    reshapes each fetched ``info`` entry to its per-step shape: a batched ``(1, d)`` one and
    an unbatched ``(d,)`` one (the Gaussian's ``log_std``) both become ``(d,)``.
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


# --------------------------------------------------------------------------------------------
# Engines
# --------------------------------------------------------------------------------------------
def _inner(step):
    return step.step if isinstance(step, Repeat) else step


class PlainEngine:
    """Spinning Up's way of training: one ``sess.run`` per gradient step, fed the batch.

    Built in the graph: one op per distinct ``Minimize`` of ``steps`` (alone, or inside a
    ``Repeat``), built by ``spinup_tf.engine.ordering.build_call`` as one Spinning Up
    ``sess.run``: the loss (and its diagnostics) from the parameters before the step, then
    the optimizer's write.
    """

    def __init__(self, steps, batch):
        from spinup_tf.engine.ordering import ProgramOrder, build_call
        self.built = {}
        for step in map(_inner, steps):
            if id(step) not in self.built:
                out, ops = build_call(ProgramOrder(), (step,), batch)
                diagnostics = {k: t for _, d in out for k, t in d.items()}
                names = sorted(diagnostics)
                self.built[id(step)] = (names, [tf.group(ops)] + [diagnostics[k]
                                                                  for k in names])

    def bind(self, sess, phs):
        """``train(inputs, step)`` on ``sess``; ``inputs`` in the order of ``phs``."""
        runs = {key: (names, sess.make_callable(fetches, feed_list=phs))
                for key, (names, fetches) in self.built.items()}

        def train(inputs, step):
            names, run = runs[id(_inner(step))]
            if not isinstance(step, Repeat):
                run(*inputs)
                return None
            i = -1
            for i in range(step.n):
                values = run(*inputs)[1:]
                if step.stop is not None and step.stop(
                        {k: np.float64(x) for k, x in zip(names, values)}):
                    return i, True
            return i, False
        return train


class Evaluate:
    """``evaluate(inputs, fetches, feed=None)``: ``sess.run(fetches)`` with ``inputs`` fed to
    the batch's placeholders ``phs`` (those the fetches need) and ``feed`` to others. One
    callable is made per kind of call (no feed-dict building or fetch lookup per call)."""

    def __init__(self, sess, phs):
        self.sess, self.phs, self.callables = sess, list(phs), {}

    def __call__(self, inputs, fetches, feed=None):
        feed = feed or {}
        extra = list(feed)
        key = (repr(tf.nest.map_structure(lambda t: t.name, fetches)),
               tuple(t.name for t in extra))
        if key not in self.callables:
            needed = _placeholders_needed(fetches)
            used = [i for i, ph in enumerate(self.phs) if ph.op in needed]
            run = self.sess.make_callable(fetches, feed_list=[self.phs[i] for i in used]
                                          + extra)
            self.callables[key] = (used, run)
        used, run = self.callables[key]
        return run(*([inputs[i] for i in used] + [feed[t] for t in extra]))


def _placeholders_needed(fetches):
    """The ops ``fetches`` depend on (inputs and control inputs, transitively)."""
    stack = [t.op if hasattr(t, 'op') else t for t in tf.nest.flatten(fetches)]
    seen = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen


class Updater:
    """``update(train, evaluate)`` on one epoch's data through an engine.

    Build it in the graph before the session: the plain engine's steps, and with ``fused``
    the fast engine's loops (``spinup_tf.fast.on_policy.FastTraining``); then
    :meth:`bind` gives ``update_on(inputs) -> dict``, ``inputs`` in ``GAEBuffer.get()``'s
    order.
    """

    def __init__(self, update, steps, batch, fused=False):
        self.update, self.phs = update, feed_list(batch)
        self.plain = PlainEngine(steps, batch)
        self.fast = None
        if fused:
            from spinup_tf.fast.on_policy import FastTraining
            self.fast = FastTraining(steps, batch)

    def bind(self, sess, logger=None):
        train = self.plain.bind(sess, self.phs)
        if self.fast is not None:
            train = self.fast.bind(sess, self.phs, train, logger)
        evaluate = Evaluate(sess, self.phs)

        def update_on(inputs):
            return self.update(lambda step: train(inputs, step),
                               lambda fetches, feed=None: evaluate(inputs, fetches, feed))
        return update_on


def updater(update, steps, batch, fused=False, sess=None):
    """``update`` on one epoch's data outside a run (tests, the benchmark): an
    :class:`Updater` built now in the default graph. With ``sess`` None (before the
    session starts) it is returned, for ``bind(sess)`` later; with ``sess``, the variables
    its engines created (Adam's slots) are initialised and ``update_on`` is returned."""
    built = Updater(update, steps, batch, fused)
    if sess is None:
        return built
    initialized = set(sess.run(tf.report_uninitialized_variables()))
    sess.run(tf.variables_initializer([v for v in tf.global_variables()
                                       if v.op.name.encode() in initialized]))
    return built.bind(sess)


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------
class _Loop:
    """Collect an epoch, update, log; ``epochs`` times (Spinning Up's loop)."""

    def __init__(self, run, buf, step, value, update_epoch, new_policy, log, sess):
        self.p, self.logger, self.env = run.p, run.logger, run.env
        self.options = run.options
        self.buf, self.step, self.value = buf, step, value
        self.update_epoch, self.new_policy, self.log, self.sess = (update_epoch, new_policy,
                                                                   log, sess)
        self.test_env, self.test_act = run.test_env, run.test_act
        self.checkpointer = Checkpointer(self.logger, [self.env] + ([self.test_env] if
                                                                    self.test_env else []), buf)
        self.state = dict(t=0, epoch=0, elapsed=0.0, o=None)
        self.episode = EpisodeRecorder(self.env)  # how to rebuild the open episode on resume

    def run(self):
        def cut_open_trajectory():
            # The open trajectory is cut here: close it with V(s_T), as at an epoch boundary.
            if self.buf.path_start_idx < self.buf.ptr and self.state['o'] is not None:
                self.buf.finish_path(self.value(self.state['o']))
            return dict(o=None, episode=None)  # the resumed run starts a fresh episode
        run_loop(self._loop, self.logger, self.checkpointer, self.state,
                 lambda epoch: self.logger.save_state({'epoch': epoch}),
                 [self.env, self.sess], on_interrupt=cut_open_trajectory)

    def _loop(self):
        p, logger, env, buf, state = self.p, self.logger, self.env, self.buf, self.state
        space = env.action_space
        clip = (self.options.clip_actions and isinstance(space, Box)
                and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)))
        start_time = time.time()
        if logger.resume:
            state.update(self.checkpointer.restore())
            logger.log('Resuming at step %d of epoch %d (%d of %d epochs done).'
                       % (state['t'], state['epoch'] + 1, state['epoch'], p.epochs), 'cyan')
            if state['t'] > buf.ptr:
                # Interrupted inside the update, after the buffer was handed over: collect
                # the epoch again rather than train on nothing.
                state['t'] = buf.ptr
        ep_ret, ep_len = 0.0, 0
        if logger.resume and state.get('episode'):
            o, ep_ret, ep_len = self.episode.replay(state['episode'])  # where it was
        elif logger.resume:
            o = self.episode.reset()  # a fresh episode; the env's RNG state was restored
        else:
            o = self.episode.seed(p.seed)
        quirks = self.options
        r_stored = 0.0  # with reward_lag: the reward the next store records

        progress = Progress(logger, p.steps_per_epoch, p.epochs * p.steps_per_epoch,
                            start=state['epoch'] * p.steps_per_epoch + state['t'])  # live line
        for epoch in range(state['epoch'] + 1, p.epochs + 1):
            if self.new_policy is not None:
                self.new_policy()  # the weights changed (update, restore) since the last pull
            for t in range(state['t'], p.steps_per_epoch):
                check_stop()  # Ctrl-C / SIGTERM take effect here, between two steps
                a, v_t, logp_t, info_t = self.step(o)
                # As Spinning Up, the sampled action goes to the env (clipped to a Box's
                # bounds only with clip_actions) and is stored as sampled, so that its
                # log-likelihood is the policy's.
                o2, r, terminated, truncated, info = self.episode.step(
                    np.clip(a, space.low, space.high) if clip else a)
                ep_ret += info.get('raw_reward', r)  # the env's reward, also with --normalize_rew
                ep_len += 1

                # save and log
                if quirks.reward_lag:
                    r, r_stored = r_stored, r
                buf.store(o, a, r, v_t, logp_t, info_t)
                logger.store(VVals=v_t)
                state['t'] = t + 1

                # Update obs (critical!)
                o = o2
                state['o'] = o

                progress((epoch - 1) * p.steps_per_epoch + t + 1)
                truncated = truncated or ep_len == p.max_ep_len
                if quirks.timeout_is_terminal:
                    terminated, truncated = terminated or truncated, False
                epoch_ended = t == p.steps_per_epoch - 1
                if terminated or truncated or epoch_ended:
                    if epoch_ended and not (terminated or truncated):
                        logger.log('Warning: trajectory cut off by epoch at %d steps.'
                                   % ep_len, 'yellow')
                    # Terminal state: nothing follows. Cut trajectory: bootstrap from V(s_T).
                    if terminated:
                        last_val = r_stored if quirks.reward_lag else r
                        buf.finish_path(last_val if quirks.bootstrap_with_reward else 0.0)
                    else:
                        buf.finish_path(self.value(o))
                    if terminated or truncated:
                        # only save EpRet / EpLen if the episode really ended
                        logger.store(EpRet=ep_ret, EpLen=ep_len)
                    o = self.episode.reset()
                    state['o'] = None
                    ep_ret, ep_len, r_stored = 0.0, 0, 0.0

            # Perform the update, check it, then save.
            self.update_epoch()
            check_finite(logger, FINITE_KEYS, epoch)
            last = epoch == p.epochs
            saving = (p.save_freq and epoch % p.save_freq == 0) or last
            if saving:
                logger.save_state({'epoch': epoch})
            testing = self.test_env is not None
            if testing:  # --num_test_episodes N: the deterministic policy, best model kept
                run_test_episodes(self.test_env, self.test_act, self.options.num_test_episodes,
                                  p.max_ep_len, p.seed, state, logger)
                keep_best(logger, state, epoch, save_best(logger))

            # Log info about epoch
            logger.log_tabular('Epoch', epoch)
            logger.log_tabular('EpRet', with_min_and_max=True)
            if testing:
                logger.log_tabular('TestEpRet', with_min_and_max=True)
            logger.log_tabular('EpLen', average_only=True)
            if testing:
                logger.log_tabular('TestEpLen', average_only=True)
            logger.log_tabular('VVals', with_min_and_max=True)
            logger.log_tabular('TotalEnvInteracts', epoch * p.steps_per_epoch)
            for key in self.log:
                logger.log_tabular(key, average_only=True)
            logger.log_tabular('Time', state['elapsed'] + time.time() - start_time)
            logger.dump_tabular()
            state.update(epoch=epoch, t=0)
            if saving:
                self.checkpointer.save(dict(state, o=None, episode=self.episode.state_dict(),
                                            elapsed=state['elapsed']
                                            + time.time() - start_time))
        progress.finish()
