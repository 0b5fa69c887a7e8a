"""The hostile-folder battery of issue 34: run folders built as a hostile file and a careless
hand would, given to ``test_policy``, ``resume``, ``plot`` and new runs.

Not a test (the suite has one test per kind of case, ``tests/test_folder_safety.py``): this
runs every case and prints one line per case and the totals the issue asks for:

* **tracebacks**: a ``Traceback`` on stderr;
* **hangs**: a command that had not ended after ``--timeout`` seconds (killed);
* **writes outside**: any file created, changed or removed under the battery's folder
  outside the case's own run folder and ``--data_dir`` (the symlink targets and the paths a
  hostile model writes to live there);
* **lost or mixed rows**: a refused case whose run folder changed at all, or an accepted
  ``resume`` whose ``progress.txt`` is not epochs ``1..N`` once each with the rows it had;
* **refusal exit codes**: every case expected to be refused must exit 2 with one error line.

    python bench/battery.py [--only SUBSTRING] [--timeout 240] [--keep]

Each command is a process forked from one that has done the imports
(``tests/cli_zygote.py``, as the tests do), so 100 commands take minutes, not an hour.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, 'tests'))

from conftest import run_cli  # noqa: E402
import hostile_folders as H  # noqa: E402

TD3 = ['td3', '--env', 'Pendulum-v1', '--epochs', '2', '--steps_per_epoch', '300',
       '--start_steps', '100', '--update_after', '100', '--update_every', '50',
       '--num_test_episodes', '1', '--max_ep_len', '100', '--hid', '[8]', '--save_freq', '1']
PPO = ['ppo', '--env', 'CartPole-v1', '--epochs', '2', '--steps_per_epoch', '300',
       '--train_pi_iters', '3', '--train_v_iters', '3', '--max_ep_len', '100', '--hid', '[8]',
       '--save_freq', '1', '--num_test_episodes', '1']
NEVER_ENDS = TD3[:3] + ['--env_kwargs', "{'max_episode_steps': 1000000000}"] + TD3[3:]


# ---------------------------------------------------------------------------------------------
# Snapshots
# ---------------------------------------------------------------------------------------------
def snapshot(root, skip=()):
    """``{relative path: (kind, digest)}`` of everything under ``root`` (links not followed),
    leaving out the paths in ``skip`` and what lies below them."""
    out = {}
    skip = [os.path.abspath(s) for s in skip]
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.abspath(os.path.join(dirpath, d)) not in skip]
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            if os.path.abspath(path) in skip:
                continue
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = ('link', os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = ('dir', '')
            elif os.path.isfile(path):
                with open(path, 'rb') as f:
                    out[rel] = ('file', hashlib.sha256(f.read()).hexdigest())
            else:
                out[rel] = ('special', '')
    return out


def diff(before, after):
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def epochs_of(run):
    """The ``Epoch`` column of the run's progress file (the one reader,
    ``spinup_tf.utils.progress_file``), or None when it cannot be read as a table."""
    from spinup_tf.utils.errors import UserInputError
    from spinup_tf.utils.progress_file import read_table
    try:
        table = read_table(os.path.join(run, 'progress.txt'))
    except (OSError, UserInputError):
        return None
    if 'Epoch' not in table:
        return None
    return [int(e) for e in table['Epoch']]


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------
class Case:
    """One command on one folder. ``expect``: ``'refuse'`` (exit 2, one error line, the run
    folder unchanged), ``'ok'`` (exit 0) or ``'stop'`` (exit 1, one error line: a run the
    NaN guard stops). ``prepare(case)`` builds the folder; ``check(case, proc)`` returns a
    problem or None."""

    def __init__(self, name, base, prepare, command, expect, needle='', check=None,
                 as_user=None):
        self.name, self.base, self.prepare, self.command = name, base, prepare, command
        self.expect, self.needle, self.check, self.as_user = expect, needle, check, as_user


def run_edit(path_fn, fn):
    def prepare(c):
        H.edit_json(path_fn(c), fn)
    return prepare


def cfg(c):
    return os.path.join(c.run, 'config.json')


def state(c):
    return os.path.join(c.run, 'checkpoint', 'state.json')


def info(c, model='tf1_save'):
    return os.path.join(c.run, model, 'model_info.json')


def set_key(d, key, value):
    d[key] = value


def counters(key, value):
    return run_edit(state, lambda s: set_key(s['counters'], key, value))


def link(name, target_fn, make_target=None):
    """Replace ``name`` in the run folder by a symlink to ``target_fn(c)`` (created by
    ``make_target(c, target)`` first, else moved there from the folder)."""
    def prepare(c):
        path = os.path.join(c.run, name)
        target = target_fn(c)
        if make_target is not None:
            make_target(c, target)
        elif os.path.lexists(path):
            shutil.move(path, target)
        if os.path.lexists(path):
            (shutil.rmtree if os.path.isdir(path) and not os.path.islink(path)
             else os.remove)(path)
        os.symlink(target, path)
    return prepare


def outside(c, name):
    """A path in the case's folder outside its run folder (where symlinks point)."""
    return os.path.join(c.outside, re.sub(r'[^A-Za-z0-9.]+', '_', c.name)[:60] + '-' + name)


