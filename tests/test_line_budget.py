"""What a plain TD3 run makes a reader follow stays within issue 53's budget: at most 6 files
and 450 distinct executed lines of ``spinup_tf/`` outside ``utils/``, ``tools/`` and
``saving/`` (``bench/line_trace.py``, in a fresh process so that every import counts)."""
import os.path as osp
import re
import subprocess
import sys

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
COMMAND = ['td3', '--env', 'Pendulum-v1', '--epochs', '2', '--steps_per_epoch', '300',
           '--start_steps', '100', '--update_after', '100', '--update_every', '50',
           '--fused', 'False']


def test_a_plain_td3_run_executes_at_most_6_files_and_450_lines():
    out = subprocess.run([sys.executable, osp.join(ROOT, 'bench', 'line_trace.py'),
                          '--by-file', '--'] + COMMAND, cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    match = re.search(r'outside utils/tools/saving: (\d+) files, (\d+) distinct lines',
                      out.stdout)
    assert match, out.stdout[-2000:]
    files, lines = int(match.group(1)), int(match.group(2))
    listed = re.findall(r'^\s*(\d+)\s+(\S+)$', out.stdout, re.M)
    outside = {path: int(n) for n, path in listed
               if path.split('/')[0] not in ('utils', 'tools', 'saving')}
    assert lines == sum(outside.values())  # the summary adds up the files it lists
    assert set(outside) == {'algos/td3.py', 'algos/core.py', 'loops/__init__.py',
                            'loops/off_policy.py', 'loops/skeleton.py', 'loops/hooks.py',
                            'loops/replay_buffer.py'}, sorted(outside)
    assert files <= 6 and lines <= 450, (files, lines, outside)
