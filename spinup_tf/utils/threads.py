"""How many threads one run may use: decided once, from the runs at once and the cores.

The grid launcher calls ``decide(workers, cores)`` once and hands the result to every run it
starts as environment variables (``Threads.env()``), set before the run's process imports
numpy or TensorFlow; ``spinup_tf.utils.tf1.make_session`` reads ``SPINUP_TF_THREADS`` back
with ``session_threads()``.

* **One run has the machine** (``workers == 1``): TensorFlow's session uses one intra-op and
  two inter-op threads (the settings measured fastest for one run on a 2-core machine), the
  numerical libraries keep their own defaults.
* **The runs fill the cores** (``workers >= cores``): each run gets one core: one intra-op and
  one inter-op thread, one OpenMP/OpenBLAS/MKL thread. With two pools per run, two runs on
  two cores take turns on each core rather than run side by side.
* **Cores to spare** (``1 < workers < cores``): each run gets ``cores // workers`` cores:
  one intra-op and two inter-op threads, BLAS/OpenMP limited to its share.

``--workers auto`` is ``auto_workers``: the physical cores that other processes leave idle
at launch, at least one.

This module imports neither numpy nor TensorFlow.
"""
import os
import time
from dataclasses import dataclass

ENV_VAR = 'SPINUP_TF_THREADS'
BLAS_VARS = ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')


@dataclass(frozen=True)
class Threads:
    """One run's share: TF session pools and the BLAS/OpenMP threads (None: the library's
    default, i.e. leave the variables as they are)."""
    intra_op: int
    inter_op: int
    blas: int = None

    def env(self):
        """The environment variables a run's process needs, before numpy/TF are imported."""
        env = {ENV_VAR: '%d,%d' % (self.intra_op, self.inter_op),
               'TF_NUM_INTRAOP_THREADS': str(self.intra_op),
               'TF_NUM_INTEROP_THREADS': str(self.inter_op)}
        if self.blas is not None:
            env.update({k: str(self.blas) for k in BLAS_VARS})
        return env

    def describe(self):
        return 'TF intra-op %d, inter-op %d; OpenMP/BLAS %s' % (
            self.intra_op, self.inter_op, 'default' if self.blas is None else self.blas)


ALONE = Threads(intra_op=1, inter_op=2)        # one run on the machine (today's settings)
ONE_CORE = Threads(intra_op=1, inter_op=1, blas=1)  # one run per core


def decide(workers, cores):
    """The ``Threads`` of each run when ``workers`` runs share ``cores`` cores."""
    if workers < 1 or cores < 1:
        raise ValueError('workers and cores must be positive, got %r and %r'
                         % (workers, cores))
    if workers == 1:
        return ALONE
    share = cores // workers
    if share <= 1:
        return ONE_CORE
    return Threads(intra_op=ALONE.intra_op, inter_op=ALONE.inter_op, blas=share)


def describe_decision(workers, cores, threads):
    """The one line the launcher logs at start-up."""
    return '%d run%s at once on %d core%s: each run %s' % (
        workers, '' if workers == 1 else 's', cores, '' if cores == 1 else 's',
        threads.describe())


def session_threads(environ=None):
    """``(intra_op, inter_op)`` for a TF session: from ``SPINUP_TF_THREADS`` (``'1,1'``) when
    the launcher set it, else ``ALONE``'s."""
    value = (os.environ if environ is None else environ).get(ENV_VAR)
    if not value:
        return ALONE.intra_op, ALONE.inter_op
    try:
        intra, inter = (int(x) for x in value.split(','))
    except ValueError:
        raise ValueError('%s must be "INTRA,INTER" (two integers), got %r'
                         % (ENV_VAR, value)) from None
    if intra < 0 or inter < 0:
        raise ValueError('%s must hold non-negative thread counts, got %r' % (ENV_VAR, value))
    return intra, inter


class applied:
    """Context manager: ``threads.env()`` in ``os.environ`` (inherited by processes started
    inside), restored on exit."""

    def __init__(self, threads):
        self.env = threads.env()
        self.saved = None

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        return False


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


def busy_cores(interval=0.25, path='/proc/stat', cores=None):
    """How many of the physical cores other processes keep busy right now: the machine's busy
    fraction over ``interval`` seconds (``/proc/stat``; this process sleeps meanwhile) times
    ``cores`` (default ``physical_cores()``). 0.0 where ``/proc/stat`` cannot be read."""
    cores = physical_cores() if cores is None else cores
    try:
        busy0, total0 = _cpu_ticks(path)
        time.sleep(interval)
        busy1, total1 = _cpu_ticks(path)
    except (OSError, ValueError, IndexError):
        return 0.0
    if total1 <= total0:
        return 0.0
    return cores * (busy1 - busy0) / float(total1 - total0)


def _cpu_ticks(path):
    """``(busy, total)`` jiffies of all CPUs, from the first line of ``/proc/stat``."""
    with open(path) as f:
        fields = f.readline().split()
    if fields[0] != 'cpu':
        raise ValueError('unexpected first line in %s' % path)
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
    idle = ticks[3] + ticks[4]
    return sum(ticks) - idle, sum(ticks)


def auto_workers(cores, busy):
    """``--workers auto``: the cores that ``busy`` (cores kept busy by other processes) leaves
    idle, rounded, between 1 and ``cores``.

    Measured on a 2-core machine: when the cores are free, a worker per core gives the most
    env steps/s; when other processes already keep them busy, a second worker gains nothing
    and pays its start-up, so one worker was as fast or faster.
    """
    return max(1, min(cores, int(cores - busy + 0.5)))
