"""Real processes: kill -9 then `run.py resume`, and Ctrl-C / SIGTERM mid-run."""
import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_cli

TINY = ['--env', 'Pendulum-v1', '--epochs', '5', '--steps_per_epoch', '300',
        '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
        '--hid', '[16]', '--max_ep_len', '100']


def _start(args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2')
    return subprocess.Popen([sys.executable, os.path.join(ROOT, 'run.py')] + [str(a) for a in args],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _rows(run):
    path = os.path.join(run, 'progress.txt')
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter='\t'))


def _wait_rows(proc, run, n, timeout=240):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if len(_rows(run)) >= n or proc.poll() is not None:
            return
        time.sleep(0.05)
    raise AssertionError('no %d progress rows after %d s' % (n, timeout))


@pytest.mark.parametrize('algo,extra', [('td3', []), ('trpo', ['--train_v_iters', '3',
                                                                '--save_freq', '1'])])
def test_kill_9_then_resume_gives_each_epoch_once(tmp_path, algo, extra):
    args = TINY if algo == 'td3' else ['--env', 'CartPole-v1', '--epochs', '5',
                                       '--steps_per_epoch', '300', '--hid', '[16]']
    run = tmp_path / 'x' / 'x_s0'
    proc = _start([algo, *args, *extra, '--exp_name', 'x', '--data_dir', tmp_path])
    _wait_rows(proc, run, 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(_rows(run))
    assert 2 <= done_before < 5
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
    run = tmp_path / 'x' / 'x_s0'
    # Epochs long enough (several seconds) that the signal lands inside epoch 2.
    args = [a if a not in ('5', '300') else {'5': '3', '300': '3000'}[a] for a in TINY]
    proc = _start(['td3', *args, '--save_freq', '100', '--exp_name', 'x', '--data_dir',
                   tmp_path])
    _wait_rows(proc, run, 1)
    time.sleep(0.3)  # somewhere inside epoch 2
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err[-2000:]
    assert 'Traceback' not in err
    rows = (run / 'progress.txt').read_text()
    assert rows.endswith('\n')  # no half-written row
    state = json.loads((run / 'checkpoint' / 'state.json').read_text())
    n_rows = len(_rows(run))
    assert state['counters']['epoch'] == n_rows
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
