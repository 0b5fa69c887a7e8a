"""The shared off-policy loop: done flags (terminated vs truncated), update schedule, logs."""
import numpy as np
import gymnasium as gym
from gymnasium.spaces import Box
import pytest

from spinup_tf.utils.logx import EpochLogger
from types import SimpleNamespace

from spinup_tf.loops.off_policy import OffPolicyLoop, OPTIONS
from spinup_tf.reproductions.hooks import make_hooks
from spinup_tf.utils.errors import NonFiniteError, check_positive_ints
from spinup_tf.utils.errors import UserInputError
from spinup_tf.loops.replay_buffer import ReplayBuffer


class LineEnv(gym.Env):
    """obs = [step count]; terminates at ``terminate_at`` steps (never when None); reward 1."""

    def __init__(self, terminate_at=None):
        self.observation_space = Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)
        self.action_space = Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self.terminate_at = terminate_at
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], dtype=np.float32), {}

    def step(self, a):
        self.t += 1
        terminated = self.terminate_at is not None and self.t >= self.terminate_at
        return np.array([self.t], dtype=np.float32), 1.0, terminated, False, {}


def _run(tmp_path, env_fn, max_ep_len=1000, steps=20, update_every=5, update_after=0,
         update_at_episode_end=False, loss=0.0, epochs=1, updates_per_step=1, buf=None,
         **options):
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True)
    buf = buf if buf is not None else ReplayBuffer(1, 1, 1000)
    calls = []

    def train(n):
        for j in range(n):
            if hasattr(buf, 'sample_batch'):
                buf.sample_batch(4)
            calls.append((buf.size, j))
            logger.store(LossQ=loss)

    p = SimpleNamespace(seed=0, steps_per_epoch=steps, epochs=epochs, batch_size=4,
                        start_steps=0, update_after=update_after, update_every=update_every,
                        num_test_episodes=1, max_ep_len=max_ep_len, save_freq=1)
    quirks = {k: options.pop(k) for k in list(options) if k not in OPTIONS}
    options = SimpleNamespace(**dict(OPTIONS, update_at_episode_end=update_at_episode_end,
                                     updates_per_step=updates_per_step, **options))
    hooks = make_hooks(**quirks)
    hooks.bind(p, options, True, dict(gamma=0.99, act_noise=0.1))
    agent = SimpleNamespace(act=lambda o: np.zeros(1), explore=lambda o: np.zeros(1),
                            random_action=lambda: np.zeros(1), train=train,
                            log_diagnostics=lambda lg: lg.log_tabular('LossQ'),
                            finite_keys=['LossQ'], on_restore=None)
    run = SimpleNamespace(p=p, options=options, logger=logger, hooks=hooks, env=env_fn(),
                          test_env=env_fn(), num_test_episodes=p.num_test_episodes)
    loop = OffPolicyLoop(run, agent, buf)
    loop.save, loop.save_best = (lambda epoch: None), None  # no model in this loop
    loop.run()
    return buf, calls


def _transitions(buf):
    """The held transitions in storage order: arrays obs1, obs2, done."""
    idxs = np.flatnonzero(buf.valid[:buf.filled])
    b = buf.sample_batch(idxs=idxs)
    return b['obs1'][:, 0], b['obs2'][:, 0], b['done']


def test_termination_is_stored_as_done_and_truncation_is_not(tmp_path):
    # Terminates every 4 steps; the TimeLimit would truncate at 6 but never gets there.
    buf, _ = _run(tmp_path, lambda: LineEnv(terminate_at=4), steps=12)
    obs1, obs2, done = _transitions(buf)
    assert list(done) == [0, 0, 0, 1] * 3
    # The stored next observation is the real last one, not the reset one.
    assert list(obs2[:4]) == [1, 2, 3, 4] and list(obs1[:5]) == [0, 1, 2, 3, 0]


