"""The interaction loop of the off-policy algorithms (DDPG, TD3, SAC, DQN).

An algorithm opens a :class:`Run` (envs, checks, logger, ``config.json``, a seeded graph),
builds its graph in ``run.graph`` and hands :meth:`Run.train` two functions:
``train_ops(batch)``, which builds one update's ``sess.run`` lists on a batch of tensors
(``optimizer.minimize``, the polyak ``tf.group`` of ``tf.assign``...), and ``update(j)``,
which names the lists update ``j`` of a round runs. The loop owns everything the algorithms
have in common, in Spinning Up's order: uniform-random actions for the first
``start_steps``, exploration noise, gymnasium's terminated/truncated handling, the update
schedule, and (``spinup_tf.loops.skeleton``) the test episodes, the epoch log, the model
saves and the checkpoints. DQN adds two things of its own, which it passes to
:meth:`Run.train`: epsilon-greedy exploration and a target network updated every so many env
steps. ``Discrete`` actions (DQN, discrete SAC) are stored and fed as one-hot rows.

The updates run one of two ways (the ``fused`` option):

* plain (``fused=False``), Spinning Up's way: ``train_ops`` on the placeholders, a numpy
  ``ReplayBuffer``, and each update's lists run by ``sess.run`` with the sampled batch fed
  (:func:`plain_updates`); the graph acts, one ``sess.run`` per action;
* fast (``fused=True``, the default): ``spinup_tf.fast`` builds ``train_ops`` again on
  batches drawn from a replay buffer in the graph, a window of updates in one ``sess.run``,
  and a numpy mirror of the policy acts. It falls back to the plain way, with a log line, for
  anything it cannot mirror or fuse.

Where a run must behave unlike Spinning Up (a source document's quirks), it passes
``hooks`` (``spinup_tf.loops.hooks``); the loop calls them at named points.
"""
from types import SimpleNamespace

import numpy as np

from spinup_tf.utils.tf1 import tf, lazy_callable
from spinup_tf.utils.envs import off_policy_actions
from spinup_tf.utils.run_checks import (check_off_policy_run, check_off_policy_spaces,
                                        check_noise_option)
from spinup_tf.utils.signals import check_stop
from spinup_tf.utils.progress import Progress
from spinup_tf.utils.atari import is_atari_env
from spinup_tf.utils.run_setup import Setup, split_config
from spinup_tf.utils.checkpoint import noise_state, load_noise_state
from spinup_tf.loops.hooks import Hooks
from spinup_tf.loops.replay_buffer import ReplayBuffer
from spinup_tf.loops.skeleton import EpochLoop

OPTIONS = dict(
    fused=True,                   # the fast engine (spinup_tf.fast); False: Spinning Up's loop
    noise='gaussian',             # exploration noise kind of a deterministic policy
    update_at_episode_end=False,  # all updates at the end of each trajectory
    updates_per_step=1,           # gradient steps per env step
    videos=0,                     # deterministic episodes recorded to <run>/videos/ at the end
    tensorboard=False,            # every progress column as a TensorBoard scalar too
    normalize_obs=False,          # running mean/std observations (spinup_tf.utils.normalize)
    normalize_rew=False,          # rewards / running std of the discounted return (same)
)
"""The loop's options (flags of every off-policy algorithm besides its own parameters)."""

LOOP_PARAMETERS = ('seed', 'steps_per_epoch', 'epochs', 'replay_size', 'batch_size',
                   'start_steps', 'update_after', 'update_every', 'num_test_episodes',
                   'max_ep_len', 'save_freq')