def write_text(path_fn, text):
    def prepare(c):
        with open(path_fn(c), 'w') as f:
            f.write(text)
    return prepare


def progress_edit(fn):
    def prepare(c):
        path = os.path.join(c.run, 'progress.txt')
        lines = open(path).read().split('\n')
        with open(path, 'w') as f:
            f.write(fn(lines))
    return prepare


def chain(*steps):
    def prepare(c):
        for step in steps:
            step(c)
    return prepare


def hostile_model(model='tf1_save', same=True):
    def prepare(c):
        c.pwned = [outside(c, 'pwned-on-load'), outside(c, 'pwned-on-call')]
        H.write_hostile_saved_model(os.path.join(c.run, model), c.pwned[0], c.pwned[1], same)
    return prepare


def nothing(c):
    pass


def resumed_to(n):
    def check(c, proc):
        got = epochs_of(c.run)
        if got != list(range(1, n + 1)):
            return 'progress.txt epochs %s, expected 1..%d once each' % (got, n)
        return None
    return check


def episode_lengths(n):
    def check(c, proc):
        lens = [l for l in proc.stdout.splitlines() if l.startswith('Episode')]
        if not lens or not all(l.rstrip().endswith('EpLen %d' % n) for l in lens):
            return 'episodes not capped at %d: %s' % (n, lens[:2])
        return None
    return check


def no_config_left(c, proc):
    left = [os.path.join(d, f) for d, _, fs in os.walk(c.data) for f in fs]
    return 'left behind: %s' % left if left else None


