"""Real processes: kill -9 then `run.py resume`, and Ctrl-C / SIGTERM mid-run.

No clock decides where the run is when the test acts: the run is started through
tests/sentinel_run.py, which holds it inside a chosen env step (a fixed number of steps after
progress.txt has a given number of rows) and says so on stdout; the test reads the run's stdout
line by line until that line, then acts on a run that is known to be mid-epoch and waiting.
Each run is a process of its own, forked from a process that has done the imports
(conftest.start_cli), so a kill or a signal reaches it as it would reach ``python run.py``.
"""
import csv
import json
import os
import signal

import pytest

from conftest import ROOT, run_cli, start_cli
from sentinel_run import SENTINEL

TINY = ['--env', 'Pendulum-v1', '--epochs', '5', '--steps_per_epoch', '300',
        '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
        '--hid', '[16]', '--max_ep_len', '100']


def _rows(run):
    path = os.path.join(run, 'progress.txt')
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter='\t'))


def _assert_same_rows(a, b, n):
    """``n`` rows each, equal in every column but ``Time`` (differences shown)."""
    assert len(a) == len(b) == n
    for ra, rb in zip(a, b):
        ra.pop('Time'), rb.pop('Time')
        assert {k: (v, rb[k]) for k, v in ra.items() if rb[k] != v} == {}


