"""``run.py tune``: the search-space table, a tiny study killed and resumed on SQLite with one
trial pruned, and bad input."""
import importlib
import os
import signal
import sqlite3
import time

import optuna
import pytest

from conftest import ROOT, cli_env, run_cli, start_cli
from spinup_tf.algos import ALGOS, parameters
from spinup_tf.tools import search_spaces
from spinup_tf.tools.cli import resolve_defaults
from spinup_tf.utils.checkpoint import has_checkpoint
from spinup_tf.utils.flags import signature_parameters


def test_every_algorithm_has_a_space_of_its_own_flags_holding_its_defaults():
    assert set(search_spaces.SPACES) == set(ALGOS)
    for algo, dims in search_spaces.SPACES.items():
        flags = set(parameters(algo)) | {'hid', 'act'}
        assert len({d.name for d in dims}) == len(dims), algo
        for d in dims:
            assert set(d.flags) <= flags, (algo, d)
            assert d.kind in ('choice', 'log', 'float', 'one_minus_log') and d.zoo
        # The defaults (Spinning Up's, on an env without per-env defaults) are a point of the
        # space: trial 0 of a new study is exactly the plain run.
        defaults = dict(resolve_defaults(algo, 'Pendulum-v1'), **search_spaces.DEFAULT_NETS[algo])
        params, complete = search_spaces.as_params(dims, defaults)
        assert complete, algo
        replayed = search_spaces.suggest(optuna.trial.FixedTrial(params), dims)
        for flag, value in replayed.items():
            assert value == pytest.approx(defaults[flag]) if isinstance(value, float) else \
                value == defaults[flag], (algo, flag)
        # DEFAULT_NETS is what the default actor-critic builds.
        ac = str(parameters(algo)['actor_critic'].default).split('.')[-1]
        defined_in = [m for m in ('spinup_tf.algos.core', 'spinup_tf.algos.distributions')
                      if ac in vars(importlib.import_module(m))]
        source = signature_parameters(defined_in[0], ac)
        assert search_spaces.DEFAULT_NETS[algo]['hid'] == '[%s]' % ','.join(
            str(h) for h in source['hidden_sizes'].default)
        if 'act' in search_spaces.DEFAULT_NETS[algo]:
            assert str(source['activation'].default).endswith(
                search_spaces.DEFAULT_NETS[algo]['act'])


def test_a_flag_on_the_command_line_leaves_the_space():
    names = {d.name for d in search_spaces.space('td3', ['pi_lr', 'hid', 'gamma'])}
    assert not names & {'lr', 'hid', 'gamma'} and 'batch_size' in names
    assert search_spaces.flag_tokens({'pi_lr': 0.1 + 0.2, 'hid': '[64,64]', 'alpha': 'auto'}) \
        == ['--pi_lr', '0.30000000000000004', '--hid', '[64,64]', '--alpha', 'auto']


def states(db, study):
    """``[(number, state)]`` of the study's trials, read straight from the SQLite file."""
    with sqlite3.connect(db) as con:
        return con.execute('SELECT t.number, t.state FROM trials t JOIN studies s ON '
                           't.study_id = s.study_id WHERE s.study_name = ? ORDER BY t.number',
                           (study,)).fetchall()


def progress_epochs(run_dir):
    path = os.path.join(run_dir, 'progress.txt')
    if not os.path.exists(path):
        return []
    lines = open(path).read().splitlines()
    col = lines[0].split('\t').index('Epoch')
    return [int(float(l.split('\t')[col])) for l in lines[1:]]


