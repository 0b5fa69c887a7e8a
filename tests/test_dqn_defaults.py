"""DQN's per-env defaults (rl-baselines3-zoo's settings and budgets on CartPole-v1, Acrobot-v1,
LunarLander-v3, MountainCar-v0 and Atari): the zoo's keys become dqn's arguments as SB3 reads
them, ``run.py`` applies them (flags override, other envs keep SB3's defaults), ``--help``
lists them, ``config.json`` records them; and ``plots/dqn_defaults.py``, their seed sweep,
skips finished runs, starts stale ones again and makes its tables from the progress files."""
import json
import os

import pytest

from conftest import ROOT, run_cli, load_plot_script
from spinup_tf.tools.env_defaults import (ZOO_DQN, ATARI_DEFAULTS, ENV_DEFAULTS, env_defaults,
                                          zoo_dqn_kwargs, describe_env_defaults)

CLASSIC = ('CartPole-v1', 'Acrobot-v1', 'LunarLander-v3', 'MountainCar-v0')


def test_zoo_keys_become_dqn_arguments_as_sb3_reads_them():
    kw = zoo_dqn_kwargs(ZOO_DQN['Acrobot-v1'])
    # gradient_steps -1 (SB3: as many as the env steps collected) is train_freq; random
    # actions and the first update both wait for learning_starts
    assert (kw['update_every'], kw['gradient_steps']) == (4, 4)
    assert kw['start_steps'] == kw['update_after'] == 0
    assert kw['ac_kwargs'] == dict(hidden_sizes=[256, 256])
    assert (kw['steps_per_epoch'], kw['epochs']) == (10000, 10)
    kw = zoo_dqn_kwargs(ZOO_DQN['MountainCar-v0'])
    assert (kw['lr'], kw['gamma'], kw['replay_size'], kw['batch_size']) == (4e-3, 0.98, 10000, 128)
    assert (kw['update_every'], kw['gradient_steps'], kw['target_update_interval']) == (16, 8, 600)
    assert (kw['exploration_fraction'], kw['eps_end']) == (0.2, 0.07)
    assert kw['steps_per_epoch'] * kw['epochs'] == 120000
    kw = zoo_dqn_kwargs(ZOO_DQN['CartPole-v1'])
    assert (kw['update_every'], kw['gradient_steps'], kw['target_update_interval']) == \
        (256, 128, 10)
    assert kw['steps_per_epoch'] * kw['epochs'] == 50000
    with pytest.raises(ValueError):
        zoo_dqn_kwargs(dict(ZOO_DQN['CartPole-v1'], n_timesteps=12345))
    # Atari: the zoo's entry at 1M steps, the Nature network, whole games
    atari = ATARI_DEFAULTS['dqn']
    assert (atari['replay_size'], atari['start_steps'], atari['target_update_interval'],
            atari['eps_end'], atari['steps_per_epoch'] * atari['epochs'],
            atari['ac_kwargs']) == (100000, 100000, 1000, 0.01, 1000000, dict(hidden_sizes=[512]))
    for env_id in CLASSIC:  # the table's entries are the zoo's, through one function
        assert ENV_DEFAULTS[('dqn', env_id)] == zoo_dqn_kwargs(ZOO_DQN[env_id])
    d = env_defaults('dqn', 'CartPole-v1')
    d['ac_kwargs']['hidden_sizes'].append(1)  # a copy: the table stays as it is
    assert env_defaults('dqn', 'CartPole-v1')['ac_kwargs'] == dict(hidden_sizes=[256, 256])


def _kwargs(tmp_path, *args):
    from spinup_tf.tools.cli import build_runs
    plan = build_runs('dqn', list(args) + ['--data_dir', str(tmp_path)])
    (e,) = plan.experiments
    return e.kwargs


