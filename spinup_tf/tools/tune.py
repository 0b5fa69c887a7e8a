"""``python run.py tune ALGO --env ID --trials N``: hyperparameter search with Optuna.

How a study runs:

* **Sampler and pruner** (as rl-baselines3-zoo's ``--optimize``): Optuna's TPE sampler
  (multivariate, with a constant liar for trials that run at once) after ``--startup_trials``
  random ones, and a median pruner: after ``--warmup_epochs`` epochs, a trial whose value at an
  epoch is below the median of the finished trials' values at that epoch is stopped. The value
  is read from each trial's ``progress.txt`` as its epochs are written: ``AverageTestEpRet``
  for the off-policy algorithms, ``AverageEpRet`` (training return) for the on-policy ones. A
  finished trial's objective is its last epoch's value.
* **Search spaces**: ``spinup_tf.tools.search_spaces`` (one table, set against rl-zoo's). Every
  ``run.py`` flag on the command line (``--epochs 10``, ``--steps_per_epoch 1000``,
  ``--seed 3``) is fixed for every trial and leaves the space. A new study's first trial is
  the algorithm's defaults (with those flags), so the study always holds the baseline.
* **Storage**: ``--storage URL``, any SQLAlchemy URL (several machines can share a
  PostgreSQL study); by default ``sqlite:///DATA_DIR/STUDY/study.db``. The study records the
  command's algorithm, env and fixed flags, and refuses another command under its name.
* **Trials are normal runs**: trial ``n`` is ``run.py ALGO --env ID FIXED SAMPLED --exp_name
  ALGO_ENV_trialn --data_dir DATA_DIR/STUDY``, a run folder that ``plot``, ``test_policy`` and
  ``resume`` read; its output goes to ``DATA_DIR/STUDY/logs/``. ``--workers N`` runs N trials
  at once, each in a process forked from the grid's fork server
  (``spinup_tf.tools.launch``), or as Ray tasks with ``--backend ray``.
* **Resumable**: the same command continues the study. A trial left running by a driver that
  died (on this host: its process is gone; elsewhere: no heartbeat for ``GRACE`` s) is taken
  over: resumed from its checkpoint, started again when it has none, or finished from its
  progress file. Ctrl-C stops the running trials at their next step (they save a checkpoint)
  and leaves them for the next call. ``--trials N`` counts every finished trial of the study.
* **At the end**: the best trial as a ready-to-run ``python run.py`` command, and Optuna's
  optimisation history and parameter importances (PED-ANOVA) as PNG files in the study's
  folder.

Bad input (an unknown algorithm, a storage that cannot be opened, ``--trials 0``, a flag the
algorithm does not take) is one ``error:`` line and exit status 2, through ``cli.main``.
"""
import math
import os
import os.path as osp
import shlex
import signal
import socket
import sys
import time

from spinup_tf.utils.errors import UserInputError

HELP = """usage: python run.py tune ALGO --env ENV_ID --trials N [options] [run.py flags ...]

Hyperparameter search with Optuna: TPE sampler, median pruner on each epoch's return
(AverageTestEpRet off-policy, AverageEpRet on-policy), every trial a run folder in
DATA_DIR/STUDY/. The same command continues a killed or interrupted study.

options:
  --trials N           finished trials the study should hold (required)
  --storage URL        SQLAlchemy URL of the study database
                       (default sqlite:///DATA_DIR/STUDY/study.db)
  --study NAME         study name (default tune_ALGO_ENV)
  --data_dir DIR       where the study's folder goes (default ./data)
  --workers N          trials at once (default 1; 'auto': the idle cores)
  --backend local|ray  run trials in local processes (default) or as Ray tasks
  --address ADDR       Ray cluster address (default: start a local one)
  --startup_trials N   random trials before TPE, and finished trials before pruning (5)
  --warmup_epochs N    epochs a trial runs before it can be pruned (default epochs // 3)
  --sampler_seed N     seed of the sampler (default 0)

Any other flag is a run.py flag fixed for every trial, e.g. --epochs 10 --steps_per_epoch 2000;
a flag that is in the search space is then not tuned. Search spaces:
spinup_tf/tools/search_spaces.py (set against rl-baselines3-zoo's).

A study folder is data: one that is a link, or holds a link, a FIFO or a device, a read-only
database, or a trial whose stored folder leaves the study, is refused before anything is
written. For a study from elsewhere run spinup-tf tune ... or python -P -m spinup_tf tune ...

example: python run.py tune td3 --env Pendulum-v1 --trials 20 --epochs 10 --workers 2"""

