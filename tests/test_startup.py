"""A quiet start-up, and ``--help`` / argument errors that answer without TensorFlow."""
import inspect
import json
import os
import re
import subprocess
import sys

import pytest

from spinup_tf.algos import ALGOS, LOOPS, algo_docstring, parameters
from spinup_tf.utils import flags
from spinup_tf.utils.quiet import filter_noise

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Calls cli.main on argv (JSON) in a fresh interpreter; prints the exit code and whether
# TensorFlow was imported.
PROBE = """
import json, sys
sys.path.insert(0, %r)
from spinup_tf.tools.cli import main
try:
    rc = main(json.loads(sys.argv[1]))
except SystemExit as e:
    rc = e.code
print('PROBE', rc, 'tensorflow' in sys.modules)
"""


def _probe(*argv):
    proc = subprocess.run([sys.executable, '-c', PROBE % REPO, json.dumps(list(argv))],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    last = [l for l in proc.stdout.splitlines() if l.startswith('PROBE')][-1].split()
    return int(last[1]), last[2] == 'True', proc


@pytest.mark.parametrize('argv', [['--help'], ['td3', '--help'], ['ppo', '-h'], ['npg', '--help'],
                                  ['plot', '--help'], ['test_policy', '--help'],
                                  ['resume', '--help']])
def test_help_exits_0_without_tensorflow(argv):
    rc, imported, proc = _probe(*argv)
    assert rc == 0, proc.stderr
    assert not imported
    assert 'Traceback' not in proc.stderr


def test_help_names_the_command():
    rc, _, proc = _probe('plot', '--help')
    assert proc.stdout.startswith('usage: run.py plot')
    rc, _, proc = _probe('resume', '--help')
    assert 'usage: python run.py resume RUN_DIR' in proc.stdout


@pytest.mark.parametrize('argv', [
    ['td3', '--env', 'Pendulum-v1', '--epochs', 'x'],
    ['td3', '--env', 'Pendulum-v1', '--bogus', '1'],
    ['sac', '--env', 'Pendulum-v1', '--act', 'nope'],
    ['ppo', '--env', 'NoSuchEnv-v0'],
    ['vpg'],
])
def test_argument_errors_without_tensorflow(argv):
    rc, imported, proc = _probe(*argv)
    assert rc == 2
    assert not imported
    errors = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(errors) == 1 and errors[0].startswith('error: '), proc.stderr


GRID_PROBE = """
import sys
sys.path.insert(0, %r)
import spinup_tf.tools.cli as cli
cli.run_experiments = lambda experiments, **kw: print(
    'PROBE', len(experiments), 'tensorflow' in sys.modules) or []
cli.main(sys.argv[1:])
"""


def test_a_grid_of_workers_is_planned_without_tensorflow(tmp_path):
    """``--workers 2``: the runs import TensorFlow in their workers (forked from a server
    that imported it once); the command that plans them does not, so the server's import is
    the only one a grid waits for."""
    proc = subprocess.run([sys.executable, '-c', GRID_PROBE % REPO, 'td3', '--env',
                           'Pendulum-v1', '--seed', '0', '1', '--workers', '2', '--data_dir',
                           str(tmp_path)], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert 'PROBE 2 False' in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize('name', list(ALGOS))
def test_parameters_read_from_source_are_the_signature(name):
    """The ast reading of the source gives what importing the module gives."""
    from spinup_tf.algos import get_algo
    import importlib
    fn = get_algo(name)
    expected = {}
    for key, p in inspect.signature(fn).parameters.items():
        if p.kind == p.VAR_KEYWORD:
            loop = importlib.import_module('spinup_tf.loops.' + LOOPS[name])
            expected.update(loop.OPTIONS)
        else:
            expected[key] = p.default
    got = parameters(name)
    assert list(got) == list(expected)
    for key, default in expected.items():
        value = got[key].default
        if default is inspect.Parameter.empty:
            assert value is default, key
        elif callable(default):
            assert isinstance(value, flags.Reference) and value.__name__ == default.__name__
        else:
            assert value == default and type(value) is type(default), key
    assert algo_docstring(name) == inspect.getdoc(fn)


@pytest.mark.parametrize('name', list(ALGOS))
def test_every_parameter_is_documented(name):
    module, fn = ALGOS[name]
    doc = algo_docstring(name)
    for key in flags.signature_parameters(module, fn):
        assert re.search(r'^\s*%s\b' % re.escape(key), doc, re.M), (name, key)
    # the loop's options are documented beside their defaults in --help
    comments = flags.option_comments('spinup_tf.loops.' + LOOPS[name])
    own = flags.signature_parameters(module, fn)
    for key in parameters(name):
        assert key in own or comments.get(key), (name, key)


def test_noise_filter_keeps_real_problems():
    text = ('WARNING: All log messages before absl::InitializeLog() is called are written to '
            'STDERR\n'
            'I0000 00:00:1796121845.419641    5433 cudart_stub.cc:31] Could not find cuda '
            'drivers on your machine, GPU will not be used.\n'
            'I0000 00:00:1796121856.435639    5638 port.cc:153] oneDNN custom operations are '
            'on. You may see slightly different numerical results.\n'
            'E0000 00:00:1796121862.467081    5638 cuda_platform.cc:52] failed call to cuInit: '
            'INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n'
            'E0000 00:00:1796121862.467081    5638 something.cc:1] a real problem\n'
            'Traceback (most recent call last):\n')
    assert filter_noise(text) == ('E0000 00:00:1796121862.467081    5638 something.cc:1] a '
                                  'real problem\nTraceback (most recent call last):\n')


def test_tensorflow_starts_quietly():
    """Importing the graph helpers and opening a session writes none of the notices (on a
    machine without a GPU: none of the error-level lines either)."""
    code = ('import sys; sys.path.insert(0, %r)\n'
            'from spinup_tf.utils.tf1 import tf, make_session\n'
            'g = tf.Graph()\n'
            'with g.as_default():\n'
            '    c = tf.constant(1.0)\n'
            'print(make_session(g).run(c))\n' % REPO)
    env = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '1.0'
    assert filter_noise(proc.stderr) == proc.stderr
    assert 'absl' not in proc.stderr and 'cuInit' not in proc.stderr
    if not os.path.exists('/proc/driver/nvidia'):
        assert not re.search(r'^E\d{4} ', proc.stderr, re.M), proc.stderr


def test_tensorflows_objects_are_frozen_out_of_the_collector():
    """After the graph helpers' import, TensorFlow's objects are in the permanent generation
    (``gc.freeze``), so a full collection while the graph is built does not scan them."""
    code = ('import gc, sys; sys.path.insert(0, %r)\n'
            'before = gc.get_freeze_count()\n'
            'from spinup_tf.utils import tf1\n'
            'print(before, gc.get_freeze_count(), len(gc.get_objects()))\n' % REPO)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    before, frozen, tracked = map(int, proc.stdout.split())
    assert before == 0 and frozen > 100000  # TensorFlow's import leaves hundreds of thousands
    assert tracked < frozen / 10  # what the collector still scans is what came after
