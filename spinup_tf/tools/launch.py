"""Launching a grid's experiments: here one after the other, or in local worker processes.

``run_experiments`` checks the launch options, decides once how many threads each run may use
(``spinup_tf.utils.threads.decide``, from the runs at once and the physical cores; logged in
one line), runs the variants, prints the summary table and returns one ``VariantResult`` per
variant. ``workers=1`` runs them in this process; more run each in a fresh process, forked from a
server that imported numpy and TensorFlow once with the grid's thread settings in its
environment (``spawn`` where there is no fork server);
``backend='ray'`` hands them to ``spinup_tf.tools.ray_backend``. A failed variant never stops
the others; Ctrl-C (or SIGTERM) lets running variants save their model and is raised again
after the summary.

The thunk must be picklable (a module-level function or an instance of a module-level class)
for ``workers > 1`` and for Ray. This module imports neither TensorFlow nor numpy at import
time, so a worker process can set its thread limits before they load.
"""
import os
import os.path as osp
import pickle
import signal
import sys
import time
from collections import deque

from spinup_tf.tools.variant import (call_variant, error_line, report_exception, status_detail,
                                     variant_payload)
from spinup_tf.tools.results import DIV_LINE_WIDTH, VariantResult, final_performance, \
    format_summary
from spinup_tf.utils.threads import ONE_CORE, applied, auto_workers, busy_cores, decide, \
    describe_decision, physical_cores

BACKENDS = ('local', 'ray')
# Errors whose message says it all: shown without a traceback (as the command line does).


def resolve_workers(workers, out=None):
    """``workers`` as a positive int; ValueError if bad. ``'auto'``: ``threads.auto_workers``
    (the physical cores other processes leave idle now, at least 1), said in one line."""
    if workers == 'auto':
        cores = physical_cores()
        busy = busy_cores(cores=cores)
        workers = auto_workers(cores, busy)
        print('[grid] --workers auto: %d (%d core%s, %.1f kept busy by other processes)'
              % (workers, cores, '' if cores == 1 else 's', busy), file=out or sys.stdout,
              flush=True)
        return workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError("workers must be a positive integer or 'auto', got %r" % (workers,))
    return workers


def check_launch(workers, backend, address):
    """Check the launch options before anything runs; returns the number of workers.

    Raises ``ValueError`` for bad values and ``ImportError`` (``ray_backend.RAY_MISSING``)
    when ``backend='ray'`` but ray cannot be imported.
    """
    if backend not in BACKENDS:
        raise ValueError('backend must be one of %s, got %r' % (', '.join(BACKENDS), backend))
    workers = resolve_workers(workers)
    if backend != 'ray' and address is not None:
        raise ValueError("an address is for backend 'ray'")
    if backend == 'ray':
        if workers != 1:
            raise ValueError("workers is for backend 'local'; with Ray every variant is a task "
                             "with one CPU and the cluster's CPUs decide how many run at once")
        from spinup_tf.tools.ray_backend import check_ray
        check_ray()
    return workers


def announce(experiments):
    from spinup_tf.utils.logx import colorize
    names = '\n'.join(e.label for e in experiments)
    print('\n%s\n\n%s\n\n%s' % (colorize('Preparing to run the following experiments...',
                                         color='green', bold=True), names,
                                '=' * DIV_LINE_WIDTH), flush=True)


def run_experiments(experiments, workers=1, backend='local', address=None, out=None):
    """Run ``Experiment`` objects; print the summary table; return the ``VariantResult``s.

    ``workers=1`` with ``backend='local'`` runs them here, one after the other; more workers
    run each in a fresh process (``_worker_context``); ``backend='ray'`` runs them as Ray
    tasks. Each run's threads are decided here, once (``run_threads``), and logged in one line.
    KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one) is raised again after the summary.
    """
    out = out or sys.stdout
    workers = check_launch(workers, backend, address)
    results = [VariantResult(e.label, e.exp_name, e.seed, e.output_dir) for e in experiments]
    start = time.time()
    interrupt = None
    threads, line = run_threads(workers, len(experiments), backend)
    print('[grid] threads: ' + line, file=out, flush=True)
    try:
        if backend == 'ray':
            from spinup_tf.tools.ray_backend import run_ray
            run_ray(experiments, results, address, threads, out)
        elif workers == 1:
            with applied(threads):
                _run_in_process(experiments, results, out)
        else:
            _run_spawned(experiments, results, workers, threads, out)
    except KeyboardInterrupt as e:
        interrupt = e
    print(format_summary(results, time.time() - start), file=out, flush=True)
    if interrupt is not None:
        raise interrupt
    return results


