"""Command line: ``python run.py ALGO --env ENV_ID [--kwarg VALUE ...]``, ``plot``, ``test_policy``.

Spinning Up's conventions:

* every keyword argument of the algorithm is a flag (``--epochs 5``, ``--pi_lr 3e-4``);
* ``--hid "[256,256]"`` and ``--act relu`` fill ``ac_kwargs`` (hidden sizes, activation);
* ``--exp_name``, ``--data_dir`` (default ``./data``), ``--datestamp`` choose the run folder
  ``DATA_DIR/EXP_NAME/EXP_NAME_s{seed}/``;
* several values after a flag make a grid, run one variant after the other
  (``--seed 0 10 20``);
* values are parsed with ``ast.literal_eval`` (never ``eval``); what does not parse is a string.
"""
import ast
import inspect
import itertools
import os
import os.path as osp
import signal
import sys

from spinup_tf.algos import ALGOS, check_spaces, get_algo
from spinup_tf.envs import EnvFn, UserInputError, check_env_id, make_env

SUBCOMMANDS = ('plot', 'test_policy')
RUN_OPTIONS = ('exp_name', 'data_dir', 'datestamp', 'overwrite')
NOT_FLAGS = ('env_fn', 'actor_critic', 'logger_kwargs')
ACTIVATIONS = ('relu', 'tanh', 'elu', 'selu', 'sigmoid', 'softplus', 'leaky_relu', 'relu6',
               'swish', 'gelu')
USAGE = """usage:
  python run.py ALGO --env ENV_ID [--flag VALUE ...]   train (ALGO: {algos})
  python run.py ALGO --help                            the algorithm's flags and docstring
  python run.py plot DIR [DIR ...] [--save FILE] ...   learning curves
  python run.py test_policy DIR [--episodes N] [--len L] [--norender]
"""


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the run saves its model and stops cleanly."""


def _on_sigterm(signum, frame):
    raise Terminated()


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
    except Terminated:
        print('terminated: the progress file is complete up to the last epoch and the model '
              'was saved', file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print('interrupted: the progress file is complete up to the last epoch and the model '
              'was saved', file=sys.stderr)
        return 130


def _dispatch(argv):
    usage = USAGE.format(algos=', '.join(ALGOS))
    if not argv or argv[0] in ('-h', '--help', 'help'):
        print(usage)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == 'plot':
        from spinup_tf.plot import main as plot_main
        return plot_main(rest)
    if cmd == 'test_policy':
        from spinup_tf.test_policy import main as test_policy_main
        return test_policy_main(rest)
    if cmd not in ALGOS:
        raise UserInputError('unknown algorithm %r; valid commands: %s'
                             % (cmd, ', '.join(list(ALGOS) + list(SUBCOMMANDS))))
    if '--help' in rest or '-h' in rest:
        print(algo_help(cmd))
        return 0
    signal.signal(signal.SIGTERM, _on_sigterm)
    for fn, kwargs in build_runs(cmd, rest):
        fn(**kwargs)
    return 0


def algo_help(name):
    """Usage line, flags with defaults, and the algorithm's docstring."""
    fn = get_algo(name)
    lines = ['usage: python run.py %s --env ENV_ID [--flag VALUE ...]' % name, '',
             'flags (defaults):']
    for key, param in inspect.signature(fn).parameters.items():
        if key in NOT_FLAGS:
            continue
        lines.append('  --%-22s %r' % (key, param.default))
    lines += ['  --%-22s %s' % ('env', 'gymnasium id (required)'),
              '  --%-22s %s' % ('hid', 'hidden sizes, e.g. "[256,256]" (ac_kwargs)'),
              '  --%-22s %s' % ('act', 'activation: ' + ', '.join(ACTIVATIONS)),
              '  --%-22s %s' % ('exp_name', 'experiment name (default ALGO_ENV)'),
              '  --%-22s %s' % ('data_dir', 'where run folders go (default ./data)'),
              '  --%-22s %s' % ('datestamp', 'prefix folders with date and time'),
              '  --%-22s %s' % ('overwrite', 'reuse a run folder that already holds results'),
              '', 'Several values after a flag run a grid: --seed 0 10 20', '',
              inspect.getdoc(fn)]
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


def _activation(name):
    from spinup_tf.tf1 import tf
    if not isinstance(name, str) or name not in ACTIVATIONS:
        raise UserInputError('unknown activation %r; choose from %s'
                             % (name, ', '.join(ACTIVATIONS)))
    return getattr(tf.nn, name)


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
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise bad('a number')
        return float(value)
    if isinstance(default, str) and not isinstance(value, str):
        raise bad('a string')
    return value


