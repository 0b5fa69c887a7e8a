"""The interaction loop of the off-policy algorithms (DDPG, TD3, SAC), and its plain engine.

An algorithm opens a :class:`Run` (envs, checks, logger, ``config.json``, a seeded graph),
builds its graph in ``run.graph`` and hands :meth:`Run.train` its one hook: ``update(train,
j)`` (``spinup_tf.engine.steps``), with the tensors that act. The loop owns everything the
three have in common: uniform-random actions for the first ``start_steps``, exploration
noise, gymnasium's terminated/truncated handling, the update schedule, the deterministic test
episodes, the epoch log, the model saves and the checkpoints.

Two engines run the updates (the ``fused`` option):

* plain (``fused=False``), Spinning Up's way: a numpy ``ReplayBuffer``, one ``sess.run`` per
  ``train`` call fed with a numpy batch (:class:`PlainUpdates`), one per action;
* fast (``fused=True``, the default): ``spinup_tf.fast``: the buffer in the graph, a window
  of updates in one ``sess.run``, a numpy mirror of the policy acting. It falls back to the
  plain engine, with a log line, for anything it cannot mirror or fuse.
"""
import os.path as osp
import time
from types import SimpleNamespace

import numpy as np
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf
from spinup_tf.utils.envs import flat_obs_dim, box_action_bounds
from spinup_tf.loops.episode_replay import EpisodeRecorder
from spinup_tf.utils.errors import UserInputError, check_finite, check_positive_ints
from spinup_tf.utils.signals import check_stop
from spinup_tf.utils.checkpoint import Checkpointer
from spinup_tf.utils.progress import Progress
from spinup_tf.loops.evaluation import run_test_episodes, keep_best, save_best
from spinup_tf.engine.steps import distinct_calls
from spinup_tf.loops.session import Setup, run_loop, split_config
from spinup_tf.loops.replay_buffer import ReplayBuffer, MIN_SLOTS
from spinup_tf.loops.noise import exploration_noise
from spinup_tf.reproductions.networks import resolve_actor_critic

OPTIONS = dict(
    fused=True,                   # the fast engine (spinup_tf.fast); False: Spinning Up's loop
    noise='gaussian',             # exploration noise kind of a deterministic policy
    update_at_episode_end=False,  # all updates at the end of each trajectory (seeds 000, 001)
    updates_per_step=1,           # gradient steps per env step (3 in the TensorLayer seed)
    normalize_rewards=False,      # batch reward normalisation (the TensorLayer seed)
    action_range=None,            # the policy acts in [-r, r] (the TensorLayer seed)
    rllab_logging=False,          # rllab's extra columns (the MXNet DDPG seed)
    update_count_from=0,          # j of a window's first update (1: the TensorLayer seed's)
    noise_in_unit_actions=False,  # noise scale in [-1, 1] action units (rllab's), not env units
    keep_truncated=True,          # store the transition that hits the time limit (rllab: not)
    bootstrap_across_paths=False,  # with keep_truncated off, the transition before the
                                   # dropped one bootstraps from the next path's first obs
                                   # (the MXNet seed's memory)
    test_at_start=False,          # test episodes before training too, as row Epoch 0 (udemy)
    eval_samples=None,            # test only after the last epoch, this many episodes (rllab)
    cumulative_es_stats=False,    # rllab's Es* columns over every episode so far (rllab)
    store_unclipped_actions=False,  # noisy actions reach env and buffer unclipped (TensorLayer)
    videos=0,                     # deterministic episodes recorded to <run>/videos/ at the end
    tensorboard=False,            # every progress column as a TensorBoard scalar too
    normalize_obs=False,          # running mean/std observations (spinup_tf.loops.normalize)
    normalize_rew=False,          # rewards / running std of the discounted return (same)
)
"""The loop's options (flags of every off-policy algorithm besides its own parameters).
The ``reproductions`` presets switch the seeds' quirks on through them."""

VIDEO_SEED_OFFSET = 20000  # the videos' episodes differ from the training and test ones

LOOP_PARAMETERS = ('seed', 'steps_per_epoch', 'epochs', 'replay_size', 'batch_size',
                   'start_steps', 'update_after', 'update_every', 'num_test_episodes',
                   'max_ep_len', 'save_freq')


