"""Registry of the algorithms that ``run.py`` can launch.

Each entry names the function (imported lazily, so ``run.py --help`` stays fast) and the
space check the command line runs before anything is written.
"""
import importlib

from spinup_tf.utils.flags import docstring, option_comments, signature_parameters
from spinup_tf.utils.envs import flat_obs_dim, box_action_bounds, check_discrete_or_box


def _deterministic_policy_spaces(env, algo):
    flat_obs_dim(env.observation_space, algo)
    box_action_bounds(env.action_space, algo)


def _stochastic_policy_spaces(env, algo):
    flat_obs_dim(env.observation_space, algo)
    check_discrete_or_box(env.action_space, algo)


ALGOS = {
    'ddpg': ('spinup_tf.algos.ddpg', 'ddpg', _deterministic_policy_spaces),
    'td3': ('spinup_tf.algos.td3', 'td3', _deterministic_policy_spaces),
    'trpo': ('spinup_tf.algos.trpo', 'trpo', _stochastic_policy_spaces),
    'npg': ('spinup_tf.algos.trpo', 'npg', _stochastic_policy_spaces),
    'vpg': ('spinup_tf.algos.vpg', 'vpg', _stochastic_policy_spaces),
    'ppo': ('spinup_tf.algos.ppo', 'ppo', _stochastic_policy_spaces),
    'sac': ('spinup_tf.algos.sac', 'sac', _deterministic_policy_spaces),
}


def get_algo(name):
    """The algorithm function registered as ``name``."""
    module, fn, _ = ALGOS[name]
    return getattr(importlib.import_module(module), fn)


LOOPS = {'ddpg': 'off_policy', 'td3': 'off_policy', 'sac': 'off_policy', 'trpo': 'on_policy',
         'npg': 'on_policy', 'vpg': 'on_policy', 'ppo': 'on_policy'}


def parameters(name):
    """The flags of algorithm ``name``: its signature's parameters (``inspect.Parameter``,
    in order), with ``**options`` replaced by its loop's ``OPTIONS``
    (``spinup_tf.loops.off_policy.OPTIONS``...). Read from the source
    (``spinup_tf.utils.flags``): nothing is imported, so ``--help`` and argument errors
    answer without TensorFlow."""
    module, fn, _ = ALGOS[name]
    return signature_parameters(module, fn, 'spinup_tf.loops.' + LOOPS[name])


def option_help(name):
    """``{option: comment}`` of the options of ``name``'s loop (its ``OPTIONS``)."""
    return option_comments('spinup_tf.loops.' + LOOPS[name])


def algo_docstring(name):
    """The docstring of algorithm ``name``, read from its source."""
    module, fn, _ = ALGOS[name]
    return docstring(module, fn)


def check_spaces(name, env):
    """Raise ``UserInputError`` when algorithm ``name`` cannot handle ``env``'s spaces."""
    ALGOS[name][2](env, name)
