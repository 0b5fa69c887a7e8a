"""Bad input meets the user as one ``error:`` line, exit 2, no traceback, nothing touched:
actor-critic arguments, envs this install cannot make, test_policy lengths, broken
progress files and checkpoints on resume."""
import os
import shutil

import pytest

from conftest import run_cli

QUICK = ['--epochs', '1', '--steps_per_epoch', '200', '--start_steps', '100',
         '--update_after', '100', '--num_test_episodes', '1', '--max_ep_len', '100']


def _one_error_line(res, text):
    assert res.returncode == 2, res.stderr[-2000:]
    assert 'Traceback' not in res.stderr
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith('error: ') and text in lines[0], lines


@pytest.mark.parametrize('ac_kwargs,text', [
    ({'hidden_sizes': [64], 'activaton': 'relu'}, "'activaton'"),
    ([1, 2], 'must be a dict'),
    ({'hidden_sizes': 'abc'}, 'positive integers'),
    ({'hidden_sizes': [0]}, 'positive integers'),
    ({'hidden_sizes': [True]}, 'positive integers'),
    ({'activation': 'relux'}, "unknown activation 'relux'"),
    ({'output_activation': 3}, 'activation function or its name'),
    ({'action_space': 1}, 'set by the algorithm'),
])
def test_check_ac_kwargs(ac_kwargs, text):
    from spinup_tf.algos import distributions
    from spinup_tf.utils.ranges import check_ac_kwargs
    from spinup_tf.utils.errors import UserInputError
    with pytest.raises(UserInputError, match=text):
        check_ac_kwargs(distributions.mlp_sac_actor_critic, ac_kwargs)
    check_ac_kwargs(distributions.mlp_sac_actor_critic,
                    {'hidden_sizes': (8, 8), 'activation': 'tanh'})
    check_ac_kwargs(lambda x, a, **kw: None, {'anything': 1})   # takes any keyword


@pytest.mark.parametrize('algo,env,ac_kwargs,text', [
    ('td3', 'Pendulum-v1', "{'foo': 1}", "unknown key 'foo'"),
    ('ppo', 'CartPole-v1', "{'bar': 2}", "unknown key 'bar'"),
])
def test_ac_kwargs_are_checked_against_the_actor_critic(tmp_path, algo, env, ac_kwargs, text):
    quick = QUICK if algo != 'ppo' else ['--epochs', '1', '--steps_per_epoch', '200']
    res = run_cli(algo, '--env', env, *quick, '--data_dir', tmp_path, '--ac_kwargs', ac_kwargs)
    _one_error_line(res, text)
    assert not any(files for _, _, files in os.walk(tmp_path))   # nothing written


@pytest.mark.parametrize('algo,env,flags,text', [
    ('dqn', 'CartPole-v1', ['--noise', 'pink'], 'dqn explores epsilon-greedily'),
    ('sac', 'Pendulum-v1', ['--noise', 'ou'], 'sac explores by sampling its own policy'),
    ('dqn', 'CartPole-v1', ['--action_range', '2'], "actions are Discrete(2)"),
    ('sac', 'CartPole-v1', ['--action_range', '1'], "actions are Discrete(2)"),
    ('sac', 'Pendulum-v1', ['--store_unclipped_actions', 'True'],
     'store_unclipped_actions shapes the exploration noise of a deterministic policy'),
    ('dqn', 'CartPole-v1', ['--noise_in_unit_actions', 'True'], 'this algorithm adds none'),
])
def test_flags_that_cannot_apply_to_the_algorithm_or_env_are_refused(tmp_path, algo, env,
                                                                      flags, text):
    """Exploration-noise settings without a deterministic policy, and a Box action range
    on Discrete actions, would be silently ignored: they are refused before any write."""
    if algo == 'dqn':  # DQN's CartPole defaults (the zoo's) update every 256 steps
        flags = ['--update_every', '50'] + flags
    res = run_cli(algo, '--env', env, *QUICK, '--data_dir', tmp_path, *flags)
    _one_error_line(res, text)
    assert not any(files for _, _, files in os.walk(tmp_path))   # nothing written


FAILING_BUILD = """
import sys
from spinup_tf.algos.td3 import td3
from spinup_tf.utils.envs import EnvFn

def failing_actor_critic(x, a, **kwargs):
    raise ValueError('this actor-critic cannot be built')

td3(EnvFn('Pendulum-v1'), actor_critic=failing_actor_critic, epochs=1, steps_per_epoch=200,
    update_after=100, logger_kwargs=dict(output_dir=sys.argv[1], exp_name='x', quiet=True))
"""