def cases():
    R = ['resume', '{run}']
    TP = ['test_policy', '{run}', '--norender', '--episodes', '1']
    out = []
    add = out.append

    # -- A. A downloaded folder's model never runs (hostile SavedModel) --------------------
    add(Case('hostile model, test_policy', 'td3', hostile_model(), TP, 'ok'))
    add(Case('hostile model, test_policy --best', 'td3', hostile_model('tf1_save_best'),
             TP + ['--best'], 'ok'))
    add(Case('hostile model, test_policy --video', 'td3', hostile_model(),
             TP + ['--video', '{run}/videos/v.mp4', '--len', '5'], 'ok'))
    add(Case('hostile model of other shapes, test_policy', 'td3', hostile_model(same=False),
             TP, 'refuse', 'does not fit'))
    add(Case('hostile model, ppo, test_policy', 'ppo', hostile_model(), TP, 'ok'))
    add(Case('hostile model, resume to 3 epochs (the model is only written)', 'td3',
             chain(hostile_model(), run_edit(cfg, lambda d: set_key(d, 'epochs', 3))), R, 'ok',
             check=resumed_to(3)))

    # -- B. Symbolic links ------------------------------------------------------------------
    def copy_to(c, target):
        src = os.path.join(c.run, c.linked)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, target)

    for name in ('progress.txt', 'config.json', 'checkpoint', 'checkpoint/state.json',
                 'checkpoint/arrays.npz', 'tf1_save', 'tf1_save/variables',
                 'tf1_save/model_info.json'):
        def prep(c, name=name):
            c.linked = name
            link(name, lambda c: outside(c, os.path.basename(name)), copy_to)(c)
        add(Case('symlinked %s, resume' % name, 'td3', prep, R, 'refuse', 'symbolic link'))
    for name in ('.lock', 'progress.txt.tmp', 'config.json.tmp', 'checkpoint.tmp',
                 'tf1_save.tmp', 'tensorboard'):
        add(Case('planted %s symlink (no target), resume' % name, 'td3',
                 link(name, lambda c, n=name: outside(c, n.strip('.'))), R, 'refuse',
                 'symbolic link'))
    add(Case('planted .lock symlink to an existing file, resume', 'td3',
             link('.lock', lambda c: outside(c, 'existing'),
                  lambda c, t: open(t, 'w').write('keep')), R, 'refuse', 'symbolic link'))
    for name in ('tf1_save', 'config.json', 'tf1_save/model_info.json',
                 'tf1_save/variables/variables.index'):
        def prep(c, name=name):
            c.linked = name
            link(name, lambda c: outside(c, os.path.basename(name)), copy_to)(c)
        add(Case('symlinked %s, test_policy' % name, 'td3', prep, TP, 'refuse',
                 'symbolic link'))
    add(Case('planted .lock symlink, test_policy (reads only)', 'td3',
             link('.lock', lambda c: outside(c, 'lock')), TP, 'ok'))
    for name in ('tensorboard', '.lock', 'progress.txt.tmp'):
        add(Case('new run into a folder with a %s symlink' % name, None,
                 lambda c, n=name: (os.makedirs(c.run), link(n, lambda c: outside(c, 'x'))(c)),
                 TD3 + ['--exp_name', 'x', '--data_dir', '{data}'], 'refuse', 'symbolic link'))
    add(Case('plot: progress.txt is a symlink to /dev/zero', 'td3',
             lambda c: (os.remove(os.path.join(c.run, 'progress.txt')),
                        os.symlink('/dev/zero', os.path.join(c.run, 'progress.txt'))),
             ['plot', '{run}', '--save', '{run}/fig.png'], 'refuse', 'nothing to plot'))
    add(Case('plot: progress.txt is a FIFO', 'td3',
             lambda c: (os.remove(os.path.join(c.run, 'progress.txt')),
                        os.mkfifo(os.path.join(c.run, 'progress.txt'))),
             ['plot', '{run}', '--save', '{run}/fig.png'], 'refuse', 'nothing to plot'))

    # -- C. Tampered checkpoint state -------------------------------------------------------
    for key, value in (('epoch', -3), ('epoch', 99), ('epoch', '2'), ('epoch', 1.5),
                       ('epoch', True), ('t', -1), ('t', 10 ** 12), ('t', 50),
                       ('elapsed', 'x')):
        add(Case('state.json %s %r, resume' % (key, value), 'td3', counters(key, value), R,
                 'refuse'))
    add(Case('state.json without counters, resume', 'td3',
             run_edit(state, lambda s: s.pop('counters')), R, 'refuse'))
    add(Case('state.json numpy_rng garbage, resume', 'td3',
             run_edit(state, lambda s: set_key(s, 'numpy_rng', ['MT19937', [1, 2], 0, 0, 0])),
             R, 'refuse', 'RNG'))
    add(Case('state.json env_rngs garbage, resume', 'td3',
             run_edit(state, lambda s: set_key(s, 'env_rngs', [{'env': {'bit_generator':
                                                                        'Evil'}}])),
             R, 'refuse', 'RNG'))
    add(Case('state.json episode actions of another shape, resume', 'td3',
             run_edit(state, lambda s: set_key(s['counters'], 'episode', {
                 'start': {'seed': 0}, 'actions': [[1.0, 2.0]], 'dtype': '<f4'})),
             R, 'refuse', 'episode'))
    add(Case('state.json episode longer than max_ep_len, resume', 'td3',
             run_edit(state, lambda s: set_key(s['counters'], 'episode', {
                 'start': {'seed': 0}, 'actions': [[0.0]] * 5000, 'dtype': '<f4'})),
             R, 'refuse', 'episode'))
    add(Case('state.json episode of object dtype, resume', 'td3',
             run_edit(state, lambda s: set_key(s['counters'], 'episode', {
                 'start': {'seed': 0}, 'actions': [[0.0]], 'dtype': '|O'})),
             R, 'refuse', 'episode'))
    add(Case('state.json noise state sets __class__, resume', 'td3',
             run_edit(state, lambda s: set_key(s['counters'], 'noise',
                                               {'__class__': {'value': 1}})),
             R, 'refuse', 'noise'))
    add(Case('state.json without records (older version), resume', 'td3',
             run_edit(state, lambda s: s.pop('records')), R, 'refuse', 'record'))
    add(Case('state.json records another row count, resume', 'td3',
             run_edit(state, lambda s: set_key(s['records']['progress'], 'rows', 1)), R,
             'refuse'))
    add(Case('state.json truncated, resume', 'td3',
             lambda c: open(state(c), 'r+b').truncate(10), R, 'refuse', 'corrupt'))
    add(Case('state.json a JSON list, resume', 'td3', write_text(state, '[1, 2]'), R,
             'refuse'))
    add(Case('arrays.npz claims 4 GiB per member (zip bomb), resume', 'td3',
             lambda c: H.patch_zip_sizes(os.path.join(c.run, 'checkpoint', 'arrays.npz'),
                                         2 ** 32 - 2), R, 'refuse'))
    add(Case('arrays.npz truncated, resume', 'td3',
             lambda c: open(os.path.join(c.run, 'checkpoint', 'arrays.npz'),
                            'r+b').truncate(100), R, 'refuse'))
    add(Case('checkpoint variables truncated, resume', 'td3',
             lambda c: [open(os.path.join(c.run, 'checkpoint', f), 'r+b').truncate(12)
                        for f in os.listdir(os.path.join(c.run, 'checkpoint'))
                        if f.startswith('variables.data')], R, 'refuse', 'corrupt'))
    add(Case('ppo state.json step beyond the epoch, resume', 'ppo', counters('t', 301), R,
             'refuse'))

    # -- D. Damaged progress.txt --------------------------------------------------------------
    add(Case('progress.txt with a row cut out, resume', 'td3',
             progress_edit(lambda ls: '\n'.join(ls[:1] + ls[2:])), R, 'refuse', 'removed'))
    add(Case('progress.txt header only, resume', 'td3',
             progress_edit(lambda ls: ls[0] + '\n'), R, 'refuse', 'header'))
    add(Case('progress.txt truncated mid-row, resume', 'td3',
             progress_edit(lambda ls: '\n'.join(ls)[:-40]), R, 'refuse'))
    add(Case('progress.txt empty, resume', 'td3', progress_edit(lambda ls: ''), R, 'refuse'))
    add(Case('progress.txt removed, resume', 'td3',
             lambda c: os.remove(os.path.join(c.run, 'progress.txt')), R, 'refuse'))
    add(Case('progress.txt with a value edited, resume', 'td3',
             progress_edit(lambda ls: '\n'.join(ls[:1] + [ls[1].replace('\t', '\t9', 1)]
                                                + ls[2:])), R, 'refuse'))
    add(Case('progress.txt rows reordered, resume', 'td3',
             progress_edit(lambda ls: '\n'.join([ls[0], ls[2], ls[1]] + ls[3:])), R,
             'refuse'))
    add(Case('progress.txt with rows of another run appended, resume', 'td3',
             progress_edit(lambda ls: '\n'.join(ls[:-1] + ls[1:3]) + '\n'), R, 'refuse',
             'mixed'))
    add(Case('progress.txt is binary, resume', 'td3',
             lambda c: open(os.path.join(c.run, 'progress.txt'), 'wb').write(b'\xff\xfe' * 50),
             R, 'refuse'))
    add(Case('progress.txt is a folder, resume', 'td3',
             lambda c: (os.remove(os.path.join(c.run, 'progress.txt')),
                        os.mkdir(os.path.join(c.run, 'progress.txt'))), R, 'refuse'))
    add(Case('progress.txt with the next epoch written before a kill, resume', 'td3',
             chain(run_edit(cfg, lambda d: set_key(d, 'epochs', 3)),
                   progress_edit(lambda ls: '\n'.join(ls[:-1] + [
                       ls[-2].replace('2', '3', 1)]) + '\n')), R, 'ok', check=resumed_to(3)))

    # -- E. Edited config.json ----------------------------------------------------------------
    for key, value, needle in (
            ('steps_per_epoch', 100, 'steps_per_epoch'), ('algo', 'sac', 'sac'),
            ('algo', 'ddpg', 'ddpg'), ('env_id', 'HalfCheetah-v5', 'HalfCheetah'),
            ('env_id', 'MountainCarContinuous-v0', 'MountainCar'),
            ('env_id', ['Pendulum-v1'], 'gymnasium id'), ('env_id', 3, 'gymnasium id'),
            ('env_id', 'NoSuchEnv-v0', 'unknown environment'), ('replay_size', 10 ** 12, ''),
            ('update_after', 100000, ''), ('ac_kwargs', {'hidden_sizes': [16]}, ''),
            ('algo', 'evil', 'algorithm'), ('epochs', 1, 'epoch')):
        add(Case('config.json %s %r, resume' % (key, value), 'td3',
                 run_edit(cfg, lambda d, k=key, v=value: set_key(d, k, v)), R, 'refuse',
                 needle))
    add(Case('config.json env_kwargs {"g": "abc"}, resume', 'td3',
             run_edit(cfg, lambda d: set_key(d['env_fn'], 'env_kwargs', {'g': 'abc'})), R,
             'refuse'))
    add(Case('config.json not JSON, resume', 'td3', write_text(cfg, '{"algo": '), R, 'refuse',
             'JSON'))
    add(Case('config.json a list, resume', 'td3', write_text(cfg, '[]'), R, 'refuse'))
    add(Case('config.json removed, resume', 'td3', lambda c: os.remove(cfg(c)), R, 'refuse'))
    add(Case('config.json epochs raised to 3, resume', 'td3',
             run_edit(cfg, lambda d: set_key(d, 'epochs', 3)), R, 'ok', check=resumed_to(3)))
    add(Case('untouched finished run, resume', 'td3', nothing, R, 'ok', check=resumed_to(2)))
    for key, value, needle in (
            ('env_id', 'HalfCheetah-v5', 'shape'), ('env_id', ['Pendulum-v1'], 'gymnasium id'),
            ('algo', 'evil', 'algorithm'), ('actor_critic', 'os.system', 'actor-critic'),
            ('ac_kwargs', {'hidden_sizes': [16]}, 'shape'),
            ('ac_kwargs', {'activation': '__import__'}, 'activation'),
            ('ac_kwargs', {'policy': 'os.system'}, 'not a setting'),
            ('ac_kwargs', {'hidden_sizes': [10 ** 12]}, 'hidden_sizes'),
            ('max_ep_len', 'abc', 'max_ep_len'), ('action_range', 'abc', 'action_range')):
        add(Case('config.json %s %r, test_policy' % (key, value), 'td3',
                 run_edit(cfg, lambda d, k=key, v=value: set_key(d, k, v)), TP, 'refuse',
                 needle))
    for value in ('abc', {'obs': 'abc'}, {'obs': {'mean': [0.0], 'm2': [1.0], 'count': 1}},
                  {'obs': {'mean': [0, 0, 0], 'm2': [-1, 0, 0], 'count': 1}}):
        add(Case('model_info.json normalization %r, test_policy' % (value,), 'td3',
                 run_edit(info, lambda d, v=value: set_key(d, 'normalization', v)), TP,
                 'refuse', 'normalization'))
    add(Case('model_info.json not JSON, test_policy', 'td3', write_text(info, '{"inp'), TP,
             'refuse', 'unreadable'))
    add(Case('model variables.index truncated, test_policy', 'td3',
             lambda c: open(os.path.join(c.run, 'tf1_save', 'variables', 'variables.index'),
                            'r+b').truncate(20), TP, 'refuse', 'unreadable'))
    add(Case('model variables.data truncated, test_policy', 'td3',
             lambda c: [open(os.path.join(c.run, 'tf1_save', 'variables', f), 'r+b').truncate(8)
                        for f in os.listdir(os.path.join(c.run, 'tf1_save', 'variables'))
                        if f.startswith('variables.data')], TP, 'refuse'))

    # -- F. Huge sizes and env construction errors (new runs) -----------------------------------
    for algo in ('td3', 'sac', 'ddpg'):
        add(Case('%s --replay_size 1e12' % algo, None, nothing,
                 [algo] + TD3[1:] + ['--replay_size', '1000000000000', '--data_dir', '{data}'],
                 'refuse', 'replay_size', check=no_config_left))
    add(Case('--env_kwargs {"g": "abc"}, then the corrected command', None, nothing,
             TD3 + ['--env_kwargs', "{'g': 'abc'}", '--exp_name', 'x', '--data_dir', '{data}'],
             'refuse', 'env_kwargs', check=lambda c, p: no_config_left(c, p) or rerun_ok(c)))
    add(Case('--env_kwargs {"no_such_arg": 1}', None, nothing,
             TD3 + ['--env_kwargs', "{'no_such_arg': 1}", '--data_dir', '{data}'], 'refuse',
             'env_kwargs', check=no_config_left))

    # -- G. Runs that could never train -------------------------------------------------------
    base = [a for a in TD3 if a not in ()]
    for extra in (['--update_every', '1000'], ['--update_after', '100000'],
                  ['--update_after', '100000', '--update_at_episode_end', 'True']):
        for algo in ('td3', 'sac', 'ddpg'):
            if algo != 'td3' and extra[-1] == 'True':
                continue
            args = [algo] + _without(base[1:], extra) + extra + ['--data_dir', '{data}']
            add(Case('%s %s on 600 steps' % (algo, ' '.join(extra)), None, nothing, args,
                     'refuse', 'never train', check=no_config_left))

    # -- H. An env that never ends ------------------------------------------------------------
    add(Case('test_policy on an env that never ends (run max_ep_len 100)', 'forever',
             nothing, ['test_policy', '{run}', '--norender', '--episodes', '2'], 'ok',
             check=episode_lengths(100)))

    # -- I. Messages --------------------------------------------------------------------------
    add(Case('new run into a folder holding only config.json', None,
             lambda c: (os.makedirs(c.run), open(cfg(c), 'w').write('{}')),
             TD3 + ['--exp_name', 'x', '--data_dir', '{data}'], 'refuse', 'saved nothing else'))
    add(Case('infinite reward from the env (HalfCheetah ctrl_cost_weight=inf)', None, nothing,
             TD3[:2] + ['HalfCheetah-v5', '--env_kwargs', "{'ctrl_cost_weight': 1e400}"]
             + TD3[3:] + ['--exp_name', 'x', '--data_dir', '{data}'],
             'stop', 'environment returned a NaN or infinite reward'))
    for cmd, needle in ((['resume', '{run}'], 'cannot read'),
                        (['test_policy', '{run}', '--norender'], 'cannot read'),
                        (['plot', '{run}', '--save', '{outside}/u.png'], 'cannot read')):
        add(Case('unreadable folder (mode 000, no root override), %s' % cmd[0], 'td3',
                 lambda c: os.chmod(c.run, 0), cmd, 'refuse', needle, as_user=True))
    add(Case('plot --smooth 0 (no usage block)', 'td3', nothing,
             ['plot', '{run}', '--smooth', '0'], 'refuse', '--smooth'))
    add(Case('plot --no-such-flag (no usage block)', 'td3', nothing,
             ['plot', '{run}', '--no-such-flag'], 'refuse', 'unrecognized'))
    add(Case('plot --save into an unwritable place', 'td3', nothing,
             ['plot', '{run}', '--save', '/proc/battery/fig.png'], 'refuse', 'cannot write'))
    add(Case('plot of a 300 MiB progress.txt', 'td3',
             lambda c: open(os.path.join(c.run, 'progress.txt'), 'r+b').truncate(300 * 2 ** 20),
             ['plot', '{run}', '--save', '{run}/fig.png'], 'refuse', 'nothing to plot',
             check=lambda c, p: None if 'progress.txt' in p.stderr and 'MiB' in p.stderr
             else 'the skipped file is not named'))
    add(Case('plot: one good run and one /dev/zero run', 'td3',
             lambda c: (H.copy_run(c.run, c.run + '_b'),
                        os.remove(os.path.join(c.run + '_b', 'progress.txt')),
                        os.symlink('/dev/zero', os.path.join(c.run + '_b', 'progress.txt'))),
             ['plot', '{run}', '{run}_b', '--save', '{run}/fig.png'], 'ok',
             check=lambda c, p: None if '/dev/zero' in p.stderr or 'regular' in p.stderr
             else 'no warning names the skipped file'))
    return out


