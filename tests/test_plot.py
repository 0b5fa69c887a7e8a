"""Tests for the plotting tool (spinup_tf/plot.py): synthetic run folders in tmp_path, Agg only."""
import json
import os
import subprocess
import sys

os.environ['MPLBACKEND'] = 'Agg'  # before anything imports matplotlib

import numpy as np
import pytest

from spinup_tf.tools import plot
from spinup_tf.tools.plot import (ProgressFileError, aggregate, find_runs, main, make_plots,
                                  performance_column, read_progress, smooth)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ['Epoch', 'AverageEpRet', 'StdEpRet', 'AverageTestEpRet', 'LossQ',
           'TotalEnvInteracts', 'Time']


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv('MPLBACKEND', 'Agg')
    monkeypatch.delenv('DISPLAY', raising=False)
    monkeypatch.delenv('WAYLAND_DISPLAY', raising=False)
    monkeypatch.setattr(plot.sys, 'platform', 'linux')  # no display, on any OS


def write_progress(run_dir, rows, columns=COLUMNS):
    """Write progress.txt the way the logger does: tab separated, str() of each value."""
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, 'progress.txt')
    with open(path, 'w') as f:
        f.write('\t'.join(columns) + '\n')
        for row in rows:
            f.write('\t'.join(map(str, row)) + '\n')
    return path


def make_run(data_dir, exp_name, seed, epochs=5, offset=0.0, columns=COLUMNS):
    """A run folder DATA_DIR/EXP_NAME/EXP_NAME_s{seed} with progress.txt and config.json."""
    run_dir = os.path.join(str(data_dir), exp_name, f'{exp_name}_s{seed}')
    rows = []
    for e in range(epochs):
        full = dict(Epoch=e, AverageEpRet=float(e) + offset, StdEpRet=0.5,
                    AverageTestEpRet=10.0 * e + offset, LossQ=1.0 / (e + 1),
                    TotalEnvInteracts=4000 * (e + 1), Time=1.5 * (e + 1))
        rows.append([full[c] for c in columns])
    write_progress(run_dir, rows, columns)
    with open(os.path.join(run_dir, 'config.json'), 'w') as f:
        json.dump({'exp_name': exp_name, 'seed': seed}, f)
    return run_dir


def write_text(tmp_path, text, name='progress.txt'):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def assert_png(path):
    with open(path, 'rb') as f:
        head = f.read(8)
    assert head == b'\x89PNG\r\n\x1a\n'
    assert os.path.getsize(path) > 1000


# --------------------------------------------------------------------------------------------
# read_progress
# --------------------------------------------------------------------------------------------
def test_read_good_file(tmp_path):
    path = write_progress(str(tmp_path), [[0, -1.5, 4000, 0.25], [1, 2.0, 8000, 0.5]],
                          columns=['Epoch', 'AverageEpRet', 'TotalEnvInteracts', 'Time'])
    data = read_progress(path)
    assert list(data) == ['Epoch', 'AverageEpRet', 'TotalEnvInteracts', 'Time']
    assert data['Epoch'].dtype == np.int64 and data['TotalEnvInteracts'].dtype == np.int64
    assert data['AverageEpRet'].dtype == np.float64 and data['Time'].dtype == np.float64
    np.testing.assert_array_equal(data['Epoch'], [0, 1])
    np.testing.assert_array_equal(data['AverageEpRet'], [-1.5, 2.0])
    np.testing.assert_array_equal(data['TotalEnvInteracts'], [4000, 8000])


def test_read_nan_scientific_blank_cell_and_crlf(tmp_path):
    path = write_text(tmp_path, 'A\tB\tC\r\n1e-3\tnan\t\r\n\n2\t-inf\t3\r\n')
    data = read_progress(path)
    np.testing.assert_array_equal(data['A'], [1e-3, 2.0])
    assert np.isnan(data['B'][0]) and data['B'][1] == -np.inf
    assert np.isnan(data['C'][0]) and data['C'][1] == 3.0  # blank cell (key not logged) -> NaN


@pytest.mark.parametrize('text, match', [
    ('', 'empty'),
    ('\n  \n', 'empty'),
    ('Epoch\tAverageEpRet\n', 'no data rows'),
    ('0\t1.5\n1\t2.5\n', 'no header'),
    ('Epoch\t\tTime\n0\t1\t2\n', 'empty column name'),
    ('Epoch\tEpoch\n0\t1\n', 'duplicate'),
    ('Epoch\tAverageEpRet\n0\t1.0\n1\n2\t3.0\n', 'line 3 has 1 fields, expected 2'),
    ('Epoch\tAverageEpRet\n0\t1.0\t7\n1\t2.0\n', 'line 2 has 3 fields'),
    ('Epoch\tAverageEpRet\n0\tabc\n1\t2.0\n', "non-numeric value 'abc'"),
    ('Epoch\tAverageEpRet\n0\t1.0\n1\t2.0\n2\n', 'line 4 has 1 fields'),  # ragged, complete
])
def test_read_malformed_raises(tmp_path, text, match):
    path = write_text(tmp_path, text)
    with pytest.raises(ProgressFileError, match=match) as info:
        read_progress(path)
    assert isinstance(info.value, ValueError)
    assert path in str(info.value)


