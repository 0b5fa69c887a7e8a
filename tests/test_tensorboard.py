"""--tensorboard mirrors every progress column, with TotalEnvInteracts as the step."""
import csv
import glob

from conftest import run_cli


def test_every_column_reaches_tensorboard(tmp_path):
    from spinup_tf.utils.tf1 import tf
    proc = run_cli('ddpg', '--env', 'Pendulum-v1', '--epochs', '2', '--steps_per_epoch', '200',
                   '--start_steps', '100', '--update_after', '100', '--num_test_episodes', '1',
                   '--max_ep_len', '100', '--hid', '[16,16]', '--tensorboard', 'True',
                   '--exp_name', 'tb', '--data_dir', tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = tmp_path / 'tb' / 'tb_s0'
    rows = list(csv.DictReader(open(run / 'progress.txt'), delimiter='\t'))
    events = glob.glob(str(run / 'tensorboard' / 'events.*'))
    assert len(events) == 1
    seen, graph = {}, False
    for event in tf.train.summary_iterator(events[0]):
        graph = graph or bool(event.graph_def)
        for value in event.summary.value:
            seen[(value.tag, event.step)] = value.simple_value
    assert graph
    for row in rows:
        step = int(float(row['TotalEnvInteracts']))
        for key, text in row.items():
            assert abs(seen[(key, step)] - float(text)) <= 1e-5 * max(1.0, abs(float(text))), key