TUNE_OPTIONS = ('trials', 'storage', 'study', 'data_dir', 'workers', 'backend', 'address',
                'startup_trials', 'warmup_epochs', 'sampler_seed')
NOT_FIXED = ('exp_name', 'datestamp', 'overwrite')  # tune names and places every trial
GRACE = 600.0  # s without a heartbeat before another host's running trial is taken over
HEARTBEAT = 30.0  # s between heartbeats of each running trial
POLL = 1.0  # s between reads of the running trials' progress files
HOST = socket.gethostname()


def main(argv):
    """``run.py tune ...``; returns the exit code. ``UserInputError`` goes to ``cli.main``."""
    if not argv or argv[0] in ('-h', '--help') or '--help' in argv or '-h' in argv:
        print(HELP)
        return 0 if argv else 2
    from spinup_tf.utils.signals import Terminated
    config = parse(argv)

    def terminated(signum, frame):
        raise Terminated()
    signal.signal(signal.SIGTERM, terminated)
    try:
        tuner = Tuner(config)
    except Exception as e:
        raise storage_error(e, config) from None
    try:
        tuner.run()
        return tuner.summary()
    except KeyboardInterrupt as e:
        tuner.stop_all()
        print('[tune] %s: the study is in %s; the same command continues it'
              % ('terminated' if isinstance(e, Terminated) else 'interrupted',
                 safe_url(config.storage)), file=sys.stderr, flush=True)
        return 143 if isinstance(e, Terminated) else 130
    except Exception as e:  # an error mid-study: the running trials stop, checkpointed
        tuner.stop_all()
        raise storage_error(e, config) from None
    except BaseException:
        tuner.stop_all()
        raise


def storage_error(e, c):
    """``e`` as one ``UserInputError`` line when it comes from the study database (SQLAlchemy
    or Optuna's storage, whose errors arrive chained three deep: the cause is the innermost,
    e.g. ``attempt to write a readonly database``); any other exception as it is."""
    if isinstance(e, UserInputError):
        return e
    names = {cls.__module__.split('.')[0] for cls in type(e).__mro__}
    if not names & {'sqlalchemy', 'sqlite3'} and type(e).__name__ != 'StorageInternalError':
        return e
    inner = e
    while inner.__cause__ is not None or inner.__context__ is not None:
        inner = inner.__cause__ or inner.__context__
    text = str(getattr(inner, 'orig', None) or inner).strip().splitlines()
    return UserInputError('the study database %s cannot be used: %s' % (
        safe_url(c.storage), text[0][:300] if text else type(inner).__name__))


# ---------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------
class Config:
    """What ``run.py tune`` was asked: ``algo``, ``env``, ``fixed`` (the run.py tokens fixed
    for every trial), ``fixed_flags`` (their names), ``trials``, ``storage`` (URL),
    ``study``, ``folder`` (the study's folder), ``workers``, ``backend``, ``address``,
    ``startup_trials``, ``warmup_epochs``, ``epochs``, ``metric``, ``sampler_seed``."""


def _split(tokens):
    """``(options, fixed)``: tune's options as ``{name: [raw values]}``, and every other
    token as it was typed (run.py's flags)."""
    options, fixed, key = {}, [], None
    for tok in tokens:
        if tok.startswith('--') and len(tok) > 2:
            name = tok[2:].replace('-', '_')
            key = name if name in TUNE_OPTIONS else None
            if key is not None:
                if key in options:
                    raise UserInputError('flag --%s given twice' % key)
                options[key] = []
                continue
        if key is not None:
            options[key].append(tok)
        else:
            fixed.append(tok)
    return options, fixed


def _one(options, key, default=None):
    vals = options.get(key)
    if vals is None:
        return default
    if len(vals) != 1:
        raise UserInputError('--%s takes one value' % key)
    return vals[0]


