"""plots/reproduce.py: the seeds' budgets, its commands (resume of a killed run), its table
and figures from progress files, a whole tiny sitting, and --no-run never emptying a table."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, load_plot_script


def load():
    return load_plot_script('reproduce')


def test_full_budgets_are_the_seeds_own():
    rp = load()
    budget = {d.key: {v: (lambda e, s: (e * s, s))(*rp.variant_budget(d, v, 'full'))
                      for v in rp.VARIANTS} for d in rp.DOCUMENTS}
    expected = {'udemy': 500000, 'rllab-mxnet': 1000000, 'tensorlayer': 40050,
                'blog-mountaincar': 200000, 'seed-000': 500000, 'trpo-blog': 200000,
                'npg-blog': 200000}
    for key, steps in expected.items():
        assert {v: b[0] for v, b in budget[key].items()} == dict.fromkeys(rp.VARIANTS, steps)
    assert budget['seed-000']['seed'][1] == 5000  # the Spinning Up code it copies
    assert budget['rllab-mxnet']['seed'][1] == 1000 and budget['rllab-mxnet']['default'][1] == 4000


def test_commands_name_the_variant_and_resume_a_killed_run(tmp_path, monkeypatch):
    rp = load()
    doc = next(d for d in rp.DOCUMENTS if d.key == 'tensorlayer')
    seed, fixed, default = (rp.command(doc, v, 1, 'full', str(tmp_path)) for v in rp.VARIANTS)
    assert seed[3:5] == ['--preset', 'tensorlayer'] and fixed[4] == 'tensorlayer-fixed'
    assert default[3:5] == ['--env', 'Pendulum-v1'] and '--overwrite' in default
    folder = rp.run_folder(str(tmp_path), doc, 'fixed', 1)
    assert folder.endswith(os.path.join('td3_tensorlayer-fixed_Pendulum-v1',
                                        'td3_tensorlayer-fixed_Pendulum-v1_s1'))
    os.makedirs(os.path.join(folder, 'checkpoint'))
    # A checkpoint resume would refuse (here: an empty one; in practice one made before
    # checkpoints recorded their rows) starts the run afresh, replacing it ...
    again = rp.command(doc, 'fixed', 1, 'full', str(tmp_path))
    assert again[2:5] == [doc.algo, '--preset', 'tensorlayer-fixed'] and '--overwrite' in again
    # ... one that utils.checkpoint.verify accepts is resumed.
    monkeypatch.setattr(rp, 'resumable', lambda f: f == folder)
    assert rp.command(doc, 'fixed', 1, 'full', str(tmp_path))[2:] == ['resume', folder]


def test_only_runs_its_documents_in_the_order_given(tmp_path):
    rp = load()
    docs = rp.selected_documents(['rllab-mxnet', 'udemy', 'rllab-mxnet'])
    assert [d.key for d in docs] == ['rllab-mxnet', 'udemy']
    assert [d.key for d in rp.selected_documents(None)] == [d.key for d in rp.DOCUMENTS]
    todo = rp.jobs(docs, [0], 'full', str(tmp_path))
    assert [(d.key, v) for d, v, _, _ in todo] == [('rllab-mxnet', v) for v in rp.VARIANTS] + [
        ('udemy', v) for v in rp.VARIANTS]


def _progress(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    header = ['Epoch', 'AverageEpRet', 'AverageTestEpRet', 'TotalEnvInteracts', 'Time']
    with open(path, 'w') as f:
        f.write('\t'.join(header) + '\n')
        for r in rows:
            f.write('\t'.join(str(r[k]) for k in header) + '\n')


def test_table_and_figure_from_progress_files(tmp_path):
    """Mean ± std over seeds of the last epoch; a run short of its budget is marked; the
    jobs left are the unfinished runs."""
    rp = load()
    doc = next(d for d in rp.DOCUMENTS if d.key == 'tensorlayer')
    data = str(tmp_path / 'data')
    for seed, final in ((0, -200.0), (1, -400.0)):
        rows = [dict(Epoch=e, AverageEpRet=0, AverageTestEpRet=final if e == 10 else -1000,
                     TotalEnvInteracts=4005 * e, Time=10 * e) for e in range(1, 11)]
        _progress(os.path.join(rp.run_folder(data, doc, 'seed', seed), 'progress.txt'), rows)
    _progress(os.path.join(rp.run_folder(data, doc, 'fixed', 0), 'progress.txt'),
              [dict(Epoch=1, AverageEpRet=0, AverageTestEpRet=-900, TotalEnvInteracts=4005,
                    Time=9)])
    args = rp.main.__globals__['argparse'].Namespace(budget='full', data_dir=data,
                                                      out=str(tmp_path / 'out'))
    lines = rp.write_results([doc], [0, 1], args)
    row = next(l for l in lines if '`--preset tensorlayer`' in l)
    assert '| 0, 1 | 40050 | AverageTestEpRet | -300.0 ± 100.0 | -930.0 ± 10.0 |' in row
    partial = next(l for l in lines if '`--preset tensorlayer-fixed`' in l)
    assert '4005 of 40050 (running)' in partial
    assert (tmp_path / 'out' / 'tensorlayer.png').stat().st_size > 1000
    todo = [(d.key, v, s) for d, v, s, _ in rp.jobs([doc], [0, 1], 'full', data)]
    assert todo == [('tensorlayer', 'fixed', 0), ('tensorlayer', 'default', 0),
                    ('tensorlayer', 'fixed', 1), ('tensorlayer', 'default', 1)]


def test_seeds_that_log_at_different_steps_are_drawn_as_run_py_plot_draws_them(tmp_path,
                                                                               monkeypatch):
    """The udemy preset evaluates at the first episode end after every 5,000 steps, so its
    seeds' steps differ (5,948, 5,787, 5,371, ...). Its figure must show their curve, as
    `run.py plot` does on the same folders (row i of every seed one point), not only the
    steps every seed shares (which were 0 and the last: a straight line)."""
    import numpy as np
    rp = load()
    from spinup_tf.tools import plot
    doc = next(d for d in rp.DOCUMENTS if d.key == 'udemy')
    data = str(tmp_path / 'data')
    folders = []
    for seed, offsets in enumerate(([948, 1210, 377], [787, 133, 861], [371, 645, 902])):
        steps = [0] + [5000 * (e + 1) + offsets[e % 3] for e in range(8)] + [50000]
        rows = [dict(Epoch=e, AverageEpRet=0, AverageTestEpRet=100.0 * e + 10 * seed,
                     TotalEnvInteracts=x, Time=e) for e, x in enumerate(steps)]
        folder = rp.run_folder(data, doc, 'seed', seed)
        _progress(os.path.join(folder, 'progress.txt'), rows)
        folders.append(folder)
    drawn = {}

    def capture(fig, path, **kwargs):
        drawn.update({line.get_label(): line.get_xydata() for line in fig.axes[0].lines})
    monkeypatch.setattr(plot, 'save_figure', capture)
    args = rp.main.__globals__['argparse'].Namespace(budget='full', data_dir=data,
                                                      out=str(tmp_path / 'out'))
    rp.write_results([doc], [0, 1, 2], args)
    (label, xy), = drawn.items()
    assert len(xy) == 10  # every evaluation, not the 2 steps the seeds share
    assert np.allclose(np.diff(xy[:, 1]), 100) and np.diff(xy[:, 0]).min() > 0  # a curve
    # the same curve as run.py plot's on the same folders
    runs = plot.find_runs(folders)
    for run in runs:
        run['condition'] = 'one'
    fig = plot.plot_value(runs, 'TotalEnvInteracts', 'AverageTestEpRet')
    np.testing.assert_allclose(fig.axes[0].lines[0].get_xydata(), xy)
    band = fig.axes[0].collections[0].get_paths()[0].vertices
    x, mean, low, high = plot.band([r['data']['TotalEnvInteracts'] for r in runs],
                                   [r['data']['AverageTestEpRet'] for r in runs])
    assert np.allclose(high - mean, np.std([10 * s for s in range(3)], ddof=1))
    assert band[:, 1].max() == pytest.approx(high.max())


def test_no_run_without_data_leaves_the_table_alone(tmp_path, capsys):
    rp = load()
    out = tmp_path / 'out'
    out.mkdir()
    (out / 'RESULTS.md').write_text('committed table\n')
    assert rp.main(['--no-run', '--data_dir', str(tmp_path / 'empty'), '--out', str(out)]) == 0
    assert (out / 'RESULTS.md').read_text() == 'committed table\n'
    assert 'left as it is' in capsys.readouterr().out


def test_a_tiny_sitting_runs_the_three_variants_and_then_skips_them(tmp_path):
    cmd = [sys.executable, os.path.join(ROOT, 'plots', 'reproduce.py'), '--budget', 'tiny',
           '--only', 'trpo-blog', '--seeds', '1', '--workers', '2',
           '--data_dir', str(tmp_path / 'data'), '--out', str(tmp_path / 'out')]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', MPLBACKEND='Agg')
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '3 runs to do' in proc.stdout and proc.stdout.count(': done in') == 3
    table = (tmp_path / 'out' / 'RESULTS.md').read_text()
    for label in ('`--preset blog-cartpole`', '`--preset blog-cartpole-fixed`',
                  '`trpo defaults`'):
        assert label in table
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0 and '0 runs to do' in proc.stdout


def test_only_finished_seeds_count_once_one_has_finished_and_only_keeps_other_rows(tmp_path):
    """A seed still running does not enter the mean beside a finished one, and a sitting
    with --only on one document keeps the other documents' rows in RESULTS.md."""
    rp = load()
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    tensorlayer, trpo = (next(d for d in rp.DOCUMENTS if d.key == k)
                         for k in ('tensorlayer', 'trpo-blog'))
    for seed, epochs, final in ((0, 10, -200.0), (1, 3, -1000.0)):  # seed 1 still running
        rows = [dict(Epoch=e, AverageEpRet=0, AverageTestEpRet=final,
                     TotalEnvInteracts=4005 * e, Time=10 * e) for e in range(1, epochs + 1)]
        _progress(os.path.join(rp.run_folder(data, tensorlayer, 'seed', seed), 'progress.txt'),
                  rows)
    _progress(os.path.join(rp.run_folder(data, trpo, 'seed', 0), 'progress.txt'),
              [dict(Epoch=e, AverageEpRet=500, AverageTestEpRet='nan', TotalEnvInteracts=4000 * e,
                    Time=e) for e in range(1, 51)])
    assert rp.main(['--no-run', '--only', 'trpo-blog', '--data_dir', data, '--out', out]) == 0
    lines = open(os.path.join(out, 'RESULTS.md')).read().splitlines()
    row = next(l for l in lines if '`--preset tensorlayer`' in l)
    assert '| 0 | 40050 | AverageTestEpRet | -200.0 ± 0.0 |' in row  # seed 1 left out
    assert any('`--preset blog-cartpole`' in l and '| 500.0 ± 0.0 |' in l for l in lines)


