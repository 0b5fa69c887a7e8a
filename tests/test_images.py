"""Image observations: the Nature-DQN encoder's shapes and parameter count against the paper,
uint8 frames in the replay buffer, the Atari preprocessing and the learner-only wrappers, and
DQN and SAC (discrete and continuous) running end to end on image observations."""
import numpy as np
import gymnasium as gym
import pytest
from gymnasium.spaces import Box, Discrete

from spinup_tf.algos import core
from spinup_tf.utils.tf1 import tf, count_vars
from spinup_tf.loops.replay_buffer import ReplayBuffer


def nature_parameters(n_acts):
    """The Nature DQN's parameter count (Mnih et al. 2015, Methods): three conv layers
    (32 8x8, 64 4x4, 64 3x3 filters on 4 frames), a 512-unit layer on the 7x7x64 maps, and
    one output per action."""
    conv = (8 * 8 * 4 * 32 + 32) + (4 * 4 * 32 * 64 + 64) + (3 * 3 * 64 * 64 + 64)
    return conv + (7 * 7 * 64 * 512 + 512) + (512 * n_acts + n_acts)


@pytest.mark.parametrize('shape', [(84, 84, 4), (4, 84, 84)])
def test_nature_cnn_shapes_and_parameter_count(shape):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.uint8, (None,) + shape)
        a = tf.placeholder(tf.float32, (None, 6))
        with tf.variable_scope('main'):
            with tf.variable_scope('enc'):
                feats = core.nature_cnn(x)
            greedy, q_all, q = core.mlp_q_network(x, a, hidden_sizes=(512,),
                                                  action_space=Discrete(6))
        assert feats.shape.as_list() == [None, 3136]
        assert q_all.shape.as_list() == [None, 6] and greedy.shape.as_list() == [None]
        assert count_vars('main/q') == nature_parameters(6) == 1687206
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            frames = np.random.RandomState(0).randint(0, 256, size=(5,) + shape).astype(np.uint8)
            out = sess.run(q_all, {x: frames, a: np.zeros((5, 6), np.float32)})
            assert out.shape == (5, 6) and np.all(np.isfinite(out))


def test_channels_first_and_last_give_the_same_features():
    """The encoder reads a (C, H, W) stack as the same images as their (H, W, C) layout."""
    frames = np.random.RandomState(1).randint(0, 256, size=(3, 84, 84, 4)).astype(np.uint8)
    outs = []
    for layout in ('hwc', 'chw'):
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(0)
            shape = (84, 84, 4) if layout == 'hwc' else (4, 84, 84)
            x = tf.placeholder(tf.uint8, (None,) + shape)
            feats = core.nature_cnn(x)
            with tf.Session(graph=graph) as sess:
                sess.run(tf.global_variables_initializer())
                feed = frames if layout == 'hwc' else frames.transpose(0, 3, 1, 2)
                outs.append(sess.run(feats, {x: feed}))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_replay_buffer_keeps_uint8_frames_once():
    buf = ReplayBuffer((4, 84, 84), 6, 1000, obs_dtype=np.uint8)
    assert buf.obs_buf.dtype == np.uint8 and buf.obs_buf.shape == (1000, 4, 84, 84)
    rng = np.random.RandomState(2)
    frames = rng.randint(0, 256, size=(11, 4, 84, 84)).astype(np.uint8)
    for i in range(10):
        buf.store(frames[i], np.eye(6, dtype=np.float32)[i % 6], 1.0, frames[i + 1], 0.0)
    b = buf.sample_batch(idxs=np.arange(10))
    np.testing.assert_array_equal(b['obs1'], frames[:10])
    np.testing.assert_array_equal(b['obs2'], frames[1:11])
    # One copy of each frame stack: 28,224 bytes per slot, 100k slots in 2.82 GB.
    big = ReplayBuffer((4, 84, 84), 6, 100000, obs_dtype=np.uint8)
    assert big.obs_buf.nbytes == 100000 * 4 * 84 * 84
    assert big.nbytes < 1.01 * big.obs_buf.nbytes