def test_run_py_applies_the_zoo_defaults_on_these_envs_and_flags_override(tmp_path):
    for env_id in CLASSIC:
        kw = _kwargs(tmp_path, '--env', env_id)
        assert {k: kw[k] for k in ENV_DEFAULTS[('dqn', env_id)]} == \
            zoo_dqn_kwargs(ZOO_DQN[env_id]), env_id
    kw = _kwargs(tmp_path, '--env', 'MountainCar-v0', '--lr', '1e-3', '--hid', '[64,64]',
                 '--epochs', '3')
    assert (kw['lr'], kw['ac_kwargs'], kw['epochs']) == (1e-3, dict(hidden_sizes=[64, 64]), 3)
    assert (kw['gamma'], kw['steps_per_epoch']) == (0.98, 12000)  # the rest stays the zoo's
    # Any other env: SB3's defaults (the signature's), nothing from the table
    kw = _kwargs(tmp_path, '--env', 'CartPole-v0')
    assert not set(kw) & set(ENV_DEFAULTS[('dqn', 'CartPole-v1')])


def test_help_lists_the_defaults_and_config_json_records_them(tmp_path):
    lines = describe_env_defaults('dqn')
    text = '\n'.join(lines)
    for env_id in CLASSIC + ('any Atari game',):
        assert '\n  ' + env_id in text
    assert max(len(l) for l in lines) <= 90 and '--hid [256,256]' in text
    assert '--gamma 0.98' in text and '--update_every 256 --gradient_steps 128' in text
    proc = run_cli('dqn', '--help')
    assert proc.returncode == 0 and text in proc.stdout
    # A short run on them (only the budget given): its config.json has the zoo's values
    proc = run_cli('dqn', '--env', 'Acrobot-v1', '--steps_per_epoch', '60', '--epochs', '1',
                   '--num_test_episodes', '1', '--max_ep_len', '60', '--data_dir', tmp_path,
                   '--exp_name', 'a')
    assert proc.returncode == 0, proc.stderr[-2000:]
    config = json.loads((tmp_path / 'a' / 'a_s0' / 'config.json').read_text())
    expected = dict(zoo_dqn_kwargs(ZOO_DQN['Acrobot-v1']), steps_per_epoch=60, epochs=1)
    assert {k: config[k] for k in expected} == expected


# plots/dqn_defaults.py

