"""Experiment grids, Spinning Up style, run one after the other, in parallel, or on Ray.

``ExperimentGrid`` follows ``spinup/utils/run_utils.py``::

    eg = ExperimentGrid('td3_pendulum')
    eg.add('env_name', 'Pendulum-v1', '', True)
    eg.add('seed', [0, 10, 20])
    eg.add('ac_kwargs:hidden_sizes', [[64, 64], [256, 256]], 'hid')
    eg.add('epochs', 5)
    eg.run(td3, workers=2)

* a key with ``:`` builds nested dicts (``ac_kwargs:hidden_sizes`` -> ``ac_kwargs={...}``);
* a variant's name is the grid name plus ``_{shorthand}{value}`` for every key that has several
  values or was added with ``in_name=True`` (never for ``seed``; a key whose values are all
  booleans appears as ``_{shorthand}`` when True and not at all when False); the default
  shorthand is the first three letters of each ``:``-separated part, joined by ``-``;
* each variant runs as ``thunk(**variant)`` with ``seed`` (0 if the grid has none) and
  ``logger_kwargs`` for the folder ``DATA_DIR/NAME/NAME_s{seed}/``; an ``env_name`` value
  becomes ``env_fn``.

``run`` goes further than Spinning Up's: ``workers=N`` runs N variants at once in separate
processes (``spawn``; one BLAS/OpenMP thread each), ``backend='ray'`` runs each variant as a Ray
task with one CPU. A failed variant never stops the others; ``run`` prints a summary table
(variant, status, time, final performance, folder) and returns one ``VariantResult`` per
variant. ``num_cpu`` (Spinning Up's MPI processes per variant) is accepted and ignored.

The thunk must be picklable (a module-level function or an instance of a module-level class)
for ``workers > 1`` and for Ray. This module imports neither TensorFlow nor numpy at import
time, so a worker process can set its thread limits before they load.
"""
import os
import os.path as osp
import pickle
import signal
import string
import sys
import time
import traceback
from collections import deque
from dataclasses import dataclass, field

DIV_LINE_WIDTH = 80
BACKENDS = ('local', 'ray')
RAY_MISSING = "backend 'ray' needs the optional 'ray' package: pip install -r requirements-ray.txt"
# Set in every worker's environment before it starts (so before numpy or TensorFlow load):
# one BLAS/OpenMP thread per variant; the TF sessions already use one intra-op thread.
THREAD_ENV = {'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1',
              'TF_NUM_INTRAOP_THREADS': '1'}
PACKAGE_PARENT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
# Errors whose message says it all: shown without a traceback (as the command line does).
_QUIET_ERRORS = ('UserInputError', 'NonFiniteError', 'FloatingPointError')


# ------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------
def all_bools(vals):
    return all(isinstance(v, bool) for v in vals)


def valid_str(v):
    """A value (or list of values) as a string fit for a path: lower case, ``[-_a-z0-9]``."""
    if hasattr(v, '__name__'):
        return valid_str(v.__name__)
    if isinstance(v, (tuple, list)):
        return '-'.join(valid_str(x) for x in v)
    valid_chars = '-_%s%s' % (string.ascii_letters, string.digits)
    return ''.join(c if c in valid_chars else '-' for c in str(v).lower())


def _get_nested(variant, key):
    """``variant['a']['b']`` for ``key='a:b'`` (a flat key wins when present)."""
    if key in variant:
        return variant[key]
    k0, rest = key.split(':', 1)
    return _get_nested(variant[k0], rest)


