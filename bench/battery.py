"""The hostile-input battery: run folders built as a hostile file and a careless hand would,
given to ``test_policy``, ``resume``, ``plot`` and new runs (issue 34), and what lies beyond
a run folder's own files (issue 56): the working directory, ``tune``'s study folder and
database, FIFOs and devices, checkpoint indexes, env files, text that matplotlib parses,
signals. The cases of issue 56 carry a class tag (``[code]``, ``[links]``, ``[fifo]``,
``[crash]``, ``[text]``, ``[silent]``, ``[signal]``), each class with its own payloads.

Not a test (the suite has one test per kind of case, ``tests/test_folder_safety.py`` and
``tests/test_hostile_inputs.py``): this runs every case and prints one line per case, then
the totals and one line per class:

* **code run**: a module, backend or model planted by the case ran (it writes a marker);
* **writes outside**: any file created, changed or removed under the battery's folder
  outside the case's own run folder and ``--data_dir`` (the symlink targets and the paths a
  hostile model writes to live there);
* **hangs**: a command that had not ended after ``--timeout`` seconds, or within
  ``SIGNAL_GRACE`` seconds of a SIGTERM or SIGINT (killed);
* **tracebacks**: a ``Traceback`` on stderr;
* **crashes**: a native crash: killed by a signal nobody sent (abort, segfault);
* **data lost**: a refused case whose folder changed at all, or an accepted ``resume``
  whose ``progress.txt`` is not epochs ``1..N`` once each with the rows it had;
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

from conftest import cli_env, run_cli  # noqa: E402
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
                 as_user=None, fresh=None, cwd='{work}', env=None, signal=None, watch=None):
        self.name, self.base, self.prepare, self.command = name, base, prepare, command
        self.expect, self.needle, self.check, self.as_user = expect, needle, check, as_user
        # fresh: the command is a whole argv (not run.py's arguments) run in a new interpreter
        # in ``cwd``; env: {name: value or None} changes to the environment; signal: (signum,
        # seconds) sent that long after the start, the command must then end within
        # SIGNAL_GRACE seconds; watch(case): the folder a refusal must leave as it was
        # (default the run folder)
        self.fresh, self.cwd, self.env, self.signal, self.watch = fresh, cwd, env, signal, watch


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
             or 'symbolic link' in p.stderr else 'no warning names the skipped file'))
    out += issue56_cases()
    return out


# ---------------------------------------------------------------------------------------------
# Issue 56: beyond the run folder's own files (each class with its own payloads)
# ---------------------------------------------------------------------------------------------
PY = '{python}'
TUNE = ['tune', 'td3', '--env', 'Pendulum-v1', '--trials', '1', '--epochs', '1',
        '--steps_per_epoch', '200', '--start_steps', '100', '--update_after', '100',
        '--update_every', '50', '--num_test_episodes', '1', '--max_ep_len', '100',
        '--hid', '[8]', '--data_dir', '{data}', '--study', 's']
SIGNAL_GRACE = 20  # seconds a command has to end after SIGTERM or SIGINT
MARK = 'open(%r, "w").write("ran")\n'


def study(c):
    return os.path.join(c.data, 's')


def plant_code(names):
    """Plant modules in the run folder (the working directory of the command) that write a
    marker outside when imported: ``spinup_tf/``, ``numpy.py``..."""
    def prepare(c):
        c.pwned = [outside(c, 'code-ran')]
        for name in names:
            if name.endswith('.py'):
                path = os.path.join(c.run, name)
            else:
                os.makedirs(os.path.join(c.run, name), exist_ok=True)
                path = os.path.join(c.run, name, '__init__.py')
            with open(path, 'w') as f:
                f.write(MARK % c.pwned[0])
    return prepare


def plant_rc_backend(c):
    """A matplotlibrc whose backend is a module of the folder that writes a marker."""
    c.pwned = [outside(c, 'code-ran')]
    with open(os.path.join(c.run, 'matplotlibrc'), 'w') as f:
        f.write('backend: module://pwnbackend\n')
    with open(os.path.join(c.run, 'pwnbackend.py'), 'w') as f:
        f.write(MARK % c.pwned[0])


def link_at(rel, target_fn, make=None):
    """A symbolic link at ``rel`` (below the case's work folder, ``{run}`` and ``{data}``
    allowed) to ``target_fn(c)``, made by ``make(c, target)`` first when given."""
    def prepare(c):
        path = _fill(rel, c)
        target = target_fn(c)
        if make is not None:
            make(c, target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            (shutil.rmtree if os.path.isdir(path) and not os.path.islink(path)
             else os.remove)(path)
        os.symlink(target, path)
    return prepare


def fifo_at(rel):
    def prepare(c):
        path = _fill(rel, c)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            (shutil.rmtree if os.path.isdir(path) and not os.path.islink(path)
             else os.remove)(path)
        os.mkfifo(path)
    return prepare


def _fill(text, c):
    return (text.replace('{run}', c.run).replace('{data}', c.data)
            .replace('{outside}', c.outside).replace('{work}', c.work))


def keep_file(c, target):
    with open(target, 'w') as f:
        f.write('keep')


def keep_dir(c, target):
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, 'keep'), 'w') as f:
        f.write('keep')


def outside_run(c, target):
    """A copy of the run outside (its epochs raised: a resume of it would append)."""
    H.copy_run(c.run, target)
    H.edit_json(os.path.join(target, 'config.json'), lambda d: set_key(d, 'epochs', 3))


def made_study(trial_run_dir=None, heartbeat=0.0):
    """A study database ``{data}/s/study.db`` made by this battery's TUNE command, optionally
    with one RUNNING trial of another host whose driver died long ago, whose ``run_dir``
    (the database's, i.e. data) is ``trial_run_dir(c)``."""
    def prepare(c):
        import optuna
        from spinup_tf.tools import tune
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        os.makedirs(study(c), exist_ok=True)
        config = tune.parse([_fill(a, c) for a in TUNE[1:]])
        storage = optuna.storages.RDBStorage('sqlite:///' + os.path.join(study(c), 'study.db'))
        s = optuna.create_study(study_name='s', storage=storage, direction='maximize')
        s.set_user_attr('made_by', config.made_by)
        s.set_user_attr('metric', config.metric)
        if trial_run_dir is not None:
            trial = s.ask()
            for key, value in (('host', 'elsewhere'), ('pid', 1), ('heartbeat', heartbeat),
                               ('run_dir', trial_run_dir(c))):
                trial.set_user_attr(key, value)
        storage.engine.dispose()
    return prepare


def study_trial_folder(c):
    return os.path.join(study(c), 'td3_Pendulum-v1_trial0', 'td3_Pendulum-v1_trial0_s0')


def copy_trial_run(c):
    """The base TD3 run as the study's trial 0 (checkpoint and all)."""
    H.copy_run(c.run, study_trial_folder(c))


def secret_link(c):
    """progress.txt a link to a file outside holding a secret: plot must not print it."""
    target = outside(c, 'secret')
    with open(target, 'w') as f:
        f.write('SECRET-TOKEN-4242 root:x:0:0\nSECRET-TOKEN-4242 second line\n')
    path = os.path.join(c.run, 'progress.txt')
    os.remove(path)
    os.symlink(target, path)


def no_secret(c, proc):
    return 'the linked file\'s content was printed' if 'SECRET' in (proc.stdout + proc.stderr) \
        else None


def write_progress_text(header, rows, row):
    def prepare(c):
        with open(os.path.join(c.run, 'progress.txt'), 'w') as f:
            f.write('\t'.join(header) + '\n')
            for i in range(rows):
                f.write(row(i) + '\n')
    return prepare


def wide_progress(columns, rows=3):
    names = ['Epoch', 'AverageEpRet', 'TotalEnvInteracts'] + ['c%d' % i for i in range(columns)]
    return write_progress_text(names, rows, lambda i: '\t'.join(
        [str(i + 1), '%.1f' % (i * 1.5), str(300 * (i + 1))] + ['0.25'] * columns))


def tiny_rows(megabytes):
    def prepare(c):
        path = os.path.join(c.run, 'progress.txt')
        with open(path, 'r') as f:
            header = f.readline()
        with open(path, 'w') as f:
            f.write(header)
            row = '\t'.join(['1'] * (header.count('\t') + 1)) + '\n'
            block = row * (1 << 20 // len(row) or 1)
            while f.tell() < megabytes << 20:
                f.write(block)
    return prepare


def config_env_kwargs(kwargs_fn):
    """config.json's env_kwargs set to ``kwargs_fn(case)``."""
    def prepare(c):
        kwargs = kwargs_fn(c)
        H.edit_json(cfg(c), lambda d: set_key(d['env_fn'], 'env_kwargs', kwargs))
    return prepare


def patch_index(rel, shape):
    def prepare(c):
        H.patch_index_shape(os.path.join(c.run, rel), shape)
    return prepare


def nonfinite(model, value):
    def prepare(c):
        H.write_nonfinite_model(os.path.join(c.run, model), value)
    return prepare


def mathtext_config(key, value):
    return run_edit(cfg, lambda d: set_key(d, key, value))


def write_rc(text):
    def prepare(c):
        with open(os.path.join(c.work, 'matplotlibrc'), 'w') as f:
            f.write(text)
    return prepare


def issue56_cases():
    TP = ['test_policy', '{run}', '--norender', '--episodes', '1']
    R = ['resume', '{run}']
    PLOT = ['plot', '{run}', '--save', '{run}/fig.png']
    out = []
    add = out.append
    watch_study = study

    # -- J. [code] A folder from elsewhere as the working directory -----------------------
    tp_here = ['test_policy', '.', '--norender', '--episodes', '1']
    for how, argv in (('spinup-tf console script', ['{python}', '{bin}/spinup-tf']),
                      ('python -P -m spinup_tf', ['{python}', '-P', '-m', 'spinup_tf']),
                      ('python /path/run.py', ['{python}', '{root}/run.py'])):
        add(Case('[code] planted spinup_tf/ in the folder, %s test_policy .' % how, 'td3',
                 plant_code(['spinup_tf']), argv + tp_here, 'ok', fresh=True, cwd='{run}'))
    for names in (['numpy.py'], ['gymnasium'], ['tensorflow'], ['json.py', 'argparse.py'],
                  ['matplotlib'], ['optuna.py', 'sqlalchemy']):
        for cmd in (tp_here, ['plot', '.', '--save', 'f.png'], ['resume', '.']):
            add(Case('[code] planted %s, python -m spinup_tf %s (package installed elsewhere)'
                     % ('+'.join(names), cmd[0]), 'td3', plant_code(names),
                     ['{python}', '-m', 'spinup_tf'] + cmd, 'any', fresh=True, cwd='{run}'))
    add(Case('[code] matplotlibrc backend module://pwnbackend in the folder, plot .', 'td3',
             plant_rc_backend, ['{python}', '{bin}/spinup-tf', 'plot', '.', '--no-show'],
             'any', fresh=True, cwd='{run}', env={'MPLBACKEND': None}))

    # -- K. [links] Writes outside, or through planted links ------------------------------
    for name, cmd in (('fig.png', PLOT),
                      ('fig_LossQ.png', ['plot', '{run}', '-y', 'AverageEpRet', 'LossQ',
                                         '--save', '{run}/fig.png'])):
        add(Case('[links] plot --save onto a planted %s link to a file outside' % name, 'td3',
                 link_at('{run}/' + name, lambda c: outside(c, 'victim'), keep_file), cmd,
                 'refuse', 'symbolic link'))
    add(Case('[links] plot --save onto a dangling link (its target would be created)', 'td3',
             link_at('{run}/fig.png', lambda c: outside(c, 'created')), PLOT, 'refuse',
             'symbolic link'))
    for rel, video in (('{run}/videos', '{run}/videos/v.mp4'), ('{run}/v.mp4', '{run}/v.mp4')):
        add(Case('[links] test_policy --video %s through a planted link'
                 % video.replace('{run}/', ''), 'td3',
                 link_at(rel, lambda c, r=rel: outside(c, os.path.basename(r)),
                         keep_dir if rel.endswith('videos') else keep_file),
                 TP + ['--video', video, '--len', '5'], 'refuse', 'symbolic link'))
    add(Case('[links] resume of a run folder that is itself a link', 'td3',
             chain(run_edit(cfg, lambda d: set_key(d, 'epochs', 3)),
                   lambda c: (shutil.move(c.run, outside(c, 'real-run')),
                              os.symlink(outside(c, 'real-run'), c.run))),
             R, 'refuse', 'symbolic link', watch=lambda c: outside(c, 'real-run')))
    add(Case('[links] new run whose EXP_NAME folder is a link outside', None,
             link_at('{data}/x', lambda c: outside(c, 'expdir'), keep_dir),
             TD3 + ['--exp_name', 'x', '--data_dir', '{data}'], 'refuse', 'symbolic link',
             watch=lambda c: c.data))
    add(Case('[links] new run whose run folder is a link to an empty folder outside', None,
             link_at('{data}/x/x_s0', lambda c: outside(c, 'rundir'),
                     lambda c, t: os.makedirs(t)),
             TD3 + ['--exp_name', 'x', '--data_dir', '{data}'], 'refuse', 'symbolic link',
             watch=lambda c: c.data))
    for rel, target, make in (
            ('{data}/s/history.png', 'victim', keep_file),
            ('{data}/s/importance.png', 'victim', keep_file),
            ('{data}/s/logs', 'logs', keep_dir),
            ('{data}/s/logs/td3_Pendulum-v1_trial0.log', 'victim', keep_file),
            ('{data}/s/study.db', 'study.db', None),
            ('{data}/s/study.db-journal', 'journal', None),
            ('{data}/s/td3_Pendulum-v1_trial0', 'trialdir', keep_dir),
            ('{data}/s/td3_Pendulum-v1_trial0/td3_Pendulum-v1_trial0_s0', 'trialrun',
             keep_dir),
            ('{data}/s', 'studydir', keep_dir)):
        add(Case('[links] tune, %s a planted link outside' % rel.replace('{data}/', ''), None,
                 link_at(rel, lambda c, t=target: outside(c, t), make), TUNE, 'refuse',
                 'symbolic link', watch=lambda c: c.data))
    add(Case('[links] tune, a RUNNING trial whose stored run_dir is a run outside the study',
             'td3', made_study(lambda c: outside(c, 'other-run')), TUNE, 'refuse',
             'inside the study', watch=lambda c: c.data,
             check=lambda c, p: None if not os.path.exists(outside(c, 'other-run'))
             or epochs_of(outside(c, 'other-run')) == [1, 2] else 'the outside run changed')
        .also(lambda c: outside_run(c, outside(c, 'other-run'))))
    add(Case('[links] tune, a RUNNING trial whose stored run_dir climbs out with ../', 'td3',
             made_study(lambda c: os.path.join(study(c), '..', '..', 'x', 'x_s0')), TUNE,
             'refuse', 'inside the study', watch=lambda c: c.data))

    # -- L. [fifo] Hangs: FIFOs where the project opens or replaces files ------------------
    for rel in ('checkpoint.tmp', 'checkpoint.old', 'tf1_save.tmp', 'tf1_save.old',
                'tf1_save_best.tmp', 'checkpoint/variables.index', 'progress.txt.tmp',
                'config.json.tmp', '.lock', 'checkpoint/state.json'):
        add(Case('[fifo] %s is a FIFO, resume' % rel, 'td3', fifo_at('{run}/' + rel), R,
                 'refuse', 'FIFO'))
    for rel in ('tf1_save/variables/variables.index', 'tf1_save/model_info.json',
                'config.json', 'tf1_save/variables/variables.data-00000-of-00001'):
        add(Case('[fifo] %s is a FIFO, test_policy' % rel, 'td3', fifo_at('{run}/' + rel), TP,
                 'refuse'))
    for rel in ('.lock', 'tf1_save.tmp', 'progress.txt'):
        add(Case('[fifo] new run into a folder whose %s is a FIFO' % rel, None,
                 fifo_at('{data}/x/x_s0/' + rel), TD3 + ['--exp_name', 'x', '--data_dir',
                                                          '{data}'],
                 'refuse', '', watch=lambda c: c.data))
    add(Case('[fifo] plot --save onto a FIFO', 'td3', fifo_at('{run}/fig.png'), PLOT, 'refuse',
             'FIFO'))
    for rel in ('{data}/s/study.db', '{data}/s/study.db-journal', '{data}/s/history.png',
                '{data}/s/logs/td3_Pendulum-v1_trial0.log'):
        add(Case('[fifo] tune, %s is a FIFO' % rel.replace('{data}/', ''), None, fifo_at(rel),
                 TUNE, 'refuse', 'FIFO', watch=lambda c: c.data))
    for rel in ('.lock', 'progress.txt'):
        add(Case('[fifo] tune, a RUNNING trial\'s %s is a FIFO' % rel, 'td3',
                 chain(made_study(lambda c: study_trial_folder(c)), copy_trial_run,
                       fifo_at('{data}/s/td3_Pendulum-v1_trial0/td3_Pendulum-v1_trial0_s0/'
                               + rel)),
                 TUNE, 'refuse', 'FIFO', watch=lambda c: c.data))
    def fifo_xml(c):
        path = os.path.join(c.outside, 'model.xml')
        os.mkfifo(path)
        return path
    add(Case('[fifo] new run, --env_kwargs xml_file a FIFO', None, fifo_xml,
             ['td3', '--env', 'HalfCheetah-v5', '--env_kwargs',
              "{'xml_file': '{outside}/model.xml'}"] + TD3[3:] + ['--data_dir', '{data}'],
             'refuse', 'FIFO', watch=lambda c: c.data))
    add(Case('[fifo] new run, --env_kwargs xml_file /dev/zero', None, nothing,
             ['td3', '--env', 'HalfCheetah-v5', '--env_kwargs', "{'xml_file': '/dev/zero'}"]
             + TD3[3:] + ['--data_dir', '{data}'], 'refuse', 'character device',
             watch=lambda c: c.data))
    for cmd in (R, TP):
        add(Case('[fifo] config.json env_kwargs xml_file a FIFO, %s' % cmd[0], 'td3',
                 config_env_kwargs(lambda c: {'xml_file': fifo_xml(c)}), cmd, 'refuse',
                 'FIFO'))
    add(Case('[fifo] plot of a progress file with 100,000 columns', 'td3', wide_progress(100000),
             ['plot', '{run}', '--save', '{run}/fig.png', '-y', 'AverageEpRet'], 'ok',
             watch=None))
    add(Case('[fifo] plot of a progress file with 300,000 columns', 'td3', wide_progress(300000),
             PLOT, 'refuse', 'nothing to plot'))
    add(Case('[fifo] plot of a prefix whose sibling is a link to /', 'td3',
             lambda c: (H.copy_run(c.run, os.path.join(c.data, 'x_run')),
                        os.symlink('/', os.path.join(c.data, 'x_root'))),
             ['plot', '{data}/x_', '--save', '{data}/fig.png'], 'ok'))
    add(Case('[fifo] plot of a prefix whose only match is a link to /usr', 'td3',
             lambda c: os.symlink('/usr', os.path.join(c.data, 'x_usr')),
             ['plot', '{data}/x_', '--save', '{data}/fig.png'], 'refuse', 'nothing to plot'))

    # -- M. [crash] Native crashes -------------------------------------------------------
    for what, shape in (('a negative dimension', [-1]),
                        ('a shape whose byte size overflows int64', [2 ** 31, 2 ** 31, 4]),
                        ('a huge shape', [2 ** 40] * 3), ('a zero dimension', [0]),
                        ('a negative second dimension', [3, -5])):
        add(Case('[crash] checkpoint index declares %s, resume' % what, 'td3',
                 patch_index('checkpoint/variables.index', shape), R, 'refuse', 'index'))
        add(Case('[crash] tf1_save index declares %s, test_policy' % what, 'td3',
                 patch_index('tf1_save/variables/variables.index', shape), TP, 'refuse',
                 'index'))
    add(Case('[crash] tf1_save_best index declares a negative dimension, test_policy --best',
             'td3', patch_index('tf1_save_best/variables/variables.index', [-7]),
             TP + ['--best'], 'refuse', 'index'))
    for cmd in (TP, R):
        add(Case('[crash] config.json env_kwargs render_mode human (no display), %s' % cmd[0],
                 'td3', config_env_kwargs(lambda c: {'render_mode': 'human'}), cmd, 'refuse',
                 'display'))
    add(Case('[crash] HalfCheetah render_mode human (no display), new run', None, nothing,
             ['td3', '--env', 'HalfCheetah-v5', '--env_kwargs', "{'render_mode': 'human'}"]
             + TD3[3:] + ['--data_dir', '{data}'], 'refuse', 'display', watch=lambda c: c.data))

    # -- N. [text] Tracebacks --------------------------------------------------------------
    for key, value in (('exp_name', '$\\frac{$'), ('env_id', '$\\frac{$'),
                       ('exp_name', 'a $x^{2$ b'), ('exp_name', '$$'),
                       ('exp_name', '\\$\\mathrm{'), ('env_id', 'Pendulum-$_v1')):
        add(Case('[text] plot, config.json %s %r (mathtext)' % (key, value), 'td3',
                 mathtext_config(key, value), PLOT, 'ok'))
    add(Case('[text] plot -t / -l / --reference labels holding mathtext', 'td3', nothing,
             PLOT + ['-t', '$\\frac{$', '-l', '${}^$', '--reference', '1:$\\sqrt{$'], 'ok'))
    for rc in ('text.usetex: True\n', 'text.usetex: True\nfont.family: serif\n',
               'axes.prop_cycle: cycler("color", ["zz"])\n', 'savefig.format: nosuch\n',
               'axes.formatter.use_mathtext: True\ntext.parse_math: True\n'):
        add(Case('[text] plot with a matplotlibrc in the working directory: %s'
                 % rc.strip().replace('\n', '; '), 'td3', write_rc(rc), PLOT, 'ok'))
    add(Case('[text] tune with a read-only study database (no root override)', None,
             chain(made_study(), lambda c: os.chmod(os.path.join(study(c), 'study.db'), 0o444)),
             TUNE, 'refuse', 'read-only', as_user=True, watch=lambda c: c.data))
    add(Case('[text] tune with a read-only study folder (no root override)', None,
             chain(made_study(), lambda c: os.chmod(study(c), 0o555)),
             TUNE, 'refuse', 'read-only', as_user=True, watch=lambda c: c.data))
    for cmd, expect, needle in ((PLOT, 'refuse', 'nothing to plot'), (R, 'refuse', 'lines')):
        add(Case('[text] a 250 MiB progress.txt of tiny rows, %s' % cmd[0], 'td3',
                 tiny_rows(250), cmd, expect, needle))
    add(Case('[text] a 40 MiB progress.txt of tiny rows, plot', 'td3', tiny_rows(40), PLOT,
             'refuse', 'nothing to plot'))
    add(Case('[text] progress.txt a link to /dev/zero, resume', 'td3',
             lambda c: (os.remove(os.path.join(c.run, 'progress.txt')),
                        os.symlink('/dev/zero', os.path.join(c.run, 'progress.txt'))),
             R, 'refuse', 'symbolic link'))

    # -- O. [silent] What went unsaid ------------------------------------------------------
    for model, value in (('tf1_save', float('nan')), ('tf1_save', float('inf')),
                         ('tf1_save', float('-inf')), ('tf1_save_best', float('nan'))):
        add(Case('[silent] %s weights hold %r, test_policy%s' % (
            model, value, ' --best' if model.endswith('best') else ''), 'td3',
            nonfinite(model, value), TP + (['--best'] if model.endswith('best') else []),
            'refuse', 'not finite'))
    add(Case('[silent] plot of a progress.txt linked to a secret file outside', 'td3',
             secret_link, PLOT, 'refuse', 'nothing to plot', check=no_secret))
    add(Case('[silent] plot of a progress.txt holding a secret line', 'td3',
             write_text(lambda c: os.path.join(c.run, 'progress.txt'),
                        'Epoch\tAverageEpRet\n1\tSECRET-TOKEN-4242-' + 'x' * 200 + '\n'),
             PLOT, 'refuse', 'nothing to plot',
             check=lambda c, p: 'a whole cell was printed' if 'x' * 100 in p.stderr else None))

    # -- P. [signal] SIGTERM and Ctrl-C end a command within seconds -----------------------
    long_run = ['td3', '--env', 'Pendulum-v1', '--epochs', '500', '--steps_per_epoch', '2000',
                '--hid', '[8]', '--data_dir', '{data}', '--exp_name', 'long']
    for signum, name in ((15, 'SIGTERM'), (2, 'SIGINT')):
        add(Case('[signal] %s to test_policy on an env that never ends' % name, 'forever',
                 nothing, ['{python}', '{root}/run.py', 'test_policy', '{run}', '--norender',
                           '--len', '0', '--episodes', '3'],
                 'stopped', fresh=True, signal=(signum, 12)))
        add(Case('[signal] %s to a long run' % name, None, nothing,
                 ['{python}', '{root}/run.py'] + long_run, 'stopped', fresh=True,
                 signal=(signum, 25), watch=lambda c: c.data))
    add(Case('[signal] SIGTERM to plot reading a 40 MiB progress file', 'td3', tiny_rows(40),
             ['{python}', '{root}/run.py', 'plot', '{run}', '--save', '{run}/fig.png'],
             'stopped', fresh=True, signal=(15, 5)))
    add(Case('[signal] SIGINT to tune while its trial runs', None, nothing,
             ['{python}', '{root}/run.py'] + [a if a != '1' or i != 5 else '50'
                                              for i, a in enumerate(TUNE)],
             'stopped', fresh=True, signal=(2, 40), watch=lambda c: c.data))
    add(Case('[signal] SIGTERM to resume of a long run', 'td3',
             run_edit(cfg, lambda d: set_key(d, 'epochs', 400)),
             ['{python}', '{root}/run.py', 'resume', '{run}'], 'stopped', fresh=True,
             signal=(15, 25)))
    add(Case('[signal] SIGTERM to tune while its trial runs', None, nothing,
             ['{python}', '{root}/run.py'] + [a if a != '1' or i != 5 else '50'
                                              for i, a in enumerate(TUNE)],
             'stopped', fresh=True, signal=(15, 40), watch=lambda c: c.data))
    return out


def _also(self, fn):
    """``case.also(fn)``: run ``fn(case)`` before its own preparation."""
    first = self.prepare

    def prepare(c):
        fn(c)
        first(c)
    self.prepare = prepare
    return self


Case.also = _also


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


def run_fresh(args, cwd, env, timeout, sig=None):
    """``args`` in a new interpreter (its own ``sys.path``, as a user's shell starts it);
    with ``sig=(signum, delay)`` the signal is sent ``delay`` s after the start and the
    command must then end within ``SIGNAL_GRACE`` s. Returns ``(CompletedProcess, hang)``."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        if sig is None:
            out, err = proc.communicate(timeout=timeout)
            return subprocess.CompletedProcess(args, proc.returncode, out, err), False
        try:
            out, err = proc.communicate(timeout=sig[1])  # ended before the signal
            return subprocess.CompletedProcess(args, proc.returncode, out, err), False
        except subprocess.TimeoutExpired:
            pass
        proc.send_signal(sig[0])
        out, err = proc.communicate(timeout=SIGNAL_GRACE)
        return subprocess.CompletedProcess(args, proc.returncode, out, err), False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        return subprocess.CompletedProcess(args, None, out, err), True


def console_script(top):
    """A ``spinup-tf`` console script as pip writes one (its folder first on ``sys.path``,
    the package found on ``PYTHONPATH``, as an installed one would be)."""
    folder = os.path.join(top, 'bin')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, 'spinup-tf')
    with open(path, 'w') as f:
        f.write('#!%s\nimport sys\nfrom spinup_tf.__main__ import main\n'
                'if __name__ == "__main__":\n    sys.exit(main())\n' % sys.executable)
    os.chmod(path, 0o755)
    return folder


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
    fill = {'{run}': c.run, '{data}': c.data, '{outside}': c.outside, '{work}': c.work,
            '{python}': sys.executable, '{root}': ROOT, '{bin}': os.path.join(top, 'bin')}

    def filled(a):
        for key, value in fill.items():
            a = a.replace(key, value)
        return a
    args = [filled(a) for a in c.command]
    cwd = filled(c.cwd)
    command = c.command[0] if not c.fresh else next(
        (a for a in c.command if a in ('plot', 'test_policy', 'resume', 'tune')), 'run')
    readers = ('resume', 'test_policy', 'plot')
    allowed = [c.run, c.data] if command not in readers else \
        [c.run] + ([c.run + '_b'] if os.path.exists(c.run + '_b') else [])
    if command == 'plot' and os.path.isdir(c.data):
        allowed.append(c.data)  # a prefix's folders
    watched = c.watch(c) if c.watch is not None else c.run
    before_all = snapshot(top, skip=allowed)
    before_run = snapshot(watched) if os.path.isdir(watched) and \
        os.access(watched, os.R_OK) else {}
    started = time.time()
    env = dict(cli_env(), PYTHONPATH=ROOT)
    for key, value in (c.env or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    if c.fresh:
        proc, hang = run_fresh(args, cwd, env, timeout, c.signal)
    else:
        try:
            if c.as_user is not None:
                proc = run_unprivileged(args, cwd, timeout)
            else:
                proc = run_cli(*args, cwd=cwd, timeout=timeout)
            hang = False
        except subprocess.TimeoutExpired as e:
            proc, hang = subprocess.CompletedProcess(args, None, e.stdout or '',
                                                     e.stderr or ''), True
    seconds = time.time() - started
    if c.as_user is not None:
        for folder in (c.run, c.data, os.path.join(c.data, 's')):
            if os.path.isdir(folder):
                os.chmod(folder, 0o755)
    rc = proc.returncode
    result = dict(name=c.name, rc=rc, seconds=round(seconds, 1), hang=hang,
                  traceback='Traceback' in (proc.stderr or ''), problems=[])
    # a native crash: killed by a signal nobody sent (abort, segfault), or its exit status
    stopped_by_us = c.signal is not None and rc in (-c.signal[0], 128 + c.signal[0], 130, 143)
    result['crash'] = rc is not None and not stopped_by_us and (rc < 0 or rc in (134, 136, 139))
    result['code_run'] = [p for p in c.pwned if os.path.exists(p)]
    err_lines = [l for l in (proc.stderr or '').splitlines() if l.strip()]
    error_lines = [l for l in err_lines if 'error:' in l]
    result['stderr'] = error_lines[-1][:300] if error_lines else (err_lines[-1][:300]
                                                                   if err_lines else '')
    outside_changes = diff(before_all, snapshot(top, skip=allowed))
    outside_changes += result['code_run']
    result['outside'] = outside_changes
    if c.expect == 'refuse':
        if rc != 2:
            result['problems'].append('exit %s, expected 2' % rc)
        warnings_ok = command in ('plot', 'tune')  # they name each file they skip first
        others = [l for l in err_lines if l not in error_lines
                  and not (warnings_ok and ('warning:' in l or l.startswith('[tune]')))]
        if len(error_lines) != 1 or others:
            result['problems'].append('stderr is not one error line: %r' % err_lines[-3:])
        if os.path.isdir(watched) and before_run and diff(before_run, snapshot(watched)):
            result['rows'] = diff(before_run, snapshot(watched))
            result['problems'].append('the refused folder changed: %s' % result['rows'][:3])
    elif c.expect == 'stop':
        if rc != 1 or len(error_lines) != 1:
            result['problems'].append('exit %s, %d error lines; expected 1 and one'
                                      % (rc, len(error_lines)))
    elif c.expect == 'stopped':
        if not stopped_by_us and not hang:
            result['problems'].append('exit %s after the signal, expected 130 or 143' % rc)
    elif c.expect == 'ok' and rc != 0:
        result['problems'].append('exit %s, expected 0: %s' % (rc, (proc.stderr or '')[-300:]))
    if c.needle and c.needle not in (proc.stderr or ''):
        result['problems'].append('stderr lacks %r' % c.needle)
    if c.check is not None and not hang:
        problem = c.check(c, proc)
        if problem:
            result['problems'].append(problem)
    if result['code_run']:
        result['problems'].append('code of the folder ran: %s' % result['code_run'][:2])
    if outside_changes:
        result['problems'].append('written outside: %s' % outside_changes[:3])
    if result['traceback']:
        result['problems'].append('a traceback')
    if result['crash']:
        result['problems'].append('a native crash (exit %s)' % rc)
    if hang:
        result['problems'].append('hung: killed after %d s' % (
            timeout if c.signal is None else c.signal[1] + SIGNAL_GRACE))
    return result


def classify(name):
    """A case's class: its ``[tag]``, or ``folder`` for the cases of issue 34."""
    match = re.match(r'\[(\w+)\]', name)
    return match.group(1) if match else 'folder'


def summary(results, refusals):
    """The totals line: cases, code run, writes outside, hangs, tracebacks, crashes, data
    lost (a refused command that changed its folder, or a resume that lost or mixed rows),
    and the refusals' exit codes."""
    return dict(
        cases=len(results),
        code_run=sum(bool(r.get('code_run')) for r in results),
        writes_outside=sum(bool(r['outside']) and not r.get('code_run') for r in results),
        hangs=sum(r['hang'] for r in results),
        tracebacks=sum(r['traceback'] for r in results),
        crashes=sum(bool(r.get('crash')) for r in results),
        data_lost=sum(bool(r.get('rows')) or any('progress.txt epochs' in p for p in
                                                 r['problems']) for r in results),
        refusals=len(refusals),
        refusals_exit_2=sum(r['rc'] == 2 for r in refusals),
        cases_with_problems=sum(bool(r['problems']) for r in results))


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
    console_script(top)
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
        totals = summary(results, refusals)
        print(json.dumps(totals))
        for cls in sorted({classify(r['name']) for r in results}):
            part = [r for r in results if classify(r['name']) == cls]
            print('  %-9s %s' % (cls, json.dumps(summary(
                part, [r for r in part if r in refusals]))))
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