class Run:
    """One off-policy run, from the algorithm's ``locals()``.

    Args:
        algo (str): the algorithm's name.
        env_fn: makes the env (twice: training and test).
        config (dict): the algorithm's ``locals()``: its hyperparameters (``config.json``),
            the loop's (``LOOP_PARAMETERS``) and ``options`` (``OPTIONS``, and ``hooks``).

    Attributes: ``graph``, ``logger``, ``hooks``, ``env``, ``test_env``, ``obs_dim``,
    ``act_dim``, ``act_low`` and ``act_high`` (the env's bounds, ``(act_dim,)`` float32),
    ``policy_space`` (the ``Box`` the policy's tanh output is mapped onto), ``ac_kwargs``
    (the algorithm's, with ``action_space`` the policy space), ``gradient_steps`` (updates
    per round: ``update_every``, or the algorithm's ``gradient_steps``). With a ``Discrete`` action
    space, ``discrete`` is True, ``act_dim`` is the number of actions (the width of a one-hot
    action), the bounds are None and ``policy_space`` is the env's.
    """

    def __init__(self, algo, env_fn, config):
        self.options, self.p, self.hooks, config = split_config(algo, config, OPTIONS,
                                                                LOOP_PARAMETERS, Hooks)
        self.hooks.bind(self.p, self.options, True, config)
        self.act_noise = config.get('act_noise')  # deterministic policies' exploration scale
        # Spinning Up's Gaussian noise, or another process (checked before any write)
        self.gaussian_noise = str(self.options.noise).lower() == OPTIONS['noise']
        if not self.gaussian_noise:
            self.exploration_noise(None, 0.1)
            check_noise_option(algo, self.act_noise)

        def check(env):  # on the first env, before anything is written
            check_off_policy_run(env, algo, self.p, self.options, self.hooks)
        self.setup = Setup(algo, env_fn, config, check, n_envs=2,
                           tensorboard=self.options.tensorboard)
        self.graph, self.logger = self.setup.graph, self.setup.logger
        self.env, self.test_env = self.setup.envs
        # (H, W, C) or (C, H, W) for image observations, stored as the env gives them (uint8)
        self.obs_dim = check_off_policy_spaces(self.env, algo)
        self.images = isinstance(self.obs_dim, tuple)
        # Discrete actions (DQN, SAC) are stored and fed one-hot: act_dim is their number
        self.discrete, self.act_dim, self.act_low, self.act_high = off_policy_actions(
            self.env.action_space, algo)
        self.policy_space = self.env.action_space if self.discrete \
            else self.hooks.policy_space(self.env.action_space)
        self.gradient_steps = config.get('gradient_steps', self.p.update_every)
        # The actor-critic gets the action space (its bounds scale the policy's output)
        self.ac_kwargs = dict(config.get('ac_kwargs') or {}, action_space=self.policy_space)

    def optimizer(self, learning_rate):
        """The optimizer of a train step (Spinning Up's ``tf.train.AdamOptimizer``)."""
        return self.hooks.optimizer(learning_rate)

    def train(self, train_ops, update, batch, act, log_diagnostics, explore=None, saved=None,
              init_ops=(), epsilon=None, target_update=None):
        """Build the update's ops, start the session and run the loop.

        Args:
            train_ops: ``train_ops(batch) -> {name: {key: tensor or op}}``: the algorithm's
                ``sess.run`` lists, built on ``batch`` (the placeholders here; the fast
                engine builds them again on batches it draws in the graph). A list's
                tensors are logged under their keys; its ops are what it runs.
            update: ``update(j) -> names``: the lists update ``j`` of a round runs, in order.
            batch: the placeholders, ``dict(obs1, obs2, acts, rews, done)``.
            act: ``(batch, act_dim)`` deterministic action of ``batch['obs1']`` (test
                episodes, and the training action plus noise when ``explore`` is None).
            log_diagnostics: ``log_diagnostics(logger)`` logs the algorithm's columns after
                ``TotalEnvInteracts``, with ``logger.log_tabular``.
            explore: ``(batch, act_dim)`` training action (SAC's sample), or None.
            saved: ``(inputs, outputs)`` dicts of the SavedModel.
            init_ops: run once after the variables are initialised (target init).
            epsilon: ``epsilon(t)``, or None: epsilon-greedy exploration (DQN), a
                uniform-random action with probability ``epsilon(t)`` at env step ``t``.
            target_update: ``(op, interval)``, or None: ``op`` runs every ``interval`` env
                steps once updates have started (DQN's target network), after that step's
                updates.
        """
        update = self.hooks.update_schedule(update)
        with self.graph.as_default():
            lists = train_ops(batch if self.hooks.transform_batch is None
                              else self.hooks.transform_batch(dict(batch)))
            engine = None
            if self.options.fused:  # the fast engine builds its window in the graph now
                from spinup_tf.fast import FastEngine
                engine = FastEngine(self, train_ops, update, lists, batch, act, explore)
        replay_buffer = engine.replay_buffer if getattr(engine, 'replay_buffer', None) \
            is not None else self.numpy_replay_buffer()
        sess = self.setup.start_session(*saved, init_ops=init_ops)

        # Spinning Up's way: the graph acts, and each update's lists run by sess.run
        act_fn = graph_policy(sess, batch['obs1'], act)
        explore_fn = graph_policy(sess, batch['obs1'], explore) if explore is not None else None
        train_fn = plain_updates(sess, lists, update, batch, replay_buffer, self.p.batch_size,
                                 self.logger)
        on_restore = None
        if engine is not None:  # its numpy mirror acts, and its window updates
            act_fn, explore_fn, train_fn, on_restore = engine.start(sess, act_fn, explore_fn,
                                                                    train_fn)
        if explore_fn is None:  # DQN acts greedily between its epsilon-greedy random actions
            explore_fn = act_fn if self.discrete else self.noisy_policy(act_fn)

        keys = sorted(k for fetches in lists.values() for k in fetches
                      if not isinstance(fetches[k], tf.Operation))
        agent = SimpleNamespace(act=act_fn, explore=explore_fn, train=train_fn,
                                random_action=self.policy_space.sample,
                                log_diagnostics=log_diagnostics, finite_keys=keys,
                                on_restore=on_restore)
        if epsilon is None:
            loop = OffPolicyLoop(self, agent, replay_buffer)
        else:
            from spinup_tf.loops.epsilon_greedy import EpsilonGreedyLoop
            loop = EpsilonGreedyLoop(self, agent, replay_buffer, epsilon, target_update, sess)
        try:
            loop.run()
            if self.options.videos and loop.finished:
                from spinup_tf.utils.video import record_run_videos
                record_run_videos(self, graph_policy(sess, batch['obs1'], act))
        finally:
            sess.close()

    def numpy_replay_buffer(self):
        """Spinning Up's numpy ``ReplayBuffer`` (Atari frame stacks: each frame once)."""
        if self.images and is_atari_env(self.env):  # each frame of the stacks once
            from spinup_tf.loops.frame_stack_buffer import FrameStackReplayBuffer
            return FrameStackReplayBuffer(self.obs_dim, self.act_dim, self.p.replay_size,
                                          self.hooks.sample_with_replacement)
        obs_dtype = self.env.observation_space.dtype if self.images else np.float32
        return ReplayBuffer(self.obs_dim, self.act_dim, self.p.replay_size,
                            self.hooks.sample_with_replacement, obs_dtype)

    def noisy_policy(self, act):
        """The training action of a deterministic policy: ``act(o)`` plus the ``--noise``
        process, clipped (:class:`NoisyPolicy`), as the hooks shape it."""
        noise = None if self.gaussian_noise else self.exploration_noise(self.act_dim,
                                                                         self.act_noise)
        return self.hooks.explore(NoisyPolicy(act, self.act_noise, self.act_low,
                                              self.act_high, noise))

    def exploration_noise(self, act_dim, scale):
        """The ``--noise`` process of ``spinup_tf.loops.noise`` other than Spinning Up's
        Gaussian, of scale ``scale`` (an unknown kind is a ``UserInputError``)."""
        from spinup_tf.loops.noise import exploration_noise
        return exploration_noise(self.options.noise, scale, act_dim, self.p.max_ep_len)


