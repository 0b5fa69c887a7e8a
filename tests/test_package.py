"""spinup_tf as a package: ``pip install -e .`` into a fresh virtual environment, the
``spinup-tf`` console script, ``python -m spinup_tf``, and ``from spinup_tf import td3`` from
another folder without TensorFlow until an algorithm is called."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh(code, cwd):
    proc = subprocess.run([sys.executable, '-c', code], cwd=cwd, capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='2'))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_algorithms_import_lazily_and_match_the_registry(tmp_path):
    out = fresh('import sys, pickle\n'
                'from spinup_tf import td3, ppo, sac, ddpg, vpg, trpo, npg\n'
                'import spinup_tf\n'
                'print("tf", "tensorflow" in sys.modules, "algos" in str(list(sys.modules)))\n'
                'print(td3.__doc__.splitlines()[0])\n'
                'print(pickle.loads(pickle.dumps(ppo)) is not None, repr(npg))\n'
                'from spinup_tf.algos import ALGOS\n'
                'print(tuple(ALGOS) == spinup_tf.ALGORITHMS)\n'
                'try:\n    spinup_tf.a2c\nexcept AttributeError as e:\n    print(e)\n',
                str(tmp_path))
    lines = out.splitlines()
    assert lines[0] == 'tf False False'  # neither TensorFlow nor the registry yet
    assert lines[1].startswith('Twin Delayed Deep Deterministic Policy Gradient')
    assert lines[2] == 'True spinup_tf.npg'
    assert lines[3] == 'True'
    assert "has no attribute 'a2c'" in lines[4]


def test_python_m_spinup_tf_is_the_command_line(tmp_path):
    proc = subprocess.run([sys.executable, '-m', 'spinup_tf', 'tune', 'a2c', '--env',
                           'Pendulum-v1', '--trials', '2'], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: unknown algorithm 'a2c'")


def docs_example():
    """The Python example of the docs' Getting started page, section "The same from
    Python" (it was the README's "Install as a package" example before the README became one
    screen)."""
    text = open(os.path.join(ROOT, 'docs', 'getting-started.md')).read()
    section = text.split('## The same from Python', 1)[1].split('\n## ', 1)[0]
    return re.search(r'```python\n(.*?)```', section, re.S).group(1)


@pytest.mark.packaging
def test_pip_install_e_into_a_fresh_venv(tmp_path):
    venv = tmp_path / 'venv'
    # --system-site-packages: TensorFlow and the rest come from this interpreter's site
    # packages, so nothing large is downloaded; the package itself must come from the install.
    subprocess.run([sys.executable, '-m', 'venv', '--system-site-packages', str(venv)],
                   check=True, timeout=300)
    bin_dir = venv / 'bin'
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV')}
    env.update(TF_CPP_MIN_LOG_LEVEL='2', MPLBACKEND='Agg', PATH='%s:%s' % (
        bin_dir, env.get('PATH', '')))
    proc = subprocess.run([str(bin_dir / 'pip'), 'install', '-q', '-e', ROOT], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    proc = subprocess.run([str(bin_dir / 'spinup-tf'), '--help'], cwd=str(elsewhere),
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and 'python run.py tune ALGO' in proc.stdout, proc.stderr
    # The docs' example, run from another folder with the venv's interpreter.
    (elsewhere / 'example.py').write_text(
        'import spinup_tf, sys\n'
        'assert spinup_tf.__file__.startswith(%r), spinup_tf.__file__\n'
        'assert "tensorflow" not in sys.modules\n' % os.path.join(ROOT, 'spinup_tf')
        + docs_example())
    proc = subprocess.run([str(bin_dir / 'python'), 'example.py'], cwd=str(elsewhere),
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [os.path.join(d, f) for d, _, files in os.walk(str(elsewhere)) for f in files
            if f == 'progress.txt']
    assert len(runs) == 1
    rows = open(runs[0]).read().splitlines()
    assert len(rows) == 3  # the header and the example's two epochs