def _start_held(args, run, rows, steps, stderr_path):
    """Start ``run.py ARGS`` held inside the ``steps``-th env step after ``run``'s progress.txt
    has ``rows`` rows; return the process once it is there (it waits until its stdin closes).
    A run that ends without reaching the hold fails the test (its stdout closes)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', SPINUP_TEST_HOLD='%d,%d' % (rows, steps),
               SPINUP_TEST_HOLD_PROGRESS=os.path.join(run, 'progress.txt'))
    proc = start_cli(os.path.join(ROOT, 'tests', 'sentinel_run.py'), args, env, stderr_path)
    for line in proc.stdout:  # blocking reads: no poll interval, no timing assumption
        if line.strip() == SENTINEL:
            return proc
    proc.wait()
    raise AssertionError('the run ended (rc %s) without reaching its hold point:\n%s'
                         % (proc.returncode, open(stderr_path).read()[-2000:]))


def _signal_held(proc, sig):
    """Send ``sig`` to a run held by :func:`_start_held`, release the held step, and wait for
    the run to end (its output drained)."""
    proc.send_signal(sig)
    proc.stdin.close()  # release the held step
    proc.stdout.read()
    proc.wait()
    proc.stdout.close()


@pytest.mark.parametrize('algo,extra', [('trpo', ['--train_v_iters', '3', '--save_freq', '1'])])
def test_kill_9_then_resume_gives_each_epoch_once(tmp_path, algo, extra):
    """Killed while held in the 150th step of epoch 3 (of 300): epochs 1-2 are logged, epoch 3
    is half done; resuming gives each of the 5 epochs exactly once. (TD3, SAC and PPO: the
    exact-resume test below, which checks every row.)"""
    args = TINY if algo == 'td3' else ['--env', 'CartPole-v1', '--epochs', '5',
                                       '--steps_per_epoch', '300', '--hid', '[16]']
    run = tmp_path / 'x' / 'x_s0'
    proc = _start_held([algo, *args, *extra, '--exp_name', 'x', '--data_dir', tmp_path],
                       run, rows=2, steps=150, stderr_path=tmp_path / 'stderr.txt')
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    assert proc.returncode == -signal.SIGKILL
    assert [int(float(r['Epoch'])) for r in _rows(run)] == [1, 2]
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    epochs = [int(float(r['Epoch'])) for r in _rows(run)]
    assert epochs == [1, 2, 3, 4, 5]
    steps = [int(float(r['TotalEnvInteracts'])) for r in _rows(run)]
    assert steps == [300, 600, 900, 1200, 1500]
    # Resuming a finished run adds nothing.
    res = run_cli('resume', run)
    assert res.returncode == 0 and len(_rows(run)) == 5


@pytest.mark.parametrize('sig,code', [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_saves_model_and_checkpoint_then_resume_completes(tmp_path, sig, code):
    """The signal lands while the run is held in the 150th step of epoch 2 (of 300); the
    handler has run before the step returns (the blocked read is interrupted), so the loop
    stops at its next check: model and checkpoint of epoch 1 saved, exit 128 + signal."""
    run = tmp_path / 'x' / 'x_s0'
    args = [a if a != '5' else '3' for a in TINY]  # 3 epochs of 300 steps
    proc = _start_held(['td3', *args, '--save_freq', '100', '--exp_name', 'x', '--data_dir',
                        tmp_path], run, rows=1, steps=150, stderr_path=tmp_path / 'stderr.txt')
    _signal_held(proc, sig)
    err = (tmp_path / 'stderr.txt').read_text()
    assert proc.returncode == code, err[-2000:]
    assert 'Traceback' not in err
    rows = (run / 'progress.txt').read_text()
    assert rows.endswith('\n')  # no half-written row
    assert [int(float(r['Epoch'])) for r in _rows(run)] == [1]
    state = json.loads((run / 'checkpoint' / 'state.json').read_text())
    assert state['counters']['epoch'] == 1
    assert (run / 'tf1_save' / 'saved_model.pb').exists()
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    assert [int(float(r['Epoch'])) for r in _rows(run)] == [1, 2, 3]


def test_resume_errors_are_clear(tmp_path):
    res = run_cli('resume', tmp_path / 'nope')
    assert res.returncode == 2 and 'no such run folder' in res.stderr
    (tmp_path / 'r').mkdir()
    (tmp_path / 'r' / 'config.json').write_text('{"algo": "td3", "env_id": "Pendulum-v1"}')
    res = run_cli('resume', tmp_path / 'r')
    assert res.returncode == 2 and 'no checkpoint' in res.stderr
    assert 'Traceback' not in res.stderr


EXACT = {
    'td3': ['--env', 'Pendulum-v1', '--start_steps', '100', '--update_after', '100',
            '--num_test_episodes', '2', '--max_ep_len', '70'],
    'sac': ['--env', 'Pendulum-v1', '--start_steps', '100', '--update_after', '100',
            '--num_test_episodes', '2', '--max_ep_len', '70'],
    'ppo': ['--env', 'CartPole-v1', '--train_pi_iters', '5', '--train_v_iters', '5'],
    'dqn': ['--env', 'CartPole-v1', '--start_steps', '100', '--update_after', '100',
            '--num_test_episodes', '2', '--max_ep_len', '70', '--target_update_interval', '40',
            '--exploration_fraction', '0.5'],
}


@pytest.mark.parametrize('algo', sorted(EXACT))
def test_kill_9_then_resume_repeats_the_uninterrupted_run_exactly(tmp_path, algo):
    """A run killed with kill -9 inside epoch 3 and resumed writes the same progress.txt
    (every column but Time) as the same command run without a break. Off-policy episodes are
    70 steps and epochs 300, so the checkpoint of epoch 2 falls inside an episode (the resume
    replays it)."""
    args = [algo, *EXACT[algo], '--epochs', '3', '--steps_per_epoch', '300', '--hid', '[16]',
            '--seed', '7', '--save_freq', '1']
    whole = tmp_path / 'whole' / 'x' / 'x_s7'
    res = run_cli(*args, '--exp_name', 'x', '--data_dir', tmp_path / 'whole')
    assert res.returncode == 0, res.stderr[-2000:]
    run = tmp_path / 'cut' / 'x' / 'x_s7'
    proc = _start_held([*args, '--exp_name', 'x', '--data_dir', tmp_path / 'cut'], run,
                       rows=2, steps=120, stderr_path=tmp_path / 'stderr.txt')
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    _assert_same_rows(_rows(whole), _rows(run), 3)


def test_ctrl_c_in_a_test_phase_stops_at_the_next_step_and_drops_its_episodes(tmp_path):
    """SIGINT while held in the 60th step of epoch 1's test phase (5 test episodes of 100
    steps after 300 training steps): the run stops at the next step, not after the phase;
    the checkpoint holds no test episodes, and the resumed run's progress.txt is the
    uninterrupted one's (every column but Time)."""
    args = ['td3', '--env', 'Pendulum-v1', '--epochs', '2', '--steps_per_epoch', '300',
            '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '5',
            '--max_ep_len', '100', '--hid', '[16]', '--seed', '3']
    whole = tmp_path / 'whole' / 'x' / 'x_s3'
    assert run_cli(*args, '--exp_name', 'x', '--data_dir', tmp_path / 'whole').returncode == 0
    run = tmp_path / 'cut' / 'x' / 'x_s3'
    proc = _start_held([*args, '--exp_name', 'x', '--data_dir', tmp_path / 'cut'], run,
                       rows=0, steps=360, stderr_path=tmp_path / 'stderr.txt')
    _signal_held(proc, signal.SIGINT)
    err = (tmp_path / 'stderr.txt').read_text()
    assert proc.returncode == 130, err[-2000:]
    assert 'Traceback' not in err
    # Stopped in epoch 1, and says so truly.
    assert 'no epoch had finished, so there is no progress row yet' in err
    assert 'python run.py resume %s' % run in err
    assert not (run / 'progress.txt').exists()
    import numpy as np
    with np.load(run / 'checkpoint' / 'arrays.npz') as arrays:
        assert not [k for k in arrays.files if 'TestEp' in k]
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    _assert_same_rows(_rows(whole), _rows(run), 2)