class Run:
    """One off-policy run, from the algorithm's ``locals()``.

    Args:
        algo (str): the algorithm's name.
        env_fn: makes the env (twice: training and test).
        config (dict): the algorithm's ``locals()``: its hyperparameters (``config.json``),
            the loop's (``LOOP_PARAMETERS``) and ``options`` (``OPTIONS``).

    Attributes: ``graph``, ``logger``, ``env``, ``obs_dim``, ``act_dim``, ``act_low`` and
    ``act_high`` (the env's bounds, ``(act_dim,)`` float32), ``policy_space`` (the ``Box``
    the policy's tanh output is mapped onto: the env's, unless ``action_range`` is set),
    ``actor_critic`` (the function, a registered name resolved) and ``ac_kwargs``.
    """

    def __init__(self, algo, env_fn, config):
        self.options, self.p, config = split_config(algo, config, OPTIONS, LOOP_PARAMETERS)
        exploration_noise(self.options.noise, 0.1, None)  # a bad kind fails before any write
        self.actor_critic = resolve_actor_critic(config['actor_critic'])
        self.act_noise = config.get('act_noise')  # deterministic policies' exploration scale
        self.gamma = config.get('gamma')  # rllab's AverageDiscountedReturn of the test episodes
        p = self.p
        self.setup = Setup(algo, env_fn, config, lambda env: _check(env, algo, p), n_envs=2,
                           tensorboard=self.options.tensorboard)
        self.graph, self.logger = self.setup.graph, self.setup.logger
        self.env, self.test_env = self.setup.envs
        if self.options.videos and getattr(self.env, 'spec', None) is None:
            raise UserInputError('--videos needs an env made by gymnasium.make (it records a '
                                 'fresh one with render_mode="rgb_array"); this env_fn\'s env '
                                 'has no spec')
        self.obs_dim = flat_obs_dim(self.env.observation_space, algo)
        self.act_low, self.act_high = box_action_bounds(self.env.action_space, algo)
        self.act_dim = self.act_low.shape[0]
        r = self.options.action_range
        self.policy_space = self.env.action_space
        if r is not None:
            self.policy_space = Box(-float(r), float(r), shape=(self.act_dim,), dtype=np.float32)
            self.policy_space.seed(p.seed)  # its uniform start actions repeat with the seed
        # Share information about action space with policy architecture
        self.ac_kwargs = dict(config.get('ac_kwargs') or {}, action_space=self.policy_space)

    def train(self, batch, update, act, explore=None, saved=None, init_ops=(),
              log_diagnostics=None):
        """Build the engine, start the session and run the loop.

        Args:
            batch: the placeholders, ``dict(obs1, obs2, acts, rews, done)``.
            update: ``update(train, j)``, the algorithm's update (``spinup_tf.engine.steps``).
            act: ``(batch, act_dim)`` deterministic action of ``batch['obs1']`` (test
                episodes, and the training action plus noise when ``explore`` is None).
            explore: ``(batch, act_dim)`` training action (SAC's sample), or None.
            saved: ``(inputs, outputs)`` dicts of the SavedModel.
            init_ops: run once after the variables are initialised (target init).
            log_diagnostics: ``log_diagnostics(logger)`` logs the algorithm's columns after
                ``TotalEnvInteracts``, with ``logger.log_tabular``.
        """
        o, p = self.options, self.p
        update = counted_from(update, o.update_count_from)
        with self.graph.as_default():
            plain = PlainUpdates(update, batch, _batch_transform(o))
            engine = None
            if o.fused:
                from spinup_tf.fast import FastEngine
                engine = FastEngine(self, update, batch, act, explore, plain.diagnostics,
                                    _batch_transform(o))
            if engine is None or engine.replay_buffer is None:
                replay_buffer = ReplayBuffer(self.obs_dim, self.act_dim, p.replay_size)
            else:
                replay_buffer = engine.replay_buffer
        inputs, outputs = saved
        sess = self.setup.start_session(inputs, outputs, init_ops)

        act_fn = _graph_policy(sess, batch['obs1'], act)
        explore_fn = _graph_policy(sess, batch['obs1'], explore) if explore is not None \
            else None
        update_window, on_restore = plain.window(sess, replay_buffer, p.batch_size,
                                                 self.logger), None
        if engine is not None:
            act_fn, explore_fn, update_window, on_restore = engine.start(
                sess, act_fn, explore_fn, update_window)
        if explore_fn is None:
            noise = exploration_noise(o.noise, self.act_noise, self.act_dim, p.max_ep_len)
            explore_fn = NoisyPolicy(act_fn, noise, self.act_low, self.act_high,
                                     o.noise_in_unit_actions,
                                     clip=not o.store_unclipped_actions)
        random_action = self.policy_space.sample if o.action_range is not None else \
            self.env.action_space.sample

        agent = SimpleNamespace(act=act_fn, explore=explore_fn, train=update_window,
                                random_action=random_action,
                                log_diagnostics=log_diagnostics or (lambda logger: None),
                                discount=self.gamma,
                                finite_keys=plain.keys, on_restore=on_restore,
                                save=lambda epoch: self.logger.save_state({'epoch': epoch}),
                                save_best=save_best(self.logger))
        loop = Loop(p, o, self.logger, self.env, self.test_env, replay_buffer, agent)
        try:
            loop.run()
        finally:
            sess.close()
        if o.videos and loop.state['epoch'] == p.epochs:
            self.record_videos(o.videos)

    def record_videos(self, episodes):
        """``episodes`` deterministic episodes of the saved final policy, recorded to
        ``<run>/videos/episode-<i>.mp4`` (the udemy seed's ``monitor`` folder of videos)."""
        from spinup_tf.tools.test_policy import load_env_spec, load_policy, record_videos
        out = self.logger.output_dir
        env_id, env_kwargs = load_env_spec(out)  # as test_policy --video reads the run
        get_action, sess = load_policy(out)
        try:
            record_videos(env_id, env_kwargs, get_action,
                          osp.join(out, 'videos'), episodes, self.p.max_ep_len,
                          self.p.seed + VIDEO_SEED_OFFSET)
        finally:
            sess.close()


