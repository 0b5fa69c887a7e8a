"""A full disk during a run (a real, small tmpfs): one ``error:`` line naming what filled
up, exit 1, the last complete checkpoint kept, and ``resume`` finishes once there is space.

Mounting a tmpfs needs root (CI here runs as root); elsewhere the test is skipped with the
reason, and the same path is covered by the unit test of ``disk_full_path`` below."""
import errno
import os
import subprocess
import uuid

import pytest

from conftest import run_cli
from spinup_tf.utils.errors import disk_full_path


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / ('disk-%s' % uuid.uuid4().hex[:6])
    mnt.mkdir()
    res = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip('cannot mount a tmpfs here (%s)' % res.stderr.strip())
    yield mnt
    subprocess.run(['umount', '-l', str(mnt)])


def test_disk_full_mid_run_stops_cleanly_and_resume_continues(small_disk):
    args = ['td3', '--env', 'Pendulum-v1', '--epochs', '20', '--steps_per_epoch', '200',
            '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
            '--hid', '[64,64]', '--data_dir', small_disk, '--exp_name', 'x']
    res = run_cli(*args)
    assert res.returncode == 1, res.stderr[-2000:]
    assert 'Traceback' not in res.stderr
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith('error: the disk is full'), lines
    run = small_disk / 'x' / 'x_s0'
    assert str(run) in lines[0] and 'keeping the checkpoint of epoch' in lines[0]
    assert not [n for n in os.listdir(run) if n.endswith('.tmp')]   # half-written copies gone
    subprocess.run(['mount', '-o', 'remount,size=64m', str(small_disk)], check=True)
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    epochs = [l.split('\t')[0] for l in (run / 'progress.txt').read_text().splitlines()[1:]]
    assert epochs == [str(i) for i in range(1, 21)]


def test_disk_full_is_recognised_from_python_and_from_tensorflow():
    assert disk_full_path(OSError(errno.ENOSPC, 'No space left on device', '/d/f')) == '/d/f'
    tf_text = ('/r/tf1_save.tmp/variables/variables.data-00000-of-00001.tempstate95349; '
               'No space left on device\n\t [[{{node save/SaveV2}}]]')
    assert disk_full_path(RuntimeError(tf_text)) == \
        '/r/tf1_save.tmp/variables/variables.data-00000-of-00001'
    assert disk_full_path(OSError(errno.EACCES, 'Permission denied', '/d')) is None
    assert disk_full_path(ValueError('x')) is None


def test_a_read_only_data_dir_is_refused_before_any_variant_starts(tmp_path):
    mnt = tmp_path / 'ro'
    mnt.mkdir()
    res = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip('cannot mount a tmpfs here (%s)' % res.stderr.strip())
    try:
        for seeds in (['0'], ['0', '1']):   # one run, and a grid (checked up front)
            res = run_cli('td3', '--env', 'Pendulum-v1', '--epochs', '1', '--seed', *seeds,
                          '--data_dir', mnt)
            assert res.returncode == 2 and 'Traceback' not in res.stderr
            assert 'Read-only file system' in res.stderr
            assert 'Grid summary' not in res.stdout
    finally:
        subprocess.run(['umount', '-l', str(mnt)])
