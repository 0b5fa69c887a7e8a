"""Continue a killed or interrupted run from its folder: ``python run.py resume DIR``.

The algorithm, its hyperparameters and the env id come from ``DIR/config.json``; the state
comes from ``DIR/checkpoint/`` (see ``spinup_tf.utils.checkpoint``). Progress rows are appended to
``DIR/progress.txt`` after the rows the checkpoint covers.

Before anything is written (the lock file included), :func:`resume_kwargs` proves that the
folder can be resumed: a readable folder, not itself a symbolic link, holding only regular
files and folders (no link, FIFO or device), a ``config.json``
naming one of this project's algorithms and a registered env that can be made, a replay
buffer that fits in memory, a run that can train, and a checkpoint that agrees with
``config.json`` and ``progress.txt`` (``spinup_tf.utils.checkpoint.verify``). Anything else
is one ``error:`` line, exit status 2, and the folder as it was.
"""
import os.path as osp

from spinup_tf.algos import ALGOS, LOOPS, parameters
from spinup_tf.tools.algo_call import AlgoThunk, quirk_parameters
from spinup_tf.utils.budget import check_budget, check_replay_memory
from spinup_tf.utils.checkpoint import verify
from spinup_tf.utils.envs import EnvFn, make_checked_env
from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.safe_files import (check_not_link, check_own_files, check_readable_dir,
                                        read_json)
from spinup_tf.utils.logx import CONFIG_FILE


def resume_kwargs(run_dir):
    """``(fn, kwargs)`` that continue the run in ``run_dir``, after every check."""
    from spinup_tf.utils.tf1 import activation_by_name
    check_not_link(run_dir)  # resumed into its target otherwise
    check_readable_dir(run_dir)
    check_own_files(run_dir)
    path = osp.join(run_dir, CONFIG_FILE)
    if not osp.lexists(path):
        raise UserInputError('no %s in %s: it is not a run folder' % (CONFIG_FILE, run_dir))
    config = read_json(path)
    if config.get('algo') not in ALGOS or not config.get('env_id'):
        raise UserInputError('%s does not say which algorithm and env the run used; it '
                             'cannot be resumed' % path)
    name = config['algo']
    fn = AlgoThunk(name)  # quirk flags become the run's hooks again
    params = parameters(name)
    if any(k not in params for k in config):
        params = dict(params, **quirk_parameters(name))  # a source document's quirk flags
    kwargs = {}
    for key, param in params.items():
        if key in ('env_fn', 'logger_kwargs') or key not in config:
            continue
        if key == 'actor_critic':
            if str(config[key]).endswith('.' + param.default.__name__):
                continue  # the default
            from spinup_tf.reproductions.networks import resolve_actor_critic
            try:
                kwargs[key] = resolve_actor_critic(config[key])
            except UserInputError:
                raise UserInputError('the run used a custom actor_critic (%s); resume it from '
                                     'Python with logger_kwargs=dict(..., resume=True)'
                                     % config[key]) from None
            continue
        kwargs[key] = config[key]
    ac_kwargs = kwargs.get('ac_kwargs') or {}
    if not isinstance(ac_kwargs, dict):
        raise UserInputError('%s: ac_kwargs must be a dict, got %r' % (path, ac_kwargs))
    ac_kwargs = dict(ac_kwargs)
    if 'activation' in ac_kwargs:
        try:
            ac_kwargs['activation'] = activation_by_name(ac_kwargs['activation'])
        except ValueError:
            raise UserInputError('unknown activation %r in %s'
                                 % (ac_kwargs['activation'], path)) from None
    kwargs['ac_kwargs'] = ac_kwargs
    env_fn = config.get('env_fn')
    env_kwargs = env_fn.get('env_kwargs', {}) if isinstance(env_fn, dict) else {}
    if not isinstance(env_kwargs, dict):
        raise UserInputError('%s: env_fn.env_kwargs must be a dict, got %r' % (path, env_kwargs))
    env = make_checked_env(config['env_id'], env_kwargs)
    try:
        space = env.action_space
        check_budget(dict(params_defaults(params), **kwargs))
        if 'replay_size' in kwargs:
            check_replay_memory(kwargs['replay_size'], _flat_size(env.observation_space),
                                _flat_size(space))
    finally:
        env.close()
    verify(run_dir, loop=LOOPS[name], action_shape=getattr(space, 'shape', None))
    kwargs['env_fn'] = EnvFn(config['env_id'], **env_kwargs)
    kwargs['logger_kwargs'] = dict(output_dir=run_dir, exp_name=config.get('exp_name'),
                                   resume=True)
    return fn, kwargs


def params_defaults(params):
    """``{name: default}`` of an algorithm's parameters that have one."""
    import inspect
    return {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}


def _flat_size(space):
    import numpy as np
    shape = getattr(space, 'shape', None) or (1,)
    return int(np.prod(shape))


def resume(run_dir):
    """Continue the run in ``run_dir`` to its configured number of epochs."""
    fn, kwargs = resume_kwargs(run_dir)
    fn(**kwargs)