def run_threads(workers, n_experiments, backend='local'):
    """``(Threads, log line)`` for every run of a grid: ``threads.decide`` from the variants
    that run at once and this machine's physical cores; a Ray task has one CPU."""
    if backend == 'ray':
        return ONE_CORE, 'every Ray task (one CPU each): ' + ONE_CORE.describe()
    at_once = max(1, min(workers, n_experiments))
    cores = physical_cores()
    threads = decide(at_once, cores)
    return threads, describe_decision(at_once, cores, threads)


def _finish(result, status, error, seconds):
    result.status, result.error, result.seconds = status, error, seconds
    result.performance, result.performance_key = final_performance(result.output_dir)


def _run_in_process(experiments, results, out):
    n = len(experiments)
    for i, (e, r) in enumerate(zip(experiments, results)):
        print('\n[grid] variant %d/%d: %s' % (i + 1, n, e.label), file=out, flush=True)
        t0 = time.time()
        try:
            status, error = call_variant(e.thunk, e.kwargs, e.label)
        except KeyboardInterrupt:
            _finish(r, 'interrupted', 'interrupted', time.time() - t0)
            raise
        _finish(r, status, error, time.time() - t0)


# ---------------------------------- local processes ---------------------------------------
class _Interrupted(KeyboardInterrupt):
    """SIGTERM in a worker: stop like Ctrl-C (the algorithm saves its model)."""


def _raise_interrupt(signum, frame):
    raise _Interrupted()


def _worker_main(payload, out_conn, result_conn, thread_env):
    """Entry point of a worker process: output into the pipe, run, send the result."""
    os.environ.update(thread_env)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out_conn.fileno(), 1)
    os.dup2(out_conn.fileno(), 2)
    out_conn.close()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except AttributeError:
            pass
    # The parent turns Ctrl-C into one SIGTERM per worker, so that a worker is never
    # interrupted twice while it saves its model.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The training loop stops at its next env step (a raise from the handler could land
    # inside TensorFlow's C++ code); before training starts, stop at once.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        thunk, kwargs = pickle.loads(payload)
        label = osp.basename(osp.normpath(kwargs.get('logger_kwargs', {}).get('output_dir', '')))
        from spinup_tf.utils.signals import request_stop
        signal.signal(signal.SIGTERM, request_stop)
        status, error = call_variant(thunk, kwargs, label)
    except KeyboardInterrupt:
        status, error = 'interrupted', 'interrupted'
    except Exception as e:  # unpickling failed
        report_exception(e, '?')
        status, error = 'failed', error_line(e)
    sys.stdout.flush()
    sys.stderr.flush()
    result_conn.send((status, error))
    result_conn.close()
    sys.exit(0 if status == 'ok' else 1)


class _Child:
    def __init__(self, ctx, experiment, payload, threads, out):
        self.experiment = experiment
        self.label = experiment.label
        self.out = out
        self.reader, writer = ctx.Pipe(duplex=False)
        self.result_reader, result_writer = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_worker_main,
                                args=(payload, writer, result_writer, threads.env()),
                                name='grid-' + self.label)
        with applied(threads):  # inherited by the new process from its first line
            self.proc.start()
        writer.close()
        result_writer.close()
        self.start = time.time()
        self.partial = b''
        self.result = None
        self.exited = None

    def read_output(self):
        """Copy what the worker printed to ``out``, each line prefixed; False at EOF."""
        try:
            data = os.read(self.reader.fileno(), 1 << 16)
        except OSError:
            data = b''
        if not data:
            if self.partial:
                self._emit(self.partial + b'\n')
                self.partial = b''
            self.reader.close()
            self.reader = None
            return False
        data = self.partial + data
        cut = data.rfind(b'\n') + 1
        self.partial = data[cut:]
        if cut:
            self._emit(data[:cut])
        return True

    def _emit(self, chunk):
        text = chunk.decode('utf-8', 'replace')
        prefix = '[%s] ' % self.label
        self.out.write(''.join(prefix + line + '\n' for line in text.splitlines()))
        self.out.flush()

    def poll_result(self):
        try:
            if self.result is None and self.result_reader.poll():
                self.result = self.result_reader.recv()
        except (EOFError, OSError):
            pass

    @property
    def done(self):
        if self.proc.exitcode is None:
            return False
        if self.reader is not None:
            # Output left in the pipe is read first; a process the variant started and left
            # behind may hold the pipe open: stop waiting for it a few seconds after the exit.
            self.exited = self.exited or time.time()
            if time.time() - self.exited > 5:
                self.reader.close()
                self.reader = None
        return self.reader is None

    def signal(self, sig):
        if self.proc.exitcode is None and self.proc.pid:
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def outcome(self):
        self.proc.join()
        self.poll_result()
        self.result_reader.close()
        code = self.proc.exitcode
        if self.result is not None:
            status, error = self.result
        elif code is not None and code < 0:
            status, error = 'failed', 'killed by signal %d' % -code
        else:
            status, error = 'failed', 'exited with code %s' % code
        if status == 'ok' and code != 0:
            status, error = 'failed', 'exited with code %s' % code
        return status, error, time.time() - self.start


