"""Same seed, same ``progress.txt`` (apart from Time), for every preset on the default path,
and for every algorithm on both engines; and each preset's run loads in ``test_policy`` (and
rllab's, with its extra columns, draws in ``plot``). Across processes, the same seed gives
the same file too: test_resume_cli.py compares an uninterrupted run with a killed and resumed
one.

The algorithm test also checks each algorithm's progress columns, TensorBoard events and that
the saved model reloads (what the plain ``run.py ALGO`` runs of test_cli.py checked before).

Two runs of a configuration are two variants of one grid that differ only in ``save_freq``
(which changes when the model is saved, not a single number of the run), so one process runs
both, each in a fresh graph.
"""
import csv
import glob
import os

import pytest

from conftest import run_cli
from spinup_tf.reproductions.presets import PRESETS

TINY_OFF = ['--epochs', '1', '--steps_per_epoch', '300', '--start_steps', '100',
            '--update_after', '100', '--num_test_episodes', '1', '--max_ep_len', '100']
TINY_ON = ['--epochs', '2', '--steps_per_epoch', '200']
ON_POLICY = ('trpo', 'npg', 'vpg', 'ppo')


def rows_without_time(path):
    rows = list(csv.reader(open(path), delimiter='\t'))
    i = rows[0].index('Time')
    return [r[:i] + r[i + 1:] for r in rows]


def runs_by_variant(data):
    return {p.split('/')[-2]: rows_without_time(p)
            for p in sorted(glob.glob(str(data / '*' / '*' / 'progress.txt')))}


def assert_pairs_repeat(runs, pairs):
    for a, b in pairs:
        assert runs[a] == runs[b], (a, b)
        assert len(runs[a]) > 1


@pytest.mark.parametrize('algo,preset', sorted((a, p) for a in PRESETS for p in PRESETS[a]))
def test_every_preset_repeats_and_loads(tmp_path, algo, preset):
    data = tmp_path / 'data'
    tiny = TINY_ON if algo in ON_POLICY else TINY_OFF
    if preset == 'seed-000':  # its epochs end one step late: 1 epoch logs no row
        tiny = ['--epochs', '2'] + tiny[2:]
    extra = {'udemy': ['--videos', '0'],  # its videos: test_video.py
             'rllab-mxnet': ['--eval_samples', '3']}.get(preset, [])  # not 10000 episodes
    proc = run_cli(algo, '--preset', preset, '--seed', '3', '--save_freq', '1', '2',
                   '--data_dir', data, *tiny, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 'Traceback' not in proc.stderr
    runs = runs_by_variant(data)
    assert len(runs) == 2, sorted(runs)
    (a, b) = sorted(runs)
    assert_pairs_repeat(runs, [(a, b)])
    run_dir = glob.glob(str(data / '*' / a))[0]
    proc = run_cli('test_policy', run_dir, '--episodes', '1', '--len', '50', '--norender')
    assert proc.returncode == 0, proc.stderr[-2000:]
    if (algo, preset) == ('ddpg', 'rllab-mxnet'):  # plot reads any progress file; once here
        png = tmp_path / 'curve.png'
        proc = run_cli('plot', data, '--save', png)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert png.stat().st_size > 1000


@pytest.mark.parametrize('algo,env,extra,keys', [
    ('td3', 'Pendulum-v1', ['--policy_delay', '3'], ['AverageQ1Vals', 'LossPi']),
    ('ddpg', 'Pendulum-v1', ['--tensorboard', 'True'], ['AverageQVals', 'LossPi', 'LossQ']),
    ('sac', 'Pendulum-v1', ['--alpha', 'auto'], ['Alpha', 'AverageLogPi', 'LossQ1', 'LossQ2']),
    ('sac', 'CartPole-v1', ['--alpha', 'auto'], ['Alpha', 'AverageLogPi', 'LossQ1', 'LossQ2']),
    ('dqn', 'CartPole-v1', ['--double', 'True', '--dueling', 'True', '--target_update_interval',
                            '50'], ['AverageQVals', 'LossQ', 'Epsilon']),
    ('ppo', 'Pendulum-v1', ['--train_pi_iters', '5'], ['ClipFrac', 'StopIter', 'Entropy']),
    ('vpg', 'CartPole-v1', [], ['AverageVVals', 'Entropy', 'KL']),
    ('trpo', 'CartPole-v1', [], ['AverageVVals', 'KL', 'BacktrackIters', 'DeltaLossV']),
    ('npg', 'Pendulum-v1', [], ['AverageVVals', 'KL', 'DeltaLossPi'])])
def test_every_algorithm_repeats_on_both_engines(tmp_path, algo, env, extra, keys):
    # (SAC twice: continuous on Pendulum, discrete on CartPole)
    """Each algorithm, on both engines (Spinning Up's plain loop and the fused one): the
    same seed repeats; the progress file has the algorithm's columns; TensorBoard gets its
    event file; each engine's saved model reloads and acts (in-process; the test_policy
    command itself: the preset test above and test_cli.py)."""
    data = tmp_path / 'data'
    if algo in ON_POLICY:
        args = ['--env', env] + TINY_ON + ['--train_v_iters', '5']
    else:
        args = ['--env', env, '--hid', '[32,32]'] + TINY_OFF
    proc = run_cli(algo, '--seed', '3', '--fused', 'True', 'False', '--save_freq', '1', '2',
                   '--data_dir', data, *args, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = runs_by_variant(data)
    assert len(runs) == 4, sorted(runs)
    fused = sorted(k for k in runs if 'fusedT' in k or 'fused_T' in k or 'True' in k)
    plain = sorted(k for k in runs if k not in fused)
    assert len(fused) == len(plain) == 2, sorted(runs)
    assert_pairs_repeat(runs, [tuple(fused), tuple(plain)])
    for name in (fused[0], plain[0]):
        header = runs[name][0]
        assert header[0] == 'Epoch' and all(k in header for k in keys), header
        assert ('BacktrackIters' in header) == (algo == 'trpo')
        run_dir = glob.glob(str(data / '*' / name))[0]
        if '--tensorboard' in extra:
            assert any(f.startswith('events.out.tfevents')
                       for f in os.listdir(os.path.join(run_dir, 'tensorboard')))
        _assert_reloads_and_acts(run_dir)


def _assert_reloads_and_acts(run_dir):
    from spinup_tf.tools.test_policy import load_policy, load_env_spec, run_policy
    from spinup_tf.utils.envs import make_env
    get_action, sess = load_policy(run_dir)
    env_id, env_kwargs = load_env_spec(run_dir)
    env = make_env(env_id, **env_kwargs)
    try:
        returns, lengths = run_policy(env, get_action, max_ep_len=50, num_episodes=1, seed=0)
    finally:
        env.close()
        sess.close()
    assert len(returns) == 1 and 0 < lengths[0] <= 50