def test_env_time_limit_and_max_ep_len_truncate_without_done(tmp_path):
    env_fn = lambda: gym.wrappers.TimeLimit(LineEnv(), max_episode_steps=5)  # noqa: E731
    buf, _ = _run(tmp_path / 'a', env_fn, steps=15)
    obs1, obs2, done = _transitions(buf)
    assert len(done) == 15 and not done.any()
    # Episode boundary after 5: the truncated step keeps its real next observation.
    assert list(obs2[:6]) == [1, 2, 3, 4, 5, 1]
    buf, _ = _run(tmp_path / 'b', lambda: LineEnv(), max_ep_len=3, steps=9)
    obs1, obs2, done = _transitions(buf)
    assert len(done) == 9 and not done.any()
    assert list(obs1[:4]) == [0, 1, 2, 0] and list(obs2[:4]) == [1, 2, 3, 1]


def test_update_schedule_every_n_steps(tmp_path):
    _, calls = _run(tmp_path, lambda: LineEnv(), steps=20, update_every=5, update_after=5)
    # Windows at t = 5, 10, 15 (t >= update_after and t % update_every == 0), 5 updates each.
    assert len(calls) == 15
    assert [c[0] for c in calls[::5]] == [6, 11, 16]
    assert [c[1] for c in calls[:5]] == [0, 1, 2, 3, 4]


def test_updates_at_episode_end_one_per_step(tmp_path):
    env_fn = lambda: gym.wrappers.TimeLimit(LineEnv(terminate_at=7), max_episode_steps=5)  # noqa
    _, calls = _run(tmp_path, env_fn, steps=20, update_at_episode_end=True)
    # Four episodes of 5 steps: 5 updates at each end, none in between.
    assert len(calls) == 20
    assert [c[0] for c in calls[::5]] == [5, 10, 15, 20]


def test_progress_file_has_the_loop_keys_in_order(tmp_path):
    _run(tmp_path, lambda: LineEnv(terminate_at=4), steps=8, epochs=2)
    lines = (tmp_path / 'progress.txt').read_text().splitlines()
    header = lines[0].split('\t')
    assert header[:12] == ['Epoch', 'AverageEpRet', 'StdEpRet', 'MaxEpRet', 'MinEpRet',
                           'AverageTestEpRet', 'StdTestEpRet', 'MaxTestEpRet', 'MinTestEpRet',
                           'EpLen', 'TestEpLen', 'TotalEnvInteracts']
    assert header[-1] == 'Time' and len(lines) == 3
    row = dict(zip(header, lines[2].split('\t')))
    assert float(row['AverageEpRet']) == 4.0 and float(row['TotalEnvInteracts']) == 16


def test_nan_loss_stops_the_run_naming_epoch_and_key(tmp_path):
    with pytest.raises(NonFiniteError, match='epoch 1: LossQ'):
        _run(tmp_path, lambda: LineEnv(), steps=10, loss=float('nan'))


@pytest.mark.parametrize('kw', [dict(epochs=0), dict(steps_per_epoch=-1),
                                dict(batch_size=2.5), dict(replay_size=0)])
def test_budget_must_be_positive_integers(kw):
    args = dict(steps_per_epoch=10, epochs=1, batch_size=4, replay_size=100)
    args.update(kw)
    with pytest.raises(UserInputError):
        check_positive_ints(**args)


def _horizon_transitions(tmp_path, graph_buffer, **options):
    """Three 5-step paths cut by the time limit with the horizon transition dropped
    (keep_truncated=False), on the plain or the graph buffer: the buffer, and its held
    transitions' obs1, obs2 and done."""
    env_fn = lambda: gym.wrappers.TimeLimit(LineEnv(), max_episode_steps=5)  # noqa: E731
    buf = None
    if graph_buffer:
        from spinup_tf.utils.tf1 import tf, make_session
        from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer
        graph = tf.Graph()
        with graph.as_default():
            buf = GraphReplayBuffer(1, 1, 1000)
            sess = make_session(graph)
        buf.attach(sess)
    buf, _ = _run(tmp_path, env_fn, steps=15, buf=buf, keep_truncated=False, **options)
    if not graph_buffer:
        return (buf, *_transitions(buf))
    buf.flush()
    state = buf.state_dict()
    idxs = np.flatnonzero(state['valid'])
    return buf, state['obs'][idxs, 0], state['obs'][idxs + 1, 0], state['done'][idxs]


