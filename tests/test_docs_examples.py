"""The Python examples of the documentation, run as a reader would run them.

* ``docs/user-guide/outputs.md``: its blocks, in order, in a fresh folder: a small PPO run,
  then reading ``progress.txt`` and ``config.json``, loading the saved policy with
  ``load_policy`` and playing one episode, then loading the SavedModel with TensorFlow.
* ``docs/user-guide/logger.md``: the block that logs a loop of one's own with
  ``EpochLogger``; the ``progress.txt`` it writes has the columns the page names.

Each runs in a subprocess, from a temporary folder, with this checkout on ``PYTHONPATH``.
"""
import os
import re
import subprocess
import sys

from conftest import ROOT

DOCS = os.path.join(ROOT, 'docs')


def python_blocks(page):
    """The fenced ``python`` blocks of a page of docs/, in order."""
    text = open(os.path.join(DOCS, page), encoding='utf-8').read()
    return re.findall(r'^```python\n(.*?)^```$', text, re.M | re.S)


def run_example(code, folder, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT, SPINUP_PROGRESS='0', TF_CPP_MIN_LOG_LEVEL='2')
    script = folder / 'example.py'
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], cwd=str(folder), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-4000:]
    return proc.stdout


def test_outputs_page_trains_reads_and_loads_a_policy(tmp_path):
    blocks = python_blocks('user-guide/outputs.md')
    assert len(blocks) == 3
    assert 'load_policy(run)' in blocks[1] and 'saved_model.loader.load' in blocks[2]
    out = run_example('\n'.join(blocks), tmp_path)
    run = tmp_path / 'data' / 'ppo_cartpole'
    for name in ('progress.txt', 'config.json', 'tf1_save/saved_model.pb',
                 'tf1_save/model_info.json'):
        assert (run / name).exists(), name
    assert re.search(r'^epochs \[1\. 2\. 3\.\] mean return \[', out, re.M), out[-2000:]
    assert re.search(r'^ppo CartPole-v1 gamma 0\.99$', out, re.M), out[-2000:]
    episode = re.search(r'^one episode of the saved policy: return (\d+\.\d+)$', out, re.M)
    assert episode and 1 <= float(episode.group(1)) <= 500, out[-2000:]
    assert re.search(r'^V\(s\) at the last observation: \[-?\d', out, re.M), out[-2000:]


def test_logger_page_example_writes_the_columns_it_names(tmp_path):
    blocks = python_blocks('user-guide/logger.md')
    assert len(blocks) == 1
    run_example(blocks[0], tmp_path)
    progress = tmp_path / 'data' / 'my_experiment' / 'my_experiment_s0' / 'progress.txt'
    lines = progress.read_text().splitlines()
    header = lines[0].split('\t')
    named = re.search(r'progress\.txt: (.*?)\n(?!#)', blocks[0], re.S).group(1)
    assert header == [c.strip('# ,\n') for c in re.split(r',\s*(?:#\s*)?', named)]
    assert len(lines) == 4
