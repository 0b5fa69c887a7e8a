"""Plots say what they draw: the y axis's column, a title, reference lines; warnings for
runs that cannot draw a curve; runs of different algorithms or envs kept apart."""
import json

import matplotlib
matplotlib.use('Agg')
import pytest  # noqa: E402

from spinup_tf.tools import plot  # noqa: E402


def _run(folder, rows, columns=('Epoch', 'AverageEpRet', 'TotalEnvInteracts'), **config):
    folder.mkdir(parents=True)
    lines = ['\t'.join(columns)] + ['\t'.join(str(v) for v in row) for row in rows]
    (folder / 'progress.txt').write_text('\n'.join(lines) + '\n')
    if config:
        (folder / 'config.json').write_text(json.dumps(config))
    return folder


ROWS = [(1, -5.0, 100), (2, -3.0, 200), (3, -1.0, 300)]


def test_y_axis_names_the_column_drawn_and_title_is_the_env(tmp_path):
    _run(tmp_path / 'ppo' / 'ppo_s0', ROWS, exp_name='ppo', algo='ppo', env_id='CartPole-v1')
    runs = plot.find_runs([str(tmp_path / 'ppo')])
    fig = plot.plot_value(runs, 'TotalEnvInteracts', 'Performance')
    ax = fig.axes[0]
    assert ax.get_ylabel() == 'AverageEpRet'  # not "Performance": PPO logs no test return
    assert ax.get_title() == 'CartPole-v1'
    fig = plot.plot_value(runs, 'TotalEnvInteracts', 'Performance', title='Mine',
                          references=[plot.parse_reference('207:rl-zoo TD3')])
    ax = fig.axes[0]
    assert ax.get_title() == 'Mine'
    ref = [l for l in ax.get_lines() if l.get_label() == 'rl-zoo TD3']
    assert len(ref) == 1 and list(ref[0].get_ydata()) == [207.0, 207.0]


def test_parse_reference():
    assert plot.parse_reference('207') == (207.0, None)
    assert plot.parse_reference('-1.5e2:paper: v2') == (-150.0, 'paper: v2')
    for bad in ('abc', 'nan', ':label'):
        with pytest.raises(ValueError):
            plot.parse_reference(bad)


def test_mixed_test_and_training_returns_name_both(tmp_path):
    _run(tmp_path / 'a' / 'a_s0', ROWS, exp_name='a')
    _run(tmp_path / 'b' / 'b_s0', ROWS, columns=('Epoch', 'AverageTestEpRet',
                                                 'TotalEnvInteracts'), exp_name='b')
    runs = plot.find_runs([str(tmp_path / 'a'), str(tmp_path / 'b')])
    assert plot.y_label(runs, 'Performance') == 'AverageTestEpRet / AverageEpRet'
    assert plot.y_label(runs, 'LossQ') == 'LossQ'


def test_warns_on_one_row_and_nan_columns(tmp_path, capsys):
    _run(tmp_path / 'one' / 'one_s0', ROWS[:1], exp_name='one')
    _run(tmp_path / 'nan' / 'nan_s0', [(1, 'nan', 100), (2, 'nan', 200)], exp_name='nan')
    runs = plot.find_runs([str(tmp_path / 'one'), str(tmp_path / 'nan')])
    err = capsys.readouterr().err
    assert 'one row only' in err and 'one_s0' in err
    fig = plot.plot_value(runs, 'TotalEnvInteracts', 'AverageEpRet')
    err = capsys.readouterr().err
    assert 'NaN in every row' in err and 'nan_s0' in err
    lines = [l for l in fig.axes[0].get_lines()]
    assert len(lines) == 1 and lines[0].get_marker() == 'o'  # the single point is visible
    with pytest.raises(plot.PlotError):
        plot.plot_value(runs[1:], 'TotalEnvInteracts', 'AverageEpRet')


def test_runs_of_different_envs_or_algorithms_are_kept_apart(tmp_path):
    for seed, env in enumerate(['Pendulum-v1', 'Pendulum-v1', 'Hopper-v5']):
        _run(tmp_path / 'exp' / ('exp_s%d' % seed), ROWS, exp_name='exp', algo='td3',
             env_id=env)
    _run(tmp_path / 'exp' / 'exp_s9', ROWS, exp_name='exp', algo='sac', env_id='Pendulum-v1')
    runs = plot.find_runs([str(tmp_path / 'exp')])
    conditions = sorted((r['condition'], r['unit']) for r in runs)
    assert conditions == [('exp [sac, Pendulum-v1]', 0), ('exp [td3, Hopper-v5]', 0),
                          ('exp [td3, Pendulum-v1]', 0), ('exp [td3, Pendulum-v1]', 1)]
    assert plot.default_title(runs) is None
    # the same algorithm and env: one condition, as before
    runs = plot.find_runs([str(tmp_path / 'exp')], select=['exp_s0'])
    assert [r['condition'] for r in runs] == ['exp']