def counted_from(update, start):
    """``update`` with its index counted from ``start``: ``update(train, j + start)``.

    Spinning Up counts the updates of a window from 0, so TD3's policy steps are the 1st,
    3rd, ... The TensorLayer seed increments its counter before testing it (``update_cnt
    += 1`` then ``update_cnt % delay == 0``): ``start=1`` puts its policy steps on the
    ``delay``-th, ``2 * delay``-th, ... update.
    """
    if not start:
        return update

    def shifted(train, j):
        return update(train, j + start)
    return shifted


def _check(env, algo, p):
    flat_obs_dim(env.observation_space, algo)
    box_action_bounds(env.action_space, algo)
    check_positive_ints(steps_per_epoch=p.steps_per_epoch, epochs=p.epochs,
                        batch_size=p.batch_size, replay_size=p.replay_size)
    if p.replay_size < MIN_SLOTS:
        raise UserInputError('replay_size must be at least %d, got %r' % (MIN_SLOTS,
                                                                        p.replay_size))
    if isinstance(p.batch_size, int) and p.batch_size > p.replay_size:
        raise UserInputError('batch_size (%d) is larger than the replay buffer can hold '
                             '(replay_size %d)' % (p.batch_size, p.replay_size))


def _batch_transform(options):
    if not options.normalize_rewards:
        return None
    from spinup_tf.reproductions.quirks import normalized_rewards
    return normalized_rewards


def _graph_policy(sess, x_ph, tensor):
    """``f(o)``: ``tensor`` at one observation, one ``sess.run``."""
    fn = sess.make_callable(tensor, feed_list=[x_ph])

    def policy(o):
        return fn(o.reshape(1, -1))[0]
    return policy