def test_read_binary_file_raises(tmp_path):
    path = tmp_path / 'progress.txt'
    path.write_bytes(b'\xff\xfe\x00\x81binary')
    with pytest.raises(ProgressFileError, match='not a text file'):
        read_progress(str(path))


@pytest.mark.parametrize('last', ['3', '3\t4.0\t', '3\t-', '3\t1e'])
def test_truncated_last_line_dropped(tmp_path, capsys, last):
    path = write_text(tmp_path, 'Epoch\tAverageEpRet\n0\t1.0\n1\t2.0\n2\t3.0\n' + last)
    data = read_progress(path)
    np.testing.assert_array_equal(data['Epoch'], [0, 1, 2])
    np.testing.assert_array_equal(data['AverageEpRet'], [1.0, 2.0, 3.0])
    err = capsys.readouterr().err
    assert 'truncated' in err and path in err and len(err.strip().splitlines()) == 1


def test_complete_last_row_without_newline_is_kept(tmp_path, capsys):
    path = write_text(tmp_path, 'Epoch\tAverageEpRet\n0\t1.0\n1\t2.5')
    np.testing.assert_array_equal(read_progress(path)['AverageEpRet'], [1.0, 2.5])
    assert capsys.readouterr().err == ''


def test_only_truncated_row_is_no_data(tmp_path):
    path = write_text(tmp_path, 'Epoch\tAverageEpRet\n0')
    with pytest.raises(ProgressFileError, match='no data rows'):
        read_progress(path)


# --------------------------------------------------------------------------------------------
# numerics
# --------------------------------------------------------------------------------------------
def test_smooth_matches_hand_computation():
    x = [1.0, 2.0, 6.0, 3.0, 8.0]
    # window 3: each point averages itself and its neighbours inside the data.
    expected = [(1 + 2) / 2, (1 + 2 + 6) / 3, (2 + 6 + 3) / 3, (6 + 3 + 8) / 3, (3 + 8) / 2]
    np.testing.assert_allclose(smooth(x, 3), expected)
    # window 2 ('same' keeps x[i-1] and x[i]; the first point is alone).
    np.testing.assert_allclose(smooth(x, 2), [1.0, 1.5, 4.0, 4.5, 5.5])
    # the Spinning Up formula, verbatim
    y = np.ones(3)
    spinup = np.convolve(x, y, 'same') / np.convolve(np.ones(5), y, 'same')
    np.testing.assert_allclose(smooth(x, 3), spinup)
    np.testing.assert_array_equal(smooth(x, 1), x)


def test_smooth_window_longer_than_data_keeps_length():
    out = smooth([1.0, 3.0], 10)
    assert out.shape == (2,)
    np.testing.assert_allclose(out, [2.0, 2.0])
    with pytest.raises(ValueError):
        smooth([1.0], 0)


def test_performance_column():
    assert performance_column({'AverageEpRet': 1, 'AverageTestEpRet': 2}) == 'AverageTestEpRet'
    assert performance_column({'AverageEpRet': 1}) == 'AverageEpRet'
    assert performance_column({'LossQ': 1}) is None


def test_aggregate_mean_and_std_band():
    xs = [np.array([1, 2, 3]), np.array([1, 2, 3])]
    ys = [np.array([1.0, 2.0, 3.0]), np.array([3.0, 6.0, 3.0])]
    x, center, std = aggregate(xs, ys)
    np.testing.assert_array_equal(x, [1, 2, 3])
    np.testing.assert_allclose(center, [2.0, 4.0, 3.0])
    # sample std (ddof=1) of two values a, b is |a - b| / sqrt(2)
    np.testing.assert_allclose(std, [2 / np.sqrt(2), 4 / np.sqrt(2), 0.0])
    for est, expected in [('max', [3, 6, 3]), ('min', [1, 2, 3]), ('median', [2, 4, 3])]:
        np.testing.assert_allclose(aggregate(xs, ys, est)[1], expected)


