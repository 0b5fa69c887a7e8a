"""Hostile inputs beyond a run folder's own files (issue 56): the one progress reader's bounds,
FIFOs where the project opens or replaces files, checkpoint indexes declaring impossible
shapes, render modes and env files, non-finite weights, links around run and study folders,
tune's study database, and the working directory of ``python -m spinup_tf``.

``bench/battery.py`` runs every payload of every class; this file has one test per kind.
"""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import ROOT, cli_env, run_cli
import hostile_folders as H
from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils import progress_file as pf

RUN = H.SMALL_TD3
TP = ['--norender', '--episodes', '1']


def one_error_line(res, text=''):
    assert res.returncode == 2, res.stderr[-2000:]
    assert 'Traceback' not in res.stderr
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith('error: ') and text in lines[0], lines


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    base = tmp_path_factory.mktemp('finished')
    res = run_cli('td3', *RUN, '--data_dir', base, '--exp_name', 'r')
    assert res.returncode == 0, res.stderr[-2000:]
    return base / 'r' / 'r_s0'


@pytest.fixture
def run(finished, tmp_path):
    return H.copy_run(finished, tmp_path / 'run')


# ---- The one reader of progress.txt --------------------------------------------------------
def test_the_reader_is_linear_in_columns_and_bounded_in_rows(tmp_path):
    wide = tmp_path / 'wide.txt'
    n = 100000
    wide.write_text('\t'.join(['A'] + ['c%d' % i for i in range(n)]) + '\n'
                    + ('\t'.join(['1.5'] * (n + 1)) + '\n') * 3)
    t0 = time.perf_counter()
    table = pf.read_table(str(wide))
    assert len(table) == 3 and len(table.columns) == n + 1
    assert time.perf_counter() - t0 < 10  # 20,000 columns took 18 s with count() per name
    dupes = tmp_path / 'dupes.txt'
    dupes.write_text('\t'.join(['A'] * n) + '\n' + '\t'.join(['1'] * n) + '\n')
    with pytest.raises(pf.ProgressFileError, match='duplicate column') as info:
        pf.read_table(str(dupes))
    assert len(str(info.value)) < 400
    tall = tmp_path / 'tall.txt'
    with open(tall, 'w') as f:
        f.write('A\n' + '1\n' * (pf.MAX_LINES + 1))
    with pytest.raises(pf.ProgressFileError, match='more than 1000001 lines'):
        pf.read_table(str(tall))
    long_line = tmp_path / 'long.txt'
    with open(long_line, 'w') as f:
        f.write('A\n' + 'x' * (pf.MAX_LINE + 10))
    with pytest.raises(pf.ProgressFileError, match='longer than'):
        pf.read_table(str(long_line))


def test_the_reader_follows_no_link_waits_on_no_fifo_and_echoes_no_file(tmp_path):
    secret = tmp_path / 'secret'
    secret.write_text('root:x:0:0:SECRET\n')
    os.symlink(secret, tmp_path / 'link.txt')
    with pytest.raises(UserInputError, match='symbolic link') as info:
        pf.read_table(str(tmp_path / 'link.txt'))
    assert 'SECRET' not in str(info.value)
    os.mkfifo(tmp_path / 'fifo.txt')
    with pytest.raises(UserInputError, match='FIFO'):
        pf.read_table(str(tmp_path / 'fifo.txt'))
    bad = tmp_path / 'bad.txt'
    bad.write_text('A\tB\n1\t' + 'SECRET' * 50 + '\n')
    with pytest.raises(pf.ProgressFileError, match='non-numeric') as info:
        pf.read_table(str(bad))
    assert str(info.value).count('SECRET') <= 4
    assert len(pf.read_table(str(tmp_path / 'none.txt'), missing_ok=True)) == 0


def test_the_reader_keeps_or_drops_a_partial_last_row_as_asked(tmp_path):
    path = tmp_path / 'p.txt'
    path.write_text('Epoch\tA\n1\t2\n2\t3')
    assert pf.read_table(str(path))['A'].tolist() == [2.0, 3.0]
    assert pf.read_table(str(path), partial='drop')['A'].tolist() == [2.0]
    table = pf.read_table(str(path))
    assert table['Epoch'].dtype == np.int64 and table.last('A') == 3.0
    with pf.Lines(str(path)) as lines:
        assert [line for _, line in lines] == ['Epoch\tA', '1\t2']
    assert lines.partial == '2\t3'


