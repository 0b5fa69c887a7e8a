"""Command line: ``python run.py ALGO --env ENV_ID [--kwarg VALUE ...]``, ``plot``, ``test_policy``.

Spinning Up's conventions:

* every keyword argument of the algorithm is a flag (``--epochs 5``, ``--pi_lr 3e-4``);
* ``--hid "[256,256]"`` and ``--act relu`` fill ``ac_kwargs`` (hidden sizes, activation);
* ``--exp_name``, ``--data_dir`` (default ``./data``), ``--datestamp`` choose the run folder
  ``DATA_DIR/EXP_NAME/EXP_NAME_s{seed}/``;
* several values after a flag make a grid (``--seed 0 10 20``; ``spinup_tf.tools.grid``), run one
  variant after the other, or ``--workers N`` at once in separate processes, or as Ray tasks
  with ``--backend ray [--address ADDR]``; a summary table ends a grid run;
* values are parsed with ``ast.literal_eval`` (never ``eval``); what does not parse is a string.
"""
import ast
import collections
import os
import os.path as osp
import signal
import sys

import numpy as np

from spinup_tf.algos import ALGOS, LOOPS, algo_docstring, check_spaces, get_algo, \
    option_help, parameters
from spinup_tf.algos.env_defaults import env_defaults, describe_env_defaults
from spinup_tf.utils.errors import UserInputError, DiskFullError
from spinup_tf.utils.budget import check_can_train, check_replay_memory
from spinup_tf.utils.run_folder import check_writable
from spinup_tf.utils.safe_files import check_no_symlinks
from spinup_tf.utils.ranges import check_ranges, check_ac_kwargs
from spinup_tf.utils.flags import ACTIVATIONS
from spinup_tf.utils.envs import EnvFn, check_env_id, make_checked_env, make_env
from spinup_tf.utils.signals import Terminated, install_stop_handlers
from spinup_tf.tools.grid import ExperimentGrid
from spinup_tf.tools.algo_call import AlgoThunk, check_activation, quirk_parameters
from spinup_tf.tools.launch import BACKENDS, announce, check_launch, run_experiments
from spinup_tf.tools.ray_backend import RayStartError

SUBCOMMANDS = ('plot', 'test_policy', 'resume', 'tune')
RUN_OPTIONS = ('exp_name', 'data_dir', 'datestamp', 'overwrite', 'preset', 'env_kwargs')
LAUNCH_OPTIONS = ('workers', 'backend', 'address')
NOT_FLAGS = ('env_fn', 'actor_critic', 'logger_kwargs')
USAGE = """usage:
  python run.py ALGO --env ENV_ID [--flag VALUE ...]   train (ALGO: {algos})
  python run.py ALGO --preset NAME [--flag VALUE ...]  a source document's configuration
  python run.py ALGO --help                            the algorithm's flags and docstring
  python run.py plot DIR [DIR ...] [--save FILE] ...   learning curves
  python run.py test_policy DIR [--episodes N] [--len L] [--norender]
  python run.py resume DIR                             continue a killed or interrupted run
  python run.py tune ALGO --env ENV_ID --trials N      hyperparameter search (Optuna)
"""
RESUME_HELP = """usage: python run.py resume RUN_DIR

Continue a killed or interrupted run from its folder: the algorithm, its hyperparameters,
the env id and its keyword arguments come from RUN_DIR/config.json, the state from
RUN_DIR/checkpoint/ (written every save_freq epochs, at the last one and on Ctrl-C).
Progress rows are appended to RUN_DIR/progress.txt after the rows the checkpoint covers."""


