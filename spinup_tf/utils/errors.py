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
    are written, so the last good ones stay."""
    for key in keys:
        values = logger.epoch_dict.get(key, [])
        if values and not np.all(np.isfinite(np.concatenate([np.ravel(v) for v in values]))):
            raise NonFiniteError('epoch %d: %s became NaN or infinite; stopping (the last saved '
                                 'model and checkpoint are from before this epoch)' % (epoch, key))
    if not logger.params_finite():
        raise NonFiniteError('epoch %d: the network parameters became NaN or infinite; stopping '
                             '(the last saved model and checkpoint are from before this epoch)'
                             % epoch)


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