def test_atari_preprocessing_and_the_learners_wrappers():
    from spinup_tf.utils.envs import make_env
    from spinup_tf.utils.atari import is_atari_env, training_wrappers, is_atari_id
    assert is_atari_id('ALE/Breakout-v5') and is_atari_id('BreakoutNoFrameskip-v4')
    assert not is_atari_id('CartPole-v1')
    env = make_env('ALE/Breakout-v5')
    assert env.observation_space.shape == (4, 84, 84) and env.observation_space.dtype == np.uint8
    assert is_atari_env(env)
    learner = training_wrappers(env)
    o, _ = learner.reset(seed=0)
    assert o.shape == (4, 84, 84)
    rng = np.random.RandomState(0)
    lives = learner.unwrapped.ale.lives()
    rewards, raw = [], []
    for _ in range(3000):  # random play loses a life well within this
        o, r, terminated, truncated, info = learner.step(rng.randint(4))
        rewards.append(r)
        raw.append(info['raw_reward'])
        if terminated:
            break
    assert terminated and 0 < learner.unwrapped.ale.lives() < lives  # a life, not the game
    learner.reset()
    assert learner.unwrapped.ale.lives() == lives - 1  # the game went on
    assert set(rewards) <= {-1.0, 0.0, 1.0} and np.sign(raw).tolist() == rewards
    env.close()


class DotEnv(gym.Env):
    """A tiny image task: a 36x36 RGB frame with a bright dot on the left or the right;
    the reward says whether the action points at it (Discrete: 0 left, 1 right; Box: the
    sign of the action). 20 steps an episode."""

    def __init__(self, continuous=False):
        self.observation_space = Box(0, 255, (36, 36, 3), np.uint8)
        self.action_space = Box(-1.0, 1.0, (1,), np.float32) if continuous else Discrete(2)
        self.continuous = continuous

    def _frame(self):
        img = np.zeros((36, 36, 3), np.uint8)
        img[10:26, (2 if self.side == 0 else 20):(16 if self.side == 0 else 34)] = 255
        return img

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.side = 0, int(self.np_random.integers(2))
        return self._frame(), {}

    def step(self, action):
        right = float(np.asarray(action).reshape(-1)[0]) > 0 if self.continuous \
            else int(action) == 1
        r = 1.0 if right == (self.side == 1) else 0.0
        self.t += 1
        self.side = int(self.np_random.integers(2))
        return self._frame(), r, False, self.t >= 20, {}