def main(argv=None):
    """Entry point; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except UserInputError as e:
        print('error: %s' % e, file=sys.stderr)
        return 2
    except FloatingPointError as e:
        print('error: %s' % e, file=sys.stderr)
        return 1
    except DiskFullError as e:
        print('error: %s' % e, file=sys.stderr)
        return 1
    except OSError as e:  # before or around a run: a folder that cannot be written, a full disk
        import errno
        what = 'no space left on device' if e.errno == errno.ENOSPC else \
            (e.strerror or str(e)).lower()
        print('error: cannot write %s: %s' % (e.filename or 'the run folder', what),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Terminated (SIGTERM) too
        print(interrupt_message(e), file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130


def interrupt_message(e):
    """What a stopped run left, said truly: ``run_loop`` tags the interrupt with the run
    folder and the epochs logged; an untagged one came before training (or in a grid, whose
    workers report their own runs)."""
    word = 'terminated' if isinstance(e, Terminated) else 'interrupted'
    folder = getattr(e, 'run_folder', None)
    if folder is None:
        return '%s before training started (or in a grid: see each run above)' % word
    done = getattr(e, 'epochs_logged', 0)
    rows = ('progress.txt holds epochs 1-%d' % done if done > 1 else
            'progress.txt holds epoch 1' if done == 1 else
            'no epoch had finished, so there is no progress row yet')
    return ('%s: %s; the model and a checkpoint were saved: continue with '
            'python run.py resume %s' % (word, rows, folder))


def _raise_terminated(signum, frame):
    raise Terminated()


def _dispatch(argv):
    usage = USAGE.format(algos=', '.join(ALGOS))
    if not argv or argv[0] in ('-h', '--help', 'help'):
        print(usage)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == 'plot':
        from spinup_tf.tools.plot import main as plot_main
        return plot_main(rest)
    if cmd == 'test_policy':
        from spinup_tf.tools.test_policy import main as test_policy_main
        return test_policy_main(rest)
    if cmd == 'tune':
        from spinup_tf.tools.tune import main as tune_main
        return tune_main(rest)
    if cmd == 'resume':
        if rest and rest[0] in ('-h', '--help'):
            print(RESUME_HELP)
            return 0
        if len(rest) != 1 or rest[0].startswith('-'):
            raise UserInputError('usage: python run.py resume RUN_DIR')
        from spinup_tf.tools.resume import resume
        install_stop_handlers()
        resume(rest[0])
        return 0
    if cmd not in ALGOS:
        raise UserInputError('unknown algorithm %r; valid commands: %s'
                             % (cmd, ', '.join(list(ALGOS) + list(SUBCOMMANDS))))
    if '--help' in rest or '-h' in rest:
        print(algo_help(cmd))
        return 0
    plan = build_runs(cmd, rest)
    if plan.workers == 1 and plan.backend == 'local':
        install_stop_handlers()  # training runs here: stop between two env steps
    else:
        signal.signal(signal.SIGTERM, _raise_terminated)  # the grid stops its workers
    if len(plan.experiments) == 1 and plan.workers == 1 and plan.backend == 'local':
        fn, kwargs = plan.experiments[0]
        fn(**kwargs)  # one run, here: its errors go to main() as they are
        return 0
    if len(plan.experiments) > 1:
        plan.grid.print()
    announce(plan.experiments)
    try:
        results = run_experiments(plan.experiments, workers=plan.workers,
                                  backend=plan.backend, address=plan.address)
    except RayStartError as e:
        raise UserInputError(str(e)) from None
    return 0 if all(r.ok for r in results) else 1


def _default_actor_critic(name):
    """The algorithm's default ``actor_critic`` function (imports TensorFlow)."""
    import inspect
    param = inspect.signature(get_algo(name)).parameters.get('actor_critic')
    return param.default if param is not None else None