def _copy_containers(v):
    """Fresh dicts and lists (so that variants never share mutable values), other objects as is."""
    if isinstance(v, dict):
        return {k: _copy_containers(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy_containers(x) for x in v]
    return v


def _merge(base, top):
    out = dict(base)
    for k, v in top.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _unflatten(flat):
    """``{'a:b': 1, 'a:c': 2, 'd': 3}`` -> ``{'a': {'b': 1, 'c': 2}, 'd': 3}``.

    A plain dict value of ``a`` is the base that nested ``a:...`` keys are merged into.
    """
    out, nested = {}, {}
    for k, v in flat.items():
        if ':' in k:
            k0, rest = k.split(':', 1)
            nested.setdefault(k0, {})[rest] = v
        else:
            out[k] = v
    for k0, sub in nested.items():
        base = out.get(k0, {})
        if not isinstance(base, dict):
            raise ValueError('key %r has both a value and nested keys %s'
                             % (k0, ', '.join('%s:%s' % (k0, s) for s in sub)))
        out[k0] = _merge(base, _unflatten(sub))
    return out


# ------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------
@dataclass
class Experiment:
    """One variant, ready to run: ``thunk(**kwargs)`` writes into ``output_dir``.

    Unpacks as ``fn, kwargs = experiment``.
    """
    exp_name: str
    seed: object
    thunk: object
    kwargs: dict
    output_dir: str

    @property
    def label(self):
        return osp.basename(osp.normpath(self.output_dir))

    def __iter__(self):
        return iter((self.thunk, self.kwargs))


@dataclass
class VariantResult:
    """How one variant ended.

    ``status`` is ``ok``, ``failed``, ``interrupted`` or ``not run``; ``error`` is one line
    (exception type and message, or the exit code); ``performance`` is the last
    ``AverageTestEpRet`` (else ``AverageEpRet``) of the variant's progress.txt, or None.
    """
    label: str
    exp_name: str
    seed: object
    output_dir: str
    status: str = 'not run'
    error: str = ''
    seconds: float = 0.0
    performance: float = None
    performance_key: str = None
    extra: dict = field(default_factory=dict)

    @property
    def ok(self):
        return self.status == 'ok'


def final_performance(output_dir):
    """``(value, column)``: the last ``AverageTestEpRet`` (else ``AverageEpRet``) in
    ``output_dir/progress.txt``; ``(None, None)`` when there is no such file, row or column."""
    path = osp.join(output_dir, 'progress.txt')
    try:
        with open(path) as f:
            lines = [l.rstrip('\n') for l in f if l.strip()]
    except OSError:
        return None, None
    if len(lines) < 2:
        return None, None
    header, last = lines[0].split('\t'), lines[-1].split('\t')
    for key in ('AverageTestEpRet', 'AverageEpRet'):
        if key in header:
            try:
                return float(last[header.index(key)]), key
            except (IndexError, ValueError):
                return None, None
    return None, None


def format_summary(results, seconds=None):
    """The table printed at the end of a grid run (one line per variant)."""
    n_ok = sum(r.ok for r in results)
    n_failed = sum(r.status == 'failed' for r in results)
    head = 'Grid summary: %d of %d variants ok' % (n_ok, len(results))
    if n_failed:
        head += ', %d failed' % n_failed
    others = len(results) - n_ok - n_failed
    if others:
        head += ', %d interrupted or not run' % others
    if seconds is not None:
        head += ' (%.1f s)' % seconds
    rows = [('variant', 'status', 'time', 'performance', 'folder')]
    for r in results:
        perf = '-' if r.performance is None else '%.2f' % r.performance
        rows.append((r.label, r.status, '%.1f s' % r.seconds if r.seconds else '-', perf,
                     r.output_dir))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ['=' * DIV_LINE_WIDTH, head, '']
    for row in rows:
        lines.append('  '.join(c.ljust(w) for c, w in zip(row[:4], widths)) + '  ' + row[4])
    keys = sorted({r.performance_key for r in results if r.performance_key})
    lines += ['', 'performance: the last row\'s %s of each progress.txt'
              % (' / '.join(keys) if keys else 'AverageTestEpRet (else AverageEpRet)')]
    bad = [r for r in results if r.status in ('failed', 'interrupted')]
    if bad:
        lines += ['', 'failed or interrupted:']
        lines += ['  %s: %s' % (r.label, r.error or r.status) for r in bad]
    lines.append('=' * DIV_LINE_WIDTH)
    return '\n'.join(lines)


# ------------------------------------------------------------------------------------------
# The grid
# ------------------------------------------------------------------------------------------
class ExperimentGrid:
    """Tool for running many experiments given hyperparameter ranges (Spinning Up's API)."""

    def __init__(self, name=''):
        self.keys = []
        self.vals = []
        self.shs = []
        self.in_names = []
        self.name(name)

    def name(self, _name):
        if not isinstance(_name, str):
            raise TypeError('the grid name has to be a string, got %r' % (_name,))
        self._name = _name

    def print(self):
        """Print the parameters, their shorthands and values, and the number of variants."""
        from spinup_tf.utils.logx import colorize, convert_json
        print('=' * DIV_LINE_WIDTH)
        base_msg = 'ExperimentGrid %s runs over parameters:\n'
        name_insert = '[' + self._name + ']'
        if len(base_msg % name_insert) <= DIV_LINE_WIDTH:
            msg = base_msg % name_insert
        else:
            msg = base_msg % (name_insert + '\n')
        print(colorize(msg, color='green', bold=True))
        for k, v, sh in zip(self.keys, self.vals, self.shs):
            color_k = colorize(k.ljust(40), color='cyan', bold=True)
            print('', color_k, '[' + sh + ']' if sh is not None else '', '\n')
            for val in v:
                print('\t' + str(convert_json(val)))
            print()
        nvars_total = self.num_variants()
        if 'seed' in self.keys:
            nvars_seedless = nvars_total // len(self.vals[self.keys.index('seed')])
        else:
            nvars_seedless = nvars_total
        print(' Variants, counting seeds: '.ljust(40), nvars_total)
        print(' Variants, not counting seeds: '.ljust(40), nvars_seedless)
        print()
        print('=' * DIV_LINE_WIDTH, flush=True)

    def num_variants(self):
        n = 1
        for v in self.vals:
            n *= len(v)
        return n

    def _default_shorthand(self, key):
        """First three letters of each ``:``-separated part (non-alphanumerics sheared off),
        joined by ``-``: ``ac_kwargs:hidden_sizes`` -> ``ac-hid``."""
        valid_chars = '%s%s' % (string.ascii_letters, string.digits)

        def shear(x):
            return ''.join(z for z in x[:3] if z in valid_chars)
        return '-'.join(shear(x) for x in key.split(':'))

    def add(self, key, vals, shorthand=None, in_name=False):
        """Add a parameter ``key`` with its values ``vals`` (a list, or one value).

        Args:
            key (str): name of the parameter; ``a:b`` is ``b`` inside the dict ``a``.
            vals: a list of values, or a single value (anything that is not a list).
            shorthand (str): short name used in variant names (default: see
                ``_default_shorthand``).
            in_name (bool): put this parameter in variant names even with one value.
        """
        if not isinstance(key, str):
            raise TypeError('a key must be a string, got %r' % (key,))
        if shorthand is not None and not isinstance(shorthand, str):
            raise TypeError('a shorthand must be a string, got %r' % (shorthand,))
        if key in self.keys:
            raise ValueError('key %r was already added to the grid' % key)
        if not isinstance(vals, list):
            vals = [vals]
        if not vals:
            raise ValueError('key %r needs at least one value' % key)
        if shorthand is None:
            shorthand = self._default_shorthand(key)
        self.keys.append(key)
        self.vals.append(vals)
        self.shs.append(shorthand)
        self.in_names.append(in_name)

    def variant_name(self, variant):
        """The experiment name of ``variant`` (a dict as ``variants()`` makes them).

        The grid name, then ``_{shorthand}{value}`` for each parameter with several values or
        ``in_name=True``; never the seed, so that seeds of one configuration share a name.
        """
        var_name = self._name
        for k, v, sh, inn in zip(self.keys, self.vals, self.shs, self.in_names):
            if (len(v) > 1 or inn) and not k == 'seed':
                param_name = sh if sh is not None else k
                var_name += self._name_part(param_name, v, _get_nested(variant, k))
        return var_name.lstrip('_')

    def _name_part(self, param_name, vals, value):
        """Spinning Up's rule for one parameter's part of a variant name."""
        param_name = valid_str(param_name)
        if all_bools(vals):
            return ('_' + param_name) if value else ''
        return '_' + param_name + valid_str(value)

    def _variants(self, keys, vals):
        """Every combination of values, the first key varying slowest."""
        if len(keys) == 1:
            pre_variants = [dict()]
        else:
            pre_variants = self._variants(keys[1:], vals[1:])
        variants = []
        for val in vals[0]:
            for pre_v in pre_variants:
                v = {keys[0]: val}
                v.update(pre_v)
                variants.append(v)
        return variants

    def variants(self):
        """A list of dicts, one per combination of values, with ``a:b`` keys nested:
        ``{'a:b': 1, 'a:c': 2}`` gives ``{'a': {'b': 1, 'c': 2}}``."""
        if not self.keys:
            return [dict()]
        flat = self._variants(self.keys, self.vals)
        return [_unflatten({k: _copy_containers(v) for k, v in var.items()}) for var in flat]

    def experiments(self, thunk, data_dir=None, datestamp=False):
        """The variants as ``Experiment`` objects, checked and ready to run (nothing runs).

        ``thunk`` is a callable, or the name of a grid key whose values are callables.
        Each variant gets ``seed`` (0 if the grid has none) and ``logger_kwargs`` (unless it
        has them already) for ``data_dir/NAME/NAME_s{seed}``; an ``env_name`` value is turned
        into ``env_fn``. Raises ``ValueError`` when two variants would share a folder.
        """
        from spinup_tf.utils.logx import setup_logger_kwargs
        if not (callable(thunk) or (isinstance(thunk, str) and thunk in self.keys)):
            raise TypeError('thunk must be a callable or the name of a grid key, got %r'
                            % (thunk,))
        out, folders = [], {}
        for var in self.variants():
            exp_name = self.variant_name(var)
            if isinstance(thunk, str):
                thunk_ = var.pop(thunk)
            else:
                thunk_ = thunk
            seed = var.pop('seed', 0)
            kwargs = dict(var, seed=seed)
            if 'env_name' in kwargs:
                from spinup_tf.utils.envs import EnvFn
                kwargs['env_fn'] = EnvFn(kwargs.pop('env_name'))
            if 'logger_kwargs' not in kwargs:
                kwargs['logger_kwargs'] = setup_logger_kwargs(exp_name, seed, data_dir,
                                                              datestamp)
            output_dir = kwargs['logger_kwargs'].get('output_dir') or ''
            key = osp.abspath(output_dir)
            if key in folders:
                raise ValueError('variants %s (seed %s) and %s (seed %s) would both write to '
                                 '%s; give them different values or names'
                                 % (folders[key][0], folders[key][1], exp_name, seed,
                                    output_dir))
            folders[key] = (exp_name, seed)
            out.append(Experiment(exp_name, seed, thunk_, kwargs, output_dir))
        return out

    def run(self, thunk, num_cpu=1, data_dir=None, datestamp=False, workers=1,
            backend='local', address=None):
        """Run every variant with ``thunk``; returns one ``VariantResult`` per variant.

        Args:
            thunk: the function to run (e.g. ``td3``), or the name of a grid key whose
                values are functions.
            num_cpu: ignored (Spinning Up's MPI processes per variant; there is no MPI here).
            data_dir (str): where run folders go (default ``./data``).
            datestamp (bool): prefix folders with the date and time.
            workers (int or 'auto'): with ``backend='local'``, how many variants run at once,
                each in its own process ('auto': the number of physical cores). 1 runs them
                one after the other in this process.
            backend (str): ``'local'`` or ``'ray'`` (one Ray task with ``num_cpus=1`` per
                variant; the cluster's CPUs decide how many run at once).
            address (str): Ray cluster to connect to (``ray.init(address=...)``); None starts
                a local Ray instance for the run (or uses the one already initialised).

        A failing variant is reported and the others go on. Ctrl-C (or SIGTERM) lets running
        variants save their model and stop, prints the summary, and is raised again.
        """
        workers = check_launch(workers, backend, address)
        experiments = self.experiments(thunk, data_dir, datestamp)
        self.print()
        announce(experiments)
        return run_experiments(experiments, workers=workers, backend=backend, address=address)


# ------------------------------------------------------------------------------------------
# Launching
# ------------------------------------------------------------------------------------------
def physical_cores():
    """Number of physical CPU cores this process may use (``os.cpu_count()`` as fallback)."""
    logical = os.cpu_count() or 1
    try:
        logical = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    cores = None
    try:
        import psutil
        cores = psutil.cpu_count(logical=False)
    except ImportError:
        try:
            pairs, phys = set(), None
            with open('/proc/cpuinfo') as f:
                for line in f:
                    k, _, v = line.partition(':')
                    k = k.strip()
                    if k == 'physical id':
                        phys = v.strip()
                    elif k == 'core id':
                        pairs.add((phys, v.strip()))
            cores = len(pairs) or None
        except OSError:
            pass
    return max(1, min(cores or logical, logical))


def resolve_workers(workers):
    """``workers`` as a positive int (``'auto'``: ``physical_cores()``); ValueError if bad."""
    if workers == 'auto':
        return physical_cores()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError("workers must be a positive integer or 'auto', got %r" % (workers,))
    return workers


def check_launch(workers, backend, address):
    """Check the launch options before anything runs; returns the number of workers.

    Raises ``ValueError`` for bad values and ``ImportError`` (``RAY_MISSING``) when
    ``backend='ray'`` but ray cannot be imported.
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
        # Ray folds "repeated" log lines of different workers together; our epoch tables
        # repeat on purpose.
        os.environ.setdefault('RAY_DEDUP_LOGS', '0')
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ImportError(RAY_MISSING) from None
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
    run each in a fresh ``spawn`` process; ``backend='ray'`` runs them as Ray tasks.
    KeyboardInterrupt (Ctrl-C, or SIGTERM turned into one) is raised again after the summary.
    """
    out = out or sys.stdout
    workers = check_launch(workers, backend, address)
    results = [VariantResult(e.label, e.exp_name, e.seed, e.output_dir) for e in experiments]
    start = time.time()
    interrupt = None
    try:
        if backend == 'ray':
            _run_ray(experiments, results, address, out)
        elif workers == 1:
            _run_in_process(experiments, results, out)
        else:
            _run_spawned(experiments, results, workers, out)
    except KeyboardInterrupt as e:
        interrupt = e
    print(format_summary(results, time.time() - start), file=out, flush=True)
    if interrupt is not None:
        raise interrupt
    return results


def _error_line(exc):
    msg = str(exc).strip().splitlines()
    return '%s: %s' % (type(exc).__name__, msg[0] if msg else '')


def _report_exception(exc, label):
    """Print a failed variant's error on stderr: one line for user errors, else a traceback."""
    sys.stdout.flush()
    if any(c.__name__ in _QUIET_ERRORS for c in type(exc).__mro__):
        print('error: %s' % exc, file=sys.stderr)
    else:
        traceback.print_exc()
    print('variant %s failed: %s' % (label, _error_line(exc)), file=sys.stderr, flush=True)


def _call(thunk, kwargs, label):
    """Run one variant here; returns ``(status, error)``. KeyboardInterrupt goes on."""
    try:
        thunk(**kwargs)
        return 'ok', ''
    except Exception as e:  # a failed variant never stops the grid
        _report_exception(e, label)
        return 'failed', _error_line(e)


def _detail(status, error):
    return ' - ' + error if error and error != status else ''


def _finish(result, status, error, seconds):
    result.status, result.error, result.seconds = status, error, seconds
    result.performance, result.performance_key = final_performance(result.output_dir)


def _run_in_process(experiments, results, out):
    n = len(experiments)
    for i, (e, r) in enumerate(zip(experiments, results)):
        print('\n[grid] variant %d/%d: %s' % (i + 1, n, e.label), file=out, flush=True)
        t0 = time.time()
        try:
            status, error = _call(e.thunk, e.kwargs, e.label)
        except KeyboardInterrupt:
            _finish(r, 'interrupted', 'interrupted', time.time() - t0)
            raise
        _finish(r, status, error, time.time() - t0)


# ---------------------------------- local processes ---------------------------------------
def _payload(e):
    try:
        return pickle.dumps((e.thunk, e.kwargs))
    except Exception as exc:
        raise TypeError('variant %s cannot be sent to a worker process (%s); the thunk and '
                        'its arguments must be picklable: use a module-level function'
                        % (e.label, _error_line(exc))) from None


class _Interrupted(KeyboardInterrupt):
    """SIGTERM in a worker: stop like Ctrl-C (the algorithm saves its model)."""


def _raise_interrupt(signum, frame):
    raise _Interrupted()


def _worker_main(payload, out_conn, result_conn):
    """Entry point of a ``spawn`` worker: output into the pipe, run, send the result."""
    os.environ.update(THREAD_ENV)
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
        status, error = _call(thunk, kwargs, label)
    except KeyboardInterrupt:
        status, error = 'interrupted', 'interrupted'
    except Exception as e:  # unpickling failed
        _report_exception(e, '?')
        status, error = 'failed', _error_line(e)
    sys.stdout.flush()
    sys.stderr.flush()
    result_conn.send((status, error))
    result_conn.close()
    sys.exit(0 if status == 'ok' else 1)


class _Child:
    def __init__(self, ctx, experiment, payload, out):
        self.experiment = experiment
        self.label = experiment.label
        self.out = out
        self.reader, writer = ctx.Pipe(duplex=False)
        self.result_reader, result_writer = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_worker_main, args=(payload, writer, result_writer),
                                name='grid-' + self.label)
        saved = {k: os.environ.get(k) for k in THREAD_ENV}
        os.environ.update(THREAD_ENV)  # inherited by the new process from its first line
        try:
            self.proc.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
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


