"""A quiet TensorFlow start-up on a machine without a GPU.

Importing TensorFlow 2.21 writes, from C++ and before absl's logging is set up (so
``TF_CPP_MIN_LOG_LEVEL`` cannot silence them), ``WARNING: All log messages before
absl::InitializeLog() ...``, the oneDNN notice and ``Could not find cuda drivers`` (twice:
two libraries load), and its first device enumeration an error-level ``failed call to
cuInit`` line. On a CPU machine none of them says anything wrong.

:func:`import_tensorflow` imports TensorFlow with file descriptor 2 (the C++ side's stderr)
sent to a temporary file, enumerates the devices there too, and then writes back every line
that is not one of those notices: a real problem still shows. It then moves the objects the
import made (about a million) out of reach of the garbage collector (``gc.freeze``): they live
as long as the process, and each full collection while the graph is built scanned them all
again (0.17-0.19 s of a TD3 or SAC run's start-up, measured with ``gc.callbacks``).
"""
import gc
import os
import re
import sys
import tempfile
from contextlib import contextmanager

NOISE = re.compile(
    r'^(WARNING: All log messages before absl::InitializeLog\(\) is called'
    r'|[IWE]\d{4} [\d:. ]+\d+ (port\.cc:\d+\] oneDNN custom operations are on'
    r'|cudart_stub\.cc:\d+\] Could not find cuda drivers'
    r'|cuda_platform\.cc:\d+\] failed call to cuInit'
    r'|cuda_executor\.cc:\d+\].*(NUMA|cuInit)'
    r'|gpu_device\.cc:\d+\] Cannot dlopen some GPU libraries))')
"""The start-up notices of a machine without a GPU, one line each."""


def set_quiet_environment(environ=None):
    """``TF_CPP_MIN_LOG_LEVEL=2`` (no INFO or WARNING lines from TensorFlow's C++ side)
    unless the user set it."""
    environ = os.environ if environ is None else environ
    environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')


def filter_noise(text):
    """``text`` without the lines ``NOISE`` matches."""
    return ''.join(line for line in text.splitlines(True) if not NOISE.match(line))


@contextmanager
def stderr_filtered():
    """Inside: what is written to file descriptor 2 is held back; on leaving, the lines
    that are not start-up notices are written to it."""
    try:
        fd = sys.__stderr__.fileno()
    except (AttributeError, ValueError, OSError):  # no real stderr (some embedders)
        yield
        return
    sys.__stderr__.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), fd)
        try:
            yield
        finally:
            sys.__stderr__.flush()
            os.dup2(saved, fd)
            os.close(saved)
            held.seek(0)
            kept = filter_noise(held.read().decode('utf-8', 'replace'))
            if kept:
                os.write(fd, kept.encode('utf-8'))


def import_tensorflow():
    """``tensorflow.compat.v1``, imported (and its devices listed) without the notices."""
    set_quiet_environment()
    if 'tensorflow' in sys.modules:
        import tensorflow.compat.v1 as tf
    else:
        with stderr_filtered():
            import tensorflow.compat.v1 as tf
            tf.config.list_physical_devices('GPU')  # the device enumeration (cuInit) is now
    gc.freeze()  # TensorFlow's modules stay for the process: no collection need scan them
    return tf