@pytest.mark.parametrize('bad', [['--only', 'nosuch'], ['--seeds', '0']])
def test_bad_arguments_exit_2(bad):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, 'plots', 'reproduce.py'),
                           '--no-run'] + bad, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith('error: ')


def test_a_run_made_before_its_preset_changed_is_run_again(tmp_path):
    """A finished run whose config.json disagrees with its preset today (a quirk added, a
    value changed) is stale: the next sitting runs it again from the start."""
    import json
    rp = load()
    doc = next(d for d in rp.DOCUMENTS if d.key == 'tensorlayer')
    data = str(tmp_path / 'data')
    folder = rp.run_folder(data, doc, 'seed', 0)
    _progress(os.path.join(folder, 'progress.txt'),
              [dict(Epoch=e, AverageEpRet=0, AverageTestEpRet=0, TotalEnvInteracts=4005 * e,
                    Time=e) for e in range(1, 11)])
    from spinup_tf.reproductions.presets import get_preset
    config = dict(get_preset('td3', 'tensorlayer').kwargs, preset='tensorlayer')
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(config, f)
    assert not rp.stale(doc, 'seed', folder)
    assert ('seed', 0) not in [(v, s) for _, v, s, _ in rp.jobs([doc], [0], 'full', data)]
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(dict(config, update_after=65, sample_without_replacement=False), f)
    assert rp.stale(doc, 'seed', folder)
    assert [(v, afresh) for _, v, _, afresh in rp.jobs([doc], [0], 'full', data)
            if v == 'seed'] == [('seed', True)]
    os.makedirs(os.path.join(folder, 'checkpoint'))
    assert 'resume' not in rp.command(doc, 'seed', 0, 'full', data, afresh=True)