def test_every_reader_of_progress_files_goes_through_the_one_module():
    """No other module parses progress.txt: the tools, the scripts and the bench scripts
    call spinup_tf.utils.progress_file (issue 57, item 10)."""
    import re
    pattern = re.compile(r"DictReader\(|split\('\\t'\)")
    allowed = {os.path.join('spinup_tf', 'utils', 'progress_file.py'),
               os.path.join('spinup_tf', 'utils', 'run_records.py'),  # lines from the reader
               os.path.join('spinup_tf', 'utils', 'logx.py'),  # idem, to rewrite them
               os.path.join('bench', 'progress_equivalence.py')}  # idem, compared as text
    offenders = []
    for folder in ('spinup_tf', 'plots', 'bench'):
        for root, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, ROOT)
                if name.endswith('.py') and rel not in allowed and \
                        pattern.search(open(path).read()):
                    offenders.append(rel)
    assert offenders == []


# ---- FIFOs, links and sizes around a run folder --------------------------------------------
@pytest.mark.parametrize('rel', ['checkpoint.tmp', 'checkpoint.old', 'tf1_save.tmp',
                                 'checkpoint/variables.index', '.lock'])
def test_resume_refuses_a_fifo_at_a_temporary_or_read_name(run, rel):
    os.mkfifo(run / rel) if not (run / rel).exists() else (os.remove(run / rel),
                                                          os.mkfifo(run / rel))
    before = H.snapshot(run)
    res = run_cli('resume', run, timeout=120)
    one_error_line(res, 'FIFO')
    assert H.snapshot(run) == before


def test_remove_any_removes_a_fifo_without_opening_it(tmp_path):
    from spinup_tf.utils.safe_files import remove_any
    os.mkfifo(tmp_path / 'f')
    (tmp_path / 'd').mkdir()
    (tmp_path / 'd' / 'x').write_text('x')
    for name in ('f', 'd', 'missing'):
        remove_any(str(tmp_path / name))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize('where, shape', [('checkpoint/variables.index', [-1]),
                                          ('checkpoint/variables.index', [2 ** 31, 2 ** 31, 4]),
                                          ('tf1_save/variables/variables.index', [0]),
                                          ('tf1_save/variables/variables.index', [-3, 8])])
def test_index_shapes_are_bounded_before_tensorflow_reads_them(run, where, shape):
    """TensorFlow aborts the process (exit 134) on a negative dimension, and an int64 size
    guard wraps on an overflowing shape: both are refused before TensorFlow sees them."""
    H.patch_index_shape(str(run / where), shape)
    before = H.snapshot(run)
    cmd = ['resume', run] if where.startswith('checkpoint') else ['test_policy', run] + TP
    res = run_cli(*cmd, timeout=120)
    one_error_line(res, 'index declares tensor')
    assert H.snapshot(run) == before


def test_check_index_passes_a_real_checkpoint(finished):
    from spinup_tf.utils.checkpoint_index import check_index
    entries = check_index(str(finished / 'checkpoint' / 'variables'))
    assert any(e.shape == (8,) for e in entries.values())


@pytest.mark.parametrize('value', [float('nan'), float('-inf')])
def test_test_policy_refuses_non_finite_weights(run, value):
    H.write_nonfinite_model(str(run / 'tf1_save'), value)
    one_error_line(run_cli('test_policy', run, *TP, timeout=120), 'not finite')


def test_render_mode_human_without_a_display_and_env_files_that_are_not_files(tmp_path,
                                                                             monkeypatch):
    from spinup_tf.utils.envs import check_env_kwargs
    monkeypatch.delenv('DISPLAY', raising=False)
    monkeypatch.delenv('WAYLAND_DISPLAY', raising=False)
    monkeypatch.setattr(sys, 'platform', 'linux')
    with pytest.raises(UserInputError, match='no display'):
        check_env_kwargs('HalfCheetah-v5', {'render_mode': 'human'})
    check_env_kwargs('HalfCheetah-v5', {'render_mode': 'rgb_array'})
    os.mkfifo(tmp_path / 'model.xml')
    with pytest.raises(UserInputError, match='xml_file .* FIFO'):
        check_env_kwargs('HalfCheetah-v5', {'xml_file': str(tmp_path / 'model.xml')})
    with pytest.raises(UserInputError, match='character device'):
        check_env_kwargs('HalfCheetah-v5', {'xml_file': '/dev/zero'})
    os.symlink('/dev/zero', tmp_path / 'zero.xml')
    with pytest.raises(UserInputError, match='character device'):
        check_env_kwargs('HalfCheetah-v5', {'paths': [str(tmp_path / 'zero.xml')]})
    (tmp_path / 'real.xml').write_text('<mujoco/>')
    check_env_kwargs('HalfCheetah-v5', {'xml_file': str(tmp_path / 'real.xml')})
    monkeypatch.setenv('DISPLAY', ':0')
    check_env_kwargs('HalfCheetah-v5', {'render_mode': 'human'})