def build_runs(name, tokens):
    """Turn the flags of ``run.py ALGO ...`` into ``[(fn, kwargs), ...]``, one per variant.

    Everything is checked before anything runs or is written: flag names and types, env ids,
    the algorithm's spaces, and that no run folder already holds results.
    """
    from spinup_tf.logx import setup_logger_kwargs, PROGRESS_FILE
    fn = get_algo(name)
    params = inspect.signature(fn).parameters
    flags = parse_flags(tokens)

    env_ids = flags.pop('env', None) or flags.pop('env_name', None)
    if not env_ids:
        raise UserInputError('missing --env ENV_ID (e.g. --env Pendulum-v1)')
    for env_id in env_ids:
        if not isinstance(env_id, str):
            raise UserInputError('--env expects a gymnasium id, got %r' % (env_id,))
        check_env_id(env_id)
        env = make_env(env_id)
        try:
            check_spaces(name, env)
        finally:
            env.close()

    run_opts = {}
    for key in RUN_OPTIONS:
        if key in flags:
            vals = flags.pop(key)
            if len(vals) != 1:
                raise UserInputError('--%s takes one value' % key)
            run_opts[key] = vals[0]
    for key in ('datestamp', 'overwrite'):
        if not isinstance(run_opts.get(key, False), bool):
            raise UserInputError('--%s expects True or False' % key)

    # Shorthands for ac_kwargs.
    ac_grid = {}
    if 'hid' in flags:
        ac_grid['hidden_sizes'] = [_hidden_sizes(v) for v in flags.pop('hid')]
    if 'act' in flags:
        ac_grid['activation'] = flags.pop('act')
        for v in ac_grid['activation']:
            _activation(v)

    grid = {}
    for key, vals in flags.items():
        if key not in params or key in NOT_FLAGS:
            valid = [k for k in params if k not in NOT_FLAGS] + ['env', 'hid', 'act'] + \
                list(RUN_OPTIONS)
            raise UserInputError('unknown flag --%s for %s; valid flags: %s'
                                 % (key, name, ', '.join('--' + k for k in valid)))
        grid[key] = [_coerce(name, key, v, params[key].default) for v in vals]

    keys = ['env'] + ['ac:' + k for k in ac_grid] + list(grid)
    values = [env_ids] + list(ac_grid.values()) + list(grid.values())
    varying = [k for k, v in zip(keys, values) if len(v) > 1 and k != 'seed']

    base_name = run_opts.get('exp_name') or (
        name + ('_' + env_ids[0] if len(env_ids) == 1 else ''))
    runs = []
    for combo in itertools.product(*values):
        variant = dict(zip(keys, combo))
        kwargs = {k: v for k, v in variant.items() if k in grid}
        ac_kwargs = dict(kwargs.pop('ac_kwargs', None) or {})
        for k in ac_grid:
            ac_kwargs[k] = variant['ac:' + k]
        if isinstance(ac_kwargs.get('activation'), str):
            ac_kwargs['activation'] = _activation(ac_kwargs['activation'])
        if ac_kwargs:
            kwargs['ac_kwargs'] = ac_kwargs
        exp_name = base_name + ''.join('_%s%s' % (_short(k), _value_name(variant[k]))
                                       for k in varying)
        seed = kwargs.get('seed', params['seed'].default if 'seed' in params else None)
        logger_kwargs = setup_logger_kwargs(exp_name, seed, run_opts.get('data_dir'),
                                            run_opts.get('datestamp', False))
        progress = osp.join(logger_kwargs['output_dir'], PROGRESS_FILE)
        if osp.exists(progress) and not run_opts.get('overwrite', False):
            raise UserInputError('%s already holds results; choose another --exp_name, add '
                                 '--datestamp, or pass --overwrite'
                                 % logger_kwargs['output_dir'])
        kwargs['env_fn'] = EnvFn(variant['env'])
        kwargs['logger_kwargs'] = logger_kwargs
        runs.append((fn, kwargs))
    return runs


def _hidden_sizes(v):
    if isinstance(v, int):
        v = [v]
    if not isinstance(v, (list, tuple)) or not v or not all(
            isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in v):
        raise UserInputError('--hid expects positive layer sizes like "[256,256]", got %r'
                             % (v,))
    return list(v)


def _short(key):
    return {'ac:hidden_sizes': 'hid', 'ac:activation': 'act'}.get(key, key)


def _value_name(v):
    if isinstance(v, (list, tuple)):
        return '-'.join(str(x) for x in v)
    return str(v).replace(os.sep, '-')
