"""The best model of a run: after an epoch's deterministic test episodes, the model is also
saved to ``tf1_save_best/`` when the mean of their returns beats every earlier epoch's
(``python run.py test_policy DIR --best`` loads it; SB3's ``EvalCallback`` keeps the same).
Both loops call :func:`keep_best` from ``spinup_tf.loops.skeleton``."""
import numpy as np

BEST_SUFFIX = '_best'


def save_best(logger):
    """``save(state_dict)``: ``logger``'s model to ``tf1_save_best/``."""
    return lambda state_dict: logger.save_state(state_dict, suffix=BEST_SUFFIX)


def keep_best(logger, state, epoch, save):
    """``save({'epoch': epoch, 'AverageTestEpRet': mean})`` (see :func:`save_best`) when
    this epoch's mean ``TestEpRet`` (stored, not yet logged) is the best so far; the best is
    kept in ``state['best_test_return']`` (so in the checkpoint). ``save`` None (a loop
    driven without a model): nothing. Returns whether it saved."""
    returns = logger.epoch_dict.get('TestEpRet')
    if not returns or save is None:
        return False
    mean = float(np.mean(returns))
    best = state.get('best_test_return')
    if best is not None and not mean > best:
        return False
    save({'epoch': epoch, 'AverageTestEpRet': mean})
    state['best_test_return'] = mean
    return True