def test_a_run_folder_or_exp_folder_that_is_a_link_is_not_written_through(run, tmp_path):
    real = tmp_path / 'real'
    os.rename(run, real)
    os.symlink(real, run)
    before = H.snapshot(real)
    one_error_line(run_cli('resume', run, timeout=120), 'symbolic link')
    assert H.snapshot(real) == before
    data = tmp_path / 'data'
    data.mkdir()
    (tmp_path / 'elsewhere').mkdir()
    os.symlink(tmp_path / 'elsewhere', data / 'x')
    one_error_line(run_cli('td3', *RUN, '--data_dir', data, '--exp_name', 'x', timeout=120),
                   'symbolic link')
    assert os.listdir(tmp_path / 'elsewhere') == []


def test_videos_are_not_written_through_a_link_in_the_run_folder(tmp_path):
    from spinup_tf.tools.test_policy import check_video_paths
    run = tmp_path / 'run'
    run.mkdir()
    (tmp_path / 'elsewhere').mkdir()
    os.symlink(tmp_path / 'elsewhere', run / 'videos')
    with pytest.raises(UserInputError, match='symbolic link'):
        check_video_paths(str(run), str(run / 'videos'), 2)
    os.symlink(tmp_path / 'victim', run / 'v.mp4')
    with pytest.raises(UserInputError, match='symbolic link'):
        check_video_paths(str(run), str(run / 'v.mp4'), 1)
    check_video_paths(str(run), str(run / 'new' / 'v.mp4'), 3)
    check_video_paths(str(run), str(tmp_path / 'elsewhere' / 'v.mp4'), 1)  # the user's own


# ---- tune's study folder and database ------------------------------------------------------
TUNE = ['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '1', '--epochs', '1',
        '--steps_per_epoch', '200', '--start_steps', '100', '--update_after', '100',
        '--update_every', '50', '--hid', '[8]', '--study', 's']


def made_study(folder, run_dir=None):
    import optuna
    from spinup_tf.tools import tune
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    config = tune.parse(TUNE[1:] + ['--data_dir', str(folder.parent)])
    folder.mkdir(parents=True, exist_ok=True)
    storage = optuna.storages.RDBStorage('sqlite:///%s' % (folder / 'study.db'))
    s = optuna.create_study(study_name='s', storage=storage, direction='maximize')
    s.set_user_attr('made_by', config.made_by)
    s.set_user_attr('metric', config.metric)
    if run_dir is not None:
        trial = s.ask()
        for key, value in (('host', 'elsewhere'), ('pid', 1), ('heartbeat', 0.0),
                           ('run_dir', run_dir)):
            trial.set_user_attr(key, value)
    storage.engine.dispose()


@pytest.mark.parametrize('plant', ['link history.png', 'link logs', 'link study.db',
                                   'fifo study.db-journal', 'link trial folder',
                                   'stored run_dir outside', 'stored run_dir with ..'])
def test_tune_refuses_a_study_that_would_write_outside_or_wait(tmp_path, plant, finished):
    study, outside = tmp_path / 'data' / 's', tmp_path / 'outside'
    outside.mkdir()
    (outside / 'victim').write_text('keep')
    study.mkdir(parents=True)
    kind, name = plant.split(' ', 1)
    if kind == 'link':
        target = outside / ('victim' if name.endswith('.png') else 'missing')
        path = study / ('td3_Pendulum-v1_trial0' if name == 'trial folder' else name)
        os.symlink(target, path)
    elif kind == 'fifo':
        os.mkfifo(study / name)
    else:
        other = H.copy_run(finished, outside / 'other' / 'other_s0')
        made_study(study, str(other) if name.endswith('outside') else
                   os.path.join('..', '..', 'outside', 'other', 'other_s0'))
    before, before_outside = H.snapshot(tmp_path / 'data'), H.snapshot(outside)
    res = run_cli(*TUNE, '--data_dir', tmp_path / 'data', timeout=300)
    one_error_line(res, 'FIFO' if kind == 'fifo' else 'inside the study' if kind == 'stored'
                   else 'symbolic link')
    assert H.snapshot(tmp_path / 'data') == before and H.snapshot(outside) == before_outside


