"""--overwrite replaces a run whole: the earlier folder is moved aside, named in one line;
any sign of an earlier run (a checkpoint alone too) stops a run without it; the default
folder name of a preset run names the preset."""
import os

from conftest import run_cli

TINY = ['--env', 'Pendulum-v1', '--steps_per_epoch', '200',
        '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
        '--max_ep_len', '100', '--hid', '[16,16]']


def test_overwrite_moves_the_earlier_run_aside(tmp_path):
    run = tmp_path / 'x' / 'x_s0'
    assert run_cli('td3', *TINY, '--epochs', '1', '--exp_name', 'x',
                   '--data_dir', tmp_path).returncode == 0
    old_progress = (run / 'progress.txt').read_text()
    (run / 'extra_file_of_the_old_run').write_text('old')
    proc = run_cli('td3', *TINY, '--epochs', '2', '--exp_name', 'x', '--data_dir', tmp_path,
                   '--overwrite')
    assert proc.returncode == 0, proc.stderr[-2000:]
    aside = [p for p in os.listdir(tmp_path / 'x') if p.startswith('x_s0.trash-')]
    assert len(aside) == 1 and aside[0] in proc.stdout
    assert (tmp_path / 'x' / aside[0] / 'progress.txt').read_text() == old_progress
    assert not (run / 'extra_file_of_the_old_run').exists()  # nothing of the old run mixed in
    assert len((run / 'progress.txt').read_text().splitlines()) == 3


def test_a_checkpoint_alone_counts_as_an_earlier_run(tmp_path):
    run = tmp_path / 'x' / 'x_s0'
    (run / 'checkpoint').mkdir(parents=True)
    (run / 'checkpoint' / 'state.json').write_text('{}')
    proc = run_cli('td3', *TINY, '--epochs', '1', '--exp_name', 'x', '--data_dir', tmp_path)
    assert proc.returncode == 2 and 'already holds results' in proc.stderr
    assert os.listdir(run) == ['checkpoint']


def test_preset_runs_are_named_after_the_preset(tmp_path):
    proc = run_cli('td3', '--preset', 'tensorlayer', '--epochs', '1', '--steps_per_epoch', '200',
                   '--num_test_episodes', '0', '--data_dir', tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert os.listdir(tmp_path) == ['td3_tensorlayer_Pendulum-v1']
    import json
    run = tmp_path / 'td3_tensorlayer_Pendulum-v1' / 'td3_tensorlayer_Pendulum-v1_s0'
    config = json.loads((run / 'config.json').read_text())
    # The preset and every quirk flag it sets are recorded, and resume still reads the config.
    assert config['preset'] == 'tensorlayer' and 'preset' not in config['logger_kwargs']
    assert config['update_count_from'] == 1 and config['action_range'] == 1.0
    assert config['normalize_rewards'] is True
    # A plain run's plan carries no preset, so its config.json records null (Setup's default).
    from spinup_tf.tools.cli import build_runs
    (plain,) = build_runs('td3', ['--env', 'Pendulum-v1', '--data_dir',
                                  str(tmp_path / 'plain')]).experiments
    assert 'preset' not in plain.kwargs['logger_kwargs']
    assert plain.kwargs['logger_kwargs']['output_dir'].endswith(
        'td3_Pendulum-v1/td3_Pendulum-v1_s0')


def test_plot_leaves_runs_set_aside_out(tmp_path):
    from spinup_tf.tools.plot import find_runs
    for name in ('x_s0', 'x_s0.trash-20261201-000000'):
        d = tmp_path / 'x' / name
        d.mkdir(parents=True)
        (d / 'progress.txt').write_text('Epoch\tAverageEpRet\n1\t2.0\n2\t3.0\n')
    runs = find_runs([str(tmp_path / 'x')])
    assert len(runs) == 1
