"""Every hyperparameter has a declared range, checked before a run writes anything."""
import pytest

from conftest import run_cli
from spinup_tf.utils.ranges import RANGES, check_ranges, in_range
from spinup_tf.algos import ALGOS, parameters
from spinup_tf.utils.errors import UserInputError

BAD = [('td3', '--pi_lr', '-0.001', 'a number > 0'), ('td3', '--gamma', '1.5', '[0, 1]'),
       ('td3', '--polyak', '2', '[0, 1]'), ('ppo', '--lam', '2', '[0, 1]'),
       ('ppo', '--clip_ratio', '-0.2', '> 0'), ('td3', '--start_steps', '-5', '>= 0'),
       ('td3', '--max_ep_len', '0', '>= 1'), ('vpg', '--train_v_iters', '0', '>= 1'),
       ('trpo', '--delta', '0', '> 0'), ('trpo', '--cg_iters', '0', '>= 1'),
       ('trpo', '--backtrack_iters', '0', '>= 1'), ('sac', '--save_freq', '-1', '>= 0'),
       ('ddpg', '--update_every', '0', '>= 1'), ('td3', '--policy_delay', '0', '>= 1'),
       ('td3', '--updates_per_step', '0', '>= 1'), ('td3', '--seed', '-1', '[0, 4294967296)'),
       ('ppo', '--seed', '4294967296', '[0, 4294967296)'),
       ('trpo', '--backtrack_coeff', '1.0', '(0, 1)')]


@pytest.mark.parametrize('algo,flag,value,needle', BAD[:6])
def test_out_of_range_flag_is_one_error_line_and_nothing_written(tmp_path, algo, flag, value,
                                                                 needle):
    env = 'Pendulum-v1' if algo in ('td3', 'ddpg', 'sac') else 'CartPole-v1'
    proc = run_cli(algo, '--env', env, flag, value, '--data_dir', tmp_path / 'data')
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert 'Traceback' not in proc.stderr
    errors = [l for l in proc.stderr.splitlines() if l.startswith('error:')]
    assert len(errors) == 1 and flag in errors[0] and needle in errors[0], proc.stderr
    assert not (tmp_path / 'data').exists()


@pytest.mark.parametrize('algo,flag,value,needle', BAD)
def test_every_listed_bad_value_is_refused(algo, flag, value, needle):
    import ast
    with pytest.raises(UserInputError, match=r'--%s must be .*%s' % (
            flag[2:], needle.replace('(', r'\(').replace(')', r'\)').replace('[', r'\['))):
        check_ranges({flag[2:]: ast.literal_eval(value)})


def test_defaults_lie_in_their_ranges_and_nan_in_none():
    for name in ALGOS:
        defaults = {k: p.default for k, p in parameters(name).items()}
        check_ranges(defaults)  # raises if a default were out of its own range
    assert not in_range(float('nan'), RANGES['gamma'])
    assert not in_range(True, RANGES['epochs']) and not in_range(2.5, RANGES['epochs'])
    assert in_range(0, RANGES['gamma']) and in_range(1, RANGES['gamma'])


@pytest.mark.parametrize('name', ['../escape', '..', 'a/b'])
def test_exp_name_cannot_leave_the_data_dir(tmp_path, name):
    proc = run_cli('td3', '--env', 'Pendulum-v1', '--exp_name', name, '--data_dir',
                   tmp_path / 'data')
    assert proc.returncode == 2 and 'error: --exp_name must be a folder name' in proc.stderr
    assert list(tmp_path.iterdir()) == []