# Imported once by the fork server, so that a worker starts without importing them: TensorFlow
# alone costs about 4 CPU-seconds here, more than the training of a short variant.
FORKSERVER_PRELOAD = ['numpy', 'spinup_tf.utils.tf1', 'gymnasium']
_forkserver = {'env': None}  # the thread settings this process's fork server started with


def _worker_context(threads, experiments):
    """The ``multiprocessing`` context that starts the workers.

    ``forkserver``: one server process imports numpy, TensorFlow, gymnasium and the thunks'
    modules once, with ``threads``' settings in its environment (the numerical libraries read
    them at import), and forks every worker from there. ``spawn`` (each worker imports
    everything itself) where there is no fork server, or where this process's already runs
    with other thread settings.
    """
    import multiprocessing
    from spinup_tf.algos import ALGOS
    env = threads.env()
    if 'forkserver' not in multiprocessing.get_all_start_methods() or \
            _forkserver['env'] not in (None, env):
        return multiprocessing.get_context('spawn')
    ctx = multiprocessing.get_context('forkserver')
    if _forkserver['env'] is None:
        modules = {getattr(e.thunk, '__module__', None) or type(e.thunk).__module__
                   for e in experiments}
        # An algorithm run by name (AlgoThunk): its module too, with its loop and engines
        modules |= {ALGOS[e.thunk.name][0] for e in experiments
                    if getattr(e.thunk, 'name', None) in ALGOS}
        if any(e.kwargs.get('fused', True) for e in experiments):
            modules |= {'spinup_tf.fast', 'spinup_tf.fast.on_policy'}
        ctx.set_forkserver_preload(FORKSERVER_PRELOAD + sorted(
            m for m in modules if m and m not in ('__main__', 'builtins')))
        _forkserver['env'] = env  # it starts with the first worker, inside applied(threads)
    return ctx


def _run_spawned(experiments, results, workers, threads, out):
    from multiprocessing.connection import wait
    ctx = _worker_context(threads, experiments)
    # Every variant picklable before any starts.
    payloads = [variant_payload(e) for e in experiments]
    pending = deque(range(len(experiments)))
    running = {}
    n = len(experiments)
    interrupt = None

    def pump():
        handles = {}
        for i, c in running.items():
            if c.reader is not None:
                handles[c.reader] = (i, 'out')
            if c.proc.exitcode is None:
                handles[c.proc.sentinel] = (i, 'exit')
        if handles:
            for h in wait(list(handles), timeout=1.0):
                i, kind = handles[h]
                if kind == 'out':
                    running[i].read_output()
        for i in [i for i, c in running.items() if c.done]:
            c = running.pop(i)
            status, error, seconds = c.outcome()
            _finish(results[i], status, error, seconds)
            print('[grid] %s: %s%s (%.1f s)' % (c.label, status,
                                                status_detail(status, error), seconds),
                  file=out, flush=True)

    try:
        while pending or running:
            while pending and len(running) < workers:
                i = pending.popleft()
                running[i] = _Child(ctx, experiments[i], payloads[i], threads, out)
                print('[grid] started %s (%d/%d, pid %d)' % (running[i].label, i + 1, n,
                                                            running[i].proc.pid),
                      file=out, flush=True)
            pump()
    except KeyboardInterrupt as e:
        interrupt = e
        print('[grid] interrupted: stopping %d running variant(s); each saves its model'
              % len(running), file=out, flush=True)
        for c in running.values():
            c.signal(signal.SIGTERM)
        try:
            while running:
                pump()
        except KeyboardInterrupt:
            for c in running.values():
                c.signal(signal.SIGKILL)
            for i, c in list(running.items()):
                while c.reader is not None:
                    c.read_output()
                status, error, seconds = c.outcome()
                _finish(results[i], 'interrupted', error, seconds)
            running.clear()
    if interrupt is not None:
        raise interrupt
