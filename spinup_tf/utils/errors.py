"""The errors a run reports to the user, and the checks that raise them.

``UserInputError``: bad input (a flag, an env id, a run folder), shown as one ``error:`` line
with exit status 2. ``NonFiniteError``: a loss or parameter became NaN/Inf; the run stops
before the last good model is overwritten.
"""
import numpy as np


class UserInputError(ValueError):
    """Bad input from the user (env id, flag, space). The CLI prints it as one line."""


class NonFiniteError(FloatingPointError):
    """A loss or diagnostic became NaN or infinite; the run stops, keeping the last model."""


def check_positive_ints(**values):
    """Raise ``UserInputError`` unless every value is a positive integer (budgets, sizes)."""
    for name, value in values.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
            raise UserInputError('%s must be a positive integer, got %r' % (name, value))


def check_finite(logger, keys, epoch):
    """Raise ``NonFiniteError`` naming the epoch and quantity if a stored value (of ``keys``)
    or a network parameter is NaN/Inf. Called before the epoch's row, model and checkpoint
    are written, so the last good ones stay.

    The env's own returns (``EpRet``, stored by the loops) are checked first: a NaN or
    infinite reward from the env is reported as such, not as the loss it then poisons. The
    message says what the run keeps (:func:`kept_after_stop`)."""
    returns = logger.epoch_dict.get('EpRet', [])
    if returns and not np.all(np.isfinite(np.concatenate([np.ravel(v) for v in returns]))):
        raise NonFiniteError('epoch %d: the environment returned a NaN or infinite reward (an '
                             'episode\'s EpRet is not finite); stopping, as training on it '
                             'would make every loss NaN (%s)' % (epoch, kept_after_stop(logger)))
    for key in keys:
        values = logger.epoch_dict.get(key, [])
        if values and not np.all(np.isfinite(np.concatenate([np.ravel(v) for v in values]))):
            raise NonFiniteError('epoch %d: %s became NaN or infinite; stopping (%s)'
                                 % (epoch, key, kept_after_stop(logger)))
    if not logger.params_finite():
        raise NonFiniteError('epoch %d: the network parameters became NaN or infinite; stopping '
                             '(%s)' % (epoch, kept_after_stop(logger)))


def kept_after_stop(logger):
    """What a run stopped by the NaN guard keeps, said truly: the epoch of its checkpoint and
    saved model, or that none was saved yet."""
    import json
    import os.path as osp
    folder = getattr(logger, 'output_dir', None)
    if not folder:
        return 'nothing of this epoch was saved'
    try:
        with open(osp.join(folder, 'checkpoint', 'state.json')) as f:
            epoch = json.load(f)['counters']['epoch']
        return ('nothing of this epoch was saved; the checkpoint and the model are those of '
                'epoch %d' % epoch)
    except (OSError, ValueError, KeyError, TypeError):
        return 'no checkpoint or model had been saved yet, so there is nothing to resume'


class DiskFullError(OSError):
    """The disk filled up during a run: the run stopped as on Ctrl-C, but without writing
    more (the last complete model and checkpoint stay). The CLI prints it as one line."""


def disk_full_path(exc):
    """The path being written when ``exc`` reports a full disk (``ENOSPC``, from Python or
    from TensorFlow's file writers), else None. ``''`` when the path is unknown."""
    import errno
    import re
    if isinstance(exc, DiskFullError):
        return None
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return exc.filename or ''
    text = str(exc)
    if 'No space left on device' in text:
        m = re.search(r'(/[^\s;]+?)(?:\.tempstate\d+)?;\s*No space left on device', text)
        return m.group(1) if m else ''
    return None
