"""Registry of the algorithms that ``run.py`` can launch (re-exported by
``spinup_tf.algos``).

Each entry names the function (imported lazily, so ``run.py --help`` stays fast) and the
space check the command line runs before anything is written.
"""
import importlib

from spinup_tf.utils.flags import (ALGORITHM_SOURCES, algorithm_parameters, docstring,
                                   option_comments)
from spinup_tf.utils.run_checks import check_off_policy_spaces, check_stochastic_policy_spaces

ALGOS = {name: (module, fn) for name, (module, fn, _) in ALGORITHM_SOURCES.items()}
LOOPS = {name: loop.rsplit('.', 1)[-1] for name, (_, _, loop) in ALGORITHM_SOURCES.items()}
SPACE_CHECKS = {'off_policy': check_off_policy_spaces,
                'on_policy': check_stochastic_policy_spaces}


def get_algo(name):
    """The algorithm function registered as ``name``."""
    module, fn = ALGOS[name]
    return getattr(importlib.import_module(module), fn)


def parameters(name):
    """The flags of algorithm ``name`` (``spinup_tf.utils.flags.algorithm_parameters``):
    its signature's parameters, with ``**options`` replaced by its loop's ``OPTIONS``, read
    from the source, so ``--help`` and argument errors answer without TensorFlow."""
    return algorithm_parameters(name)


def option_help(name):
    """``{option: comment}`` of the options of ``name``'s loop (its ``OPTIONS``)."""
    return option_comments(ALGORITHM_SOURCES[name][2])


def algo_docstring(name):
    """The docstring of algorithm ``name``, read from its source."""
    module, fn = ALGOS[name]
    return docstring(module, fn)


def check_spaces(name, env):
    """Raise ``UserInputError`` when algorithm ``name`` cannot handle ``env``'s spaces."""
    SPACE_CHECKS[LOOPS[name]](env, name)