def test_aggregate_truncates_to_shortest_and_single_run():
    x, center, std = aggregate([np.arange(4), np.arange(2)], [np.ones(4), 3 * np.ones(2)])
    np.testing.assert_array_equal(x, [0, 1])
    np.testing.assert_allclose(center, [2.0, 2.0])
    x, center, std = aggregate([np.arange(3)], [np.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(center, [1, 2, 3])
    np.testing.assert_array_equal(std, 0.0)
    with pytest.raises(ValueError):
        aggregate([np.arange(3)], [np.ones(3)], 'mode')


# --------------------------------------------------------------------------------------------
# find_runs
# --------------------------------------------------------------------------------------------
def test_two_seeds_one_condition(tmp_path):
    make_run(tmp_path, 'td3_Pendulum', 0, offset=0.0)
    make_run(tmp_path, 'td3_Pendulum', 1, offset=2.0)
    runs = find_runs([str(tmp_path / 'td3_Pendulum')])
    assert [r['condition'] for r in runs] == ['td3_Pendulum', 'td3_Pendulum']
    assert [r['unit'] for r in runs] == [0, 1]
    assert runs[0]['path'].endswith('td3_Pendulum_s0')
    # Performance is AverageTestEpRet here
    for r in runs:
        np.testing.assert_array_equal(r['data']['Performance'], r['data']['AverageTestEpRet'])
    x, center, std = aggregate([r['data']['TotalEnvInteracts'] for r in runs],
                               [r['data']['Performance'] for r in runs])
    np.testing.assert_array_equal(x, [4000, 8000, 12000, 16000, 20000])
    np.testing.assert_allclose(center, 10.0 * np.arange(5) + 1.0)
    np.testing.assert_allclose(std, 2.0 / np.sqrt(2))


def test_performance_falls_back_to_average_ep_ret(tmp_path):
    make_run(tmp_path, 'ppo', 0, columns=['Epoch', 'AverageEpRet', 'TotalEnvInteracts'])
    (run,) = find_runs([str(tmp_path)])
    np.testing.assert_array_equal(run['data']['Performance'], run['data']['AverageEpRet'])


def test_condition_from_folder_and_legend(tmp_path):
    run_dir = make_run(tmp_path, 'sac', 0)
    os.remove(os.path.join(run_dir, 'config.json'))
    (run,) = find_runs([str(tmp_path / 'sac')])
    assert run['condition'] == 'sac'  # parent folder of the run folder
    (run,) = find_runs([str(tmp_path / 'sac')], legend=['SAC'])
    assert run['condition'] == 'SAC'
    with pytest.raises(ValueError, match='one per logdir'):
        find_runs([str(tmp_path / 'sac')], legend=['a', 'b'])


def test_prefix_logdir(tmp_path):
    make_run(tmp_path, 'td3_Pendulum', 0)
    make_run(tmp_path, 'td3_Hopper', 0)
    make_run(tmp_path, 'ddpg_Pendulum', 0)
    runs = find_runs([str(tmp_path / 'td3_')])
    assert sorted(r['condition'] for r in runs) == ['td3_Hopper', 'td3_Pendulum']


def test_select_and_exclude(tmp_path):
    for exp in ('algoA_envX', 'algoB_envX', 'algoA_envY'):
        for seed in (0, 1):
            make_run(tmp_path, exp, seed)
    root = str(tmp_path)
    assert len(find_runs([root])) == 6
    runs = find_runs([root], select=['algoA'])
    assert {r['condition'] for r in runs} == {'algoA_envX', 'algoA_envY'}
    runs = find_runs([root], select=['algoA', 'envX'])
    assert {r['condition'] for r in runs} == {'algoA_envX'} and len(runs) == 2
    runs = find_runs([root], exclude=['envY', 'algoB'])
    assert {r['condition'] for r in runs} == {'algoA_envX'}
    runs = find_runs([root], select=['envX'], exclude=['_s1'])
    assert sorted(os.path.basename(r['path']) for r in runs) == ['algoA_envX_s0',
                                                                 'algoB_envX_s0']


def test_corrupt_run_skipped_with_warning(tmp_path, capsys):
    make_run(tmp_path, 'exp', 0)
    bad = os.path.join(str(tmp_path), 'exp', 'exp_s1')
    os.makedirs(bad)
    write_text(tmp_path / 'exp' / 'exp_s1', 'Epoch\tAverageEpRet\n0\tzz\n1\t2\n')
    runs = find_runs([str(tmp_path)])
    assert len(runs) == 1 and runs[0]['path'].endswith('exp_s0')
    err = capsys.readouterr().err
    assert os.path.join(bad, 'progress.txt') in err and 'Traceback' not in err


# --------------------------------------------------------------------------------------------
# make_plots / main
# --------------------------------------------------------------------------------------------
def test_make_plots_returns_written_files(tmp_path):
    make_run(tmp_path, 'exp', 0)
    make_run(tmp_path, 'exp', 1, offset=1.0)
    runs = find_runs([str(tmp_path)])
    out = str(tmp_path / 'out' / 'fig.png')
    written = make_plots(runs, 'TotalEnvInteracts', ['Performance'], False, 'mean', 2, out)
    assert written == [out]
    assert_png(out)
    assert make_plots(runs, 'Epoch', 'LossQ', True, 'max', 1, None) == []


def test_main_png_headless(tmp_path, capsys):
    make_run(tmp_path, 'td3_Pendulum', 0)
    make_run(tmp_path, 'td3_Pendulum', 1, offset=3.0)
    png = str(tmp_path / 'td3.png')
    assert main([str(tmp_path / 'td3_Pendulum'), '--save', png]) == 0
    assert_png(png)
    assert 'saved' in capsys.readouterr().out


def test_main_svg_with_options(tmp_path):
    make_run(tmp_path, 'a', 0)
    make_run(tmp_path, 'b', 0, offset=1.0)
    svg = str(tmp_path / 'fig.svg')
    code = main([str(tmp_path / 'a'), str(tmp_path / 'b'), '-l', 'A', 'B', '-x', 'Epoch',
                 '-s', '3', '--est', 'median', '--count', '--save', svg])
    assert code == 0
    with open(svg) as f:
        text = f.read()
    assert text.lstrip().startswith('<?xml') and '<svg' in text


def test_main_several_values_several_files(tmp_path):
    make_run(tmp_path, 'exp', 0)
    save = str(tmp_path / 'fig.png')
    assert main([str(tmp_path), '-y', 'AverageEpRet', 'LossQ', '--save', save]) == 0
    for value in ('AverageEpRet', 'LossQ'):
        assert_png(str(tmp_path / f'fig_{value}.png'))
    assert not os.path.exists(save)


def test_main_no_progress_files_exit_2(tmp_path, capsys):
    (tmp_path / 'empty').mkdir()
    code = main([str(tmp_path / 'empty'), '--save', str(tmp_path / 'x.png')])
    assert code == 2
    err = capsys.readouterr().err
    assert 'error' in err and 'Traceback' not in err
    assert not os.path.exists(tmp_path / 'x.png')


def test_main_missing_logdir_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / 'nope'), '--no-show']) == 2
    assert 'nope' in capsys.readouterr().err