def algo_help(name):
    """Usage line, flags with defaults, and the algorithm's docstring (read from the source:
    TensorFlow is not imported)."""
    lines = ['usage: python run.py %s --env ENV_ID [--flag VALUE ...]' % name, '',
             'flags (defaults):']
    comments = option_help(name)
    for key, param in parameters(name).items():
        if key in NOT_FLAGS:
            continue
        line = '  --%-22s %-8r' % (key, param.default)
        lines.append(line + ('  ' + comments[key] if key in comments else ''))
    lines += ['', "a source document's quirks (off: Spinning Up's behaviour; the presets set them):"]
    from spinup_tf.reproductions.hooks import quirk_flags
    for key, flag in quirk_flags(LOOPS[name]).items():
        lines.append('  --%-22s %-8r  %s' % (key, flag.default, flag.help))
    lines += ['', 'run options:']
    lines += ['  --%-22s %s' % ('env', 'gymnasium id (required)'),
              '  --%-22s %s' % ('hid', 'hidden sizes, e.g. "[256,256]" (ac_kwargs)'),
              '  --%-22s %s' % ('act', 'activation: ' + ', '.join(ACTIVATIONS)),
              '  --%-22s %s' % ('env_kwargs', 'keyword arguments of gym.make, e.g. '
                                              '"{\'continuous\': True}"'),
              '  --%-22s %s' % ('exp_name', 'experiment name (default ALGO_ENV)'),
              '  --%-22s %s' % ('data_dir', 'where run folders go (default ./data)'),
              '  --%-22s %s' % ('datestamp', 'prefix folders with date and time'),
              '  --%-22s %s' % ('overwrite', 'replace an earlier run (moved aside to FOLDER.trash-TIME)'),
              '  --%-22s %s' % ('workers', "variants run at once, each in its own process "
                                           "(default 1; 'auto': the cores other processes leave idle)"),
              '  --%-22s %s' % ('backend', 'local (default) or ray'),
              '  --%-22s %s' % ('address', 'Ray cluster address (default: start a local one)'),
              '  --%-22s %s' % ('preset', "a seed's configuration (below); later flags "
                                          'override it'),
              '', 'Several values after a flag run a grid: --seed 0 10 20', ''] + \
        _describe_presets(name) + [''] + describe_env_defaults(name) + ['',
              algo_docstring(name)]
    return '\n'.join(lines)


def parse_flags(tokens):
    """``['--a', '1', '2', '--b', 'x']`` -> ``{'a': [1, 2], 'b': ['x']}`` (literal_eval'd)."""
    flags, key = {}, None
    for tok in tokens:
        if tok.startswith('--') and len(tok) > 2:
            key = tok[2:].replace('-', '_')
            if key in flags:
                raise UserInputError('flag --%s given twice' % key)
            flags[key] = []
        elif key is None:
            raise UserInputError('expected a --flag before %r' % tok)
        else:
            flags[key].append(parse_value(tok))
    for key, vals in flags.items():
        if not vals:
            if key in ('datestamp', 'overwrite'):
                vals.append(True)
            else:
                raise UserInputError('flag --%s needs a value' % key)
    return flags


def parse_value(token):
    """A Python literal when ``token`` is one, else the string itself."""
    try:
        return ast.literal_eval(token)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return token