def _int(options, key, default, low):
    raw = _one(options, key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < low:
        raise UserInputError('--%s expects an integer of at least %d, got %r' % (key, low, raw))
    return value


def parse(argv):
    """A ``Config`` from ``run.py tune``'s arguments; everything is checked here, before a
    study is opened or a folder written."""
    from spinup_tf.algos import ALGOS, LOOPS
    from spinup_tf.tools.plan import parse_flags, resolve_defaults
    from spinup_tf.tools.search_spaces import SPACES
    algo, tokens = argv[0], argv[1:]
    if algo not in ALGOS:
        raise UserInputError('unknown algorithm %r; tune takes %s' % (algo, ', '.join(SPACES)))
    options, fixed = _split(tokens)
    flags = parse_flags(fixed)
    for key in NOT_FIXED:
        if key in flags:
            raise UserInputError('--%s is not for tune: it names every trial itself '
                                 '(--study names the study)' % key)
    for key, vals in flags.items():
        if len(vals) != 1:
            raise UserInputError('--%s: tune takes one value per flag (a grid is a search '
                                 'space; several values are for run.py ALGO)' % key)
    env_flag = 'env' if 'env' in flags else 'env_name' if 'env_name' in flags else None
    if env_flag is None:
        raise UserInputError('missing --env ENV_ID (e.g. --env Pendulum-v1)')
    c = Config()
    c.algo, c.env = algo, flags[env_flag][0]
    if not isinstance(c.env, str):
        raise UserInputError('--env expects a gymnasium id, got %r' % (c.env,))
    c.fixed = _without(fixed, env_flag)
    c.fixed_flags = sorted(k for k in flags if k != env_flag)
    if 'ac_kwargs' in flags:  # it sets the network: --hid and --act leave the space too
        c.fixed_flags += ['hid', 'act']
    c.trials = _int(options, 'trials', None, 1)
    if c.trials is None:
        raise UserInputError('missing --trials N (the number of trials the study should hold)')
    c.backend, c.address = _one(options, 'backend', 'local'), _one(options, 'address')
    c.workers = _workers(options, c.backend, c.address)
    c.startup_trials = _int(options, 'startup_trials', 5, 0)
    c.sampler_seed = _int(options, 'sampler_seed', 0, 0)
    c.study = _one(options, 'study', 'tune_%s_%s' % (algo, c.env))
    if not c.study or os.sep in c.study or c.study.startswith('.'):
        raise UserInputError('--study expects a name without %r, got %r' % (os.sep, c.study))
    c.data_dir = osp.abspath(_one(options, 'data_dir', 'data'))
    c.folder = osp.join(c.data_dir, c.study)
    c.storage = _one(options, 'storage')
    c.default_storage = c.storage is None
    if c.storage is None:
        c.storage = 'sqlite:///' + osp.join(c.folder, 'study.db')
    _check_run_flags(c)  # the flags' names and types, the env, the preset
    defaults = resolve_defaults(algo, c.env, flags.get('preset', [None])[0])
    c.epochs = flags['epochs'][0] if 'epochs' in flags else defaults.get('epochs')
    c.warmup_epochs = _int(options, 'warmup_epochs', int(c.epochs) // 3, 0)
    c.metric = 'AverageTestEpRet' if LOOPS[algo] == 'off_policy' else 'AverageEpRet'
    c.defaults = _effective_defaults(c, defaults, flags)
    c.made_by = {'algo': algo, 'env': c.env,
                 'flags': {k: repr(v[0]) for k, v in flags.items() if k != env_flag}}
    return c


def _workers(options, backend, address):
    """Trials at once: ``--workers N`` (``auto``: the idle cores, with the local backend)."""
    from spinup_tf.tools.launch import BACKENDS, resolve_workers
    if backend not in BACKENDS:
        raise UserInputError('--backend expects one of %s, got %r'
                             % (', '.join(BACKENDS), backend))
    if address is not None and backend != 'ray':
        raise UserInputError('--address ADDR is for --backend ray')
    if backend == 'ray':
        from spinup_tf.tools.ray_backend import check_ray
        try:
            check_ray()
        except ImportError as e:
            raise UserInputError(str(e)) from None
    if _one(options, 'workers') == 'auto' and backend == 'local':
        return resolve_workers('auto')
    return _int(options, 'workers', 1, 1)


def _without(tokens, flag):
    """``tokens`` less ``--flag`` and its values."""
    out, skip = [], False
    for tok in tokens:
        if tok.startswith('--') and len(tok) > 2:
            skip = tok[2:].replace('-', '_') == flag
        if not skip:
            out.append(tok)
    return out


def _check_run_flags(c):
    """Every fixed flag, the env and the algorithm's spaces, checked as ``run.py ALGO`` would
    (nothing is written: the check runs in a temporary folder)."""
    import tempfile
    from spinup_tf.tools.plan import build_runs
    with tempfile.TemporaryDirectory() as tmp:
        build_runs(c.algo, ['--env', c.env] + c.fixed + ['--data_dir', tmp])


def _effective_defaults(c, defaults, flags):
    """``{flag: value}`` a trial gets without sampled flags (``hid``/``act`` as tokens)."""
    from spinup_tf.tools.search_spaces import DEFAULT_NETS
    out = dict(defaults)
    out.update(DEFAULT_NETS[c.algo])
    ac = defaults.get('ac_kwargs') or {}
    if ac.get('hidden_sizes'):
        out['hid'] = '[%s]' % ','.join(str(h) for h in ac['hidden_sizes'])
    if isinstance(ac.get('activation'), str):
        out['act'] = ac['activation']
    out.update({k: v[0] for k, v in flags.items()})
    return out


# ---------------------------------------------------------------------------------------
# The study
# ---------------------------------------------------------------------------------------
class Running:
    """A trial this driver runs: its Optuna ``trial``, run folder and runner handle."""

    def __init__(self, trial, run_dir, handle, reported=()):
        self.trial, self.run_dir, self.handle = trial, run_dir, handle
        self.number = trial.number
        self.reported = set(reported)  # epochs already reported to the study
        self.pruned = False
        self.started = time.time()


def read_progress(run_dir):
    """The complete rows of a trial's progress file (``spinup_tf.utils.progress_file``; a
    row still being written is left out) as a ``Table``; an empty one when there is none
    yet, or when it cannot be read (a trial whose file is not a table fails for lack of
    values, said once by ``_tell_finished``)."""
    from spinup_tf.utils.progress_file import Table, read_run_table
    try:
        return read_run_table(run_dir, partial='drop')
    except (OSError, UserInputError):
        return Table(osp.join(run_dir, 'progress.txt'), [], {}, 0)


def metric_values(table, metric):
    """``[(epoch, value)]`` of the rows whose ``metric`` is a finite number."""
    if metric not in table:
        return []
    values = table[metric]
    epochs = table['Epoch'] if 'Epoch' in table else range(1, len(table) + 1)
    out = []
    for epoch, value in zip(epochs, values):
        value, epoch = float(value), float(epoch)
        if math.isfinite(value) and math.isfinite(epoch):
            out.append((int(epoch), value))
    return out


def _pid_alive(pid):
    """Whether ``pid`` is a live ``tune`` driver on this host."""
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError, TypeError):
        return False
    try:
        with open('/proc/%d/cmdline' % int(pid), 'rb') as f:
            return b'tune' in f.read()
    except OSError:
        return True


def _folder_in_use(run_dir):
    """Whether a live process holds the run folder's lock (``utils.run_folder``)."""
    import fcntl
    from spinup_tf.utils.run_folder import open_lock_file
    path = osp.join(run_dir, '.lock')
    if not osp.lexists(path):
        return False
    with open_lock_file(run_dir) as f:  # a link or a FIFO there: one UserInputError
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return False


def safe_url(url):
    """The storage URL with its password hidden."""
    try:
        from sqlalchemy.engine import make_url
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url


def check_study_folder(c):
    """Refuse, before anything is written, a study whose folder or database would make
    ``tune`` write outside it or wait forever: the study folder (made inside ``--data_dir``)
    a symbolic link, anything inside it a link, a FIFO, a device or a socket (its trials'
    run folders, ``logs/``, the figures, ``study.db`` and SQLite's ``-journal``/``-wal``
    names: the helpers ``run`` uses, ``spinup_tf.utils.safe_files``), and an SQLite database
    that is not a regular file or cannot be written."""
    from spinup_tf.utils.safe_files import check_components, check_own_files
    check_components(c.data_dir, c.folder, what='study folder')
    if osp.isdir(c.folder):
        check_own_files(c.folder, what='a study folder')
    check_sqlite_files(c)


def sqlite_path(url):
    """The database file of an ``sqlite://`` URL (None for another database or in memory)."""
    try:
        from sqlalchemy.engine import make_url
        parsed = make_url(url)
    except Exception:
        return None
    if not parsed.get_backend_name() == 'sqlite' or parsed.database in (None, '', ':memory:'):
        return None
    return parsed.database


def check_sqlite_files(c):
    from spinup_tf.utils.safe_files import check_replaceable
    path = sqlite_path(c.storage) if isinstance(c.storage, str) else None
    if path is None:
        return
    for name in (path, path + '-journal', path + '-wal', path + '-shm'):
        try:
            check_replaceable(name)
        except UserInputError as e:
            raise UserInputError('the study database: %s' % e) from None
    folder = osp.dirname(osp.abspath(path))
    if osp.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        raise UserInputError('the study database %s is read-only here (no write permission); '
                             'a study writes every trial to it' % path)
    if osp.isdir(folder) and not os.access(folder, os.W_OK | os.X_OK):
        raise UserInputError('the folder of the study database %s is read-only here; SQLite '
                             'writes its journal beside the database' % path)


def open_storage(c):
    """The study's ``RDBStorage``; a ``UserInputError`` when the URL cannot be opened."""
    import optuna
    if not isinstance(c.storage, str) or '://' not in c.storage:
        raise UserInputError('--storage expects an SQLAlchemy URL such as sqlite:///study.db '
                             'or postgresql://user@host/db, got %r' % (c.storage,))
    check_study_folder(c)
    if c.default_storage:
        os.makedirs(c.folder, exist_ok=True)
    try:
        return optuna.storages.RDBStorage(c.storage)
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise UserInputError('cannot open the study storage %s: %s' % (
            safe_url(c.storage), msg[0] if msg else type(e).__name__)) from None


class Tuner:
    """One driver of one study: asks, runs, prunes and tells its trials."""

    def __init__(self, c):
        import optuna
        from spinup_tf.tools.search_spaces import as_params, space
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.c = c
        self.optuna = optuna
        self.dims = space(c.algo, c.fixed_flags)
        storage = open_storage(c)
        made = c.made_by
        try:
            existing = optuna.load_study(study_name=c.study, storage=storage)
        except KeyError:
            existing = None
        if existing is not None:
            recorded = existing.user_attrs.get('made_by')
            if recorded is not None and recorded != made:
                raise UserInputError(
                    'study %s in %s was made by run.py tune %s --env %s%s; continue it with '
                    'those flags, or give this one another --study' % (
                        c.study, safe_url(c.storage), recorded['algo'], recorded['env'],
                        ''.join(' --%s %s' % kv for kv in sorted(recorded['flags'].items()))))
        if existing is not None:  # before anything is written: where its trials live
            S = optuna.trial.TrialState
            for t in existing.get_trials(deepcopy=False, states=(S.RUNNING,)):
                self._run_dir(t)
        n_before = len(existing.trials) if existing is not None else 0
        # Seeded by the trials so far, so that a resumed study does not draw its first
        # trials' random parameters again.
        sampler = optuna.samplers.TPESampler(n_startup_trials=c.startup_trials,
                                             multivariate=True, constant_liar=True,
                                             seed=c.sampler_seed + n_before)
        pruner = optuna.pruners.MedianPruner(n_startup_trials=c.startup_trials,
                                             n_warmup_steps=c.warmup_epochs)
        self.study = optuna.create_study(study_name=c.study, storage=storage, sampler=sampler,
                                         pruner=pruner, direction='maximize',
                                         load_if_exists=True)
        if existing is None:
            self.study.set_user_attr('made_by', made)
            self.study.set_user_attr('metric', c.metric)
            params, complete = as_params(self.dims, c.defaults)
            self.study.enqueue_trial(params, user_attrs={'defaults': complete})
            print('[tune] new study %s in %s; trial 0 is the defaults%s'
                  % (c.study, safe_url(c.storage), '' if complete else
                     ' (those inside the search space)'), flush=True)
        else:
            print('[tune] continuing study %s in %s: %d trials so far'
                  % (c.study, safe_url(c.storage), n_before), flush=True)
        from spinup_tf.tools.trial_runners import LocalRunner, RayRunner
        self.runner = RayRunner(c.address) if c.backend == 'ray' else LocalRunner(c.workers)
        print('[tune] %d trial%s at once; threads: %s' % (
            c.workers, '' if c.workers == 1 else 's', self.runner.line), flush=True)
        self.running = {}
        self.beat = 0.0
        self.t0 = time.time()

    # -- counting -------------------------------------------------------------------------
    def _trials(self, *states):
        return self.study.get_trials(deepcopy=False, states=states or None)

    def _finished(self):
        S = self.optuna.trial.TrialState
        return len(self._trials(S.COMPLETE, S.PRUNED, S.FAIL))

    # -- the loop -------------------------------------------------------------------------
    def run(self):
        S = self.optuna.trial.TrialState
        os.makedirs(osp.join(self.c.folder, 'logs'), exist_ok=True)
        while True:
            while len(self.running) < self.c.workers:
                orphan = next(self._orphans(), None)
                if orphan is not None:
                    self._adopt(orphan)
                    continue
                if self._finished() + len(self._trials(S.RUNNING)) >= self.c.trials:
                    break
                self._start(self.study.ask())
            if not self.running:
                break
            self.runner.wait([r.handle for r in self.running.values()], POLL)
            for r in list(self.running.values()):
                self._follow(r)
            self._heartbeat()

    def _orphans(self):
        """RUNNING trials no live driver follows (see the module's docstring)."""
        S = self.optuna.trial.TrialState
        for t in self._trials(S.RUNNING):
            if t.number in self.running:
                continue
            host, pid = t.user_attrs.get('host'), t.user_attrs.get('pid')
            if host == HOST:
                if pid == os.getpid() or _pid_alive(pid):
                    continue
            elif host is not None:
                beat = t.user_attrs.get('heartbeat') or t.datetime_start.timestamp()
                if time.time() - beat < GRACE:
                    continue
            run_dir = self._run_dir(t)
            if run_dir and _folder_in_use(run_dir):
                continue  # a left-over process still trains it; taken over once it ends
            yield t

    def _run_dir(self, trial):
        """The run folder a trial's ``run_dir`` attribute names, resolved inside the study
        folder (stored relative to it; an absolute path from an older version must lie
        inside it), or None when none is stored. A path that leaves the study folder, or a
        link on the way, is a ``UserInputError``: the database is data too, and a study only
        ever writes inside its own folder."""
        from spinup_tf.utils.safe_files import check_components
        stored = trial.user_attrs.get('run_dir')
        if stored is None:
            return None
        path = osp.abspath(osp.join(self.c.folder, stored)) if isinstance(stored, str) \
            else None
        rel = osp.relpath(path, self.c.folder) if path else osp.pardir
        parts = rel.split(os.sep)
        if len(parts) != 2 or osp.pardir in parts or osp.curdir in parts:
            raise UserInputError(
                'study %s: trial %d\'s run folder in the database, %r, is not a run folder '
                'inside the study folder %s; a study only touches its own folder, so nothing '
                'was changed (remove that study, or give this one another --study)'
                % (self.c.study, trial.number, str(stored)[:200], self.c.folder))
        check_components(self.c.folder, path, what='trial folder')
        return path

    def _experiment(self, number, flags, restart=False):
        from spinup_tf.tools.plan import build_runs
        from spinup_tf.tools.search_spaces import flag_tokens
        exp_name = '%s_%s_trial%d' % (self.c.algo, self.c.env, number)
        tokens = ['--env', self.c.env] + self.c.fixed + flag_tokens(flags) + \
            ['--exp_name', exp_name, '--data_dir', self.c.folder]
        plan = build_runs(self.c.algo, tokens + (['--overwrite'] if restart else []))
        return plan.experiments[0]

    def _own(self, trial, run_dir):
        trial.set_user_attr('host', HOST)
        trial.set_user_attr('pid', os.getpid())
        trial.set_user_attr('run_dir', osp.relpath(run_dir, self.c.folder))  # movable
        trial.set_user_attr('heartbeat', time.time())

    def _log(self, number):
        return osp.join(self.c.folder, 'logs', '%s_%s_trial%d.log' % (self.c.algo, self.c.env,
                                                                      number))

    def _start(self, trial, restart=False, reported=()):
        from spinup_tf.tools.search_spaces import suggest
        flags = suggest(trial, self.dims)
        try:
            experiment = self._experiment(trial.number, flags, restart)
        except UserInputError:  # e.g. its folder holds another study's run
            self.study.tell(trial.number, state=self.optuna.trial.TrialState.FAIL)
            raise
        self._own(trial, experiment.output_dir)
        handle = self.runner.start(experiment, self._log(trial.number))
        self.running[trial.number] = Running(trial, experiment.output_dir, handle, reported)
        print('[tune] trial %d%s: %s' % (trial.number, ' (again)' if restart else '',
                                         ' '.join(self._shown(flags)) or 'the defaults'),
              flush=True)

    def _shown(self, flags):
        from spinup_tf.tools.search_spaces import flag_tokens
        out = []
        for flag, value in flags.items():
            if isinstance(value, float):
                value = float('%.4g' % value)
            out += flag_tokens({flag: value})
        return out

    def _adopt(self, frozen):
        """Take over a trial whose driver died: finish, resume or start it again."""
        from spinup_tf.tools.grid import Experiment
        from spinup_tf.tools.resume import resume
        from spinup_tf.utils.checkpoint import has_checkpoint
        trial = self.optuna.trial.Trial(self.study, frozen._trial_id)
        run_dir = self._run_dir(frozen)
        rows = read_progress(run_dir) if run_dir else []
        reported = frozen.intermediate_values
        if run_dir and self.c.epochs and len(rows) >= self.c.epochs:
            r = Running(trial, run_dir, None, reported)
            self._report(r)
            self._tell_finished(r, 'ok', '')
            return
        if run_dir and has_checkpoint(run_dir):
            self._own(trial, run_dir)
            experiment = Experiment(osp.basename(osp.dirname(run_dir)), 0, resume,
                                    {'run_dir': run_dir}, run_dir)
            handle = self.runner.start(experiment, self._log(trial.number))
            self.running[trial.number] = Running(trial, run_dir, handle, reported)
            print('[tune] trial %d: resumed from its checkpoint (its driver had stopped)'
                  % trial.number, flush=True)
            return
        self._start(trial, restart=True, reported=reported)

    def _report(self, r):
        """Report the epochs written since the last look; True when the pruner stops it."""
        new = False
        for epoch, value in metric_values(read_progress(r.run_dir), self.c.metric):
            if epoch in r.reported:
                continue
            r.trial.report(value, epoch)
            r.reported.add(epoch)
            new = True
            print('[tune] trial %d epoch %d: %s %.1f' % (r.number, epoch, self.c.metric,
                                                          value), flush=True)
        return new and r.trial.should_prune()

    def _follow(self, r):
        if not r.pruned and self._report(r):
            r.pruned = True
            r.handle.stop()
            epoch = max(r.reported)
            self.study.tell(r.number, state=self.optuna.trial.TrialState.PRUNED)
            print('[tune] trial %d pruned at epoch %d: below the median of the finished '
                  'trials there' % (r.number, epoch), flush=True)
        if r.handle.done():
            status, error = r.handle.outcome()
            del self.running[r.number]
            if not r.pruned:
                self._report(r)
                self._tell_finished(r, status, error)

    def _tell_finished(self, r, status, error):
        S = self.optuna.trial.TrialState
        values = metric_values(read_progress(r.run_dir), self.c.metric)
        if status == 'ok' and values:
            self.study.tell(r.number, values[-1][1])
            best = self.study.best_trial
            took = '%.0f s' % (time.time() - r.started) if r.handle is not None else \
                'run to its end while no driver followed it'
            print('[tune] trial %d finished: %s %.1f (%s); best so far: trial %d, %.1f'
                  % (r.number, self.c.metric, values[-1][1], took, best.number, best.value),
                  flush=True)
        else:
            self.study.tell(r.number, state=S.FAIL)
            print('[tune] trial %d failed: %s (log: %s)' % (
                r.number, error or 'no %s in its progress file' % self.c.metric,
                self._log(r.number)), file=sys.stderr, flush=True)

    def _heartbeat(self):
        if time.time() - self.beat < HEARTBEAT:
            return
        self.beat = time.time()
        for r in self.running.values():
            if not r.pruned:  # a pruned trial is finished in the study while its run stops
                r.trial.set_user_attr('heartbeat', self.beat)

    def stop_all(self):
        """Ctrl-C: stop the running trials at their next step (each saves a checkpoint);
        they stay RUNNING in the study, for the next call to resume."""
        if not self.running:
            return
        print('[tune] interrupted: stopping %d running trial(s); each saves a checkpoint and '
              'the same command continues the study' % len(self.running), file=sys.stderr,
              flush=True)
        for r in self.running.values():
            r.handle.stop()
        try:
            while any(not r.handle.done() for r in self.running.values()):
                self.runner.wait([r.handle for r in self.running.values()], POLL)
        except KeyboardInterrupt:
            for r in self.running.values():
                r.handle.stop(signal.SIGKILL)
        self.runner.close()

    # -- the end --------------------------------------------------------------------------
    def summary(self):
        """Print the study's result and the best trial's command; save the figures.
        Returns the exit code (1 when no trial completed)."""
        S = self.optuna.trial.TrialState
        self.runner.close()
        counts = {s: len(self._trials(s)) for s in (S.COMPLETE, S.PRUNED, S.FAIL)}
        print('\n[tune] study %s: %d complete, %d pruned, %d failed (%.0f s in this call); '
              'storage %s' % (self.c.study, counts[S.COMPLETE], counts[S.PRUNED],
                              counts[S.FAIL], time.time() - self.t0, safe_url(self.c.storage)))
        if not counts[S.COMPLETE]:
            print('[tune] no trial completed: nothing to recommend', file=sys.stderr)
            return 1
        best = self.study.best_trial
        baseline = [t for t in self._trials(S.COMPLETE) if t.user_attrs.get('defaults')]
        print('[tune] best: trial %d, %s %.1f (last epoch)%s' % (
            best.number, self.c.metric, best.value,
            '; the defaults (trial %d): %.1f' % (baseline[0].number, baseline[0].value)
            if baseline else ''))
        print('run it:\n  ' + best_command(self.c, best.params, self.dims))
        for path in save_figures(self.study, self.c):
            print('saved %s' % path)
        return 0


def best_command(c, params, dims):
    """The ``python run.py`` command of a trial's parameters (shell-quoted)."""
    from spinup_tf.tools.search_spaces import flag_tokens

    class Fixed:  # replays the recorded parameters through the same suggest() path
        def suggest_categorical(self, name, choices):
            return params[name]

        def suggest_float(self, name, low, high, log=False):
            return params[name]

    from spinup_tf.tools.search_spaces import suggest
    tokens = ['python', 'run.py', c.algo, '--env', c.env] + c.fixed + \
        flag_tokens(suggest(Fixed(), [d for d in dims if d.name in params]))
    return ' '.join(shlex.quote(t) for t in tokens)


def save_figures(study, c):
    """Optuna's optimisation history and parameter importances (matplotlib) as PNG files in
    the study's folder; returns the paths written."""
    from spinup_tf.tools.plot import style
    with style():
        return _save_figures(study, c)


def _save_figures(study, c):
    import warnings
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as ovm
    from spinup_tf.tools.plot import plain, save_figure
    os.makedirs(c.folder, exist_ok=True)
    written = []
    for name, draw in (('history', ovm.plot_optimization_history),
                       ('importance', ovm.plot_param_importances)):
        path = osp.join(c.folder, '%s.png' % name)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # optuna.visualization.matplotlib is experimental
            try:
                ax = draw(study)
            except (ValueError, RuntimeError) as e:  # e.g. importances need 2 complete trials
                print('[tune] no %s figure: %s' % (name, str(e).splitlines()[0]),
                      file=sys.stderr)
                continue
        fig = ax.figure
        fig.set_size_inches(8, 5)
        for loc in ('left', 'center'):  # optuna titles its axes on the left
            if ax.get_title(loc=loc):
                ax.set_title(plain('%s: %s on %s, %s' % (ax.get_title(loc=loc), c.algo, c.env,
                                                         c.metric)), loc=loc, fontsize=10)
        fig.tight_layout()
        try:
            save_figure(fig, path, dpi=100)  # a fresh file renamed into place, never a link
        except UserInputError as e:
            print('[tune] no %s figure: %s' % (name, e), file=sys.stderr)
            continue
        finally:
            plt.close(fig)
        written.append(path)
    return written