def test_the_table_names_the_stale_seeds_of_a_row_part_rerun(tmp_path):
    """A row whose seeds are partly rerun under today's preset names the seeds still stale;
    a row with every seed stale says so without a list."""
    import json
    rp = load()
    doc = next(d for d in rp.DOCUMENTS if d.key == 'tensorlayer')
    data = str(tmp_path / 'data')
    from spinup_tf.reproductions.presets import get_preset
    today = dict(get_preset('td3', 'tensorlayer').kwargs, preset='tensorlayer')
    old = dict(today, update_after=65)
    for seed, config in ((0, today), (1, old), (2, old)):
        folder = rp.run_folder(data, doc, 'seed', seed)
        _progress(os.path.join(folder, 'progress.txt'),
                  [dict(Epoch=e, AverageEpRet=0, AverageTestEpRet=-100 * seed,
                        TotalEnvInteracts=4005 * e, Time=e) for e in range(1, 11)])
        with open(os.path.join(folder, 'config.json'), 'w') as f:
            json.dump(config, f)
    args = rp.main.__globals__['argparse'].Namespace(budget='full', data_dir=data,
                                                      out=str(tmp_path / 'out'))

    def row():
        lines = rp.write_results([doc], [0, 1, 2], args)
        return next(l for l in lines if '`--preset tensorlayer`' in l)
    assert "| 40050 (stale: seeds 1, 2 made before the preset's current quirks) |" in row()
    with open(os.path.join(rp.run_folder(data, doc, 'seed', 2), 'config.json'), 'w') as f:
        json.dump(today, f)
    assert "| 40050 (stale: seed 1 made before the preset's current quirks) |" in row()
    with open(os.path.join(rp.run_folder(data, doc, 'seed', 0), 'config.json'), 'w') as f:
        json.dump(old, f)
    with open(os.path.join(rp.run_folder(data, doc, 'seed', 2), 'config.json'), 'w') as f:
        json.dump(old, f)
    assert "| 40050 (stale: made before the preset's current quirks) |" in row()