def _coerce(name, key, value, default):
    """Check ``value`` against the type of the default of ``--key``."""
    def bad(kind):
        return UserInputError('--%s expects %s, got %r' % (key, kind, value))
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise bad('True or False')
        return value
    if isinstance(default, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad('an integer')
        return value
    if isinstance(default, float):
        if key == 'alpha' and value == 'auto':  # SAC's automatic temperature
            return value
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise bad('a number' + (" or 'auto'" if key == 'alpha' else ''))
        return float(value)
    if isinstance(default, str) and not isinstance(value, str):
        raise bad('a string')
    return value


def _describe_presets(name):
    from spinup_tf.reproductions.presets import describe_presets
    return describe_presets(name)


def _get_preset(name, preset_name):
    from spinup_tf.reproductions.presets import get_preset
    return get_preset(name, preset_name)


class _CliGrid(ExperimentGrid):
    """The command line's grid: a variant's name part is ``_{flag}{value}`` with the value as
    typed (``_hid64-64``, ``_pi_lr0.0003``, ``_envPendulum-v1``, ``_update_at_episode_endTrue``)."""

    def _name_part(self, param_name, vals, value):
        return '_%s%s' % (param_name, _value_name(value))


Plan = collections.namedtuple('Plan', 'grid experiments workers backend address')


def build_runs(name, tokens):
    """Turn the flags of ``run.py ALGO ...`` into a ``Plan``: the grid, its experiments (one
    ``grid.Experiment`` per variant; each unpacks as ``fn, kwargs``) and how to launch them.

    Everything is checked before anything runs or is written: flag names and types, env ids,
    the algorithm's spaces, the launch options (``--workers``, ``--backend``, ``--address``,
    ray importable), that no two variants share a folder and that no run folder already holds
    results.
    """
    params = parameters(name)
    flags = parse_flags(tokens)

    preset = None
    if 'preset' in flags:
        if len(flags['preset']) != 1:
            raise UserInputError('--preset takes one value')
        preset_name = flags['preset'][0]
        preset = _get_preset(name, preset_name)
    env_ids = flags.pop('env', None) or flags.pop('env_name', None)
    if not env_ids and preset is not None:
        env_ids = [preset.env]
    if not env_ids:
        raise UserInputError('missing --env ENV_ID (e.g. --env Pendulum-v1)')
    env_kwargs = _env_kwargs(flags.pop('env_kwargs', None))
    env_sizes = {}  # env id -> (observation size, action size): the replay buffer's memory
    for env_id in env_ids:
        if not isinstance(env_id, str):
            raise UserInputError('--env expects a gymnasium id, got %r' % (env_id,))
        check_env_id(env_id)
        env = _make_env_with(env_id, env_kwargs)
        try:
            check_spaces(name, env)
            env_sizes[env_id] = tuple(int(np.prod(space.shape or (1,))) for space in
                                      (env.observation_space, env.action_space))
        finally:
            env.close()

    run_opts = {}
    for key in RUN_OPTIONS + LAUNCH_OPTIONS:
        if key in flags:
            vals = flags.pop(key)
            if len(vals) != 1:
                raise UserInputError('--%s takes one value' % key)
            run_opts[key] = vals[0]
    for key in ('datestamp', 'overwrite'):
        if not isinstance(run_opts.get(key, False), bool):
            raise UserInputError('--%s expects True or False' % key)
    workers, backend, address = _launch_options(run_opts)

    # Shorthands for ac_kwargs.
    ac_grid = {}
    if 'hid' in flags:
        ac_grid['hidden_sizes'] = [_hidden_sizes(v) for v in flags.pop('hid')]
    if 'act' in flags:
        ac_grid['activation'] = flags.pop('act')
        for v in ac_grid['activation']:
            check_activation(v)

    if preset is not None or any(k not in params for k in flags):
        params = dict(params, **quirk_parameters(name))  # a source document's quirk flags
    grid_flags = {}
    for key, vals in flags.items():
        if key not in params or key in NOT_FLAGS:
            valid = [k for k in params if k not in NOT_FLAGS] + ['env', 'hid', 'act'] + \
                list(RUN_OPTIONS + LAUNCH_OPTIONS)
            raise UserInputError('unknown flag --%s for %s; valid flags: %s'
                                 % (key, name, ', '.join('--' + k for k in valid)))
        grid_flags[key] = [_coerce(name, key, v, params[key].default) for v in vals]

    base_name = run_opts.get('exp_name') or (
        name + ('_' + preset_name if preset is not None else '')
        + ('_' + env_ids[0] if len(env_ids) == 1 else ''))
    grid = _CliGrid(base_name)
    grid.add('env_name', env_ids, 'env')
    if 'ac_kwargs' in grid_flags:
        grid.add('ac_kwargs', grid_flags.pop('ac_kwargs'), 'ac_kwargs')
    for key, short in (('hidden_sizes', 'hid'), ('activation', 'act')):
        if key in ac_grid:
            grid.add('ac_kwargs:' + key, ac_grid[key], short)
    for key, vals in grid_flags.items():
        grid.add(key, vals, key)
    if 'seed' not in grid_flags:
        grid.add('seed', [params['seed'].default if 'seed' in params else 0], 'seed')
    try:
        experiments = grid.experiments(AlgoThunk(name), run_opts.get('data_dir'),
                                       run_opts.get('datestamp', False))
    except ValueError as e:
        raise UserInputError(str(e)) from None
    defaults = {k: p.default for k, p in params.items() if k not in NOT_FLAGS}
    for e in experiments:
        if env_kwargs:  # recorded in config.json (env_fn.env_kwargs); test_policy, resume
            e.kwargs['env_fn'] = EnvFn(e.kwargs['env_fn'].env_id, **env_kwargs)
        # Preset or per-env defaults first; what the command line says wins.
        base = dict(preset.kwargs) if preset is not None else \
            env_defaults(name, e.kwargs['env_fn'].env_id)
        if 'ac_kwargs' in base and 'ac_kwargs' in e.kwargs:
            e.kwargs['ac_kwargs'] = dict(base['ac_kwargs'], **e.kwargs['ac_kwargs'])
        e.kwargs.update({k: v for k, v in base.items() if k not in e.kwargs})
        if preset is not None:  # config.json records it (Setup takes it out of logger_kwargs)
            e.kwargs['logger_kwargs'] = dict(e.kwargs['logger_kwargs'], preset=preset_name)
        ac_kwargs = e.kwargs.get('ac_kwargs')
        if isinstance(ac_kwargs, dict) and isinstance(ac_kwargs.get('activation'), str):
            check_activation(ac_kwargs['activation'])
        check_ranges(e.kwargs)  # every variant, before the first one starts
        full = dict(defaults, **e.kwargs)  # budgets: the flags with the defaults they meet
        check_can_train(full)
        check_replay_memory(full.get('replay_size'), *env_sizes[e.kwargs['env_fn'].env_id])
        check_writable(e.output_dir)
        check_ac_kwargs(e.kwargs.get('actor_critic') or _default_actor_critic(name),
                        e.kwargs.get('ac_kwargs'))
        if earlier_run(e.output_dir) and not run_opts.get('overwrite', False):
            raise UserInputError(earlier_run_message(e.output_dir))
        if osp.isdir(e.output_dir) and not run_opts.get('overwrite', False):
            check_no_symlinks(e.output_dir)  # every variant's, before the first one starts
    for e in experiments:  # all checked: now set the earlier runs aside, whole
        if earlier_run(e.output_dir):
            print('--overwrite: the earlier run in %s is now in %s'
                  % (e.output_dir, set_aside(e.output_dir)))
    return Plan(grid, experiments, workers, backend, address)


EARLIER_RUN_SIGNS = ('progress.txt', 'config.json', 'checkpoint', 'tf1_save')


def earlier_run(folder):
    """Whether ``folder`` holds any sign of an earlier run (a run stopped in its first epoch
    has a checkpoint but no progress file)."""
    return bool(earlier_signs(folder))


def earlier_signs(folder):
    """The names of ``EARLIER_RUN_SIGNS`` present in ``folder`` (a symbolic link counts)."""
    return [name for name in EARLIER_RUN_SIGNS if osp.lexists(osp.join(folder, name))]


def earlier_run_message(folder):
    """Why a new run is refused in ``folder``: it holds results, or only the ``config.json``
    of a run that stopped before it saved anything."""
    if earlier_signs(folder) == ['config.json']:
        return ('%s holds the config.json of an earlier run that saved nothing else (no '
                'progress.txt, checkpoint or model); pass --overwrite to start again there, or '
                'choose another --exp_name' % folder)
    return ('%s already holds results; choose another --exp_name, add --datestamp, or pass '
            '--overwrite' % folder)


def set_aside(folder):
    """Move ``folder`` to ``folder.trash-<time>`` (a new run never shares a folder with files
    of an old one); refused while another process holds the folder."""
    import fcntl
    import time
    from spinup_tf.utils.run_folder import open_lock_file
    lock = osp.join(folder, '.lock')
    if osp.exists(lock) and not osp.islink(lock):  # (a link is no lock of this project's)
        with open_lock_file(folder) as f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise UserInputError('another process is running in %s; --overwrite cannot '
                                     'replace it now' % folder) from None
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    target = '%s.trash-%s' % (folder, time.strftime('%Y%m%d-%H%M%S'))
    n = 1
    while osp.exists(target):
        target = '%s.trash-%s-%d' % (folder, time.strftime('%Y%m%d-%H%M%S'), n)
        n += 1
    try:
        os.rename(folder, target)
    except OSError as e:
        raise UserInputError('cannot move %s aside for --overwrite: %s'
                             % (folder, e.strerror or e)) from None
    return target


def _env_kwargs(values):
    """The dict of ``--env_kwargs "{'continuous': True}"`` (``{}`` when not given)."""
    if values is None:
        return {}
    if len(values) != 1 or not isinstance(values[0], dict) or not all(
            isinstance(k, str) for k in values[0]):
        raise UserInputError('--env_kwargs expects one dict of keyword arguments for gym.make, '
                             'e.g. "{\'continuous\': True}", got %s'
                             % ' '.join(repr(v) for v in values))
    return values[0]


def _make_env_with(env_id, env_kwargs):
    """``make_env(env_id, **env_kwargs)``; an argument the env does not take is a
    ``UserInputError``, and so is one it takes but fails with when reset and stepped
    (``make_checked_env``'s probe), before anything is written."""
    try:
        env = make_env(env_id, **env_kwargs)
    except UserInputError:
        raise
    except Exception as e:  # TypeError, ValueError, AssertionError... from the env's __init__
        raise UserInputError('--env_kwargs %r: %s does not accept them (%s)'
                             % (env_kwargs, env_id, str(e).splitlines()[0] if str(e) else
                                type(e).__name__)) from None
    if not env_kwargs:
        return env
    env.close()
    try:
        return make_checked_env(env_id, env_kwargs)
    except UserInputError as e:
        raise UserInputError('--env_kwargs %r: %s' % (env_kwargs, e)) from None


def _launch_options(run_opts):
    """``(workers, backend, address)`` from ``--workers N|auto``, ``--backend``, ``--address``."""
    workers = run_opts.get('workers', 1)
    backend = run_opts.get('backend', 'local')
    address = run_opts.get('address')
    if workers != 'auto' and (isinstance(workers, bool) or not isinstance(workers, int)
                              or workers < 1):
        raise UserInputError("--workers expects a positive integer or 'auto', got %r"
                             % (workers,))
    if backend not in BACKENDS:
        raise UserInputError('--backend expects one of %s, got %r'
                             % (', '.join(BACKENDS), backend))
    if address is not None and not isinstance(address, str):
        address = str(address)
    try:
        workers = check_launch(workers, backend, address)
    except ImportError:
        raise UserInputError("--backend ray needs the optional 'ray' package: "
                             "pip install -r requirements-ray.txt") from None
    except ValueError:
        if address is not None and backend != 'ray':
            raise UserInputError('--address ADDR is for --backend ray') from None
        raise UserInputError("--workers is for --backend local; with --backend ray each "
                             "variant is a Ray task with one CPU and the cluster's CPUs "
                             "decide how many run at once") from None
    return workers, backend, address


def _hidden_sizes(v):
    if isinstance(v, int):
        v = [v]
    if not isinstance(v, (list, tuple)) or not v or not all(
            isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in v):
        raise UserInputError('--hid expects positive layer sizes like "[256,256]", got %r'
                             % (v,))
    return list(v)


def _value_name(v):
    if isinstance(v, (list, tuple)):
        return '-'.join(str(x) for x in v)
    return str(v).replace(os.sep, '-')


def resolve_defaults(name, env_id, preset=None):
    """The keyword arguments a run of ``name`` on ``env_id`` gets without other flags: the
    signature's defaults, then the preset's (or the per-env table's) values."""
    params = dict(parameters(name), **quirk_parameters(name))
    kwargs = {k: p.default for k, p in params.items() if k not in NOT_FLAGS}
    kwargs.update(_get_preset(name, preset).kwargs if preset else env_defaults(name, env_id))
    return kwargs
