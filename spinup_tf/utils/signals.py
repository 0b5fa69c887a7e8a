"""Deferred handling of Ctrl-C / SIGTERM: the loops stop between two env steps."""
import signal
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the run saves its model and a checkpoint, then stops."""


_pending = {'signum': None}


def request_stop(signum, frame=None):
    """Signal handler: remember the request; the loop stops at its next safe point.

    Raising from the handler itself could land inside TensorFlow's C++ code (a session run,
    a checkpoint write) and was seen to crash the process; the loops call ``check_stop`` once
    per environment step instead. A second signal before that stops at once.
    """
    if _pending['signum'] is not None:
        _pending['signum'] = None
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
    _pending['signum'] = signum


def install_stop_handlers(sigint=True):
    """Route SIGTERM (and SIGINT unless ``sigint=False``) to ``request_stop``."""
    signal.signal(signal.SIGTERM, request_stop)
    if sigint:
        signal.signal(signal.SIGINT, request_stop)


def check_stop():
    """Raise ``KeyboardInterrupt`` (``Terminated`` for SIGTERM) if a stop was requested."""
    signum = _pending['signum']
    if signum is not None:
        _pending['signum'] = None
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextmanager
def undone_on_interrupt(logger, state, state_key, env=None):
    """A phase that Ctrl-C / SIGTERM may stop midway (the test episodes), undone before the
    interrupt goes on: every value it stored in ``logger`` is dropped, ``state[state_key]``
    is put back, and so is ``env``'s RNG when ``env`` is given. So the checkpoint written
    next holds nothing of the phase, and a resumed run runs it again from the same start."""
    stored = {k: len(v) for k, v in logger.epoch_dict.items()}
    before = state.get(state_key)
    rng = env.unwrapped.np_random.bit_generator.state if env is not None else None
    try:
        yield
    except KeyboardInterrupt:
        for k in list(logger.epoch_dict):
            del logger.epoch_dict[k][stored.get(k, 0):]
        state[state_key] = before
        if rng is not None:
            env.unwrapped.np_random.bit_generator.state = rng
        raise