@pytest.mark.parametrize('algo,continuous', [('ppo', False), ('trpo', True), ('vpg', False)])
def test_image_observations_on_policy(tmp_path, algo, continuous):
    """PPO, TRPO (its Hessian-vector products through the encoder) and VPG on images."""
    from spinup_tf.algos import get_algo
    get_algo(algo)(lambda: DotEnv(continuous), steps_per_epoch=200, epochs=2,
                   ac_kwargs=dict(hidden_sizes=(16,)), train_v_iters=3,
                   logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
    with open(tmp_path / 'progress.txt') as f:
        header, *rows = [line.rstrip('\n').split('\t') for line in f]
    assert len(rows) == 2 and all(np.isfinite(float(v)) for r in rows for v in r)
    assert 0 <= float(rows[-1][header.index('AverageEpRet')]) <= 20


@pytest.mark.parametrize('algo,continuous', [('dqn', False), ('sac', False), ('sac', True)])
def test_image_observations_train_and_act(tmp_path, algo, continuous):
    from spinup_tf.algos.dqn import dqn
    from spinup_tf.algos.sac import sac
    kwargs = dict(steps_per_epoch=150, epochs=2, start_steps=50, update_after=50,
                  num_test_episodes=1, replay_size=500, ac_kwargs=dict(hidden_sizes=(16,)),
                  logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
    if algo == 'dqn':
        kwargs.update(batch_size=16, target_update_interval=50)
        dqn(lambda: DotEnv(), **kwargs)
    else:
        sac(lambda: DotEnv(continuous), batch_size=16, update_every=25, **kwargs)
    with open(tmp_path / 'progress.txt') as f:
        header, *rows = [line.rstrip('\n').split('\t') for line in f]
    assert len(rows) == 2 and all(np.isfinite(float(v)) for r in rows for v in r)
    i = header.index('AverageTestEpRet')
    assert 0 <= float(rows[-1][i]) <= 20


def test_atari_from_the_command_line_trains_tests_and_records(tmp_path):
    """``run.py dqn --env ALE/Pong-v5`` gets the Atari defaults (the Nature network, zoo's
    settings) and the preprocessing; its test episodes score the unclipped game; the saved
    policy plays and records a video through ``test_policy``."""
    from conftest import run_cli
    data = tmp_path / 'data'
    proc = run_cli('dqn', '--env', 'ALE/Pong-v5', '--steps_per_epoch', '120', '--epochs', '1',
                   '--start_steps', '60', '--update_after', '60', '--replay_size', '300',
                   '--num_test_episodes', '1', '--max_ep_len', '60', '--data_dir', data)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run_dir = data / 'dqn_ALE-Pong-v5' / 'dqn_ALE-Pong-v5_s0'  # the id's "/" is not a folder
    import json
    config = json.loads((run_dir / 'config.json').read_text())
    assert config['ac_kwargs'] == {'hidden_sizes': [512]} and config['eps_end'] == 0.01
    assert 'Number of parameters: \tq: %d' % nature_parameters(6) in proc.stdout
    proc = run_cli('test_policy', run_dir, '--episodes', '1', '--len', '30', '--video',
                   tmp_path / 'v')
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / 'v' / 'episode-0.mp4').stat().st_size > 1000


def _frame_stack_stream(rng, steps, k=4, shape=(6, 5), game_len=37, life_len=11):
    """Transitions of a frame-stacked game: stacks shift by one new frame per step; a game
    starts with its first frame repeated (gymnasium's padding); a lost life ends the
    learner's episode but the next one continues the stacks (the game goes on)."""
    out, t_game = [], 0
    frame = lambda: rng.randint(0, 256, size=shape).astype(np.uint8)
    first = frame()
    stack = np.stack([first] * k)
    for t in range(steps):
        nxt = np.concatenate([stack[1:], frame()[None]])
        t_game += 1
        game_over, life_lost = t_game % game_len == 0, t_game % life_len == 0
        out.append((stack, nxt, game_over or life_lost))
        if game_over:
            first = frame()
            stack = np.stack([first] * k)
        elif life_lost:  # the no-op step of the reset
            stack = np.concatenate([nxt[1:], frame()[None]])
        else:
            stack = nxt
    return out


@pytest.mark.parametrize('size', [1000, 53])
def test_frame_stack_buffer_gives_the_stacks_stored(size):
    """Against the buffer of whole stacks, on the same stream, before and after the ring
    wraps (53 slots, 300 transitions): every transition it may draw is the one stored; at
    most k - 1 of the oldest are left out; a checkpoint restores it."""
    from spinup_tf.loops.frame_stack_buffer import FrameStackReplayBuffer
    rng = np.random.RandomState(0)
    whole = ReplayBuffer((4, 6, 5), 3, size, obs_dtype=np.uint8)
    frames = FrameStackReplayBuffer((4, 6, 5), 3, size)
    for i, (o, o2, end) in enumerate(_frame_stack_stream(rng, 300)):
        a = np.eye(3, dtype=np.float32)[i % 3]
        whole.store(o, a, float(i), o2, float(end), episode_end=end)
        frames.store(o, a, float(i), o2, float(end), episode_end=end)
    held = np.flatnonzero(frames.valid[:frames.filled])
    assert set(held) <= set(np.flatnonzero(whole.valid[:whole.filled]))
    assert whole.size - frames.size <= 3 and frames.size == len(held)
    a, b = whole.sample_batch(idxs=held), frames.sample_batch(idxs=held)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    restored = FrameStackReplayBuffer((4, 6, 5), 3, size)
    restored.load_state_dict({k: np.array(v) for k, v in frames.state_dict().items()})
    for key, value in restored.sample_batch(idxs=held).items():
        np.testing.assert_array_equal(value, b[key])
    if size == 1000:  # one frame per slot, plus one stack per game
        assert frames.frames.nbytes == 1000 * 6 * 5
        assert len(frames.heads) == 300 // 37 + 1