def test_command_line_reference_and_bad_reference(tmp_path, capsys):
    _run(tmp_path / 'ppo' / 'ppo_s0', ROWS, exp_name='ppo', env_id='CartPole-v1')
    out = tmp_path / 'fig.png'
    assert plot.main([str(tmp_path / 'ppo'), '--save', str(out), '--reference',
                      '500:max return', '--title', 'PPO']) == 0
    assert out.exists()
    capsys.readouterr()
    assert plot.main([str(tmp_path / 'ppo'), '--save', str(out), '--reference', 'x']) == 2
    err = [l for l in capsys.readouterr().err.splitlines() if l.strip()]
    assert len(err) == 1 and 'error: --reference' in err[0]


@pytest.mark.parametrize('name', ['$\\frac{$', 'a $x^{2$ b', '$$', '\\$\\mathrm{', 'cost $5'])
def test_labels_holding_mathtext_are_drawn_as_text(tmp_path, name):
    """An exp_name or env id is data: a ``$`` in it is a dollar sign, not mathtext (whose
    parser raised on ``$\\frac{$``), in the legend, the title and a reference's label."""
    _run(tmp_path / 'x' / 'x_s0', ROWS, exp_name=name, env_id=name)
    runs = plot.find_runs([str(tmp_path / 'x')])
    out = tmp_path / 'f.png'
    assert plot.make_plots(runs, 'TotalEnvInteracts', ['AverageEpRet'], save=str(out),
                           references=[(1.0, name)]) == [str(out)]
    fig = plot.plot_value(runs, 'TotalEnvInteracts', 'AverageEpRet', references=[(1.0, name)])
    fig.canvas.draw()  # what raised: the layout of the texts
    texts = [t for t in [fig.axes[0].title] + fig.axes[0].get_legend().get_texts()]
    assert all(t._preprocess_math(t.get_text()) == (name, False) for t in texts)


def test_a_matplotlibrc_in_the_working_directory_changes_nothing(tmp_path, monkeypatch):
    """matplotlib reads ./matplotlibrc when it is imported; the project's figures are drawn
    with its own settings (usetex off: no LaTeX is ever run) and the same bytes result."""
    _run(tmp_path / 'x' / 'x_s0', ROWS, exp_name='x')
    runs = plot.find_runs([str(tmp_path / 'x')])
    plain_png = tmp_path / 'plain.png'
    plot.make_plots(runs, 'TotalEnvInteracts', ['AverageEpRet'], save=str(plain_png))
    hostile = {'text.usetex': True, 'font.family': 'serif', 'lines.linewidth': 9.0,
               'figure.facecolor': 'red', 'text.parse_math': False}
    with matplotlib.rc_context(hostile):  # as if read from ./matplotlibrc
        out = tmp_path / 'rc.png'
        plot.make_plots(runs, 'TotalEnvInteracts', ['AverageEpRet'], save=str(out))
        assert matplotlib.rcParams['text.usetex'] is True  # the user's settings are left as set
    assert out.read_bytes() == plain_png.read_bytes()


def test_save_never_writes_through_a_link_or_waits_on_a_fifo(tmp_path, capsys):
    import os
    _run(tmp_path / 'x' / 'x_s0', ROWS, exp_name='x')
    victim = tmp_path / 'victim'
    victim.write_text('keep')
    os.symlink(victim, tmp_path / 'fig.png')
    os.mkfifo(tmp_path / 'fifo.png')
    for name, what in (('fig.png', 'symbolic link'), ('fifo.png', 'FIFO')):
        assert plot.main([str(tmp_path / 'x'), '--save', str(tmp_path / name)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and 'error:' in err[0] and what in err[0]
    assert victim.read_text() == 'keep' and os.path.islink(tmp_path / 'fig.png')
    assert sorted(os.listdir(tmp_path)) == ['fifo.png', 'fig.png', 'victim', 'x']