def test_a_run_that_fails_building_its_graph_does_not_block_the_corrected_rerun(tmp_path):
    """An actor_critic that raises while the graph is built leaves no sign of a run, so the
    same folder takes the next run without --overwrite. (A width TF itself refuses,
    --hid "[2147483647]", fails the same way but takes TF over a minute.)"""
    from conftest import run_script
    script = tmp_path / 'failing_build.py'
    script.write_text(FAILING_BUILD)
    bad = run_script(script, tmp_path / 'x' / 'x_s0')
    assert bad.returncode == 1 and 'cannot be built' in bad.stderr
    good = run_cli('td3', '--env', 'Pendulum-v1', *QUICK, '--data_dir', tmp_path,
                   '--exp_name', 'x', '--hid', '[8]')
    assert good.returncode == 0, good.stderr[-2000:]
    assert (tmp_path / 'x' / 'x_s0' / 'progress.txt').exists()


def test_envs_this_install_cannot_make_are_one_line_and_never_suggested(tmp_path):
    res = run_cli('td3', '--env', 'phys2d/CartPole-v1', *QUICK, '--data_dir', tmp_path)
    _one_error_line(res, "needs the Python package 'jax'")
    res = run_cli('td3', '--env', 'CartPol-v1', *QUICK, '--data_dir', tmp_path)
    _one_error_line(res, 'Did you mean: CartPole-v1')
    assert 'phys2d' not in res.stderr


@pytest.fixture(scope='module')
def finished_run(tmp_path_factory):
    base = tmp_path_factory.mktemp('finished')
    res = run_cli('td3', '--env', 'Pendulum-v1', *QUICK[2:], '--epochs', '2', '--data_dir', base,
                  '--exp_name', 'r', '--hid', '[8]')
    assert res.returncode == 0, res.stderr[-2000:]
    return base / 'r' / 'r_s0'


def _copy(run, tmp_path):
    dst = tmp_path / 'copy'
    shutil.copytree(run, dst, ignore=shutil.ignore_patterns('.lock'))
    return dst


def test_test_policy_refuses_a_negative_length(finished_run):
    _one_error_line(run_cli('test_policy', finished_run, '--len', '-5', '--norender'),
                    '--len must be 0')


@pytest.mark.parametrize('edit', ['non-numeric epoch'])  # a foreign row: test_reliability
def test_resume_refuses_a_progress_file_with_a_line_that_is_not_a_row(finished_run, tmp_path,
                                                                       edit):
    run = _copy(finished_run, tmp_path)
    path = run / 'progress.txt'
    lines = path.read_text().split('\n')
    if edit == 'non-numeric epoch':
        lines[1] = 'x' + lines[1][1:]
    else:
        lines.insert(2, 'abc\tdef')
    path.write_text('\n'.join(lines))
    before = path.read_text()
    # an edited row among those the checkpoint covers: its record of them disagrees
    _one_error_line(run_cli('resume', run), 'are not the ones the checkpoint was saved with')
    assert path.read_text() == before


@pytest.mark.parametrize('part', ['variables.data'])  # the other files: test_checkpoint_crash
def test_resume_of_a_truncated_checkpoint_says_so(finished_run, tmp_path, part):
    run = _copy(finished_run, tmp_path)
    name = [f for f in os.listdir(run / 'checkpoint') if f.startswith(part)][0]
    with open(run / 'checkpoint' / name, 'r+b') as f:
        f.truncate(12)
    before = (run / 'progress.txt').read_text()
    _one_error_line(run_cli('resume', run), 'truncated or corrupt')
    assert (run / 'progress.txt').read_text() == before


@pytest.mark.parametrize('seeds', [['0'], ['0', '1']])
def test_a_file_in_the_data_dir_path_is_one_line_for_a_run_and_a_grid(tmp_path, seeds):
    (tmp_path / 'afile').write_text('not a folder')
    res = run_cli('td3', '--env', 'Pendulum-v1', *QUICK, '--seed', *seeds,
                  '--data_dir', tmp_path / 'afile' / 'sub')
    _one_error_line(res, 'is a file, not a folder')
    assert (tmp_path / 'afile').read_text() == 'not a folder'
