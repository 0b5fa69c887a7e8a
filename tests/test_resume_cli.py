"""Real processes: kill -9 then `run.py resume`, and Ctrl-C / SIGTERM mid-run.

No clock decides where the run is when the test acts: the run is started through
tests/sentinel_run.py, which holds it inside a chosen env step (a fixed number of steps after
progress.txt has a given number of rows) and says so on stdout; the test reads the run's stdout
line by line until that line, then acts on a run that is known to be mid-epoch and waiting.
"""
import csv
import json
import os
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli
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


def _start_held(args, run, rows, steps, stderr_path):
    """Start ``run.py ARGS`` held inside the ``steps``-th env step after ``run``'s progress.txt
    has ``rows`` rows; return the process once it is there (it waits until its stdin closes).
    A run that ends without reaching the hold fails the test (its stdout closes)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', SPINUP_TEST_HOLD='%d,%d' % (rows, steps),
               SPINUP_TEST_HOLD_PROGRESS=os.path.join(run, 'progress.txt'))
    with open(stderr_path, 'w') as err:
        proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, 'tests', 'sentinel_run.py')] +
            [str(a) for a in args], cwd=ROOT, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=err, text=True)
    for line in proc.stdout:  # blocking reads: no poll interval, no timing assumption
        if line.strip() == SENTINEL:
            return proc
    proc.wait()
    raise AssertionError('the run ended (rc %s) without reaching its hold point:\n%s'
                         % (proc.returncode, open(stderr_path).read()[-2000:]))


@pytest.mark.parametrize('algo,extra', [('td3', []), ('trpo', ['--train_v_iters', '3',
                                                                '--save_freq', '1'])])
def test_kill_9_then_resume_gives_each_epoch_once(tmp_path, algo, extra):
    """Killed while held in the 150th step of epoch 3 (of 300): epochs 1-2 are logged, epoch 3
    is half done; resuming gives each of the 5 epochs exactly once."""
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
    proc.send_signal(sig)
    proc.stdin.close()  # release the held step
    proc.stdout.read()
    proc.wait()
    proc.stdout.close()
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
