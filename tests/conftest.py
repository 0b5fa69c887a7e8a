"""Shared test set-up: quiet TensorFlow, headless matplotlib, repo root importable."""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
os.environ.setdefault('MPLBACKEND', 'Agg')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def pytest_configure(config):
    # `-n 2` alone means pytest-xdist's `load` mode, which hands each worker its tests in
    # batches up front and never takes them back: on 2 cores the last ~8 minutes of the
    # suite ran one worker while the other sat idle (sampled from /proc/stat, 1.2 of 2 cores
    # busy). `worksteal` lets an idle worker take queued tests from the busy one.
    if getattr(config.option, 'dist', 'no') == 'load':
        config.option.dist = 'worksteal'
    config.addinivalue_line(
        'markers', 'expensive: about a minute or more on 2 cores (a multi-seed learning test); '
        '`-m "not expensive"` leaves them out, `python -m pytest -q` (CI) runs them')
    config.addinivalue_line(
        'markers', 'packaging: installs the package into a fresh virtual environment '
        '(pip install -e .); CI runs it with the rest')


# The longest tests (each half a minute or more on 2 cores), started first: pytest-xdist
# hands tests out in collection order, so a long one collected last would leave the other
# worker idle at the end. Only the order changes; every test still runs.
LONG_FIRST = (
    'tests/test_grid.py::test_ray_backend_on_a_local_instance',
    'tests/test_package.py::test_pip_install_e_into_a_fresh_venv',
    'tests/test_reproduce_script.py::test_a_tiny_sitting_runs_the_three_variants',
    'tests/test_learning.py',
    'tests/test_repeatable.py',
    'tests/test_cli.py::test_run_plot_test_policy_end_to_end',
    'tests/test_grid.py::test_four_variants_with_two_workers',
    'tests/test_full_disk.py::test_disk_full_mid_run_stops_cleanly_and_resume_continues',
    'tests/test_resume_cli.py',
    'tests/test_fused.py',
    'tests/test_docs_browser.py',
    'tests/test_docs.py::test_committed_results_are_what_the_committed_progress_files_make',
)


def pytest_collection_modifyitems(config, items):
    """Put the tests of ``LONG_FIRST`` first (in its order, then their own), the rest after
    in collection order."""
    def rank(item):
        for i, prefix in enumerate(LONG_FIRST):
            if item.nodeid.startswith(prefix):
                return i
        return len(LONG_FIRST)
    items[:] = sorted(items, key=rank)  # sorted is stable: the rest keep their order


def load_plot_script(name):
    """The module of ``plots/<name>.py`` (the scripts are not a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, 'plots', name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cli_env():
    """The environment of the tests' CLI calls: quiet TensorFlow, no display."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', MPLBACKEND='Agg')
    env.pop('DISPLAY', None)
    return env


class _Zygote:
    """One ``tests/cli_zygote.py`` process, which forks one CLI process at a time."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, 'tests', 'cli_zygote.py')],
            cwd=ROOT, env=cli_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0)
        self.pending = b''

    def alive(self):
        return self.proc.poll() is None

    def reply(self, deadline=None):
        """The next JSON line from the zygote; None if ``deadline`` passes first."""
        fd = self.proc.stdout.fileno()
        while b'\n' not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], wait)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError('tests/cli_zygote.py ended unexpectedly')
            self.pending += chunk
        line, self.pending = self.pending.split(b'\n', 1)
        return json.loads(line)

    def fork(self, **request):
        """Start the request's process; returns its pid."""
        self.proc.stdin.write((json.dumps(request) + '\n').encode())
        return self.reply()['pid']


class _Zygotes:
    """The zygotes of this test process: an idle one serves the next call, a new one starts
    when all are busy (a started process holds its zygote until it has been waited for)."""

    def __init__(self):
        self.idle = []
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            while self.idle:
                zygote = self.idle.pop()
                if zygote.alive():
                    return zygote
        return _Zygote()

    def give_back(self, zygote):
        with self.lock:
            self.idle.append(zygote)


