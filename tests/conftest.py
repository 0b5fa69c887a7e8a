"""Shared test set-up: quiet TensorFlow, headless matplotlib, repo root importable."""
import os
import subprocess
import sys

import pytest

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
os.environ.setdefault('MPLBACKEND', 'Agg')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'expensive: about a minute or more on 2 cores (a multi-seed learning test); '
        '`-m "not expensive"` leaves them out, `python -m pytest -q` (CI) runs them')


def load_plot_script(name):
    """The module of ``plots/<name>.py`` (the scripts are not a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, 'plots', name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cli(*args, cwd=None, timeout=600):
    """Run ``python run.py ARGS`` in a subprocess; returns the CompletedProcess."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2', MPLBACKEND='Agg')
    env.pop('DISPLAY', None)
    return subprocess.run([sys.executable, os.path.join(ROOT, 'run.py')] + [str(a) for a in args],
                          cwd=cwd or ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def cli():
    return run_cli