def test_improvement_table_gives_p_fixed_beats_as_written_with_its_interval(tmp_path):
    rp = load()
    doc = next(d for d in rp.DOCUMENTS if d.key == 'trpo-blog')
    data = str(tmp_path / 'data')
    # Last-10 scores: as written 10, 20, 30; fixed 15, 25, 35; defaults 40, 40, 40.
    for variant, scores in (('seed', (10, 20, 30)), ('fixed', (15, 25, 35)),
                            ('default', (40, 40, 40))):
        for seed, score in enumerate(scores):
            epochs, spe = rp.variant_budget(doc, variant, 'full')
            rows = [dict(Epoch=e, AverageEpRet=score, AverageTestEpRet='nan',
                         TotalEnvInteracts=spe * e, Time=e)
                    for e in range(1, epochs + 1)]
            _progress(os.path.join(rp.run_folder(data, doc, variant, seed), 'progress.txt'),
                      rows)
    args = rp.main.__globals__['argparse'].Namespace(budget='full', data_dir=data,
                                                      out=str(tmp_path / 'out'))
    lines = rp.write_results([doc], [0, 1, 2], args)
    row = next(l for l in lines[lines.index('## Does fixing the quirks help? '
                                            'P(fixed > as written)'):] if doc.title in l)
    # Fixed above as written in 6 of the 9 pairs (15 > 10; 25 > 10, 20; 35 > all): 2/3,
    # with the interval of stats.probability_of_improvement (tests/test_stats.py); the
    # defaults beat every run in every resample: 1 with no width.
    cells = [c.strip() for c in row.split('|')[1:-1]]
    assert cells[1:5] == ['last 10 epochs of the column', '20.0 [10.0, 30.0]',
                          '25.0 [15.0, 35.0]', '40.0 [40.0, 40.0]']
    assert cells[5].startswith('0.67 [') and cells[6] == '1.00 [1.00, 1.00]'
    from spinup_tf.tools import stats
    assert cells[5] == str(stats.probability_of_improvement([15, 25, 35], [10, 20, 30]))