@pytest.mark.parametrize('graph_buffer', [False, True])
def test_rllab_drops_the_transition_at_the_horizon(tmp_path, graph_buffer):
    """keep_truncated=False (rllab's include_horizon_terminal=False): an episode cut by the
    time limit stores all its transitions but the last; every stored next observation is
    still the real one. Same on the graph buffer."""
    _, obs1, obs2, done = _horizon_transitions(tmp_path, graph_buffer)
    if not graph_buffer:
        assert not done.any()
    assert list(obs1) == [0, 1, 2, 3] * 3
    assert list(obs2) == [1, 2, 3, 4] * 3


@pytest.mark.parametrize('graph_buffer', [False, True])
def test_mxnet_memory_bootstraps_across_paths_after_a_dropped_horizon(tmp_path, graph_buffer):
    """bootstrap_across_paths (seed 002's ReplayMem: next observation = obss[idx + 1]): with
    the horizon transition dropped, the path's last stored transition (obs 3) takes the next
    path's first observation (0) as its next one, not done; the others keep theirs."""
    buf, obs1, obs2, done = _horizon_transitions(tmp_path, graph_buffer,
                                                 bootstrap_across_paths=True)
    assert list(obs1) == [0, 1, 2, 3] * 3
    # The third path's last transition has no next path yet: it still reads its own (4).
    assert list(obs2) == [1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 4]
    assert not np.any(done)
    assert buf.size == 12


def test_noise_in_unit_actions_is_sigma_times_the_half_range():
    """rllab normalises actions to [-1, 1], so its OU sigma acts on that scale: in env units
    the noise is sigma * (high - low) / 2 (x3 on InvertedPendulum's [-3, 3])."""
    from spinup_tf.loops.noise import exploration_noise
    from spinup_tf.loops.off_policy import NoisyPolicy
    low, high = np.array([-3.0], np.float32), np.array([3.0], np.float32)
    draws = {}
    for unit in (False, True):
        np.random.seed(0)
        policy = make_hooks(noise_in_unit_actions=unit).explore(NoisyPolicy(
            lambda o: np.zeros(1), 0.3, low, high, exploration_noise('ou', 0.3, 1, 1000)))
        draws[unit] = np.array([policy(None) for _ in range(50)])
    assert np.abs(draws[False]).max() < 3  # none clipped: the comparison is exact
    np.testing.assert_allclose(draws[True], np.clip(3.0 * draws[False], low, high),
                               rtol=1e-6)
    assert np.abs(draws[True]).max() > np.abs(draws[False]).max()


def test_test_at_start_logs_the_untrained_policy_as_epoch_0(tmp_path):
    """The udemy seed evaluates before training (evaluations = [evaluate_policy(policy)]):
    with test_at_start the first row is Epoch 0 at 0 steps, with test episodes only."""
    _run(tmp_path, lambda: LineEnv(terminate_at=4), steps=8, epochs=2, test_at_start=True)
    rows = [dict(zip(*[l.split('\t') for l in pair]))
            for pair in [((tmp_path / 'progress.txt').read_text().splitlines()[0], line)
                         for line in (tmp_path / 'progress.txt').read_text().splitlines()[1:]]]
    assert [float(r['Epoch']) for r in rows] == [0, 1, 2]
    assert float(rows[0]['TotalEnvInteracts']) == 0
    assert float(rows[0]['AverageTestEpRet']) == 4.0  # one test episode of 4 steps
    assert rows[0]['AverageEpRet'] == 'nan' and float(rows[1]['AverageEpRet']) == 4.0