class NoisyPolicy:
    """Training-time actions of a deterministic policy: ``clip(act(o) + noise, low, high)``.

    ``reset()`` (called at the start of every episode) resets the noise process, which
    matters for the temporally correlated ones (OU, coloured noise).

    With ``unit_actions`` the noise is drawn on the scale of actions normalised to
    ``[-1, 1]``, as rllab does, and so is ``(high - low) / 2`` times larger in env units.
    With ``clip=False`` the noisy action is returned as it is (the TensorLayer seed's
    ``action_range * action + noise``, line 235): the env gets it, and the buffer stores it,
    outside the bounds.
    """

    def __init__(self, act, noise, act_low, act_high, unit_actions=False, clip=True):
        self.act, self.noise = act, noise
        self.act_low, self.act_high = act_low, act_high
        self.act_dim = int(np.prod(act_low.shape))
        self.scale = (act_high - act_low) / 2 if unit_actions else 1.0
        self.clip = clip

    def __call__(self, o):
        a = self.act(o) + self.scale * self.noise(self.act_dim)
        return np.clip(a, self.act_low, self.act_high) if self.clip else a

    def reset(self):
        self.noise.reset()


def noise_state(noise):
    """JSON-able process state of an exploration noise (its array, number and None
    attributes; ``{}`` for none): what lets a resumed run continue OU's ``x``."""
    if noise is None:
        return {}
    out = {}
    for k, v in vars(noise).items():
        if isinstance(v, np.ndarray):
            out[k] = {'array': v.tolist(), 'dtype': v.dtype.str}
        elif v is None or isinstance(v, (bool, int, float, np.integer, np.floating)):
            out[k] = {'value': v.item() if isinstance(v, np.generic) else v}
    return out


def load_noise_state(noise, state):
    """Put :func:`noise_state`'s ``state`` back into ``noise``."""
    if noise is None or not state:
        return
    for k, v in state.items():
        setattr(noise, k, np.asarray(v['array'], dtype=np.dtype(v['dtype']))
                if 'array' in v else v['value'])


class PlainUpdates:
    """The plain engine: every ``train`` call of ``update`` is one ``sess.run``, fed with a
    numpy batch, as in Spinning Up's loop.

    Built in the graph: one op group per distinct call of ``update`` (ordered as one
    Spinning Up ``sess.run`` with chained control dependencies:
    ``spinup_tf.engine.ordering.build_call``). ``diagnostics`` maps each loss function to its
    ``{key: shape}`` (the fast engine's window needs them); ``keys`` lists every key.
    """

    def __init__(self, update, batch, batch_transform=None):
        from spinup_tf.engine.ordering import ProgramOrder, build_call
        self.update, self.batch = update, batch
        self.phs = [batch[k] for k in ('obs1', 'obs2', 'acts', 'rews', 'done')]
        fed = batch_transform(dict(batch)) if batch_transform is not None else batch
        self.calls, self.diagnostics = [], {}
        for call in distinct_calls(update):
            out, ops = build_call(ProgramOrder(), call, fed)
            merged = {k: v for _, d in out for k, v in d.items()}
            names = sorted(merged)
            self.calls.append((call, names, [merged[k] for k in names] + [tf.group(ops)]))
            for loss_fn, d in out:
                self.diagnostics.setdefault(loss_fn, {k: v.shape.as_list() for k, v in d.items()})
        self.keys = sorted(set(k for d in self.diagnostics.values() for k in d))

    def window(self, sess, replay_buffer, batch_size, logger):
        """``window(n)``: ``n`` updates, each on a fresh numpy batch from ``replay_buffer``;
        the diagnostics go to ``logger``."""
        runs = [(call, names, sess.make_callable(fetches, feed_list=self.phs))
                for call, names, fetches in self.calls]

        def train_call(feeds):
            def train(*steps):
                for call, names, run in runs:
                    if len(call) == len(steps) and all(a is b for a, b in zip(call, steps)):
                        values = run(*feeds)
                        logger.store(**dict(zip(names, values[:-1])))
                        return
                raise RuntimeError('update made a train call it did not make when traced')
            return train

        def window(n_updates):
            for j in range(n_updates):
                b = replay_buffer.sample_batch(batch_size)
                feeds = (b['obs1'], b['obs2'], b['acts'], b['rews'], b['done'])
                self.update(train_call(feeds), j)
        return window


