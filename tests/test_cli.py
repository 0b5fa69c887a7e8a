"""run.py end to end (subprocess, tiny budgets) and every bad input: one line, exit != 0."""
import json
import os

import pytest

from conftest import run_cli

TINY = ['--epochs', '2', '--steps_per_epoch', '300', '--start_steps', '100',
        '--update_after', '100', '--update_every', '50', '--num_test_episodes', '1',
        '--hid', '[16,16]', '--max_ep_len', '100']


def _assert_clean_error(proc, *needles):
    assert proc.returncode != 0
    err = proc.stderr
    assert 'Traceback' not in err, err
    lines = [l for l in err.splitlines() if l.startswith('error:') or 'error:' in l]
    assert lines, err
    for needle in needles:
        assert needle in err, err


def test_run_plot_test_policy_end_to_end(tmp_path):
    # Each command in a fresh interpreter, as a user runs them (the other CLI tests fork theirs
    # from a process that has the imports done: conftest.run_cli).
    data = tmp_path / 'data'
    proc = run_cli('td3', '--env', 'Pendulum-v1', '--seed', '0', '1', '--data_dir', data, *TINY,
                   fresh=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = sorted(os.listdir(data / 'td3_Pendulum-v1'))
    assert runs == ['td3_Pendulum-v1_s0', 'td3_Pendulum-v1_s1']
    run0 = data / 'td3_Pendulum-v1' / 'td3_Pendulum-v1_s0'
    assert {'progress.txt', 'config.json', 'tf1_save'} <= set(os.listdir(run0))
    config = json.loads((run0 / 'config.json').read_text())
    assert config['env_id'] == 'Pendulum-v1' and config['seed'] == 0
    assert config['ac_kwargs']['hidden_sizes'] == [16, 16]
    assert config['exp_name'] == 'td3_Pendulum-v1'
    rows = (run0 / 'progress.txt').read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith('Epoch\tAverageEpRet')

    png = tmp_path / 'curve.png'
    proc = run_cli('plot', data, '--save', png, fresh=True)
    assert proc.returncode == 0, proc.stderr
    assert png.stat().st_size > 1000

    proc = run_cli('test_policy', run0, '--episodes', '2', '--norender', fresh=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('EpRet') >= 3 and 'Mean EpRet' in proc.stdout

    # Same folder again: refused, nothing overwritten; --overwrite allows it.
    before = (run0 / 'progress.txt').read_text()
    proc = run_cli('td3', '--env', 'Pendulum-v1', '--data_dir', data, *TINY)
    _assert_clean_error(proc, 'already holds results')
    assert (run0 / 'progress.txt').read_text() == before


def test_algo_help_prints_docstring_and_flags():
    proc = run_cli('td3', '--help')
    assert proc.returncode == 0
    assert 'Twin Delayed Deep Deterministic Policy Gradient' in proc.stdout
    assert '--policy_delay' in proc.stdout and '--hid' in proc.stdout


@pytest.mark.parametrize('args,needle', [
    (['nosuchalgo', '--env', 'Pendulum-v1'], 'unknown algorithm'),
    (['td3', '--env', 'NoSuchEnv-v0'], 'unknown environment id'),
    (['td3', '--env', 'CartPole-v1'], 'continuous (Box) action space'),
    (['td3'], 'missing --env'),
    (['td3', '--env', 'Pendulum-v1', '--epochs', 'many'], '--epochs expects an integer'),
    (['td3', '--env', 'Pendulum-v1', '--epochs', '0'], '--epochs must be an integer >= 1'),
    (['td3', '--env', 'Pendulum-v1', '--no_such_flag', '1'], 'unknown flag --no_such_flag'),
    (['td3', '--env', 'Pendulum-v1', '--hid', '[0]'], '--hid expects'),
    (['td3', '--env', 'Pendulum-v1', '--act', 'nope'], 'unknown activation'),
])
def test_bad_training_input(tmp_path, capsys, args, needle):
    # In-process for speed; main() is exactly what run.py calls.
    from spinup_tf.tools.cli import main
    code = main(args + ['--data_dir', str(tmp_path / 'data')])
    err = capsys.readouterr().err
    assert code == 2 and 'Traceback' not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith('error:') and needle in err, err
    assert not (tmp_path / 'data').exists()  # nothing written


def test_bad_input_in_a_real_process_exits_nonzero(tmp_path):
    _assert_clean_error(run_cli('td3', '--env', 'CartPole-v1'), 'continuous (Box) action space')


def test_plot_without_progress_files(tmp_path):
    (tmp_path / 'empty').mkdir()
    _assert_clean_error(run_cli('plot', tmp_path / 'empty'), 'nothing to plot')


def test_test_policy_without_model(tmp_path):
    _assert_clean_error(run_cli('test_policy', tmp_path, '--norender'), 'no saved model')
    _assert_clean_error(run_cli('test_policy', tmp_path / 'missing'), 'no such run folder')


def test_test_policy_with_corrupt_model(tmp_path):
    (tmp_path / 'tf1_save').mkdir()
    (tmp_path / 'tf1_save' / 'model_info.json').write_text('{"inputs": ')
    _assert_clean_error(run_cli('test_policy', tmp_path, '--norender'), 'unreadable')


def _single_run_kwargs(args, tmp_path):
    from spinup_tf.tools.cli import build_runs
    plan = build_runs(args[0], args[1:] + ['--data_dir', str(tmp_path)])
    assert len(plan.experiments) == 1
    return plan.experiments[0].kwargs


def test_per_env_defaults_are_applied_and_overridable(tmp_path):
    kw = _single_run_kwargs(['td3', '--env', 'MountainCarContinuous-v0'], tmp_path)
    assert (kw['noise'], kw['act_noise'], kw['epochs']) == ('pink', 0.5, 10)
    kw = _single_run_kwargs(['td3', '--env', 'MountainCarContinuous-v0', '--noise', 'ou',
                             '--epochs', '3'], tmp_path)
    assert (kw['noise'], kw['act_noise'], kw['epochs']) == ('ou', 0.5, 3)
    kw = _single_run_kwargs(['td3', '--env', 'Pendulum-v1'], tmp_path)
    assert 'noise' not in kw  # the signature's default (gaussian)


def test_preset_sets_env_and_kwargs_and_flags_override(tmp_path):
    kw = _single_run_kwargs(['td3', '--preset', 'tensorlayer', '--gamma', '0.95',
                             '--hid', '[16,16]'], tmp_path)
    assert kw['env_fn'].env_id == 'Pendulum-v1'
    assert kw['actor_critic'] == 'tensorlayer' and kw['updates_per_step'] == 3
    assert kw['gamma'] == 0.95 and kw['ac_kwargs']['hidden_sizes'] == [16, 16]
    kw = _single_run_kwargs(['trpo', '--preset', 'blog-cartpole'], tmp_path)
    assert kw['env_fn'].env_id == 'CartPole-v1' and kw['epochs'] == 50
    kw = _single_run_kwargs(['td3', '--preset', 'blog-mountaincar'], tmp_path)
    assert kw['noise'] == 'uniform' and kw['epochs'] == 50  # not the per-env defaults


@pytest.mark.parametrize('args,needle', [
    (['td3', '--preset', 'nope'], 'unknown preset'),
    (['ppo', '--preset', 'udemy', '--env', 'Pendulum-v1'], 'unknown preset'),
    (['td3', '--env', 'Pendulum-v1', '--noise', 'purple'], 'Unknown noise kind'),
    (['sac', '--env', 'Pendulum-v1', '--alpha', 'sometimes'], "--alpha expects a number or 'auto'"),
    (['trpo', '--env', 'Blackjack-v1'], 'flat Box observation space'),
    (['td3', '--env', 'Pendulum-v1', '--batch_size', '200', '--replay_size', '100'],
     'larger than the replay buffer'),
])
def test_more_bad_input(tmp_path, capsys, args, needle):
    from spinup_tf.tools.cli import main
    code = main(args + ['--data_dir', str(tmp_path / 'data'), '--epochs', '1'])
    err = capsys.readouterr().err
    assert code == 2 and 'Traceback' not in err and needle in err, err
    assert not (tmp_path / 'data').exists()
