"""The interaction loop of the on-policy algorithms (VPG, PPO, TRPO, NPG), and Spinning Up's
way of running their updates.

An algorithm opens a :class:`Run` (Spinning Up's preamble, ``utils.run_setup.Setup``: the env,
the checks, the logger and ``config.json``, a seeded graph) and builds its graph in
``run.graph`` as Spinning Up does: the placeholders and the actor-critic's outputs
(:meth:`Run.inputs`), then its losses and train ops as a function of a batch,
``train_ops(batch) -> {name: {key: tensor or op}}``, which it calls on the placeholders.
Each entry is one ``sess.run`` list of its update (PPO's ``'pi'``: ``train_pi`` and the
KL; ``'v'``: ``train_v``); a list's ``stop`` entry, a scalar bool, says that a run of
gradient steps ends after this one (PPO's early stop on KL). It hands :meth:`Run.train`
that function, the lists and its update of one epoch, ``update(sess_run, train)``, called
on the epoch's data (``GAEBuffer.get()``, fed to the placeholders) and returning the epoch's
diagnostics, which the loop stores:

* ``sess_run(fetches, feed_dict=None)`` is ``sess.run(fetches, feed_dict=inputs)`` on the
  epoch's data (``feed_dict`` adds other placeholders: TRPO's Hessian-vector product);
* ``train(fetches, n=1)`` is Spinning Up's loop of gradient steps on one list::

      for i in range(n):
          out = sess.run(fetches, feed_dict=inputs)
          if out.get('stop'):
              break

  returning ``(i, stopped)``: the index of the last step (Spinning Up's ``StopIter``) and
  whether ``stop`` ended the loop.

The loop owns the rest: exactly ``steps_per_epoch`` steps per epoch with the current
stochastic policy, every trajectory closed with the right bootstrap value, the epoch's log
row, the model saves and the checkpoints. Bootstrapping: a trajectory that *terminated* gets
``last_val = 0``; one that was *cut* (the env's time limit, ``max_ep_len``, or the end of
the epoch) gets ``last_val = V(s_T)`` of the real next observation. (Spinning Up's
``last_val = r if d else v`` was a slip.)

Two ways to run it (the algorithms' ``fused`` flag):

* plain (``fused=False``), Spinning Up's: one ``sess.run`` per env step and per gradient
  step, as above; nothing of ``spinup_tf.fast`` is imported;
* fast (``fused=True``): ``spinup_tf.fast.on_policy``: a numpy mirror of the policy acts,
  and each ``train(fetches, n)`` of ``n > 1`` steps runs as one ``tf.while_loop`` built from
  the same ``train_ops``, falling back, with a log line, to the plain loop for whatever it
  cannot mirror or loop.

Where a run must behave unlike Spinning Up (a source document's quirks), it passes
``hooks`` (``spinup_tf.loops.hooks``): what a step stores, what a terminal path's last value
is, which states are terminal.
"""
from types import SimpleNamespace

import numpy as np
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, placeholders, placeholder_from_space, lazy_callable
from spinup_tf.utils.envs import observation_shape, check_discrete_or_box
from spinup_tf.utils.flags import IMAGE_ALGORITHMS
from spinup_tf.utils.errors import UserInputError, check_positive_ints
from spinup_tf.utils.signals import check_stop
from spinup_tf.utils.progress import Progress
from spinup_tf.utils.run_setup import Setup, split_config
from spinup_tf.loops.on_policy_hooks import OnPolicyHooks
from spinup_tf.loops.skeleton import EpochLoop
from spinup_tf.loops.gae_buffer import GAEBuffer

LOOP_PARAMETERS = ('seed', 'steps_per_epoch', 'epochs', 'gamma', 'lam', 'max_ep_len',
                   'save_freq', 'num_test_episodes')  # (the last is an option here)
