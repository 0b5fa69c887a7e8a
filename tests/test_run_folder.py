"""A run folder is owned by one process: a second run or resume into it stops with one
error line and exit 2, touching nothing; the lock dies with its process."""
import os

from conftest import ROOT, run_cli, start_cli
from sentinel_run import SENTINEL

TINY = ['--env', 'Pendulum-v1', '--epochs', '2', '--steps_per_epoch', '200',
        '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
        '--max_ep_len', '100', '--hid', '[16,16]', '--seed', '0']


def snapshot(folder):
    out = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, 'rb') as f:
                out[os.path.relpath(path, folder)] = f.read()
    return out


def test_second_process_on_a_busy_run_folder_is_refused(tmp_path):
    run = tmp_path / 'x' / 'x_s0'
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', SPINUP_TEST_HOLD='1,5',
               SPINUP_TEST_HOLD_PROGRESS=str(run / 'progress.txt'))
    first = start_cli(os.path.join(ROOT, 'tests', 'sentinel_run.py'),
                      ['td3', *TINY, '--exp_name', 'x', '--data_dir', tmp_path], env,
                      tmp_path / 'first_stderr.txt')
    try:
        for line in first.stdout:  # hold inside epoch 2, epoch 1 written
            if SENTINEL in line:
                break
        before = snapshot(run)
        for args in (['td3', *TINY, '--exp_name', 'x', '--data_dir', tmp_path, '--overwrite'],
                     ['resume', run]):
            proc = run_cli(*args)
            assert proc.returncode == 2, proc.stderr[-2000:]
            assert 'Traceback' not in proc.stderr
            assert [l for l in proc.stderr.splitlines() if l.startswith('error:')], proc.stderr
            assert 'another process is running' in proc.stderr
            assert snapshot(run) == before  # nothing of the running one touched
    finally:
        first.stdin.close()
        first.wait(timeout=600)
    assert first.returncode == 0
    # The lock went with its process: the folder can be resumed or overwritten now.
    proc = run_cli('td3', *TINY, '--exp_name', 'x', '--data_dir', tmp_path, '--overwrite')
    assert proc.returncode == 0, proc.stderr[-2000:]
