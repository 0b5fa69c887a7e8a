"""--tensorboard for the on-policy algorithms too: every progress column in the event file."""
import csv
import glob

from spinup_tf.utils.envs import EnvFn


def test_ppo_columns_reach_tensorboard(tmp_path):
    from spinup_tf.algos import get_algo
    from spinup_tf.utils.tf1 import tf
    get_algo('ppo')(env_fn=EnvFn('CartPole-v1'), ac_kwargs=dict(hidden_sizes=[8]), epochs=2,
                    steps_per_epoch=100, train_pi_iters=2, train_v_iters=2, tensorboard=True,
                    num_test_episodes=1, logger_kwargs=dict(output_dir=str(tmp_path)))
    rows = list(csv.DictReader(open(tmp_path / 'progress.txt'), delimiter='\t'))
    events = glob.glob(str(tmp_path / 'tensorboard' / 'events.*'))
    assert len(events) == 1
    seen = {}
    for event in tf.train.summary_iterator(events[0]):
        for value in event.summary.value:
            seen[(value.tag, event.step)] = value.simple_value
    assert 'AverageTestEpRet' in rows[0]
    for row in rows:
        step = int(float(row['TotalEnvInteracts']))
        for key, text in row.items():
            assert abs(seen[(key, step)] - float(text)) <= 1e-5 * max(1.0, abs(float(text))), key