class NoisyPolicy:
    """The training-time action of a deterministic policy (DDPG, TD3), Spinning Up's
    ``get_action(o, act_noise)``::

        a = clip(act(o) + noise, act_low, act_high),   noise ~ act_noise * N(0, I)

    ``reset()`` (called at the start of every episode) resets the noise process, which
    matters for the temporally correlated ones (OU, coloured noise).

    Args:
        act: ``act(o) -> (act_dim,)``, the deterministic policy.
        act_noise (float): the std of Spinning Up's Gaussian noise.
        act_low, act_high: ``(act_dim,)`` bounds of the env's actions.
        noise: None (Spinning Up's Gaussian), or a process of ``spinup_tf.loops.noise``
            (``noise(act_dim) -> (act_dim,)`` with a ``reset()``), which replaces it.
    """

    def __init__(self, act, act_noise, act_low, act_high, noise=None):
        self.act, self.act_noise, self.act_low, self.act_high = act, act_noise, act_low, act_high
        self.noise, self.act_dim = noise, act_low.shape[0]

    def draw(self):
        """One draw of the exploration noise, ``(act_dim,)``."""
        if self.noise is None:
            return self.act_noise * np.random.randn(self.act_dim)
        return self.noise(self.act_dim)

    def __call__(self, o):
        return np.clip(self.act(o) + self.draw(), self.act_low, self.act_high)

    def reset(self):
        if self.noise is not None:
            self.noise.reset()