def _without(args, extra):
    """``args`` without the flags (and their values) that ``extra`` sets again."""
    keys = {a for a in extra if a.startswith('--')}
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in keys:
            skip = True
            continue
        out.append(a)
    return out


def rerun_ok(c):
    proc = run_cli(*[a.replace('{data}', c.data) for a in
                     TD3 + ['--exp_name', 'x', '--data_dir', '{data}']], cwd=c.work)
    return None if proc.returncode == 0 else 'the corrected command failed: %s' % \
        proc.stderr[-300:]


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def build_bases(base_dir):
    """The finished runs the cases copy: TD3 and PPO (2 epochs of 300 steps), and TD3 on a
    Pendulum without time limit (``max_episode_steps`` 1e9; the run's ``max_ep_len`` 100)."""
    runs = {}
    for key, args in (('td3', TD3), ('ppo', PPO), ('forever', NEVER_ENDS)):
        proc = run_cli(*args, '--exp_name', key, '--data_dir', base_dir)
        if proc.returncode != 0:
            raise SystemExit('base run %s failed:\n%s' % (key, proc.stderr[-3000:]))
        runs[key] = os.path.join(base_dir, key, key + '_s0')
    return runs


NO_DAC = ['setpriv', '--inh-caps=-dac_override,-dac_read_search',
          '--bounding-set=-dac_override,-dac_read_search']


