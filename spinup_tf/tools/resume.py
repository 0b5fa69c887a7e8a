"""Continue a killed or interrupted run from its folder: ``python run.py resume DIR``.

The algorithm, its hyperparameters and the env id come from ``DIR/config.json``; the state
comes from ``DIR/checkpoint/`` (see ``spinup_tf.utils.checkpoint``). Progress rows are appended to
``DIR/progress.txt`` after the rows the checkpoint covers.
"""
import json
import os.path as osp

from spinup_tf.algos import ALGOS, parameters
from spinup_tf.tools.algo_call import AlgoThunk, quirk_parameters
from spinup_tf.utils.checkpoint import has_checkpoint
from spinup_tf.utils.envs import EnvFn
from spinup_tf.utils.errors import UserInputError
from spinup_tf.utils.logx import CONFIG_FILE



def resume_kwargs(run_dir):
    """``(fn, kwargs)`` that continue the run in ``run_dir``."""
    from spinup_tf.utils.tf1 import activation_by_name
    path = osp.join(run_dir, CONFIG_FILE)
    if not osp.isdir(run_dir):
        raise UserInputError('no such run folder: %s' % run_dir)
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise UserInputError('cannot read %s (%s)' % (path, e)) from None
    if not isinstance(config, dict) or config.get('algo') not in ALGOS or not config.get('env_id'):
        raise UserInputError('%s does not say which algorithm and env the run used; it '
                             'cannot be resumed' % path)
    if not has_checkpoint(run_dir):
        raise UserInputError('no checkpoint in %s (runs save one every save_freq epochs); '
                             'nothing to resume' % run_dir)
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
    ac_kwargs = dict(kwargs.get('ac_kwargs') or {})
    if 'activation' in ac_kwargs:
        try:
            ac_kwargs['activation'] = activation_by_name(ac_kwargs['activation'])
        except ValueError:
            raise UserInputError('unknown activation %r in %s'
                                 % (ac_kwargs['activation'], path)) from None
    kwargs['ac_kwargs'] = ac_kwargs
    env_fn = config.get('env_fn')
    env_kwargs = env_fn.get('env_kwargs', {}) if isinstance(env_fn, dict) else {}
    kwargs['env_fn'] = EnvFn(config['env_id'], **env_kwargs)
    kwargs['logger_kwargs'] = dict(output_dir=run_dir, exp_name=config.get('exp_name'),
                                   resume=True)
    return fn, kwargs


def resume(run_dir):
    """Continue the run in ``run_dir`` to its configured number of epochs."""
    fn, kwargs = resume_kwargs(run_dir)
    fn(**kwargs)