def _run_spawned(experiments, results, workers, out):
    import multiprocessing
    from multiprocessing.connection import wait
    ctx = multiprocessing.get_context('spawn')
    payloads = [_payload(e) for e in experiments]  # every variant picklable before any starts
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
            print('[grid] %s: %s%s (%.1f s)' % (c.label, status, _detail(status, error),
                                                seconds), file=out, flush=True)

    try:
        while pending or running:
            while pending and len(running) < workers:
                i = pending.popleft()
                running[i] = _Child(ctx, experiments[i], payloads[i], out)
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


# ---------------------------------------- Ray ---------------------------------------------
class RayStartError(RuntimeError):
    """``ray.init`` failed (no cluster at the address, ...); no variant has run."""


def _ray_task(payload):
    """A variant inside a Ray worker; returns ``(status, error, seconds, performance, key)``."""
    os.environ.update(THREAD_ENV)
    t0 = time.time()
    thunk, kwargs = pickle.loads(payload)
    output_dir = kwargs.get('logger_kwargs', {}).get('output_dir', '')
    try:
        status, error = _call(thunk, kwargs, osp.basename(osp.normpath(output_dir)))
    except KeyboardInterrupt:
        status, error = 'interrupted', 'interrupted'
    sys.stdout.flush()
    sys.stderr.flush()
    return (status, error, time.time() - t0) + final_performance(output_dir)


