"""Pieces every training loop shares: budget checks, the NaN/Inf guard, session start-up,
and the deferred handling of Ctrl-C / SIGTERM."""
import signal

import numpy as np

from spinup_tf.envs import UserInputError


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


def start_session(graph, logger, inputs, outputs, init_ops=()):
    """A session on ``graph`` with variables initialised, then ``init_ops`` run (e.g. copying
    main into target).

    Registers ``inputs``/``outputs`` for the SavedModel, then finalizes the graph: nothing
    can add ops in the training loop (no silent graph growth).
    """
    from spinup_tf.tf1 import tf, make_session
    with graph.as_default():
        sess = make_session(graph)
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for op in init_ops:
            sess.run(op)
        logger.setup_tf_saver(sess, inputs=inputs, outputs=outputs)
    graph.finalize()
    return sess


# --------------------------------------------------------------------------------------------
# Ctrl-C / SIGTERM
# --------------------------------------------------------------------------------------------
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
