"""A run folder is data, never code (issue 34): every kind of hostile or damaged folder,
built here by the test itself, gets one ``error:`` line and exit status 2 with nothing of it
changed and nothing written outside it, or is handled safely.

``bench/battery.py`` runs the full battery (a hundred cases); this file has one test per kind.
"""
import json
import os
import shutil

import numpy as np
import pytest

from conftest import run_cli, run_script
import hostile_folders as H
from spinup_tf.utils.errors import UserInputError

RUN = H.SMALL_TD3


def _one_error_line(res, text=''):
    assert res.returncode == 2, res.stderr[-2000:]
    assert 'Traceback' not in res.stderr
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith('error: ') and text in lines[0], lines


@pytest.fixture
def cli(capsys, monkeypatch):
    """``python run.py ARGS`` in this process (``tools.cli.main``, without installing its
    signal handlers here): a ``CompletedProcess`` with the exit status and stderr."""
    import subprocess
    from spinup_tf.tools import cli as cli_module
    monkeypatch.setattr(cli_module, 'install_stop_handlers', lambda: None)

    def call(*args):
        capsys.readouterr()
        rc = cli_module.main([str(a) for a in args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, rc, out, err)
    return call


@pytest.fixture(scope='module')
def finished(tmp_path_factory):
    """A finished TD3 run: 2 epochs of 300 steps, a checkpoint after each."""
    base = tmp_path_factory.mktemp('finished')
    res = run_cli('td3', *RUN, '--data_dir', base, '--exp_name', 'r')
    assert res.returncode == 0, res.stderr[-2000:]
    return base / 'r' / 'r_s0'


@pytest.fixture
def run(finished, tmp_path):
    return H.copy_run(finished, tmp_path / 'run')


# ---- Loading a policy never runs graph code from the folder --------------------------------
LOADS_AND_WRITES = """
import sys
sys.path.insert(0, sys.argv[2])
import hostile_folders
hostile_folders.loads_and_writes(sys.argv[1], 3)
"""


@pytest.mark.parametrize('same_variables', [True, False], ids=['same-variables', 'other'])
def test_a_hostile_saved_model_writes_nothing_through_test_policy(run, tmp_path,
                                                                  same_variables):
    """A SavedModel whose graph writes files on load and on every call: the SavedModel
    loader (the old test_policy) writes them, test_policy writes nothing. With the real
    model's variables it runs the policy rebuilt from the project's code (exit 0); with
    others it refuses in one line."""
    load, call = tmp_path / 'written-on-load', tmp_path / 'written-on-call'
    H.write_hostile_saved_model(str(run / 'tf1_save'), str(load), str(call), same_variables)
    script = tmp_path / 'control.py'
    script.write_text(LOADS_AND_WRITES)
    control = run_script(script, run / 'tf1_save', os.path.dirname(__file__))
    assert control.returncode == 0, control.stderr[-2000:]
    assert load.exists() and call.exists()   # the model is hostile indeed
    load.unlink()
    call.unlink()
    res = run_cli('test_policy', run, '--norender', '--episodes', '2')
    if same_variables:
        assert res.returncode == 0, res.stderr[-2000:]
        assert 'Mean EpRet' in res.stdout
    else:
        _one_error_line(res, 'does not fit the policy its config.json builds')
    assert not load.exists() and not call.exists()


@pytest.mark.parametrize('algo,env_id,kwargs', [
    ('sac', 'Pendulum-v1', {}),
    ('td3', 'Pendulum-v1', dict(actor_critic='tensorlayer', action_range=1.0,
                                ac_kwargs=dict(hidden_sizes=[8]))),
    ('ppo', 'CartPole-v1', dict(num_test_episodes=1, train_pi_iters=2)),
    ('npg', 'Pendulum-v1', dict(num_test_episodes=1, normalize_obs=True)),
])
def test_the_rebuilt_policy_acts_as_the_saved_graph(tmp_path, algo, env_id, kwargs):
    """The policy rebuilt from config.json and the saved values gives the actions of the
    run's own SavedModel (loaded here because this test made it), for every algorithm
    family, the seeds' networks, the TensorLayer action range and --normalize_obs."""
    from spinup_tf.tools.algo_call import AlgoThunk  # names and quirk flags, as run.py
    from spinup_tf.tools.test_policy import load_policy
    from spinup_tf.utils.envs import EnvFn
    from spinup_tf.utils.tf1 import tf
    off = algo in ('sac', 'ddpg', 'td3')
    budget = dict(steps_per_epoch=100, epochs=1, max_ep_len=50)
    budget.update(dict(start_steps=50, update_after=50, update_every=50, num_test_episodes=1)
                  if off else dict(train_v_iters=2))
    kwargs = dict(dict(ac_kwargs=dict(hidden_sizes=[8])), **kwargs)
    AlgoThunk(algo)(env_fn=EnvFn(env_id),
                    logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
                    **dict(budget, **kwargs))
    policy, sess = load_policy(str(tmp_path))
    info = json.loads((tmp_path / 'tf1_save' / 'model_info.json').read_text())
    graph = tf.Graph()
    with graph.as_default(), tf.Session(graph=graph) as saved:
        tf.saved_model.loader.load(saved, ['serve'], str(tmp_path / 'tf1_save'))
        out = graph.get_tensor_by_name(info['outputs']['mu' if 'mu' in info['outputs']
                                                       else 'pi'])
        x = graph.get_tensor_by_name(info['inputs']['x'])
        obs = np.random.RandomState(0).randn(5, 4 if env_id == 'CartPole-v1' else 3)
        for o in obs:
            want = saved.run(out, {x: policy._normalize(o).reshape(1, -1)})[0]
            np.testing.assert_allclose(policy(o), want, rtol=1e-6, atol=1e-6)
    sess.close()


@pytest.mark.parametrize('edit,text', [
    (lambda c: c.update(env_id='HalfCheetah-v5'), 'has shape [3, 8], the policy needs [17, 8]'),
    (lambda c: c.update(env_id=['Pendulum-v1']), 'a gymnasium id'),
    (lambda c: c.update(actor_critic='os.system'), 'not one of this project'),
    (lambda c: c.update(ac_kwargs={'policy': 'os.system'}), 'is not a setting'),
    (lambda c: c.update(ac_kwargs={'activation': '__import__'}), 'unknown activation'),
    (lambda c: c.update(algo='ppo'), 'its actor-critic settings do not build a policy'),
], ids=['obs-size', 'env-list', 'actor-critic', 'policy-kwarg', 'activation', 'algo'])
def test_test_policy_refuses_a_config_whose_policy_does_not_fit(run, cli, edit, text):
    H.edit_json(run / 'config.json', edit)
    before = H.snapshot(run)
    _one_error_line(cli('test_policy', run, '--norender', '--episodes', '1'), text)
    assert H.snapshot(run) == before


@pytest.mark.parametrize('value', ['abc', {'obs': {'mean': [0.0], 'm2': [1.0], 'count': 1}},
                                   {'obs': {'mean': [0, 0, 0], 'm2': [-1, 0, 0], 'count': 1}}])
def test_test_policy_refuses_malformed_normalization(run, cli, value):
    H.edit_json(run / 'tf1_save' / 'model_info.json',
                lambda d: d.update(normalization=value))
    _one_error_line(cli('test_policy', run, '--norender', '--episodes', '1'),
                    'normalization.obs must hold')


def test_test_policy_caps_episodes_at_the_runs_max_ep_len(run, cli):
    """An env without time limit (max_episode_steps 1e9): test_policy ends each episode at
    the run's max_ep_len (100), or at --len."""
    H.edit_json(run / 'config.json', lambda d: d['env_fn'].update(
        env_kwargs={'max_episode_steps': 10 ** 9}))
    res = cli('test_policy', run, '--norender', '--episodes', '2')
    assert res.returncode == 0, res.stderr[-2000:]
    assert [l.split()[-1] for l in res.stdout.splitlines() if l.startswith('Episode')] == \
        ['100', '100']
    res = cli('test_policy', run, '--norender', '--episodes', '1', '--len', '7')
    assert 'EpLen 7' in res.stdout


# ---- Symbolic links: nothing is written outside the folder ---------------------------------
@pytest.mark.parametrize('name', ['progress.txt', 'config.json', 'checkpoint/state.json'])
def test_resume_refuses_a_symlinked_file_and_leaves_its_target_alone(run, cli, tmp_path,
                                                                    name):
    target = tmp_path / ('outside-' + os.path.basename(name))
    shutil.move(str(run / name), str(target))
    os.symlink(target, run / name)
    before = target.read_bytes()
    _one_error_line(cli('resume', run), 'symbolic link')
    assert target.read_bytes() == before
    assert not (run / '.lock').exists()


@pytest.mark.parametrize('command', ['resume', 'new run'])
def test_a_planted_lock_symlink_creates_nothing(run, cli, tmp_path, command):
    target = tmp_path / 'created-through-the-link'
    os.symlink(target, run / '.lock')
    if command == 'resume':
        res = cli('resume', run)
    else:
        (run.parent / 'x' / 'x_s0').mkdir(parents=True)
        os.symlink(target, run.parent / 'x' / 'x_s0' / '.lock')
        res = cli('td3', *RUN, '--data_dir', run.parent, '--exp_name', 'x')
    _one_error_line(res, 'symbolic link')
    assert not os.path.lexists(target)


def test_lock_file_is_created_exclusively_without_following_links(tmp_path):
    from spinup_tf.utils.run_folder import open_lock_file
    os.symlink(tmp_path / 'elsewhere', tmp_path / '.lock')
    with pytest.raises(UserInputError, match='symbolic link'):
        open_lock_file(str(tmp_path))
    assert not (tmp_path / 'elsewhere').exists()
    os.remove(tmp_path / '.lock')
    open_lock_file(str(tmp_path)).close()
    assert (tmp_path / '.lock').is_file() and not (tmp_path / '.lock').is_symlink()


def test_test_policy_refuses_a_symlinked_model(run, cli, tmp_path):
    shutil.move(str(run / 'tf1_save'), str(tmp_path / 'model'))
    os.symlink(tmp_path / 'model', run / 'tf1_save')
    _one_error_line(cli('test_policy', run, '--norender'), 'symbolic link')


def test_safe_files_refuse_links_devices_fifos_and_huge_files(tmp_path):
    from spinup_tf.utils import safe_files
    (tmp_path / 'real').write_text('{"a": 1}')
    os.symlink(tmp_path / 'real', tmp_path / 'link')
    assert safe_files.read_json(str(tmp_path / 'real')) == {'a': 1}
    with pytest.raises(UserInputError, match='symbolic link'):
        safe_files.read_json(str(tmp_path / 'link'))
    assert safe_files.read_json(str(tmp_path / 'link'), follow=True) == {'a': 1}
    os.mkfifo(tmp_path / 'fifo')  # would block a plain open() forever
    with pytest.raises(UserInputError, match='FIFO'):
        safe_files.read_bytes(str(tmp_path / 'fifo'), 10)
    with pytest.raises(UserInputError, match='character device'):
        safe_files.read_bytes('/dev/zero', 10, follow=True)
    with open(tmp_path / 'sparse', 'wb') as f:
        f.truncate(11)
    with pytest.raises(UserInputError, match='more than a file of a run folder can be'):
        safe_files.read_bytes(str(tmp_path / 'sparse'), 10)
    # a planted .tmp symlink is replaced, never written through
    (tmp_path / 'victim').write_text('keep')
    os.symlink(tmp_path / 'victim', tmp_path / 'config.json.tmp')
    safe_files.write_atomic(str(tmp_path / 'config.json'), 'new')
    assert (tmp_path / 'victim').read_text() == 'keep'
    assert (tmp_path / 'config.json').read_text() == 'new'
    with pytest.raises(UserInputError, match='symbolic link'):
        safe_files.check_no_symlinks(str(tmp_path))


# ---- Resume proves its state is consistent before it writes --------------------------------
def _lines_without(i):
    return lambda ls: '\n'.join(ls[:i] + ls[i + 1:])


RESUME_REFUSALS = {
    'epoch -3': ('checkpoint/state.json', lambda s: s['counters'].update(epoch=-3),
                 'outside the run'),
    'step in another epoch': ('checkpoint/state.json', lambda s: s['counters'].update(t=50),
                              'does not fit epoch 2'),
    'no records': ('checkpoint/state.json', lambda s: s.pop('records'), 'does not record'),
    'steps_per_epoch 100': ('config.json', lambda c: c.update(steps_per_epoch=100),
                            'steps_per_epoch is 100, was 300'),
    'algo sac': ('config.json', lambda c: c.update(algo='sac'), 'now names a sac run'),
    'algo ddpg': ('config.json', lambda c: c.update(algo='ddpg'), 'now names a ddpg run'),
    'another env': ('config.json', lambda c: c.update(env_id='MountainCarContinuous-v0'),
                    'on MountainCarContinuous-v0'),
    'epochs below the checkpoint': ('config.json', lambda c: c.update(epochs=1),
                                    'epoch 2 is outside'),
    'a row cut out': ('progress.txt', _lines_without(1), 'holds 1 rows'),
    'header only': ('progress.txt', lambda ls: ls[0] + '\n', 'holds only its header'),
    'truncated': ('progress.txt', lambda ls: '\n'.join(ls)[:-30], 'holds 1 rows'),
    'a row edited': ('progress.txt', lambda ls: '\n'.join(
        ls[:1] + ['1\t9' + ls[1][3:]] + ls[2:]), 'are not the ones'),
    'rows of another run': ('progress.txt', lambda ls: '\n'.join(ls[:-1] + ls[1:3]) + '\n',
                            'rows of another run are mixed in'),
}


@pytest.mark.parametrize('case', sorted(RESUME_REFUSALS))
def test_resume_refuses_a_folder_that_disagrees_with_its_checkpoint(run, cli, case):
    name, edit, text = RESUME_REFUSALS[case]
    if name == 'progress.txt':
        lines = (run / name).read_text().split('\n')
        (run / name).write_text(edit(lines))
    else:
        H.edit_json(run / name, edit)
    before = H.snapshot(run)
    _one_error_line(cli('resume', run), text)
    assert H.snapshot(run) == before  # not even a .lock


def _zip_bomb(run):
    H.patch_zip_sizes(str(run / 'checkpoint' / 'arrays.npz'), 2 ** 32 - 2)


def _truncate_variables(run):
    data = [f for f in os.listdir(run / 'checkpoint') if f.startswith('variables.data')][0]
    with open(run / 'checkpoint' / data, 'r+b') as f:
        f.truncate(12)


@pytest.mark.parametrize('damage,text', [(_zip_bomb, 'would decompress to'),
                                         (_truncate_variables, 'truncated or corrupt')],
                         ids=['zip-bomb', 'variables'])
def test_resume_refuses_damaged_checkpoint_files_by_reading_alone(run, cli, damage, text):
    """A zip bomb's claim in arrays.npz and truncated variables are found before the folder
    is taken (no .lock) or anything in it is restored."""
    damage(run)
    before = H.snapshot(run)
    _one_error_line(cli('resume', run), text)
    assert H.snapshot(run) == before


def test_resume_continues_after_rows_written_past_the_checkpoint(run):
    """A kill between an epoch's row and its checkpoint leaves a later row: it is dropped and
    written again; raising epochs in config.json extends the run (it does not shape it)."""
    H.edit_json(run / 'config.json', lambda c: c.update(epochs=3))
    lines = (run / 'progress.txt').read_text().split('\n')
    (run / 'progress.txt').write_text('\n'.join(lines[:-1] + ['3' + lines[-2][1:]]) + '\n')
    res = run_cli('resume', run)
    assert res.returncode == 0, res.stderr[-2000:]
    rows = (run / 'progress.txt').read_text().splitlines()
    assert [r.split('\t')[0] for r in rows[1:]] == ['1', '2', '3']
    assert rows[:3] == lines[:3]


# ---- Sizes, budgets and env construction, before anything is written ------------------------
def test_budget_checks():
    from spinup_tf.utils.budget import check_can_train, check_replay_memory, \
        replay_buffer_bytes
    base = dict(steps_per_epoch=300, epochs=2, update_after=100, update_every=50)
    check_can_train(base)
    check_can_train(dict(base, update_after=599, update_every=1))   # first update: last step
    for bad in (dict(update_every=1000), dict(update_after=100000),
                dict(update_after=600, update_every=1)):
        with pytest.raises(UserInputError, match='would never train'):
            check_can_train(dict(base, **bad))
    with pytest.raises(UserInputError, match='update_at_episode_end'):
        check_can_train(dict(base, update_after=601, update_at_episode_end=True))
    check_can_train(dict(base, update_after=600, update_at_episode_end=True))
    assert replay_buffer_bytes(10, 3, 1) == 10 * (6 * 4 + 1)
    check_replay_memory(10, 3, 1, available=250)
    with pytest.raises(UserInputError, match='needs 250 bytes .* has 249 bytes available'):
        check_replay_memory(10, 3, 1, available=249)


@pytest.mark.parametrize('flags,text', [
    (['--replay_size', '1000000000000'], '--replay_size 1000000000000 needs'),
    (['--update_every', '1000'], 'would never train'),
    (['--update_after', '100000'], 'would never train'),
    (['--env_kwargs', "{'g': 'abc'}"], "--env_kwargs {'g': 'abc'}: Pendulum-v1"),
], ids=['replay-size', 'update-every', 'update-after', 'env-kwargs'])
def test_runs_that_cannot_work_are_refused_before_anything_is_written(cli, tmp_path, flags,
                                                                     text):
    args = list(RUN)
    if '--update_after' in flags:
        i = args.index('--update_after')
        del args[i:i + 2]
    _one_error_line(cli('td3', *args, *flags, '--data_dir', tmp_path), text)
    assert not any(files for _, _, files in os.walk(tmp_path))


# ---- Messages ---------------------------------------------------------------------------------
def test_a_folder_with_only_config_json_is_not_said_to_hold_results(cli, tmp_path):
    (tmp_path / 'x' / 'x_s0').mkdir(parents=True)
    (tmp_path / 'x' / 'x_s0' / 'config.json').write_text('{}')
    _one_error_line(cli('td3', *RUN, '--data_dir', tmp_path, '--exp_name', 'x'),
                    'holds the config.json of an earlier run that saved nothing else')


def test_an_unreadable_folder_is_said_to_be_unreadable(tmp_path, monkeypatch, capsys):
    """(As root, permissions cannot be taken away: the listing is made to fail instead.
    ``bench/battery.py`` runs these on a real mode-000 folder without root's override.)"""
    from spinup_tf.utils.safe_files import check_readable_dir
    from spinup_tf.tools import plot

    def denied(path, *args, **kwargs):
        raise PermissionError(13, 'Permission denied', str(path))
    (tmp_path / 'run').mkdir()
    monkeypatch.setattr(os, 'scandir', denied)
    with pytest.raises(UserInputError, match='cannot read the run folder .*permission denied'):
        check_readable_dir(str(tmp_path / 'run'))
    assert plot.main([str(tmp_path / 'run'), '--save', str(tmp_path / 'f.png')]) == 2
    err = capsys.readouterr().err
    assert 'cannot read %s: permission denied' % (tmp_path / 'run') in err
    assert 'no progress.txt found' not in err


def test_nan_guard_names_the_env_and_what_was_saved(tmp_path):
    from types import SimpleNamespace
    from spinup_tf.utils.errors import NonFiniteError, check_finite
    logger = SimpleNamespace(epoch_dict={'EpRet': [np.nan], 'LossPi': [np.nan]},
                             output_dir=str(tmp_path), params_finite=lambda: True)
    with pytest.raises(NonFiniteError, match='epoch 1: the environment returned a NaN .*no '
                                             'checkpoint or model had been saved yet'):
        check_finite(logger, ['LossPi'], 1)
    logger.epoch_dict = {'EpRet': [1.0], 'LossPi': [np.inf]}
    (tmp_path / 'checkpoint').mkdir()
    (tmp_path / 'checkpoint' / 'state.json').write_text('{"counters": {"epoch": 3}}')
    with pytest.raises(NonFiniteError, match='epoch 4: LossPi became NaN .* those of epoch 3'):
        check_finite(logger, ['LossPi'], 4)


def test_plot_skips_devices_and_huge_files_naming_them_and_errs_in_one_line(run, tmp_path,
                                                                          capsys):
    from spinup_tf.tools import plot
    bad = H.copy_run(run, tmp_path / 'bad')
    os.remove(bad / 'progress.txt')
    os.symlink('/dev/zero', bad / 'progress.txt')
    huge = H.copy_run(run, tmp_path / 'huge')
    with open(huge / 'progress.txt', 'r+b') as f:
        f.truncate(300 * 2 ** 20)
    assert plot.main([str(run), str(bad), str(huge), '--save', str(tmp_path / 'f.png')]) == 0
    err = capsys.readouterr().err
    assert str(bad / 'progress.txt') in err and 'symbolic link' in err  # never followed
    assert str(huge / 'progress.txt') in err and '300 MiB' in err
    with pytest.raises(SystemExit) as exit_:
        plot.main([str(run), '--smooth-typo', '3'])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'error:' in err[0] and 'usage' not in err[0]
    assert plot.main([str(run), '--save', '/proc/no/such/f.png']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'cannot write' in err[0]