def _run_ray(experiments, results, address, out):
    import ray
    payloads = []
    for e, r in zip(experiments, results):
        # Workers may run elsewhere, in another folder: absolute paths only.
        lk = dict(e.kwargs.get('logger_kwargs') or {})
        if lk.get('output_dir'):
            lk['output_dir'] = osp.abspath(lk['output_dir'])
            r.output_dir = lk['output_dir']
        payloads.append(_payload(Experiment(e.exp_name, e.seed, e.thunk,
                                            dict(e.kwargs, logger_kwargs=lk), e.output_dir)))
    started = False
    if not ray.is_initialized():
        init_kwargs = dict(address=address)
        if address is None and not os.environ.get('RAY_ADDRESS'):
            init_kwargs.update(include_dashboard=False)
        try:
            ray.init(**init_kwargs)
        except Exception as exc:
            raise RayStartError('could not %s: %s' % (
                'connect to the Ray cluster at %s' % address if address else
                'start a local Ray instance', _error_line(exc))) from exc
        started = True
    try:
        pythonpath = os.pathsep.join(
            [PACKAGE_PARENT] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
                                if p])
        env_vars = dict(THREAD_ENV, PYTHONPATH=pythonpath,
                        TF_CPP_MIN_LOG_LEVEL=os.environ.get('TF_CPP_MIN_LOG_LEVEL', '2'))
        if 'TF_ENABLE_ONEDNN_OPTS' in os.environ:  # the user's choice, if any, goes along
            env_vars['TF_ENABLE_ONEDNN_OPTS'] = os.environ['TF_ENABLE_ONEDNN_OPTS']
        # max_calls=1: a fresh worker process per variant, as with the local backend.
        task = ray.remote(num_cpus=1, max_calls=1)(_ray_task).options(
            runtime_env={'env_vars': env_vars})
        refs = {}
        for i, p in enumerate(payloads):
            refs[task.remote(p)] = i
            print('[grid] submitted %s to Ray' % results[i].label, file=out, flush=True)
        try:
            while refs:
                done, _ = ray.wait(list(refs), num_returns=1)
                for ref in done:
                    i = refs.pop(ref)
                    r = results[i]
                    try:
                        status, error, seconds, perf, key = ray.get(ref)
                    except Exception as exc:  # the worker died, or the task could not start
                        status, error, seconds, perf, key = 'failed', _error_line(exc), 0.0, \
                            None, None
                    r.status, r.error, r.seconds = status, error, seconds
                    r.performance, r.performance_key = perf, key
                    if perf is None:
                        r.performance, r.performance_key = final_performance(r.output_dir)
                    print('[grid] %s: %s%s (%.1f s)' % (r.label, status, _detail(status, error),
                                                        r.seconds), file=out, flush=True)
        except KeyboardInterrupt:
            for ref, i in refs.items():
                ray.cancel(ref)
                results[i].status = 'interrupted'
                results[i].error = 'cancelled'
            raise
    finally:
        if started:
            ray.shutdown()
