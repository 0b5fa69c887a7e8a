"""The command line's registry of the algorithms that ``run.py`` can launch
(``spinup_tf.utils.registry``, re-exported here): each entry names the function (imported
lazily, so ``run.py --help`` stays fast) and the space check the command line runs before
anything is written.
"""
from spinup_tf.utils.registry import (ALGOS, LOOPS, SPACE_CHECKS, get_algo,  # noqa: F401
                                      parameters, option_help, algo_docstring, check_spaces)
