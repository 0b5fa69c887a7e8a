"""Reliability: identical reruns, NaN guard, checkpoints, safe loading (in-process parts).

The subprocess parts (kill -9 then resume, SIGINT/SIGTERM) are in test_resume_cli.py.
"""
import csv
import json
import os

import numpy as np
import gymnasium as gym
import pytest

from spinup_tf.utils.envs import EnvFn
from spinup_tf.utils.errors import NonFiniteError

OFF = dict(steps_per_epoch=300, epochs=2, start_steps=100, update_after=100, update_every=50,
           num_test_episodes=1, max_ep_len=100, ac_kwargs=dict(hidden_sizes=(16,)))
ON = dict(steps_per_epoch=300, epochs=2, max_ep_len=100, train_v_iters=3,
          ac_kwargs=dict(hidden_sizes=(16,)))
ALGOS = [('ddpg', 'Pendulum-v1', OFF), ('td3', 'Pendulum-v1', OFF),
         ('sac', 'Pendulum-v1', dict(OFF, alpha='auto')),
         ('vpg', 'CartPole-v1', ON), ('ppo', 'Pendulum-v1', dict(ON, train_pi_iters=3)),
         ('trpo', 'CartPole-v1', ON), ('npg', 'Pendulum-v1', ON)]


def _run(algo, env_id, kwargs, out, seed=7):
    from spinup_tf.algos import get_algo
    get_algo(algo)(EnvFn(env_id), seed=seed,
                   logger_kwargs=dict(output_dir=str(out), quiet=True), **kwargs)


def _rows_without_time(path):
    with open(path) as f:
        rows = list(csv.reader(f, delimiter='\t'))
    t = rows[0].index('Time')
    return [r[:t] + r[t + 1:] for r in rows]


@pytest.mark.parametrize('algo,env_id,kwargs', [ALGOS[1], ALGOS[5]], ids=['td3', 'trpo'])
def test_same_seed_same_progress_file(tmp_path, algo, env_id, kwargs):
    """In-process reruns repeat and another seed differs, for one off- and one on-policy
    algorithm (test_repeatable.py repeats every algorithm and preset through the CLI)."""
    _run(algo, env_id, kwargs, tmp_path / 'a')
    _run(algo, env_id, kwargs, tmp_path / 'b')
    a = _rows_without_time(tmp_path / 'a' / 'progress.txt')
    b = _rows_without_time(tmp_path / 'b' / 'progress.txt')
    assert len(a) == 3 and a == b
    _run(algo, env_id, kwargs, tmp_path / 'c', seed=8)
    assert _rows_without_time(tmp_path / 'c' / 'progress.txt') != a


class NaNRewardAfter(gym.Wrapper):
    """Returns NaN rewards once ``n`` steps have been taken (counted over episodes)."""

    def __init__(self, env, n):
        super().__init__(env)
        self.n, self.count = n, 0

    def step(self, a):
        o, r, term, trunc, info = self.env.step(a)
        self.count += 1
        return o, (float('nan') if self.count > self.n else r), term, trunc, info


def test_nan_reward_stops_with_epoch_and_quantity_and_keeps_last_checkpoint(tmp_path):
    from spinup_tf.algos.td3 import td3
    env_fn = lambda: NaNRewardAfter(gym.make('Pendulum-v1'), 350)  # noqa: E731
    with pytest.raises(NonFiniteError, match=r'epoch 2: the environment returned a NaN or '
                                             r'infinite reward .* those of epoch 1'):
        td3(env_fn, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
            **dict(OFF, epochs=3))
    rows = (tmp_path / 'progress.txt').read_text().splitlines()
    assert len(rows) == 2  # header + epoch 1; nothing of the bad epoch
    state = json.loads((tmp_path / 'checkpoint' / 'state.json').read_text())
    assert state['counters']['epoch'] == 1
    info = json.loads((tmp_path / 'tf1_save' / 'model_info.json').read_text())
    assert info['state'] == {'epoch': 1}