def _progress(folder, returns, steps):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, 'progress.txt'), 'w') as f:
        f.write('Epoch\tAverageTestEpRet\tTotalEnvInteracts\tTime\n')
        for i, r in enumerate(returns):
            f.write('%d\t%r\t%d\t%r\n' % (i + 1, r, steps * (i + 1) // len(returns), 1.0 + i))


@pytest.fixture
def sweep(tmp_path, monkeypatch):
    s = load_plot_script('dqn_defaults')
    monkeypatch.setattr(s, 'OUT', str(tmp_path))
    monkeypatch.setattr(s, 'DATA', str(tmp_path / 'data'))
    return s


def test_sweep_runs_each_entry_as_a_user_would_and_skips_what_is_done(sweep):
    jobs = sweep.entries(['dqn'], ['CartPole-v1', 'MountainCar-v0'])
    assert [j[:3] for j in jobs] == [('dqn', 'dqn', 'CartPole-v1'),
                                     ('dqn', 'dqn', 'MountainCar-v0')]
    cmd = sweep.command('dqn', 'dqn', 'MountainCar-v0', [], 3)
    assert cmd[2:7] == ['dqn', '--env', 'MountainCar-v0', '--seed', '3']
    assert not [c for c in cmd[7:] if c.startswith('--') and c not in (
        '--data_dir', '--exp_name', '--overwrite')]  # no setting given: the table's apply
    assert sweep.budget('dqn', 'MountainCar-v0', []) == 120000
    assert sweep.budget('sac', 'Acrobot-v1', sweep.SAC_ACROBOT) == 100000
    folder = sweep.run_dir('dqn', 'MountainCar-v0', 3)
    _progress(folder, [-200.0] * 5, 60000)
    assert not sweep.finished(folder, 120000)
    _progress(folder, [-200.0] * 10, 120000)
    assert sweep.finished(folder, 120000)
    config = dict(env_defaults('dqn', 'MountainCar-v0'), seed=3)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(config, f)
    assert not sweep.stale(folder, 'dqn', 'MountainCar-v0', [])
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(dict(config, gamma=0.99), f)  # made before the table changed: again
    assert sweep.stale(folder, 'dqn', 'MountainCar-v0', [])
    assert not sweep.stale(folder, 'dqn', 'MountainCar-v0', ['--gamma', '0.99'])
    # the final model's evaluation: test_policy on 100 episodes of its own seed
    assert sweep.eval_command(folder, 3)[2:] == ['test_policy', folder, '--norender',
                                                 '--episodes', '100', '--seed', '10003']
    assert sweep.eval_command(folder, 3, 'best')[-1] == '--best'  # tf1_save_best/
    assert sweep.model_eval(folder) is None and not sweep.evaluated(folder)


def _final_eval(folder, mean, name='final_eval.txt'):
    with open(os.path.join(folder, name), 'w') as f:
        for k in range(100):  # test_policy's lines: mean - 1, mean + 1, ...
            f.write('Episode %d \t EpRet %.3f \t EpLen 200\n' % (k, mean + (-1) ** (k + 1)))
        f.write('Mean EpRet %.3f \t Mean EpLen 200.0\n' % mean)


def test_sweep_tables_measure_from_the_floor_and_count_cartpole_seeds(sweep):
    for seed, final in enumerate([500.0, 500.0, 470.0, 120.0, 500.0]):
        folder = sweep.run_dir('dqn', 'CartPole-v1', seed)
        _progress(folder, [100.0, 500.0, final], 50000)
        _final_eval(folder, final - 10)
        _final_eval(folder, 500.0, 'best_eval.txt')
    for seed, final in enumerate([-100.0, -120.0]):
        folder = sweep.run_dir('dqn', 'MountainCar-v0', seed)
        _progress(folder, [-200.0, final], 120000)
        _final_eval(folder, final)
        _final_eval(folder, final + 10, 'best_eval.txt')
    _progress(sweep.run_dir('dqn', 'Acrobot-v1', 0), [-500.0], 50000)  # not finished
    _progress(sweep.run_dir('dqn', 'LunarLander-v3', 0), [100.0], 100000)  # not evaluated
    folder = sweep.run_dir('dqn', 'LunarLander-v3', 1)
    _progress(folder, [100.0], 100000)
    _final_eval(folder, 90.0)  # its best model not evaluated yet: not counted
    assert sweep.model_eval(sweep.run_dir('dqn', 'MountainCar-v0', 1)) == [-121.0, -119.0] * 50
    sweep.write_results(sweep.entries(['dqn'], sweep.ENVS), 5)
    text = open(os.path.join(sweep.OUT, 'RESULTS.md')).read()
    cells = [[c.strip() for c in l.split('|')[1:-1]] for l in text.splitlines()
             if l.startswith('| ')]
    rows = {c[0]: c for c in cells if len(c) == 10 and c[0] != 'env'}  # the first table's
    assert set(rows) == {'CartPole-v1', 'MountainCar-v0'}
    assert rows['CartPole-v1'][3] == '490.0, 490.0, 460.0, 110.0, 490.0'
    assert rows['CartPole-v1'][4] == '408.0 ± 149.5' and rows['CartPole-v1'][5] == '0.82'
    assert rows['CartPole-v1'][7] == '500.0 ± 0.0' and rows['CartPole-v1'][8] == '1.00'
    # MountainCar from the floor -200: final mean -110 is 90 of the zoo's 99.151, best -100
    assert rows['MountainCar-v0'][5] == '%.2f' % (90 / 99.151)
    assert rows['MountainCar-v0'][8] == '%.2f' % (100 / 99.151)
    assert '5 of 5 seeds reach a test return of 450 within the budget' in text
    assert '4 of 5 with their final model' in text
    # best evaluations -100 and -120 against the zoo's -100.849: 1.01 and 0.81 of it
    assert 'MountainCar-v0: 2 of 2 seeds reach 0.8 of the zoo' in text
    assert os.path.exists(os.path.join(sweep.OUT, 'CartPole-v1.png'))


def test_committed_sweep_results_are_what_its_progress_files_make(tmp_path, monkeypatch):
    import matplotlib.figure
    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', lambda *a, **k: None)
    s = load_plot_script('dqn_defaults')
    s.main(['--no-run', '--out', str(tmp_path)])
    committed = os.path.join(ROOT, 'plots', 'dqn_defaults', 'RESULTS.md')
    assert open(str(tmp_path / 'RESULTS.md')).read() == open(committed).read()