_zygotes = _Zygotes()


def _forked_run(script, args, cwd, env, timeout):
    zygote = _zygotes.take()
    with tempfile.TemporaryDirectory() as tmp:
        out, err = os.path.join(tmp, 'stdout'), os.path.join(tmp, 'stderr')
        pid = zygote.fork(script=script, args=args, cwd=cwd, env=env, stdout=out, stderr=err)
        done = zygote.reply(time.monotonic() + timeout)
        if done is None:  # the child and its grid workers, as subprocess.run would
            os.killpg(pid, signal.SIGKILL)
            zygote.reply()
        stdout, stderr = (open(f, encoding='utf-8', errors='replace').read()
                          for f in (out, err))
    _zygotes.give_back(zygote)
    if done is None:
        raise subprocess.TimeoutExpired(args, timeout, stdout, stderr)
    return subprocess.CompletedProcess(args, done['returncode'], stdout, stderr)


class ForkedProcess:
    """A CLI process started by :func:`start_cli`, used like a ``subprocess.Popen`` with
    ``stdin`` and ``stdout`` pipes (text): ``pid``, ``send_signal``, ``wait``, ``returncode``."""

    def __init__(self, zygote, pid, stdin, stdout, fifo_dir):
        self.zygote, self.pid, self.stdin, self.stdout = zygote, pid, stdin, stdout
        self.fifo_dir, self.returncode = fifo_dir, None

    def send_signal(self, sig):
        if self.returncode is None:
            os.kill(self.pid, sig)

    def wait(self, timeout=None):
        if self.returncode is None:
            done = self.zygote.reply(None if timeout is None else time.monotonic() + timeout)
            if done is None:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            self.returncode = done['returncode']
            _zygotes.give_back(self.zygote)
            self.fifo_dir.cleanup()
        return self.returncode


def start_cli(script, args, env, stderr_path):
    """``python SCRIPT ARGS`` (a script that ends in ``run.py``, such as
    ``tests/sentinel_run.py``) started from a zygote, with pipes for stdin and stdout and its
    stderr written to ``stderr_path``; returns its :class:`ForkedProcess`."""
    zygote = _zygotes.take()
    fifo_dir = tempfile.TemporaryDirectory()
    fifo_in, fifo_out = (os.path.join(fifo_dir.name, n) for n in ('stdin', 'stdout'))
    os.mkfifo(fifo_in)
    os.mkfifo(fifo_out)
    pid = zygote.fork(script=str(script), args=[str(a) for a in args], cwd=ROOT, env=dict(env),
                      stdin=fifo_in, stdout=fifo_out, stderr=str(stderr_path))
    stdin = open(fifo_in, 'w')  # the child opens its ends in this order too
    stdout = open(fifo_out, 'r')
    return ForkedProcess(zygote, pid, stdin, stdout, fifo_dir)


def run_cli(*args, cwd=None, env=None, timeout=600, fresh=False):
    """``python run.py ARGS`` in ``cwd`` (the repo root) with ``env`` (``cli_env()``);
    returns the CompletedProcess (text stdout and stderr).

    The call is a child forked from ``tests/cli_zygote.py``, which has the imports done;
    ``fresh=True`` starts a new interpreter instead, for a test of the start-up itself.
    """
    args = [str(a) for a in args]
    cwd = str(cwd or ROOT)
    env = cli_env() if env is None else dict(env)
    if not fresh:
        return _forked_run(os.path.join(ROOT, 'run.py'), args, cwd, env, timeout)
    return subprocess.run([sys.executable, os.path.join(ROOT, 'run.py')] + args,
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def run_script(script, *args, cwd=None, timeout=600):
    """``python SCRIPT ARGS``, forked from a zygote as :func:`run_cli` does; returns the
    CompletedProcess."""
    return _forked_run(str(script), [str(a) for a in args], str(cwd or ROOT), cli_env(),
                       timeout)


@pytest.fixture
def cli():
    return run_cli
