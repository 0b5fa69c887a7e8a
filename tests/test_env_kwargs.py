"""``--env_kwargs``: recorded in config.json, used by test_policy and resume."""
import json

from conftest import run_cli

TINY = ['--epochs', '1', '--steps_per_epoch', '120', '--start_steps', '50',
        '--update_after', '50', '--update_every', '50', '--num_test_episodes', '1',
        '--hid', '[8]', '--max_ep_len', '40', '--save_freq', '1']


def test_env_kwargs_recorded_and_used(tmp_path):
    # LunarLander-v3 is Discrete unless continuous=True: TD3 only runs with the kwargs.
    proc = run_cli('td3', '--env', 'LunarLander-v3', '--env_kwargs', "{'continuous': True}",
                   '--exp_name', 'll', '--data_dir', tmp_path, *TINY)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = tmp_path / 'll' / 'll_s0'
    config = json.loads((run / 'config.json').read_text())
    assert config['env_fn'] == {'env_id': 'LunarLander-v3', 'env_kwargs': {'continuous': True}}

    proc = run_cli('test_policy', run, '--norender', '--episodes', '1', '--len', '20')
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'Mean EpRet' in proc.stdout

    from spinup_tf.tools.resume import resume_kwargs
    _, kwargs = resume_kwargs(str(run))
    assert kwargs['env_fn'].kwargs == {'continuous': True}
    env = kwargs['env_fn']()
    assert env.action_space.shape == (2,)
    env.close()


def test_bad_env_kwargs_are_one_error_line(tmp_path):
    for value in ["{'no_such_arg': 1}", '5', "{'continuous': True}x"]:
        proc = run_cli('td3', '--env', 'LunarLander-v3', '--env_kwargs', value,
                       '--data_dir', tmp_path)
        assert proc.returncode == 2, (value, proc.stderr)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith('error: --env_kwargs'), proc.stderr
    # without the kwargs, the discrete lander is refused by TD3
    proc = run_cli('td3', '--env', 'LunarLander-v3', '--data_dir', tmp_path)
    assert proc.returncode == 2 and 'Box' in proc.stderr
