"""Same seed, same ``progress.txt`` (apart from Time), for every preset on the default path,
and for every algorithm on both engines; and each preset's run loads in ``test_policy`` (and
rllab's, with its extra columns, draws in ``plot``). Across processes, the same seed gives
the same file too: test_resume_cli.py compares an uninterrupted run with a killed and resumed
one.

Two runs of a configuration are two variants of one grid that differ only in ``save_freq``
(which changes when the model is saved, not a single number of the run), so one process runs
both, each in a fresh graph.
"""
import csv
import glob

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
    extra = {'udemy': ['--videos', '0'],  # its videos: test_video.py
             'rllab-mxnet': ['--eval_samples', '300']}.get(preset, [])  # not 10000 steps
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


@pytest.mark.parametrize('algo,extra', [
    ('td3', ['--policy_delay', '3']), ('ddpg', []), ('sac', ['--alpha', 'auto']),
    ('ppo', []), ('vpg', []), ('trpo', []), ('npg', [])])
def test_every_algorithm_repeats_on_both_engines(tmp_path, algo, extra):
    data = tmp_path / 'data'
    if algo in ON_POLICY:
        args = ['--env', 'CartPole-v1'] + TINY_ON
    else:
        args = ['--env', 'Pendulum-v1', '--hid', '[32,32]'] + TINY_OFF
    proc = run_cli(algo, '--seed', '3', '--fused', 'True', 'False', '--save_freq', '1', '2',
                   '--data_dir', data, *args, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = runs_by_variant(data)
    assert len(runs) == 4, sorted(runs)
    fused = sorted(k for k in runs if 'fusedT' in k or 'fused_T' in k or 'True' in k)
    plain = sorted(k for k in runs if k not in fused)
    assert len(fused) == len(plain) == 2, sorted(runs)
    assert_pairs_repeat(runs, [tuple(fused), tuple(plain)])