def test_a_tiny_study_killed_and_resumed_on_sqlite_with_one_trial_pruned(tmp_path):
    data = tmp_path / 'data'
    study, db = 'tiny', tmp_path / 'study.db'
    storage = 'sqlite:///%s' % db
    # Three trials queued before the command runs: twice a configuration that learns
    # (pi_lr 2e-3) and once one that cannot (pi_lr 1e-5). Every trial has the same seed and
    # network, so they share their first epoch; the pruner (median of the 2 finished trials
    # from epoch 1 on) stops the third once it falls behind.
    s = optuna.create_study(study_name=study, storage=storage, direction='maximize')
    base = dict(one_minus_gamma=0.01, one_minus_lam=0.03, vf_lr=1e-3, train_v_iters=80,
                hid='[64,64]', act='tanh')
    for pi_lr in (2e-3, 2e-3, 1e-5):
        s.enqueue_trial(dict(base, pi_lr=pi_lr))
    args = ['tune', 'vpg', '--env', 'CartPole-v1', '--trials', '3', '--epochs', '5',
            '--steps_per_epoch', '2000', '--save_freq', '1', '--storage', storage,
            '--study', study, '--data_dir', data, '--startup_trials', '2',
            '--warmup_epochs', '1']
    run_dir = str(data / study / 'vpg_CartPole-v1_trial1' / 'vpg_CartPole-v1_trial1_s0')
    proc = start_cli(os.path.join(ROOT, 'run.py'), args, cli_env(), tmp_path / 'err1')
    # Kill the driver and its workers (kill -9 of the process group) while trial 1 runs.
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline:
        if (1, 'RUNNING') in states(db, study) and has_checkpoint(run_dir):
            break
        time.sleep(0.05)
    else:
        pytest.fail('trial 1 never ran: %s' % open(tmp_path / 'err1').read()[-2000:])
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    first = proc.stdout.read()
    proc.stdout.close()
    proc.stdin.close()
    killed_mid_run = len(progress_epochs(run_dir)) < 5
    assert states(db, study)[:2] == [(0, 'COMPLETE'), (1, 'RUNNING')]
    assert 'trial 0 finished' in first

    again = run_cli(*args, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    out = again.stdout
    assert 'continuing study tiny' in out
    if killed_mid_run:
        assert 'trial 1: resumed from its checkpoint' in out
    assert states(db, study) == [(0, 'COMPLETE'), (1, 'COMPLETE'), (2, 'PRUNED')]
    assert 'trial 2 pruned at epoch' in out
    # Every trial is a normal run folder; the resumed one logged each epoch once, and its
    # run repeats trial 0's (same parameters, same seed).
    trial0 = run_dir.replace('trial1', 'trial0')
    assert progress_epochs(trial0) == progress_epochs(run_dir) == [1, 2, 3, 4, 5]
    strip = lambda p: [l.split('\t')[:-1] for l in open(os.path.join(p, 'progress.txt'))]
    assert strip(trial0) == strip(run_dir)  # all but the Time column
    pruned = progress_epochs(run_dir.replace('trial1', 'trial2'))
    assert pruned and len(pruned) < 5 and len(set(pruned)) == len(pruned)
    s = optuna.load_study(study_name=study, storage=storage)
    assert s.trials[2].params['pi_lr'] == 1e-5
    assert s.best_trial.number in (0, 1)
    # The best trial as a command, and Optuna's figures.
    assert 'python run.py vpg --env CartPole-v1 --epochs 5 --steps_per_epoch 2000 ' \
        '--save_freq 1 --gamma 0.99' in out and '--pi_lr 0.002' in out
    assert (data / study / 'history.png').stat().st_size > 1000
    # Nothing left to do: the same command again only reports.
    done = run_cli(*args, timeout=300)
    assert done.returncode == 0 and 'trial 3' not in done.stdout
    assert states(db, study) == [(0, 'COMPLETE'), (1, 'COMPLETE'), (2, 'PRUNED')]


@pytest.mark.parametrize('argv, words', [
    (['tune', 'a2c', '--env', 'Pendulum-v1', '--trials', '2'], 'unknown algorithm'),
    (['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '0'], '--trials expects an integer'),
    (['tune', 'td3', '--env', 'Pendulum-v1'], 'missing --trials'),
    (['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '2', '--storage',
      'sqlite:////no/such/folder/study.db'], 'cannot open the study storage'),
    (['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '2', '--storage',
      'nosuchdb://user:secret@host/db'], 'cannot open the study storage'),
    (['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '2', '--storage', 'study.db'],
     '--storage expects an SQLAlchemy URL'),
    (['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '2', '--seed', '0', '1'],
     'one value per flag'),
    (['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '2', '--bogus', '1'],
     'unknown flag --bogus'),
    (['tune', 'ppo', '--env', 'Pendulum-v1', '--trials', '2', '--exp_name', 'x'],
     'not for tune'),
])
def test_bad_input_is_one_error_line_and_exit_2(tmp_path, argv, words):
    proc = run_cli(*(argv + ['--data_dir', str(tmp_path)]), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('error: ') and words in lines[0], lines
    assert 'secret' not in proc.stderr
    assert os.listdir(tmp_path) == []  # no study, no folder


def test_tune_help_without_tensorflow():
    import subprocess
    import sys
    code = ('import sys; sys.path.insert(0, %r)\n'
            'from spinup_tf.tools.cli import main\n'
            'rc = main(["tune", "--help"])\n'
            'print("PROBE", rc, "tensorflow" in sys.modules, "optuna" in sys.modules)' % ROOT)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.startswith('usage: python run.py tune ALGO')
    assert proc.stdout.splitlines()[-1] == 'PROBE 0 False False'


def test_a_study_on_ray(tmp_path):
    pytest.importorskip('ray', reason='the optional ray package is not installed '
                                      '(pip install -r requirements-ray.txt)')
    proc = run_cli('tune', 'vpg', '--env', 'CartPole-v1', '--trials', '2', '--epochs', '2',
                   '--steps_per_epoch', '500', '--backend', 'ray', '--workers', '2',
                   '--data_dir', 'rel_data', cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    study = tmp_path / 'rel_data' / 'tune_vpg_CartPole-v1'
    assert states(study / 'study.db', 'tune_vpg_CartPole-v1') == [(0, 'COMPLETE'),
                                                                    (1, 'COMPLETE')]
    for n in (0, 1):  # each trial a run folder, written by a Ray task
        run_dir = study / ('vpg_CartPole-v1_trial%d' % n) / ('vpg_CartPole-v1_trial%d_s0' % n)
        assert progress_epochs(str(run_dir)) == [1, 2]
    assert 'run it:\n  python run.py vpg --env CartPole-v1 --epochs 2' in proc.stdout