OPTIONS = dict(
    fused=True,                   # the fast engine (spinup_tf.fast.on_policy); False: Spinning Up's
    normalize_obs=False,          # running mean/std observations (spinup_tf.utils.normalize)
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
Either way the buffer stores the sampled action, whose log-likelihood the policy gave."""
FINITE_KEYS = ('LossPi', 'LossV', 'KL', 'VVals')  # a NaN or Inf here stops the run
BATCH_KEYS = ('x', 'a', 'adv', 'ret', 'logp_old')  # the order of GAEBuffer.get()


class Run:
    """One on-policy run, from the algorithm's ``locals()``.

    Args:
        algo (str): the algorithm's name.
        env_fn: makes the env.
        config (dict): the algorithm's ``locals()``: its hyperparameters (``config.json``),
            the loop's (``LOOP_PARAMETERS``) and ``options`` (``OPTIONS``, and ``hooks``).
        choices (dict): parameters that must take one of the values listed (TRPO's
            ``algo``), checked with the spaces and budgets before anything is written.

    Attributes: ``graph``, ``logger``, ``hooks``, ``env``, ``test_env`` (None without test
    episodes), ``obs_dim``, ``actor_critic`` and ``ac_kwargs`` (with the action space).
    """

    def __init__(self, algo, env_fn, config, choices=None):
        self.options, self.p, self.hooks, config = split_config(algo, config, OPTIONS,
                                                                LOOP_PARAMETERS, OnPolicyHooks)
        self.hooks.bind(self.p, self.options, False, config)

        def check(env):
            obs = observation_shape(env.observation_space, algo,
                                    images=algo in IMAGE_ALGORITHMS)
            if isinstance(obs, tuple) and self.options.normalize_obs:
                raise UserInputError('--normalize_obs is for flat observations; images are '
                                     'scaled to [0, 1] by the network')
            check_discrete_or_box(env.action_space, algo)
            check_positive_ints(steps_per_epoch=self.p.steps_per_epoch, epochs=self.p.epochs)
            n_test = self.p.num_test_episodes
            if isinstance(n_test, bool) or not isinstance(n_test, int) or n_test < 0:
                raise UserInputError('num_test_episodes must be a non-negative integer, got %r'
                                     % (n_test,))
            for name, allowed in (choices or {}).items():
                if config[name] not in allowed:
                    raise UserInputError('%s must be one of %s, got %r'
                                         % (name, ', '.join(map(repr, allowed)), config[name]))

        n_envs = 2 if self.p.num_test_episodes else 1  # a test env for test episodes
        self.setup = Setup(algo, env_fn, config, check, n_envs=n_envs,
                           tensorboard=self.options.tensorboard)
        self.graph, self.logger = self.setup.graph, self.setup.logger
        self.env = self.setup.envs[0]
        self.test_env = self.setup.envs[1] if n_envs == 2 else None
        # (H, W, C) or (C, H, W) for image observations, stored as the env gives them (uint8)
        self.obs_dim = observation_shape(self.env.observation_space, algo,
                                         images=algo in IMAGE_ALGORITHMS)
        self.actor_critic = self.hooks.actor_critic(config['actor_critic'])
        self.ac_kwargs = dict(config.get('ac_kwargs') or {})

    def inputs(self, keep_info=False):
        """:func:`actor_critic_graph` in the run's graph, for the env's spaces."""
        with self.graph.as_default():
            return actor_critic_graph(self.env.observation_space, self.env.action_space,
                                      self.actor_critic, self.ac_kwargs, keep_info)

    def optimizer(self, learning_rate):
        """The optimizer of a train step (Spinning Up's ``tf.train.AdamOptimizer``)."""
        return self.hooks.optimizer(learning_rate)

    def train(self, train_ops, lists, update, batch, outputs, log_diagnostics):
        """Start the session and run the loop.

        Args:
            train_ops: ``train_ops(batch) -> {name: {key: tensor or op}}``, the algorithm's
                ``sess.run`` lists built on ``batch`` (see the module's docstring); the fast
                engine builds it again inside its loops.
            lists: ``train_ops(batch)`` on the placeholders: what ``update`` runs.
            update: ``update(sess_run, train) -> dict``, the algorithm's update of one
                epoch (see the module's docstring); the loop stores the dict it returns.
            batch: the placeholders by name (``BATCH_KEYS``), and ``info``: the old
                policy's ``info_phs`` when the buffer must keep them (TRPO's KL).
            outputs: the actor-critic's outputs on ``batch['x']``, ``batch['a']``: ``pi,
                logp, logp_pi, info, info_phs, d_kl, v``. They act, and are saved.
            log_diagnostics: ``log_diagnostics(logger)`` logs the algorithm's columns after
                ``TotalEnvInteracts``, with ``logger.log_tabular``.
        """
        p, logger = self.p, self.logger
        pi, logp, logp_pi, info, _, _, v = outputs
        policy = SimpleNamespace(x_ph=batch['x'], a_ph=batch['a'], logp=logp, info=info, v=v)
        info_keys = sorted(batch.get('info', {}))
        info_shapes = {k: batch['info'][k].shape.as_list()[1:] for k in info_keys}
        with self.graph.as_default():
            updater = Updater(self.hooks.epoch_update(update), train_ops, lists, batch,
                              fused=self.options.fused)
            fast_acting = None
            if self.options.fused:
                from spinup_tf.fast.on_policy import FastActing
                fast_acting = FastActing(policy, self.env.action_space)
            act_shape = self.env.action_space.shape if isinstance(self.env.action_space, Box) \
                else ()
            # Experience buffer
            buf = GAEBuffer(self.obs_dim, act_shape, p.steps_per_epoch, info_shapes, p.gamma,
                            p.lam, obs_dtype=self.env.observation_space.dtype
                            if isinstance(self.obs_dim, tuple) else np.float32,
                            adv_epsilon=self.hooks.advantage_epsilon)
            saved = {'pi': pi, 'v': v}
            if self.test_env is not None:  # test episodes (and test_policy) act with mu
                saved['mu'] = deterministic_action(info, self.env.action_space)
        self.setup.count_vars(['pi', 'v'], ['pi', 'v'])
        sess = self.setup.start_session(inputs={'x': batch['x']}, outputs=saved)
        test_act = None
        if 'mu' in saved:
            test_act = _test_policy(sess, batch['x'], saved['mu'], self.env.action_space,
                                    self.options.clip_actions)

        # What one env step fetches: a ~ pi(.|s), V(s), log pi(a|s) (and the distribution's
        # parameters, for TRPO's KL)
        step, value = policy_step_fns(sess, batch['x'], [pi, v, logp_pi]
                                      + [info[k] for k in info_keys], v, info_shapes)
        new_policy = None
        if fast_acting is not None:
            step, value, new_policy = fast_acting.start(sess, self.obs_dim, logger, step, value)
        update_on = updater.bind(sess, logger)

        def update_epoch():
            logger.store(**update_on(buf.get()))

        agent = SimpleNamespace(act=test_act, step=step, value=value, update=update_epoch,
                                new_policy=new_policy, log_diagnostics=log_diagnostics,
                                finite_keys=FINITE_KEYS, closers=[sess])
        OnPolicyLoop(self, agent, buf).run()


def deterministic_action(info, action_space):
    """The on-policy actor-critic's deterministic action from its ``info``: ``mu`` for a
    Box action space (the Gaussian's mean), ``argmax`` of ``logp_all`` for a Discrete one."""
    if not isinstance(action_space, Box):
        return tf.argmax(info['logp_all'], axis=1, output_type=tf.int32)
    return info['mu']


def _test_policy(sess, x_ph, mu, space, clip):
    """``act(o)``: the deterministic action at one observation (a Box one clipped to the
    bounds when ``clip``, as training's)."""
    fn = lazy_callable(sess, mu, [x_ph])
    bounded = clip and isinstance(space, Box) and np.all(np.isfinite(space.low)) and \
        np.all(np.isfinite(space.high))

    def act(o):
        a = fn(o[None])[0]
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
    # The policy's head depends on the action space (Gaussian for Box, categorical for
    # Discrete)
    ac_kwargs = dict(ac_kwargs, action_space=action_space)

    # Placeholders for a batch of transitions
    x_ph = placeholder_from_space(observation_space)
    a_ph = placeholder_from_space(action_space)
    adv_ph, ret_ph, logp_old_ph = placeholders(None, None, None)

    # The main networks, on the placeholders
    outputs = actor_critic(x_ph, a_ph, **ac_kwargs)

    # The placeholders by name, to feed the buffer's arrays to
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
    step_fn = lazy_callable(sess, get_action_ops, [x_ph])
    v_fn = lazy_callable(sess, v, [x_ph])
    shapes = [tuple(info_shapes[k]) for k in sorted(info_shapes)] if info_shapes else None

    def step(o):
        a, v_t, logp_t, *info_t = step_fn(o[None])
        if shapes is not None:
            info_t = [np.reshape(x, s) for x, s in zip(info_t, shapes)]
        else:
            info_t = [x[0] for x in info_t]
        return a[0], v_t[0], logp_t[0], info_t

    def value(o):
        return v_fn(o[None])[0]
    return step, value


class SessRun:
    """``sess_run(inputs, fetches, feed_dict=None)``: ``sess.run(fetches)`` with ``inputs`` (in
    the order of ``phs``) fed to the batch's placeholders that the fetches need, and
    ``feed_dict`` to others. One callable is made per kind of call, so a call builds no feed
    dict and looks up no fetch."""

    def __init__(self, sess, phs):
        self.sess, self.phs, self.callables = sess, list(phs), {}

    def __call__(self, inputs, fetches, feed_dict=None):
        feed_dict = feed_dict or {}
        extra = list(feed_dict)
        key = (repr(tf.nest.map_structure(lambda t: t.name, fetches)),
               tuple(t.name for t in extra))
        if key not in self.callables:
            needed = _ops_needed(fetches)
            used = [i for i, ph in enumerate(self.phs) if ph.op in needed]
            run = self.sess.make_callable(fetches, feed_list=[self.phs[i] for i in used]
                                          + extra)
            self.callables[key] = (used, run)
        used, run = self.callables[key]
        return run(*([inputs[i] for i in used] + [feed_dict[t] for t in extra]))


def _ops_needed(fetches):
    """The ops ``fetches`` depend on (inputs and control inputs, transitively)."""
    stack = [t if isinstance(t, tf.Operation) else t.op for t in tf.nest.flatten(fetches)]
    seen = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return seen


def plain_train(sess_run):
    """``train(inputs, fetches, n=1)``: Spinning Up's loop of ``n`` gradient steps, each one
    ``sess.run`` of the list ``fetches`` (a dict) on ``inputs``, ended after the first whose
    ``stop`` entry is true. Returns ``(i, stopped)``: the index of the last step and whether
    ``stop`` ended the loop."""
    def train(inputs, fetches, n=1):
        i = -1
        for i in range(n):
            out = sess_run(inputs, fetches)
            if out.get('stop'):
                return i, True
        return i, False
    return train


class Updater:
    """``update(sess_run, train)`` on one epoch's data.

    Build it in the graph before the session (with ``fused``, the fast engine's loops,
    ``spinup_tf.fast.on_policy.FastTraining``, are built from ``train_ops`` here); then
    :meth:`bind` gives ``update_on(inputs) -> dict``, ``inputs`` in ``GAEBuffer.get()``'s
    order.
    """

    def __init__(self, update, train_ops, lists, batch, fused=False):
        self.update, self.phs = update, feed_list(batch)
        self.fast = None
        if fused:
            from spinup_tf.fast.on_policy import FastTraining
            self.fast = FastTraining(train_ops, lists, batch)

    def bind(self, sess, logger=None):
        sess_run = SessRun(sess, self.phs)
        train = plain_train(sess_run)
        if self.fast is not None:
            train = self.fast.bind(sess, self.phs, train, logger)

        def update_on(inputs):
            return self.update(
                lambda fetches, feed_dict=None: sess_run(inputs, fetches, feed_dict),
                lambda fetches, n=1: train(inputs, fetches, n))
        return update_on


def updater(update, train_ops, lists, batch, fused=False, sess=None):
    """``update`` on one epoch's data outside a run (tests, the benchmark): an
    :class:`Updater` built now in the default graph. With ``sess`` None (before the
    session starts) it is returned, for ``bind(sess)`` later; with ``sess``, the variables
    it created (the random counters of the fast engine's loops) are initialised and
    ``update_on`` is returned."""
    built = Updater(update, train_ops, lists, batch, fused)
    if sess is None:
        return built
    initialized = set(sess.run(tf.report_uninitialized_variables()))
    sess.run(tf.variables_initializer([v for v in tf.global_variables()
                                       if v.op.name.encode() in initialized]))
    return built.bind(sess)


class OnPolicyLoop(EpochLoop):
    """Collect an epoch, update, log; ``epochs`` times (Spinning Up's loop).

    ``agent`` (see ``EpochLoop``) also has ``step(o) -> (a, v, logp, info)`` and
    ``value(o)`` (the policy and value at one observation), ``update()`` (the epoch's
    update on the buffer's data, its diagnostics stored) and ``new_policy`` (called when
    the weights changed, or None).
    """

    def __init__(self, run, agent, buf):
        super().__init__(run, agent, buf)
        self.options, self.buf = run.options, buf
        self.o = None  # the open trajectory's last observation
        space = run.env.action_space  # --clip_actions: a Box action clipped to finite bounds
        self.clip = bool(run.options.clip_actions and isinstance(space, Box)
                         and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)))

    def log_columns(self):
        self.logger.log_tabular('VVals', with_min_and_max=True)

    def resumable_state(self):
        return dict(episode=self.episode.state_dict())

    def interrupted_state(self):
        """On Ctrl-C the open trajectory is cut: closed with V(s_T), as at an epoch
        boundary; the resumed run starts a fresh episode."""
        if self.buf.path_start_idx < self.buf.ptr and self.o is not None:
            self.buf.finish_path(self.agent.value(self.o))
        return dict(episode=None)

    def start(self):
        """The first observation and the open episode's return and length, fresh or
        resumed."""
        state, logger = self.state, self.logger
        self.hooks.path_start()
        if not logger.resume:
            return self.episode.seed(self.p.seed), 0.0, 0
        logger.log('Resuming at step %d of epoch %d (%d of %d epochs done).'
                   % (state['t'], state['epoch'] + 1, state['epoch'], self.p.epochs), 'cyan')
        if state['t'] > self.buf.ptr:
            # Interrupted inside the update, after the buffer was handed over: collect
            # the epoch again rather than train on nothing.
            state['t'] = self.buf.ptr
        if state.get('episode'):
            return self.episode.replay(state['episode'])  # where it was
        return self.episode.reset(), 0.0, 0  # a fresh episode; the env's RNG was restored

    def collect(self):
        p, state = self.p, self.state
        o, ep_ret, ep_len = self.start()
        progress = Progress(self.logger, p.steps_per_epoch, p.epochs * p.steps_per_epoch,
                            start=state['epoch'] * p.steps_per_epoch + state['t'])  # live line
        for epoch in range(state['epoch'] + 1, p.epochs + 1):
            if self.agent.new_policy is not None:
                self.agent.new_policy()  # the weights changed (update, restore) since the last pull
            for t in range(state['t'], p.steps_per_epoch):
                o, ep_ret, ep_len = self.step(o, ep_ret, ep_len, t == p.steps_per_epoch - 1)
                state['t'] = t + 1
                progress((epoch - 1) * p.steps_per_epoch + t + 1)

            # Perform the update, then check, save, test and log it.
            self.agent.update()
            state['t'] = 0
            self.end_epoch(epoch, epoch * p.steps_per_epoch, last=epoch == p.epochs)
        progress.finish()

    def step(self, o, ep_ret, ep_len, epoch_ended):
        """One env step with the current stochastic policy, stored; a trajectory that ends
        here (or is cut by the epoch's end) is closed with its bootstrap value. Returns the
        next ``(o, ep_ret, ep_len)``."""
        logger, hooks, space = self.logger, self.hooks, self.env.action_space
        check_stop()  # Ctrl-C / SIGTERM take effect here, between two steps
        a, v_t, logp_t, info_t = self.agent.step(o)
        # As Spinning Up, the sampled action goes to the env (clipped to a Box's bounds only
        # with clip_actions) and is stored as sampled, so that its log-likelihood is the
        # policy's.
        o2, r, terminated, truncated, info = self.episode.step(
            np.clip(a, space.low, space.high) if self.clip else a)
        ep_ret += info.get('raw_reward', r)  # the env's reward, also with --normalize_rew
        ep_len += 1

        # Store the step, and V(s) for the log
        self.buf.store(o, a, hooks.stored_reward(r), v_t, logp_t, info_t)
        logger.store(VVals=v_t)

        # The next observation becomes the current one (easy to forget)
        o = self.o = o2

        terminal = hooks.terminal(terminated, truncated, ep_len)
        ended = terminal or terminated or truncated or ep_len == self.p.max_ep_len
        if ended or epoch_ended:
            if not ended:
                logger.log('The epoch ended inside an episode, %d steps in: its value is '
                           'bootstrapped.' % ep_len, 'yellow')
            # Terminal state: nothing follows. Cut trajectory: bootstrap from V(s_T).
            self.buf.finish_path(hooks.terminal_value(r) if terminal else self.agent.value(o))
            if ended:
                # EpRet / EpLen only for an episode that really ended
                logger.store(EpRet=ep_ret, EpLen=ep_len)
            o, self.o = self.episode.reset(), None
            ep_ret, ep_len = 0.0, 0
            hooks.path_start()
        return o, ep_ret, ep_len
