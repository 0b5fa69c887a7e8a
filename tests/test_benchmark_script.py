"""plots/benchmark.py: its reading of curves, and --no-run never replacing a table with an
empty one."""
import os
import shutil

import numpy as np

from conftest import ROOT, load_plot_script


def load():
    return load_plot_script('benchmark')


def section_rows(table, heading):
    """``{first cell: row}`` of the body of the Markdown table under the section ``heading``
    of RESULTS.md (``None`` if there is no such section)."""
    if '## ' + heading not in table:
        return None
    section = table.split('## ' + heading)[1].split('\n## ')[0]
    return {line.split('|')[1].strip(): line for line in section.splitlines()
            if line.startswith('| ') and not line.startswith('| runs of |')}


def test_value_at_a_checkpoint_is_spinning_ups_11_epoch_centred_mean():
    bm = load()
    steps = [4000 * i for i in range(1, 40)]
    values = list(range(1, 40))  # epoch i has value i
    assert bm.value_at((steps, values), 100000) == sum(range(20, 31)) / 11  # epochs 20-30
    assert bm.value_at((steps, values), 156000) == sum(range(34, 40)) / 6  # cut at the end
    assert bm.value_at((steps, values), 8000) == sum(range(1, 8)) / 7      # cut at the start
    assert bm.value_at((steps, values), 300000) is None  # not reached
    # smooth is Spinning Up's np.convolve(x, ones(11), 'same') / np.convolve(ones, ones(11),
    # 'same') on any run of at least 11 epochs (numpy's 'same' pads shorter ones).
    rng = np.random.default_rng(3)
    for n in (11, 12, 75):
        x = rng.normal(size=n) * 1000
        k = np.ones(11)
        expected = np.convolve(x, k, 'same') / np.convolve(np.ones(n), k, 'same')
        assert np.allclose(bm.smooth(x), expected, rtol=1e-12, atol=1e-9), n
    assert bm.ratio(1500.0, 1000.0) == '1.50'
    assert bm.ratio(-100.0, -453.0) == '–' and bm.ratio(5.0, 0.0) == '–'  # no ratio to <= 0


def test_no_run_without_data_leaves_results_alone(tmp_path, capsys):
    bm = load()
    results = os.path.join(bm.HERE, 'RESULTS.md')
    before = open(results).read() if os.path.exists(results) else None
    assert bm.main(['--no-run', '--data_dir', str(tmp_path)]) == 0  # default --out
    after = open(results).read() if os.path.exists(results) else None
    assert after == before
    assert 'left as it is' in capsys.readouterr().out


def test_commands_resume_a_run_with_a_checkpoint(tmp_path):
    bm = load()
    folder = bm.run_folder(str(tmp_path), 'Hopper', 'td3', 0)
    assert '--overwrite' in bm.command('Hopper', 'td3', 0, 75, str(tmp_path))
    os.makedirs(os.path.join(folder, 'checkpoint'))
    assert bm.command('Hopper', 'td3', 0, 75, str(tmp_path))[2:] == ['resume', folder]
    assert '[64,32]' in bm.command('Hopper', 'ppo', 0, 750, str(tmp_path))


