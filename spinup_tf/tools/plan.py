"""From the flags of ``run.py ALGO ...`` to a checked plan of runs (``build_runs``): flags
parsed with ``ast.literal_eval`` and checked against the algorithm's parameters, a preset's
or the per-env defaults applied, the grid of variants, and every check that must pass before
anything is written. ``run.py`` (``spinup_tf.tools.cli``) and ``run.py tune`` use it."""
import ast
import collections
import os
import os.path as osp

import numpy as np

from spinup_tf.algos import check_spaces, get_algo, parameters
from spinup_tf.tools.env_defaults import env_defaults
from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.budget import check_can_train, check_replay_memory
from spinup_tf.utils.run_folder import check_writable
from spinup_tf.utils.safe_files import check_components, check_own_files
from spinup_tf.utils.ranges import check_ranges, check_ac_kwargs
from spinup_tf.utils.envs import EnvFn, check_env_id, make_checked_env, make_env
from spinup_tf.tools.grid import ExperimentGrid
from spinup_tf.tools.algo_call import AlgoThunk, check_activation, quirk_parameters
from spinup_tf.tools.launch import BACKENDS, check_launch

RUN_OPTIONS = ('exp_name', 'data_dir', 'datestamp', 'overwrite', 'preset', 'env_kwargs')
LAUNCH_OPTIONS = ('workers', 'backend', 'address')
NOT_FLAGS = ('env_fn', 'actor_critic', 'logger_kwargs')


def _default_actor_critic(name):
    """The algorithm's default ``actor_critic`` function (imports TensorFlow)."""
    import inspect
    param = inspect.signature(get_algo(name)).parameters.get('actor_critic')
    return param.default if param is not None else None


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
        + ('_' + env_ids[0].replace('/', '-') if len(env_ids) == 1 else ''))  # ALE/Pong-v5
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
        # EXP_NAME/ and EXP_NAME_s0/ are made by the run inside --data_dir: not through a link
        check_components(run_opts.get('data_dir') or osp.join(os.getcwd(), 'data'),
                         e.output_dir)
        if e.kwargs.get('ac_kwargs') is not None:  # (the default imports TensorFlow)
            check_ac_kwargs(e.kwargs.get('actor_critic') or _default_actor_critic(name),
                            e.kwargs['ac_kwargs'])
        if earlier_run(e.output_dir) and not run_opts.get('overwrite', False):
            raise UserInputError(earlier_run_message(e.output_dir))
        if osp.isdir(e.output_dir) and not run_opts.get('overwrite', False):
            check_own_files(e.output_dir)  # every variant's, before the first one starts
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