def run_unprivileged(args, cwd, timeout):
    """``python run.py ARGS`` in a fresh interpreter that file permissions apply to: as root,
    without the capabilities that override them (``setpriv``); as another user, as is."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', MPLBACKEND='Agg')
    prefix = NO_DAC if os.geteuid() == 0 else []
    return subprocess.run(prefix + [sys.executable, os.path.join(ROOT, 'run.py')] + args,
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def run_case(case, bases, top, timeout):
    c = case
    c.work = tempfile.mkdtemp(prefix='case-', dir=top)
    os.chmod(c.work, 0o755)
    c.outside = os.path.join(c.work, 'outside')
    c.data = os.path.join(c.work, 'data')
    os.makedirs(c.outside)
    os.makedirs(c.data)
    c.run = os.path.join(c.data, 'x', 'x_s0')
    c.pwned = []
    if c.base is not None:
        H.copy_run(bases[c.base], c.run)
    c.prepare(c)
    args = [a.replace('{run}', c.run).replace('{data}', c.data).replace('{outside}', c.outside)
            for a in c.command]
    allowed = [c.run, c.data] if c.command[0] not in ('resume', 'test_policy', 'plot') else \
        [c.run] + ([c.run + '_b'] if os.path.exists(c.run + '_b') else [])
    before_all = snapshot(top, skip=allowed)
    before_run = snapshot(c.run) if os.path.isdir(c.run) and os.access(c.run, os.R_OK) else {}
    started = time.time()
    try:
        if c.as_user is not None:
            proc = run_unprivileged(args, c.work, timeout)
        else:
            proc = run_cli(*args, cwd=c.work, timeout=timeout)
        hang = False
    except subprocess.TimeoutExpired as e:
        proc, hang = subprocess.CompletedProcess(args, None, e.stdout or '', e.stderr or ''), True
    seconds = time.time() - started
    if c.as_user is not None:
        os.chmod(c.run, 0o755)
    result = dict(name=c.name, rc=proc.returncode, seconds=round(seconds, 1), hang=hang,
                  traceback='Traceback' in (proc.stderr or ''), problems=[])
    err_lines = [l for l in (proc.stderr or '').splitlines() if l.strip()]
    error_lines = [l for l in err_lines if 'error:' in l]
    result['stderr'] = error_lines[-1][:300] if error_lines else (err_lines[-1][:300]
                                                                   if err_lines else '')
    outside_changes = diff(before_all, snapshot(top, skip=allowed))
    outside_changes += [p for p in c.pwned if os.path.exists(p)]
    result['outside'] = outside_changes
    if c.expect == 'refuse':
        if proc.returncode != 2:
            result['problems'].append('exit %s, expected 2' % proc.returncode)
        warnings_ok = c.command[0] == 'plot'  # plot names each file it skipped, then errs
        others = [l for l in err_lines if l not in error_lines
                  and not (warnings_ok and 'warning:' in l)]
        if len(error_lines) != 1 or others:
            result['problems'].append('stderr is not one error line: %r' % err_lines[-3:])
        if os.path.isdir(c.run) and before_run and diff(before_run, snapshot(c.run)):
            result['rows'] = diff(before_run, snapshot(c.run))
            result['problems'].append('the refused run folder changed: %s' % result['rows'][:3])
    elif c.expect == 'stop':
        if proc.returncode != 1 or len(error_lines) != 1:
            result['problems'].append('exit %s, %d error lines; expected 1 and one'
                                      % (proc.returncode, len(error_lines)))
    elif proc.returncode != 0:
        result['problems'].append('exit %s, expected 0: %s' % (proc.returncode,
                                                              (proc.stderr or '')[-300:]))
    if c.needle and c.needle not in (proc.stderr or ''):
        result['problems'].append('stderr lacks %r' % c.needle)
    if c.check is not None and not hang:
        problem = c.check(c, proc)
        if problem:
            result['problems'].append(problem)
    if outside_changes:
        result['problems'].append('written outside: %s' % outside_changes[:3])
    if hang:
        result['problems'].append('hung: killed after %d s' % timeout)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--only', default='', help='run the cases whose name contains this')
    parser.add_argument('--timeout', type=int, default=240, help='seconds before a hang')
    parser.add_argument('--first', type=int, default=1, help='start at the case of this number')
    parser.add_argument('--keep', action='store_true', help='keep the folders')
    parser.add_argument('--json', default=None, help='write every result to this file')
    args = parser.parse_args(argv)
    selected = [c for c in cases()[args.first - 1:] if args.only in c.name]
    top = tempfile.mkdtemp(prefix='battery-')
    os.chmod(top, 0o755)
    try:
        bases = build_bases(os.path.join(top, 'bases'))
        results = []
        for i, case in enumerate(selected, 1):
            r = run_case(case, bases, top, args.timeout)
            results.append(r)
            print('%3d %-4s rc=%-4s %5.1fs %s%s' % (
                i, 'ok' if not r['problems'] else 'FAIL', r['rc'], r['seconds'], r['name'],
                ('\n      ' + '; '.join(r['problems'])) if r['problems'] else ''), flush=True)
        refusals = [r for r, c in zip(results, selected) if c.expect == 'refuse']
        totals = dict(
            cases=len(results),
            tracebacks=sum(r['traceback'] for r in results),
            hangs=sum(r['hang'] for r in results),
            writes_outside=sum(bool(r['outside']) for r in results),
            lost_or_mixed_rows=sum(bool(r.get('rows')) or any('progress.txt epochs' in p for p in
                                                              r['problems']) for r in results),
            refusals=len(refusals),
            refusals_exit_2=sum(r['rc'] == 2 for r in refusals),
            cases_with_problems=sum(bool(r['problems']) for r in results))
        print(json.dumps(totals))
        if args.json:
            with open(args.json, 'w') as f:
                json.dump(dict(totals=totals, results=results), f, indent=1)
        return 0 if not totals['cases_with_problems'] else 1
    finally:
        if not args.keep:
            for dirpath, dirs, _ in os.walk(top):
                for d in dirs:
                    try:
                        os.chmod(os.path.join(dirpath, d), 0o755)
                    except OSError:
                        pass
            shutil.rmtree(top, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