def test_bad_matrix_input_is_one_error_line_and_exit_2(tmp_path, capsys):
    bm = load()
    for argv, words in [(['--envs', 'Swimmer'], 'unknown env Swimmer'),
                        (['--algos', 'a2c'], 'unknown algorithm a2c'),
                        (['--seeds', '0'], '--seeds and --workers'),
                        (['--workers', '0'], '--seeds and --workers'),
                        (['--budget_off', '100'], 'at least one epoch')]:
        assert bm.main(argv + ['--data_dir', str(tmp_path), '--out', str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith('error: ') and words in err[0], err
    assert os.listdir(str(tmp_path)) == []  # nothing run, nothing written


def write_run(bm, data_dir, env, algo, seed, value, epochs=25):
    folder = bm.run_folder(data_dir, env, algo, seed)
    os.makedirs(folder)
    column = 'AverageTestEpRet' if algo in bm.OFF_POLICY else 'AverageEpRet'
    with open(os.path.join(folder, 'progress.txt'), 'w') as f:
        f.write('Epoch\tTotalEnvInteracts\t%s\n' % column)
        for e in range(1, epochs + 1):
            f.write('%d\t%d\t%s\n' % (e, 4000 * e, value))


def test_table_covers_every_run_in_the_data_folder_and_marks_rows_outside_80_120(tmp_path):
    bm = load()
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    os.makedirs(out)
    for seed in range(2):
        write_run(bm, data, 'HalfCheetah', 'td3', seed, 5579 * 0.5)  # half Spinning Up's
        write_run(bm, data, 'Hopper', 'ppo', seed, 207)                 # equal
    # A call about Hopper only still writes HalfCheetah's rows (they are in the data folder).
    assert bm.main(['--no-run', '--envs', 'Hopper', '--data_dir', data, '--out', out]) == 0
    table = open(os.path.join(out, 'RESULTS.md')).read()
    rows = {tuple(c.strip() for c in line.split('|')[1:4]): line for line in table.splitlines()
            if line.startswith('| ') and '-v5' in line}
    assert set(rows) == {('HalfCheetah-v5', 'td3', '100k'), ('Hopper-v5', 'ppo', '100k')}
    # Spinning Up's std over seeds beside its mean (TD3 HalfCheetah at 100k: 432), our gap in
    # those stds ((2790 - 5579) / 432 = -6.5), and its PyTorch figure (5242: 2790 / 5242)
    assert ('| 2790 ± 0 | 2790 / 2790 | 5579 ± 432 | 0.50 | -2790 | -6.5 | below 80 % | 5242 '
            '| 0.53 |') in rows['HalfCheetah-v5', 'td3', '100k']
    assert '| 1.00 | +0 | +0.0 |  | 249 | 0.83 |' in rows['Hopper-v5', 'ppo', '100k']
    assert sorted(os.listdir(out)) == ['HalfCheetah.png', 'Hopper.png', 'RESULTS.md']


def test_run_flags_go_to_every_run_and_keep_to_their_own_data_folder(tmp_path, capsys):
    bm = load()
    flags = ['--timeout_is_terminal', 'True']
    assert bm.command('HalfCheetah', 'ppo', 0, 750, str(tmp_path), flags)[-2:] == flags
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    os.makedirs(out)
    write_run(bm, data, 'Hopper', 'ppo', 0, 207)  # a run made without flags
    argv = ['--envs', 'Hopper', '--algos', 'ppo', '--seeds', '1', '--data_dir', data,
            '--out', out]
    assert bm.main(argv + ['--run_flags', '--timeout_is_terminal True']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'give this variant its own --data_dir' in err[0], err
    assert not os.path.exists(os.path.join(data, bm.FLAGS_FILE)) and os.listdir(out) == []
    # A run of any seed counts, not only seeds 0-9: one of seed 12 refuses the flags too.
    seed12 = str(tmp_path / 'seed12')
    write_run(bm, seed12, 'Hopper', 'ppo', 12, 207)
    assert bm.has_runs(seed12) and not bm.has_runs(str(tmp_path / 'empty'))
    assert bm.main(['--envs', 'Hopper', '--algos', 'ppo', '--seeds', '1', '--data_dir', seed12,
                    '--out', out, '--run_flags', '--timeout_is_terminal True']) == 2
    capsys.readouterr()
    assert bm.main(argv + ['--run_flags', 'timeout_is_terminal']) == 2  # not a flag
    assert capsys.readouterr().err.startswith('error: --run_flags must start')
    # A folder made with flags records them; its table's header gives the command with them.
    flagged = str(tmp_path / 'flagged')
    write_run(bm, flagged, 'Hopper', 'ppo', 0, 207)
    with open(os.path.join(flagged, bm.FLAGS_FILE), 'w') as f:
        f.write('["--timeout_is_terminal", "True"]')
    assert bm.recorded_flags(flagged) == flags and bm.recorded_flags(data) == []
    assert bm.main(['--no-run', '--data_dir', flagged, '--out', out]) == 0
    assert '--run_flags "--timeout_is_terminal True"' in open(
        os.path.join(out, 'RESULTS.md')).read()


def test_env_version_goes_to_every_run_and_keeps_to_its_own_data_folder(tmp_path, capsys):
    bm = load()
    data, out = str(tmp_path / 'v4'), str(tmp_path / 'out')
    os.makedirs(out)
    argv = ['--envs', 'Walker2d', '--algos', 'td3', '--seeds', '1', '--data_dir', data,
            '--out', out, '--budget_off', '4000']
    assert bm.main(argv + ['--env_version', 'v3']) == 2  # needs mujoco-py: not offered
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0] == 'error: --env_version v3; choose from v5, v4', err
    assert not os.path.exists(data)
    # A data folder on -v4 names its runs, their --env and its table's rows -v4.
    os.makedirs(data)
    with open(os.path.join(data, bm.VERSION_FILE), 'w') as f:
        f.write('v4\n')
    folder = bm.run_folder(data, 'Walker2d', 'td3', 0)
    assert folder.endswith(os.path.join('Walker2d', 'td3_Walker2d-v4', 'td3_Walker2d-v4_s0'))
    cmd = bm.command('Walker2d', 'td3', 0, 75, data)
    assert cmd[cmd.index('--env') + 1] == 'Walker2d-v4'
    write_run(bm, data, 'Walker2d', 'td3', 0, 245)  # half Spinning Up's 490 at 100k
    # It refuses runs on another version (the default -v5), and a -v5 folder refuses -v4.
    assert bm.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'holds runs on -v4, not -v5' in err[0], err
    v5 = str(tmp_path / 'v5')
    write_run(bm, v5, 'Walker2d', 'td3', 0, 490)
    assert bm.main(['--envs', 'Walker2d', '--algos', 'td3', '--data_dir', v5, '--out', out,
                    '--env_version', 'v4']) == 2
    assert 'holds runs on -v5, not -v4' in capsys.readouterr().err
    assert not os.path.exists(os.path.join(v5, bm.VERSION_FILE)) and os.listdir(out) == []
    # Its finished run is skipped (nothing to run), and the table reads -v4 throughout.
    assert bm.main(argv + ['--env_version', 'v4']) == 0
    assert '0 runs to do' in capsys.readouterr().out
    table = open(os.path.join(out, 'RESULTS.md')).read()
    assert '--env_version v4' in table and 'on MuJoCo -v4' in table
    assert '| Walker2d-v4 | td3 | 100k | 1 | 245 ± 0 |' in table and '-v5 |' not in table


def test_spinning_ups_curves_are_read_back_off_a_matplotlib_svg():
    """plots/benchmark/read_spinningup_plots.py reads a curve's values at the checkpoints
    back from an SVG drawn as Spinning Up drew its benchmark figures (a grid, a legend)."""
    import io
    import sys
    import numpy as np
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    sys.path.insert(0, os.path.join(ROOT, 'plots', 'benchmark'))
    from read_spinningup_plots import (CHECKPOINTS, read_bands, read_svg,
                                       stds_at_checkpoints, values_at_checkpoints)
    steps = np.arange(4000, 3000001, 4000)
    truth = {'ppo': lambda x: 3000 * np.sqrt(x / 3e6) - 600,
             'td3': lambda x: 1e4 * (1 - np.exp(-x / 5e5))}
    fig, ax = plt.subplots()
    for label, f in truth.items():
        line, = ax.plot(steps, f(steps), label=label, linewidth=1.75)
        ax.fill_between(steps, f(steps) - 300, f(steps) + 300, color=line.get_color(),
                        alpha=0.2)  # a band of ± 300, as Spinning Up's ± one std
    ax.grid(True)
    ax.legend()
    svg = io.StringIO()
    fig.savefig(svg, format='svg')
    plt.close(fig)
    read = {k: values_at_checkpoints(v) for k, v in read_svg(svg.getvalue()).items()}
    assert set(read) == set(truth)
    for label, f in truth.items():
        expected = f(np.array(CHECKPOINTS, float))
        assert np.allclose(read[label], expected, atol=0.005 * np.ptp(f(steps))), (label, read)
    stds = {k: stds_at_checkpoints(v) for k, v in read_bands(svg.getvalue()).items()}
    assert set(stds) == set(truth)
    assert all(abs(s - 300) <= 0.01 * 300 for v in stds.values() for s in v), stds


def test_aggregate_pools_runs_at_their_budget_normalised_by_spinning_up(tmp_path):
    bm = load()
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    os.makedirs(out)
    # At 100k Spinning Up TF1 has TD3 5579 on HalfCheetah and 760 on Hopper: scores 0.5 and
    # 1.5 of it, two seeds each.
    for seed in range(2):
        write_run(bm, data, 'HalfCheetah', 'td3', seed, 5579 * 0.5)
        write_run(bm, data, 'Hopper', 'td3', seed, 760 * 1.5)
    write_run(bm, data, 'Hopper', 'ppo', 0, 207)  # on-policy budget 3M: not reached, left out
    assert bm.main(['--no-run', '--budget_off', '100000', '--data_dir', data,
                    '--out', out]) == 0
    table = open(os.path.join(out, 'RESULTS.md')).read()
    rows = section_rows(table, 'Aggregate')
    # Pooled runs 0.5, 0.5, 1.5, 1.5: the IQM drops one from each end (mean of 0.5 and 1.5),
    # and every resample keeps two runs of each task, so the intervals have no width; half
    # the tasks' runs score above Spinning Up's mean.
    assert rows['all'] == '| all | 2 | 4 | 1.00 [1.00, 1.00] | 1.00 [1.00, 1.00] | ' \
        '0.50 [0.50, 0.50] |'
    assert rows['td3'] == rows['all'].replace('| all |', '| td3 |')
    assert 'on-policy' not in rows and 'ppo' not in rows
    assert sorted(os.listdir(out)) == ['HalfCheetah.png', 'Hopper.png', 'RESULTS.md',
                                       'aggregate.png']
    # Each row's 95 % interval of our mean over seeds, and of the ratio.
    line = [l for l in table.splitlines() if l.startswith('| HalfCheetah-v5 | td3 | 100k')][0]
    assert line.endswith('| [2790, 2790] | [0.50, 0.50] |')


def test_aggregate_takes_each_task_at_its_furthest_checkpoint_and_work_dir_runs_land(tmp_path):
    """With --budget_off 1M, a task whose runs reached 1M is scored there, one whose runs
    stopped at 300k is scored at 300k; a run finished in --work_dir is copied into the data
    folder (progress and config only), an unfinished one is not."""
    bm = load()
    data, work, out = (str(tmp_path / n) for n in ('data', 'work', 'out'))
    os.makedirs(out)
    for seed in range(2):  # Spinning Up TF1: HalfCheetah TD3 9893 at 1M, Hopper TD3 2168 at 300k
        write_run(bm, work, 'HalfCheetah', 'td3', seed, 9893 * 0.5, epochs=250)
        write_run(bm, data, 'HalfCheetah', 'td3', seed, 1.0, epochs=75)  # replaced
        write_run(bm, data, 'Hopper', 'td3', seed, 2168 * 1.5, epochs=75)
    write_run(bm, work, 'Hopper', 'sac', 0, 1.0, epochs=10)  # unfinished: stays in work
    for seed in range(2):
        open(os.path.join(bm.run_folder(work, 'HalfCheetah', 'td3', seed), 'config.json'),
             'w').write('{"seed": %d}' % seed)
        assert bm.collect('HalfCheetah', 'td3', seed, 250, work, data)
    assert not bm.collect('Hopper', 'sac', 0, 250, work, data)
    landed = bm.run_folder(data, 'HalfCheetah', 'td3', 1)
    assert sorted(os.listdir(landed)) == ['config.json', 'progress.txt']
    assert not os.path.exists(bm.run_folder(data, 'Hopper', 'sac', 0))
    assert bm.main(['--no-run', '--budget_off', '1000000', '--envs', 'HalfCheetah', 'Hopper',
                    '--data_dir', data, '--out', out]) == 0
    table = open(os.path.join(out, 'RESULTS.md')).read()
    rows = section_rows(table, 'Aggregate')
    assert rows['all'].startswith('| all | 2 | 4 | 1.00 [1.00, 1.00] |'), rows['all']
    assert '| HalfCheetah-v5 | td3 | 1000k | 2 |' in table


def test_aggregate_moves_a_task_to_1m_once_every_seed_is_there_whatever_the_budget(tmp_path):
    """The committed table is redrawn with the default budget (300k off-policy), yet a task
    whose three seeds reached 1M is scored at 1M; while one seed is still short of 1M, the
    task stays at 300k, the furthest checkpoint all three reached, and the 1M row of two
    seeds is shown in the table but does not stand for the task."""
    bm = load()
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    os.makedirs(out)
    # Spinning Up TF1, HalfCheetah: DDPG 6741 at 300k and 9179 at 1M; TD3 7850 and 9893.
    for seed in range(3):
        write_run(bm, data, 'HalfCheetah', 'ddpg', seed, 9179 * 2.0, epochs=250)
        # TD3: seeds 0 and 1 at 1M, seed 2 at 300k; 7850 * 0.5 at 300k = 3925 is the value
        # of every epoch, so at 1M (all 250 epochs equal) it scores 3925 / 9893 = 0.397.
        write_run(bm, data, 'HalfCheetah', 'td3', seed, 7850 * 0.5,
                  epochs=250 if seed < 2 else 75)

    def aggregate():
        assert bm.main(['--no-run', '--envs', 'HalfCheetah', '--data_dir', data,
                        '--out', out]) == 0
        table = open(os.path.join(out, 'RESULTS.md')).read()
        section = table.split('## Aggregate')[1].split('\n## ')[0]
        return table, section, section_rows(table, 'Aggregate')

    table, section, rows = aggregate()
    assert '| HalfCheetah-v5 | td3 | 1000k | 2 |' in table
    assert rows['ddpg'].startswith('| ddpg | 1 | 3 | 2.00 [2.00, 2.00] |'), rows['ddpg']
    assert rows['td3'].startswith('| td3 | 1 | 3 | 0.50 [0.50, 0.50] |'), rows['td3']
    assert 'Scored at 300k: HalfCheetah-v5 td3; 1000k: HalfCheetah-v5 ddpg.' in section
    # The last seed reaches 1M: the task moves there.
    shutil.rmtree(bm.run_folder(data, 'HalfCheetah', 'td3', 2))
    write_run(bm, data, 'HalfCheetah', 'td3', 2, 7850 * 0.5, epochs=250)
    table, section, rows = aggregate()
    assert rows['td3'].startswith('| td3 | 1 | 3 | 0.40 [0.40, 0.40] |'), rows['td3']
    assert 'Scored at 1000k: HalfCheetah-v5 ddpg, HalfCheetah-v5 td3.' in section


def test_aggregate_has_a_row_per_env_and_an_early_speed_table_of_off_policy_runs_at_300k(
        tmp_path):
    """Each env pools its tasks (off- and on-policy) at their furthest checkpoints; the
    early-speed table scores every off-policy task whose seeds all reached 300k there, even
    when its runs went on to 1M, and leaves out on-policy tasks and tasks with a seed short
    of 300k."""
    bm = load()
    data, out = str(tmp_path / 'data'), str(tmp_path / 'out')
    os.makedirs(out)
    # Spinning Up TF1: HalfCheetah TD3 7850 at 300k, 9893 at 1M; Hopper TD3 2168 at 300k;
    # Hopper PPO 1871 at 3M; Ant SAC 825 at 100k.
    for seed in range(3):
        write_run(bm, data, 'HalfCheetah', 'td3', seed, 9893 * 2.0, epochs=250)
        write_run(bm, data, 'Ant', 'sac', seed, 825.0, epochs=75 if seed < 2 else 25)
    for seed in range(2):
        write_run(bm, data, 'Hopper', 'td3', seed, 2168 * 0.5, epochs=75)
    write_run(bm, data, 'Hopper', 'ppo', 0, 1871.0, epochs=750)
    assert bm.main(['--no-run', '--data_dir', data, '--out', out]) == 0
    table = open(os.path.join(out, 'RESULTS.md')).read()
    final = section_rows(table, 'Aggregate')
    assert final['HalfCheetah-v5'].startswith('| HalfCheetah-v5 | 1 | 3 | 2.00 [2.00, 2.00] |')
    assert final['Hopper-v5'].startswith('| Hopper-v5 | 2 | 3 |'), final['Hopper-v5']
    assert final['on-policy'].startswith('| on-policy | 1 | 1 | 1.00 [1.00, 1.00] |')
    assert 'Ant-v5' not in final  # its seeds did not all reach 300k
    early = section_rows(table, 'Early speed')
    assert list(early) == ['off-policy', 'td3', 'HalfCheetah-v5', 'Hopper-v5']
    # HalfCheetah's 1M runs at 300k: 19786 / 7850 = 2.52
    assert early['HalfCheetah-v5'].startswith('| HalfCheetah-v5 | 1 | 3 | 2.52 [2.52, 2.52] |')
    assert early['Hopper-v5'].startswith('| Hopper-v5 | 1 | 2 | 0.50 [0.50, 0.50] |')
    assert early['off-policy'].startswith('| off-policy | 2 | 5 |')
    # No off-policy task at 300k: no early-speed section.
    shutil.rmtree(data)
    write_run(bm, data, 'Hopper', 'ppo', 0, 1871.0, epochs=750)
    assert bm.main(['--no-run', '--data_dir', data, '--out', out]) == 0
    assert section_rows(open(os.path.join(out, 'RESULTS.md')).read(), 'Early speed') is None