def test_sigterm_mid_epoch_then_resume_repeats_the_run_exactly_with_rllab_columns(tmp_path):
    """SIGTERM inside epoch 2, after several episodes of it (20-step paths): the checkpoint
    holds the epoch's stored values, and the resumed run reads them one per episode again
    (rllab's cumulative Es returns, the live line's episode count), so it writes the same
    progress.txt as the run without a break."""
    args = ['ddpg', '--preset', 'rllab-mxnet', '--env', 'Pendulum-v1', '--epochs', '3',
            '--steps_per_epoch', '300',
            '--update_after', '100', '--max_ep_len', '20', '--eval_samples', '2', '--seed', '3']
    whole = tmp_path / 'whole' / 'x' / 'x_s3'
    res = run_cli(*args, '--exp_name', 'x', '--data_dir', tmp_path / 'whole')
    assert res.returncode == 0, res.stderr[-2000:]
    run = tmp_path / 'cut' / 'x' / 'x_s3'
    proc = _start_held([*args, '--exp_name', 'x', '--data_dir', tmp_path / 'cut'], run,
                       rows=1, steps=150, stderr_path=tmp_path / 'stderr.txt')
    _signal_held(proc, signal.SIGTERM)
    assert proc.returncode == 128 + signal.SIGTERM
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = _rows(run)
    assert float(rows[1]['AverageEsReturn']) == float(_rows(whole)[1]['AverageEsReturn'])
    _assert_same_rows(_rows(whole), rows, 3)


def test_sigterm_then_resume_repeats_a_run_evaluated_at_episode_ends(tmp_path):
    """The udemy quirks (a test before training, then at the first episode end after every
    steps_per_epoch steps, on the training env, and after the last step): SIGTERM in the
    middle, then resume, writes the rows of the run without a break (the hooks' own state,
    the steps since the last evaluation, is in the checkpoint)."""
    args = ['td3', '--preset', 'udemy', '--env', 'Pendulum-v1', '--epochs', '3',
            '--steps_per_epoch', '100', '--max_ep_len', '30', '--start_steps', '50',
            '--num_test_episodes', '1', '--hid', '[16]', '--seed', '2']
    whole = tmp_path / 'whole' / 'x' / 'x_s2'
    res = run_cli(*args, '--exp_name', 'x', '--data_dir', tmp_path / 'whole')
    assert res.returncode == 0, res.stderr[-2000:]
    expected = _rows(whole)
    # rows: before training, at the episode ends at 120 and 210 steps, and after 300
    assert [float(r['TotalEnvInteracts']) for r in expected] == [0, 120, 210, 300]
    run = tmp_path / 'cut' / 'x' / 'x_s2'
    proc = _start_held([*args, '--exp_name', 'x', '--data_dir', tmp_path / 'cut'], run,
                       rows=2, steps=40, stderr_path=tmp_path / 'stderr.txt')
    _signal_held(proc, signal.SIGTERM)
    assert proc.returncode == 128 + signal.SIGTERM
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    _assert_same_rows(expected, _rows(run), 4)
