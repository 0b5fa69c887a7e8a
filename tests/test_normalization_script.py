"""plots/normalization.py: table from progress files; --no-run never empties a table."""
import os.path as osp
import subprocess
import sys

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
SCRIPT = osp.join(ROOT, 'plots', 'normalization.py')


def write_progress(path, returns):
    import os
    os.makedirs(osp.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write('Epoch\tAverageEpRet\tTotalEnvInteracts\n')
        for i, r in enumerate(returns):
            f.write('%d\t%s\t%d\n' % (i + 1, r, 4000 * (i + 1)))


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, '--no-run'] + list(args),
                          capture_output=True, text=True)


def test_table_is_mean_of_last_epochs_and_kept_when_no_data(tmp_path):
    sys.path.insert(0, osp.join(ROOT, 'plots'))
    import normalization
    data, out = tmp_path / 'data', tmp_path / 'out'
    out.mkdir()
    for seed, base in enumerate([100.0, 300.0]):
        write_progress(normalization.run_folder(str(data), 'off', seed) + '/progress.txt',
                       [0.0] * 5 + [base] * 10)
        write_progress(normalization.run_folder(str(data), 'on', seed) + '/progress.txt',
                       [0.0] * 5 + [2 * base] * 10)
    proc = run('--seeds', '2', '--epochs', '15', '--data_dir', str(data), '--out', str(out))
    assert proc.returncode == 0, proc.stderr
    table = (out / 'RESULTS.md').read_text()
    assert '| 2 | 60000 | 200 ± 100 | 100, 300 |' in table      # off: last 10 epochs only
    assert '| 2 | 60000 | 400 ± 200 | 200, 600 |' in table      # on
    assert (out / 'ppo_halfcheetah.png').stat().st_size > 0
    proc = run('--data_dir', str(tmp_path / 'empty'), '--out', str(out))
    assert proc.returncode == 0 and 'RESULTS.md kept' in proc.stdout
    assert (out / 'RESULTS.md').read_text() == table