def plain_updates(sess, lists, update, batch, replay_buffer, batch_size, logger):
    """``train(n)``: ``n`` updates as Spinning Up runs them: each on a batch sampled from the
    numpy ``replay_buffer`` and fed to the placeholders ``batch``, one ``sess.run`` per list
    ``update(j)`` names (made into a callable at its first run), its values stored in the
    logger."""
    names = ('obs1', 'obs2', 'acts', 'rews', 'done')
    runs = {name: lazy_callable(sess, fetches, [batch[k] for k in names])
            for name, fetches in lists.items()}

    def train(n_updates):
        for j in range(n_updates):
            b = replay_buffer.sample_batch(batch_size)
            feeds = [b[k] for k in names]
            for name in update(j):
                outs = runs[name](*feeds)
                logger.store(**{k: v for k, v in outs.items() if v is not None})
    return train


def graph_policy(sess, x_ph, tensor):
    """``f(o)``: ``tensor`` at one observation, one ``sess.run`` (its callable is made at the
    first call: the fast engine's numpy mirror usually acts instead)."""
    fn = lazy_callable(sess, tensor, [x_ph])

    def policy(o):
        return fn(o[None])[0]
    return policy


class OffPolicyLoop(EpochLoop):
    """Collect experience, update, test and log, epoch after epoch (Spinning Up's loop).

    ``agent`` (see ``EpochLoop``) also has ``explore(o)`` (the training action after
    ``start_steps``; its ``reset()``, if any, at each episode start), ``random_action()``
    (before), ``train(n)`` (``n`` gradient steps on the replay buffer, storing diagnostics
    in the logger) and ``on_restore`` (called after a checkpoint loaded, or None). DQN's
    loop (``spinup_tf.loops.epsilon_greedy``) overrides :meth:`acts_at_random` and
    :meth:`after_updates`.
    """

    def __init__(self, run, agent, replay_buffer):
        super().__init__(run, agent, replay_buffer)
        self.options, self.replay_buffer = run.options, replay_buffer
        self.gradient_steps = getattr(run, 'gradient_steps', run.p.update_every)
        # What the buffer stores of an action: a Discrete one as its one-hot row
        self.stored_action = (np.eye(run.act_dim, dtype=np.float32).__getitem__
                              if getattr(run, 'discrete', False) else (lambda a: a))
        self.reset_exploration = getattr(agent.explore, 'reset', lambda: None)

    def resumable_state(self):
        """The open episode and the exploration noise's process state (OU's ``x``,
        coloured noise's buffer)."""
        return dict(episode=self.episode.state_dict(),
                    noise=noise_state(getattr(self.agent.explore, 'noise', None)))

    def start(self):
        """``(t0, o, ep_ret, ep_len)``: where the steps start, fresh or resumed."""
        p, state = self.p, self.state
        if not self.logger.resume:
            self.episode.seed(p.seed)
            self.hooks.before_training(self)
            self.reset_exploration()
            return 0, self.episode.obs, 0.0, 0  # (a hook may have reset the env since)
        if self.agent.on_restore is not None:
            self.agent.on_restore()
        t0 = state['t']
        self.logger.log('Resuming at step %d (epoch %d of %d done).'
                        % (t0, state['epoch'], p.epochs), 'cyan')
        owed = state.get('row_owed', -1)  # set while an epoch ends, cleared once it has
        if owed == -1:  # a checkpoint written before row_owed was recorded
            owed = t0 // p.steps_per_epoch if t0 % p.steps_per_epoch == 0 and \
                state['epoch'] < t0 // p.steps_per_epoch else None
        if owed is not None:
            # Killed between an epoch's last step and its log row: finish that epoch first.
            self.end_epoch(owed, t0, last=t0 == p.steps_per_epoch * p.epochs)
            if self.episode.start is not None:  # its hooks started a training episode
                return t0, self.episode.obs, 0.0, 0
        if state.get('episode'):  # the open episode, where it was
            o, ep_ret, ep_len = self.episode.replay(state['episode'])
            load_noise_state(getattr(self.agent.explore, 'noise', None), state.get('noise'))
            return t0, o, ep_ret, ep_len
        o = self.episode.reset()
        self.reset_exploration()
        return t0, o, 0.0, 0

    def collect(self):
        p, logger, hooks, agent = self.p, self.logger, self.hooks, self.agent
        replay_buffer, state = self.replay_buffer, self.state
        total_steps = p.steps_per_epoch * p.epochs
        t0, o, ep_ret, ep_len = self.start()
        progress = Progress(logger, p.steps_per_epoch, total_steps, start=t0)  # live line

        for t in range(t0, total_steps):
            check_stop()  # Ctrl-C / SIGTERM take effect here, between two steps
            # Until start_steps have elapsed, sample actions uniformly at random for better
            # exploration (the action space is seeded). Afterwards, explore with the policy.
            if self.acts_at_random(t):
                a = agent.random_action()
            else:
                a = agent.explore(o)

            o2, r, terminated, truncated, info = self.episode.step(a)
            ep_ret += info.get('raw_reward', r)  # the env's reward, also with --normalize_rew
            ep_len += 1
            # Hitting the time horizon (the env's TimeLimit or our max_ep_len) is a truncation,
            # not a terminal state: store d = terminated only, so the target bootstraps
            # through it.
            terminal = hooks.terminal(terminated, truncated, ep_len)
            episode_end = terminated or truncated or ep_len == p.max_ep_len
            hooks.store(replay_buffer, o, self.stored_action(a), r, o2, terminal, episode_end)
            state['t'] = t + 1

            # The next step starts from the observation this one reached
            o = o2

            if episode_end:
                if self.options.update_at_episode_end and \
                        hooks.ready_to_update(t, replay_buffer):
                    agent.train(ep_len * self.options.updates_per_step)
                logger.store(EpRet=ep_ret, EpLen=ep_len)
                o = self.episode.reset()
                self.reset_exploration()
                ep_ret, ep_len = 0.0, 0

            if not self.options.update_at_episode_end and t % p.update_every == 0 \
                    and hooks.ready_to_update(t, replay_buffer):
                agent.train(self.gradient_steps * self.options.updates_per_step)

            self.after_updates(t)
            progress(t + 1)
            # End of epoch wrap-up
            if hooks.epoch_due(t, episode_end):
                self.end_epoch(state['epoch'] + 1, t + 1, last=t + 1 == total_steps)
                o = self.episode.obs  # the episode goes on, unless a hook reset the env
        if not self.finished and state['t'] == total_steps:
            hooks.after_last_step(self)
        progress.finish()

    def acts_at_random(self, t):
        """Whether step ``t`` (0-based) takes a uniform-random action: during the first
        ``start_steps`` (the ``random_action_now`` hook)."""
        return self.hooks.random_action_now(t, self.p.start_steps)

    def after_updates(self, t):
        """Called after step ``t``'s updates, before the epoch may end."""