class GrowingEnv(LineEnv):
    """Episode k (from 0) terminates after k + 1 steps, so returns grow: 1, 2, 3, ..."""

    def __init__(self):
        super().__init__(terminate_at=0)

    def reset(self, *, seed=None, options=None):
        self.terminate_at += 1
        return super().reset(seed=seed, options=options)


def _rows(path):
    lines = (path / 'progress.txt').read_text().splitlines()
    header = lines[0].split('\t')
    return [dict(zip(header, line.split('\t'))) for line in lines[1:]]


def test_rllab_evaluates_once_after_the_last_epoch_with_eval_samples_episodes(tmp_path,
                                                                             monkeypatch):
    """eval_samples (seed 002 lines 443-455, and the MXNet utils' sample_rewards, one
    rollout per sample): no test episodes until the last epoch, then eval_samples episodes,
    of at most max_ep_len steps."""
    from spinup_tf.loops import skeleton
    lengths = []
    real = skeleton.run_test_episodes
    monkeypatch.setattr(skeleton, 'run_test_episodes', lambda *a, **k: (
        lengths.append(a[2]), real(*a, **k)))
    _run(tmp_path, lambda: LineEnv(terminate_at=4), steps=8, epochs=3, eval_samples=7,
         rllab_logging=True)
    rows = _rows(tmp_path)
    assert lengths == [7]  # one evaluation, at the last epoch, of 7 episodes
    assert [r['AverageTestEpRet'] for r in rows[:2]] == ['nan', 'nan']
    assert float(rows[2]['AverageTestEpRet']) == 4.0 and float(rows[2]['TestEpLen']) == 4.0


def test_test_episodes_and_their_discounted_returns():
    """The test episodes store their returns and lengths (cut at max_ep_len); run on
    rllab's DiscountedReturns, each also stores its discounted return, the last one when
    flushed."""
    from spinup_tf.loops.skeleton import run_test_episodes
    from spinup_tf.reproductions.rllab_logging import DiscountedReturns
    logger = SimpleNamespace(epoch_dict={})
    logger.store = lambda **kw: [logger.epoch_dict.setdefault(k, []).append(v)
                                 for k, v in kw.items()]
    env = gym.wrappers.TimeLimit(LineEnv(terminate_at=4), max_episode_steps=100)
    discounted = DiscountedReturns(env, 0.5, logger)
    run_test_episodes(discounted, lambda o: np.zeros(1), 3, 100, 0, {}, logger)
    assert logger.epoch_dict['TestEpLen'] == [4, 4, 4]
    assert len(logger.epoch_dict['TestEpDiscRet']) == 2  # the last is still open
    discounted.flush()
    # rllab's discount_return: sum_t gamma^t r_t = 1 + .5 + .25 + .125
    np.testing.assert_allclose(logger.epoch_dict['TestEpDiscRet'], [1.875] * 3)
    discounted.flush()  # nothing open: nothing stored
    assert len(logger.epoch_dict['TestEpDiscRet']) == 3
    run_test_episodes(env, lambda o: np.zeros(1), 2, 3, 0, {}, logger)  # max_ep_len 3
    assert logger.epoch_dict['TestEpLen'][3:] == [3, 3]
    assert len(logger.epoch_dict['TestEpDiscRet']) == 3  # the plain env stores none