def test_tune_says_a_read_only_database_in_one_line(tmp_path, monkeypatch):
    from spinup_tf.tools import tune
    study = tmp_path / 'data' / 's'
    made_study(study)
    config = tune.parse(TUNE[1:] + ['--data_dir', str(tmp_path / 'data')])
    real_access = os.access
    monkeypatch.setattr(os, 'access', lambda p, mode: False if str(p).endswith('study.db')
                        and mode & os.W_OK else real_access(p, mode))
    with pytest.raises(UserInputError, match='read-only'):
        tune.check_study_folder(config)
    # and whatever the database raises mid-study is one line naming the innermost cause
    import sqlalchemy.exc
    try:
        try:
            raise sqlite_error()
        except Exception as inner:
            raise sqlalchemy.exc.OperationalError('INSERT', {}, inner) from inner
    except Exception as e:
        error = tune.storage_error(e, config)
    assert isinstance(error, UserInputError)
    assert str(error).endswith('attempt to write a readonly database')


def sqlite_error():
    import sqlite3
    return sqlite3.OperationalError('attempt to write a readonly database')


def test_a_trial_records_its_folder_relative_to_the_study(tmp_path):
    from spinup_tf.tools import tune
    config = tune.parse(TUNE[1:] + ['--data_dir', str(tmp_path / 'data')])

    class Trial:
        number, user_attrs = 3, {}

        def set_user_attr(self, key, value):
            self.user_attrs[key] = value
    tuner = tune.Tuner.__new__(tune.Tuner)
    tuner.c = config
    trial = Trial()
    run_dir = os.path.join(config.folder, 'td3_Pendulum-v1_trial3', 'td3_Pendulum-v1_trial3_s0')
    tuner._own(trial, run_dir)
    assert trial.user_attrs['run_dir'] == os.path.join('td3_Pendulum-v1_trial3',
                                                       'td3_Pendulum-v1_trial3_s0')
    assert tuner._run_dir(trial) == run_dir
    trial.user_attrs['run_dir'] = run_dir  # an older version's absolute path, inside
    assert tuner._run_dir(trial) == run_dir
    for bad in ('/etc', os.path.join('..', 'x', 'x_s0'), 'a', os.path.join('a', 'b', 'c')):
        trial.user_attrs['run_dir'] = bad
        with pytest.raises(UserInputError, match='inside the study folder'):
            tuner._run_dir(trial)


# ---- The working directory is data too -----------------------------------------------------
def test_python_m_spinup_tf_never_imports_from_the_working_directory(tmp_path):
    """With the package found elsewhere (installed), ``python -m spinup_tf`` inside a folder
    holding a planted numpy.py or matplotlib/ does not import them; ``-P`` and run.py are
    safe even from a planted spinup_tf/ (which plain ``-m`` cannot be: it is not this code
    that runs)."""
    marker = tmp_path / 'ran'
    folder = tmp_path / 'downloaded'
    (folder / 'matplotlib').mkdir(parents=True)
    for path in (folder / 'numpy.py', folder / 'matplotlib' / '__init__.py'):
        path.write_text('open(%r, "w").write("x")\n' % str(marker))
    env = dict(cli_env(), PYTHONPATH=ROOT)
    res = subprocess.run([sys.executable, '-m', 'spinup_tf', 'plot', '.', '--save', 'f.png'],
                         cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and 'nothing to plot' in res.stderr, res.stderr[-2000:]
    assert not marker.exists()
    (folder / 'spinup_tf').mkdir()
    (folder / 'spinup_tf' / '__init__.py').write_text(
        'open(%r, "w").write("x")\n' % str(marker))
    for argv in ([sys.executable, '-P', '-m', 'spinup_tf', '--help'],
                 [sys.executable, os.path.join(ROOT, 'run.py'), '--help']):
        res = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                             timeout=300)
        assert res.returncode == 0 and 'python -P -m spinup_tf' in res.stdout
        assert not marker.exists(), argv
