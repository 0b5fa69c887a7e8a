"""Start, watch and stop runs one at a time, for ``run.py tune``, which decides what runs
when: ``LocalRunner`` forks each run from the grid's fork server (``spinup_tf.tools.launch``:
the processes of ``--workers N``), ``RayRunner`` sends each as a Ray task
(``spinup_tf.tools.ray_backend``).

A runner's ``start(experiment, log_path)`` returns a handle with ``done()``, ``stop(sig)``
(SIGTERM: the run stops at its next env step and saves a checkpoint) and ``outcome()``
(``(status, error)``: ``ok``, ``failed`` or ``interrupted``); ``wait(handles, timeout)``
sleeps until one has news, at most ``timeout`` s. Imports neither TensorFlow nor Ray until a
runner is made.
"""
import os
import signal
import time

from spinup_tf.utils.errors import UserInputError


# ---------------------------------------------------------------------------------------
class LocalRunner:
    """Trials in worker processes forked from the grid's fork server
    (``spinup_tf.tools.launch``), each with its share of the cores and its output in a log."""

    def __init__(self, workers):
        from spinup_tf.tools.launch import run_threads
        self.threads, self.line = run_threads(workers, workers)
        self.ctx = None

    def start(self, experiment, log_path):
        from spinup_tf.tools.launch import _Child, _worker_context, variant_payload
        if self.ctx is None:
            self.ctx = _worker_context(self.threads, [experiment])
        from spinup_tf.utils.safe_files import open_for_append
        log = open_for_append(log_path)  # never through a link, never a FIFO
        return _LocalTrial(_Child(self.ctx, experiment, variant_payload(experiment),
                                  self.threads, log), log)

    def wait(self, handles, timeout):
        """Sleep up to ``timeout`` s, waking for output or an exit; copy output to the logs."""
        from multiprocessing.connection import wait
        ready = {}
        for h in handles:
            if h.child.reader is not None:
                ready[h.child.reader] = h
            if h.child.proc.exitcode is None:
                ready[h.child.proc.sentinel] = None
        if not ready:
            time.sleep(timeout)
            return
        for r in wait(list(ready), timeout=timeout):
            if ready.get(r) is not None:
                ready[r].child.read_output()

    def close(self):
        pass


class _LocalTrial:
    def __init__(self, child, log):
        self.child, self.log = child, log

    def done(self):
        return self.child.done

    def stop(self, sig=signal.SIGTERM):
        self.child.signal(sig)

    def outcome(self):
        """``(status, error)``: ``ok``, ``failed`` or ``interrupted``."""
        status, error, _ = self.child.outcome()
        self.log.close()
        return status, error


class RayRunner:
    """Trials as Ray tasks with one CPU each (``spinup_tf.tools.ray_backend``); stopping one is
    ``ray.cancel``, which interrupts it as Ctrl-C would. Their output is Ray's (on the
    driver's terminal). The driver reads their progress files, so the workers must share
    its file system (as a local Ray instance does)."""

    def __init__(self, address):
        from spinup_tf.tools.launch import run_threads
        from spinup_tf.tools.ray_backend import PACKAGE_PARENT, RayStartError, _ray_task, \
            check_ray
        try:
            check_ray()
        except ImportError as e:
            raise UserInputError(str(e)) from None
        import ray
        self.ray = ray
        self.threads, self.line = run_threads(1, 1, 'ray')
        self.started = False
        if not ray.is_initialized():
            kwargs = dict(address=address)
            if address is None and not os.environ.get('RAY_ADDRESS'):
                kwargs.update(include_dashboard=False)
            try:
                ray.init(**kwargs)
            except Exception as exc:
                raise UserInputError(str(RayStartError('could not %s: %s' % (
                    'connect to the Ray cluster at %s' % address if address else
                    'start a local Ray instance', str(exc).splitlines()[0])))) from None
            self.started = True
        pythonpath = os.pathsep.join([PACKAGE_PARENT] + [
            p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])
        env_vars = dict(self.threads.env(), PYTHONPATH=pythonpath,
                        TF_CPP_MIN_LOG_LEVEL=os.environ.get('TF_CPP_MIN_LOG_LEVEL', '2'))
        self.task = ray.remote(num_cpus=1, max_calls=1)(_ray_task).options(
            runtime_env={'env_vars': env_vars})

    def start(self, experiment, log_path):
        from spinup_tf.tools.launch import variant_payload
        return _RayTrial(self.ray, self.task.remote(variant_payload(experiment),
                                                    self.threads.env()))

    def wait(self, handles, timeout):
        refs = [h.ref for h in handles]
        if refs:
            self.ray.wait(refs, num_returns=1, timeout=timeout)
        else:
            time.sleep(timeout)

    def close(self):
        if self.started:
            self.ray.shutdown()


class _RayTrial:
    def __init__(self, ray, ref):
        self.ray, self.ref = ray, ref

    def done(self):
        return bool(self.ray.wait([self.ref], num_returns=1, timeout=0)[0])

    def stop(self, sig=signal.SIGTERM):
        self.ray.cancel(self.ref, force=sig == signal.SIGKILL)

    def outcome(self):
        try:
            status, error = self.ray.get(self.ref)[:2]
        except Exception as exc:  # cancelled, or the worker died
            status, error = 'interrupted', str(exc).splitlines()[0] if str(exc) else 'cancelled'
        return status, error
