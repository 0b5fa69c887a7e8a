"""One variant of a grid, run and reported the same way by every backend (local
processes, Ray): the call, its outcome as ``(status, error)``, and its pickled payload."""
import pickle
import sys
import traceback

_QUIET_ERRORS = ('UserInputError', 'NonFiniteError', 'FloatingPointError')


def error_line(exc):
    msg = str(exc).strip().splitlines()
    return '%s: %s' % (type(exc).__name__, msg[0] if msg else '')


def report_exception(exc, label):
    """Print a failed variant's error on stderr: one line for user errors, else a traceback."""
    sys.stdout.flush()
    if any(c.__name__ in _QUIET_ERRORS for c in type(exc).__mro__):
        print('error: %s' % exc, file=sys.stderr)
    else:
        traceback.print_exc()
    print('variant %s failed: %s' % (label, error_line(exc)), file=sys.stderr, flush=True)


def call_variant(thunk, kwargs, label):
    """Run one variant here; returns ``(status, error)``. KeyboardInterrupt goes on."""
    try:
        thunk(**kwargs)
        return 'ok', ''
    except Exception as e:  # a failed variant never stops the grid
        report_exception(e, label)
        return 'failed', error_line(e)


def status_detail(status, error):
    return ' - ' + error if error and error != status else ''


def variant_payload(e):
    try:
        return pickle.dumps((e.thunk, e.kwargs))
    except Exception as exc:
        raise TypeError('variant %s cannot be sent to a worker process (%s); the thunk and '
                        'its arguments must be picklable: use a module-level function'
                        % (e.label, error_line(exc))) from None