def test_main_good_and_corrupt_run(tmp_path, capsys):
    make_run(tmp_path, 'exp', 0)
    write_text(tmp_path, 'Epoch\tAverageEpRet\n0\t1.0\t9\n')  # ragged: tmp_path/progress.txt
    png = str(tmp_path / 'fig.png')
    assert main([str(tmp_path), '--save', png]) == 0
    assert_png(png)
    err = capsys.readouterr().err
    assert 'warning' in err and str(tmp_path / 'progress.txt') in err
    assert 'Traceback' not in err


def test_main_missing_column(tmp_path, capsys):
    make_run(tmp_path, 'full', 0)
    make_run(tmp_path, 'small', 0, columns=['Epoch', 'AverageEpRet', 'TotalEnvInteracts'])
    png = str(tmp_path / 'loss.png')
    # in one run only: warn, skip the other, still plot
    assert main([str(tmp_path), '-y', 'LossQ', '--save', png]) == 0
    assert_png(png)
    assert "no column 'LossQ'" in capsys.readouterr().err
    # in no run: one error line, exit 2
    assert main([str(tmp_path), '-y', 'Nope', '--save', png]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'Nope'" in err[0] and 'available columns' in err[0]
    assert main([str(tmp_path), '-x', 'Steps', '--save', png]) == 2


def test_main_without_display_or_save_does_not_show(tmp_path, monkeypatch):
    make_run(tmp_path, 'exp', 0)
    import matplotlib.pyplot as plt
    monkeypatch.setattr(plt, 'show', lambda *a, **k: pytest.fail('show() without display'))
    assert main([str(tmp_path), '--no-show']) == 0
    assert main([str(tmp_path)]) == 0


def test_script_runs_headless(tmp_path):
    make_run(tmp_path, 'exp', 0)
    png = str(tmp_path / 'script.png')
    env = {k: v for k, v in os.environ.items() if k != 'DISPLAY'}
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'plots', 'plot.py'),
                           str(tmp_path), '--save', png], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert_png(png)
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'plots', 'plot.py'),
                           str(tmp_path / 'missing'), '--no-show'], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr


def test_plot_module_does_not_import_tensorflow_or_pandas():
    code = ('import sys, spinup_tf.tools.plot; '
            'sys.exit(any(m in sys.modules for m in ("tensorflow", "pandas", "seaborn")))')
    proc = subprocess.run([sys.executable, '-c', code], cwd=REPO, timeout=120)
    assert proc.returncode == 0