class Loop:
    """Collect experience, update, test and log, epoch after epoch (Spinning Up's loop).

    Args:
        p: the loop's parameters (``LOOP_PARAMETERS``: ``steps_per_epoch``, ``epochs``,
            ``start_steps``, ``update_after``, ``update_every``, ``num_test_episodes``,
            ``max_ep_len``, ``save_freq``, ``seed``...), as attributes.
        options: ``OPTIONS`` as attributes (``update_at_episode_end``, ``updates_per_step``).
        logger, env, test_env, replay_buffer: as named.
        agent: the one hook, with ``act(o)`` (deterministic action, test episodes),
            ``explore(o)`` (training action after ``start_steps``; its ``reset()``, if any,
            at each episode start), ``random_action()`` (before ``start_steps``),
            ``train(n)`` (``n`` gradient steps on the replay buffer, storing diagnostics in
            the logger), ``log_diagnostics(logger)``, ``discount`` (gamma, for rllab's
            discounted test return; optional), ``finite_keys`` (stored keys that must
            stay finite), ``on_restore`` (called after a checkpoint loaded, or None) and
            ``save(epoch)`` (saves the model; ``epoch`` None on Ctrl-C; or None).

    Checkpoints (``spinup_tf.utils.checkpoint``) are written after the log row of every
    ``save_freq``-th epoch and of the last one, and on Ctrl-C; with ``logger.resume`` the
    loop starts from one. The envs and the logger are closed when the loop ends.
    """

    def __init__(self, p, options, logger, env, test_env, replay_buffer, agent):
        self.p, self.options, self.logger = p, options, logger
        self.env, self.test_env = env, test_env
        self.replay_buffer, self.act, self.explore = replay_buffer, agent.act, agent.explore
        self.update_window, self.random_action = agent.train, agent.random_action
        self.log_diagnostics, self.finite_keys = agent.log_diagnostics, agent.finite_keys
        self.on_restore, self.save = agent.on_restore, agent.save or (lambda epoch: None)
        self.save_best = getattr(agent, 'save_best', None)
        self.discount = getattr(agent, 'discount', None)
        self.checkpointer = Checkpointer(self.logger, [self.env, self.test_env], replay_buffer)
        self.state = dict(t=0, epoch=0, elapsed=0.0, test_seeded=False)
        self.episode = EpisodeRecorder(env)  # how to rebuild the open episode on resume

    def run(self):
        run_loop(self._loop, self.logger, self.checkpointer, self.state, self.save,
                 [self.env, self.test_env], on_interrupt=self.resumable_state)

    def resumable_state(self):
        """What a checkpoint holds besides ``state``: the open episode and the exploration
        noise's process state (OU's ``x``, coloured noise's buffer)."""
        return dict(episode=self.episode.state_dict(),
                    noise=noise_state(getattr(self.explore, 'noise', None)))

    def test_agent(self, epoch):
        """The epoch's deterministic test episodes: ``num_test_episodes`` of them; with
        ``eval_samples`` (rllab's protocol, seed 002 lines 443-455) none until the last epoch,
        and then ``eval_samples`` episodes: the seed's ``sample_rewards(env, policy,
        eval_samples, max_path_length)`` (the MXNet example's ``utils.py``) runs one rollout
        per sample."""
        p, o = self.p, self.options
        n = p.num_test_episodes
        if o.eval_samples:
            if epoch != p.epochs:
                return
            n = o.eval_samples
        run_test_episodes(self.test_env, self.act, n, p.max_ep_len, p.seed, self.state,
                          self.logger, discount=self.discount if o.rllab_logging else None)

    def run_updates(self, n_steps):
        self.update_window(n_steps * self.options.updates_per_step)

    def end_epoch(self, epoch, t):
        p, logger = self.p, self.logger
        check_finite(logger, self.finite_keys, epoch)
        last = epoch == p.epochs
        saving = (p.save_freq and epoch % p.save_freq == 0) or last
        if saving:
            self.save(epoch)
        self.test_agent(epoch)
        keep_best(logger, self.state, epoch, self.save_best)  # tf1_save_best/: the best yet
        rllab = self.options.rllab_logging
        if rllab:  # before the algorithm's columns consume the stored QVals and Backup
            from spinup_tf.reproductions import rllab_logging
            q_fit = rllab_logging.q_fit_stats(logger)
            es_returns = None
            if self.options.cumulative_es_stats:  # rllab never clears strategy_path_returns
                es_returns = self.state.setdefault('es_returns', [])
                es_returns.extend(float(r) for r in logger.epoch_dict.get('EpRet', []))

        logger.log_tabular('Epoch', epoch)
        logger.log_tabular('EpRet', with_min_and_max=True)
        logger.log_tabular('TestEpRet', with_min_and_max=True)
        logger.log_tabular('EpLen', average_only=True)
        logger.log_tabular('TestEpLen', average_only=True)
        logger.log_tabular('TotalEnvInteracts', t + 1)
        self.log_diagnostics(logger)
        if rllab:
            rllab_logging.log_rllab_columns(logger, q_fit, es_returns)
        logger.log_tabular('Time', self.state['elapsed'] + time.time() - self.start_time)
        logger.dump_tabular()
        logger.epoch_dict.clear()  # values stored but not logged (e.g. DDPG's Backup)
        self.state['epoch'] = epoch
        if saving:
            self.checkpointer.save(dict(self.state, elapsed=self.state['elapsed']
                                        + time.time() - self.start_time,
                                        **self.resumable_state()))

    def _loop(self):
        p, logger, env, replay_buffer = self.p, self.logger, self.env, self.replay_buffer
        reset_exploration = getattr(self.explore, 'reset', lambda: None)
        self.start_time = time.time()
        total_steps = p.steps_per_epoch * p.epochs
        if logger.resume:
            self.state.update(self.checkpointer.restore())
            if self.on_restore is not None:
                self.on_restore()
            t0 = self.state['t']
            logger.log('Resuming at step %d (epoch %d of %d done).'
                       % (t0, self.state['epoch'], p.epochs), 'cyan')
            # Killed between an epoch's last step and its log row: finish that epoch first.
            if t0 % p.steps_per_epoch == 0 and self.state['epoch'] < t0 // p.steps_per_epoch:
                self.end_epoch(t0 // p.steps_per_epoch, t0 - 1)
            if self.state.get('episode'):  # the open episode, where it was
                o, ep_ret, ep_len = self.episode.replay(self.state['episode'])
                load_noise_state(getattr(self.explore, 'noise', None), self.state.get('noise'))
            else:
                o, ep_ret, ep_len = self.episode.reset(), 0.0, 0
                reset_exploration()
        else:
            t0 = 0
            o = self.episode.seed(p.seed)
            if self.options.test_at_start:  # the udemy seed evaluates the untrained policy
                self.end_epoch(0, -1)
            reset_exploration()
            ep_ret, ep_len = 0.0, 0
        progress = Progress(logger, p.steps_per_epoch, total_steps, start=t0)  # live line

        for t in range(t0, total_steps):
            check_stop()  # Ctrl-C / SIGTERM take effect here, between two steps
            # Until start_steps have elapsed, sample actions uniformly at random for better
            # exploration (the action space is seeded). Afterwards, explore with the policy.
            if t >= p.start_steps:
                a = self.explore(o)
            else:
                a = self.random_action()

            o2, r, terminated, truncated, info = self.episode.step(a)
            ep_ret += info.get('raw_reward', r)  # the env's reward, also with --normalize_rew
            ep_len += 1
            # Hitting the time horizon (the env's TimeLimit or our max_ep_len) is a truncation,
            # not a terminal state: store d = terminated only, so the target bootstraps
            # through it.
            truncated = truncated or ep_len == p.max_ep_len
            if truncated and not terminated and not self.options.keep_truncated:
                # rllab drops the transition at the horizon
                replay_buffer.end_episode(keep_stub=not self.options.bootstrap_across_paths)
            else:
                replay_buffer.store(o, a, r, o2, float(terminated),
                                    episode_end=terminated or truncated)
            self.state['t'] = t + 1

            # Super critical, easy to overlook step: make sure to update most recent
            # observation!
            o = o2

            if terminated or truncated:
                if self.options.update_at_episode_end and replay_buffer.size >= p.update_after:
                    self.run_updates(ep_len)
                logger.store(EpRet=ep_ret, EpLen=ep_len)
                o = self.episode.reset()
                reset_exploration()
                ep_ret, ep_len = 0.0, 0

            if not self.options.update_at_episode_end and t >= p.update_after \
                    and t % p.update_every == 0:
                self.run_updates(p.update_every)

            progress(t + 1)
            # End of epoch wrap-up
            if (t + 1) % p.steps_per_epoch == 0:
                self.end_epoch((t + 1) // p.steps_per_epoch, t)
        progress.finish()