def test_nan_in_on_policy_run(tmp_path):
    from spinup_tf.algos.ppo import ppo
    env_fn = lambda: NaNRewardAfter(gym.make('CartPole-v1'), 10)  # noqa: E731
    with pytest.raises(NonFiniteError, match='epoch 1'):
        ppo(env_fn, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
            **dict(ON, train_pi_iters=3))
    assert not (tmp_path / 'progress.txt').exists() or \
        len((tmp_path / 'progress.txt').read_text().splitlines()) <= 1


@pytest.mark.parametrize('algo,env_id,kwargs', [ALGOS[1], ALGOS[5]], ids=['td3', 'trpo'])
def test_checkpoint_resume_in_process(tmp_path, algo, env_id, kwargs):
    """Run 2 epochs, then continue the same folder to 3: one row per epoch, no repeats."""
    _run(algo, env_id, kwargs, tmp_path)
    from spinup_tf.algos import get_algo
    get_algo(algo)(EnvFn(env_id), seed=7, logger_kwargs=dict(
        output_dir=str(tmp_path), quiet=True, resume=True), **dict(kwargs, epochs=3))
    with open(tmp_path / 'progress.txt') as f:
        rows = list(csv.DictReader(f, delimiter='\t'))
    assert [int(float(r['Epoch'])) for r in rows] == [1, 2, 3]
    assert [int(float(r['TotalEnvInteracts'])) for r in rows] == [300, 600, 900]


def test_replay_buffer_round_trips_through_a_checkpoint(tmp_path):
    from spinup_tf.loops.replay_buffer import ReplayBuffer
    a = ReplayBuffer(2, 1, 10)
    for i in range(13):
        a.store([i, i], [i], i, [i + 1, i + 1], i % 2, episode_end=i % 5 == 4)
    b = ReplayBuffer(2, 1, 10)
    np.savez_compressed(tmp_path / 'x.npz', **a.state_dict())
    with np.load(tmp_path / 'x.npz', allow_pickle=False) as d:
        b.load_state_dict({k: d[k] for k in d.files})
    assert (b.ptr, b.size, b.filled) == (a.ptr, a.size, a.filled)
    for k in ('obs_buf', 'acts_buf', 'rews_buf', 'done_buf', 'valid'):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


def test_truncate_progress_drops_later_and_half_written_rows(tmp_path):
    from spinup_tf.utils.logx import EpochLogger
    p = tmp_path / 'progress.txt'
    p.write_text('Epoch\tX\n1\t0.5\n2\t0.7\n3\t0.9\n4\t1.')
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True, resume=True)
    logger.truncate_progress(2)
    assert p.read_text() == 'Epoch\tX\n1\t0.5\n2\t0.7\n'
    logger.log_tabular('Epoch', 3)
    logger.log_tabular('X', 1.0)
    logger.dump_tabular()
    assert p.read_text() == 'Epoch\tX\n1\t0.5\n2\t0.7\n3\t1.0\n'


@pytest.mark.parametrize('line', ['abc\tdef', 'x\t0.3', '2\t0.7\textra'])
def test_truncate_progress_refuses_a_whole_line_that_is_not_a_row(tmp_path, line):
    """A complete line that is not a row of the run (another file's, an edited one) stops the
    resume with one error and leaves the file as it was (a half-written last line, from a
    kill, is dropped instead: the test above)."""
    from spinup_tf.utils.logx import EpochLogger
    from spinup_tf.utils.errors import UserInputError
    p = tmp_path / 'progress.txt'
    text = 'Epoch\tX\n1\t0.5\n%s\n2\t0.7\n' % line
    p.write_text(text)
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True, resume=True)
    with pytest.raises(UserInputError, match='line 3 is not a progress row'):
        logger.truncate_progress(2)
    assert p.read_text() == text