def test_rllab_es_statistics_cumulative_or_per_epoch(tmp_path):
    """rllab never clears strategy_path_returns (seed 002 lines 103, 309, 495-511): with
    cumulative_es_stats the Es columns of epoch 2 cover epoch 1's episodes too; without,
    only epoch 2's (EpRet). AverageReturn and AverageDiscountedReturn come from the test
    episodes."""
    for cumulative in (False, True):
        d = tmp_path / str(cumulative)
        _run(d, GrowingEnv, steps=10, epochs=2, max_ep_len=1000, rllab_logging=True,
             cumulative_es_stats=cumulative)
        rows = _rows(d)
        # 10 steps per epoch: episodes of 1, 2, 3, 4 steps end in epoch 1 (t = 10), then
        # 5 (t = 15) ends in epoch 2 (the 6-step one is still open at t = 20).
        if cumulative:
            assert float(rows[1]['AverageEsReturn']) == np.mean([1, 2, 3, 4, 5])
            assert float(rows[1]['MinEsReturn']) == 1 and float(rows[1]['MaxEsReturn']) == 5
        else:
            assert float(rows[1]['AverageEsReturn']) == 5.0 == float(rows[1]['AverageEpRet'])
        assert float(rows[0]['AverageEsReturn']) == 2.5
        assert rows[0]['AverageReturn'] == rows[0]['AverageTestEpRet']
        assert 'AverageDiscountedReturn' in rows[0]


def test_unclipped_noisy_actions_leave_the_bounds():
    """TensorLayer seed line 235: action_range * action + noise, never clipped; the default
    clips to the env's bounds."""
    from spinup_tf.loops.off_policy import NoisyPolicy
    low, high = np.array([-2.0], np.float32), np.array([2.0], np.float32)
    draws = {}
    for clip in (True, False):
        np.random.seed(0)
        policy = make_hooks(store_unclipped_actions=not clip).explore(NoisyPolicy(
            lambda o: np.ones(1), 1.0, low, high))
        draws[clip] = np.array([policy(None) for _ in range(200)])
    assert draws[False].max() > 2 and draws[True].max() == 2
    np.testing.assert_allclose(draws[True], np.clip(draws[False], low, high))


def test_noise_process_scale_is_act_noise_even_zero():
    """``--noise ou --act_noise 0`` explores with no noise: the process gets act_noise as its
    scale, whatever its value (a falsy 0 must not fall back to a default)."""
    from types import MethodType
    from spinup_tf.loops.hooks import Hooks
    from spinup_tf.loops.off_policy import Run
    low, high = np.array([-1.0, -1.0], np.float32), np.array([1.0, 1.0], np.float32)
    run = SimpleNamespace(options=SimpleNamespace(noise='ou'), p=SimpleNamespace(max_ep_len=50),
                          gaussian_noise=False, act_dim=2, act_noise=0.0, act_low=low,
                          act_high=high, hooks=Hooks())
    run.exploration_noise = MethodType(Run.exploration_noise, run)
    policy = Run.noisy_policy(run, lambda o: np.array([0.25, -0.5]))
    np.random.seed(0)
    draws = np.array([policy(None) for _ in range(20)])
    np.testing.assert_array_equal(draws, np.tile([0.25, -0.5], (20, 1)))
    run.act_noise = 0.3
    policy = Run.noisy_policy(run, lambda o: np.zeros(2))
    assert np.abs(np.array([policy(None) for _ in range(20)])).max() > 0


def test_episode_recorder_obs_is_where_the_training_episode_continues():
    """``EpisodeRecorder.obs`` is the observation its last seed, reset, step or replay
    returned: after an epoch's end the loop continues from it, so a hook that resets the
    training env there (the udemy seed's evaluation) moves the episode's start."""
    import gymnasium as gym
    from spinup_tf.utils.episode_replay import EpisodeRecorder
    rec = EpisodeRecorder(gym.make('Pendulum-v1'))
    o = rec.seed(3)
    np.testing.assert_array_equal(rec.obs, o)
    for a in ([0.5], [-1.0]):
        o2 = rec.step(np.array(a, np.float32))[0]
        np.testing.assert_array_equal(rec.obs, o2)
    state = rec.state_dict()
    o3 = rec.reset()
    np.testing.assert_array_equal(rec.obs, o3)
    assert not np.array_equal(o3, o2)
    replayed = EpisodeRecorder(gym.make('Pendulum-v1'))
    o4, _, ep_len = replayed.replay(state)
    assert ep_len == 2
    np.testing.assert_array_equal(replayed.obs, o4)
    np.testing.assert_array_equal(o4, o2)
