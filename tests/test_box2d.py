"""box2d envs (``gymnasium[box2d]`` in requirements.txt): LunarLanderContinuous-v3 trains a
few steps with an off-policy (TD3) and an on-policy (PPO) algorithm."""
import csv
import math

import pytest

from spinup_tf.utils.envs import EnvFn


def _rows(run_dir):
    return list(csv.DictReader(open(run_dir / 'progress.txt'), delimiter='\t'))


@pytest.mark.parametrize('algo', ['td3', 'ppo'])
def test_lunar_lander_continuous_trains(tmp_path, algo):
    from spinup_tf.algos import get_algo
    kwargs = dict(env_fn=EnvFn('LunarLanderContinuous-v3'), ac_kwargs=dict(hidden_sizes=[16]),
                  epochs=2, steps_per_epoch=150, max_ep_len=60,
                  logger_kwargs=dict(output_dir=str(tmp_path), exp_name=algo))
    if algo == 'td3':
        kwargs.update(start_steps=50, update_after=50, update_every=25, num_test_episodes=1,
                      batch_size=32)
    else:
        kwargs.update(train_pi_iters=3, train_v_iters=3)
    get_algo(algo)(**kwargs)
    rows = _rows(tmp_path)
    assert [int(float(r['Epoch'])) for r in rows] == [1, 2]
    assert int(float(rows[-1]['TotalEnvInteracts'])) == 300
    key = 'LossQ' if algo == 'td3' else 'LossPi'
    assert all(math.isfinite(float(r[key])) for r in rows)
    assert (tmp_path / 'tf1_save').is_dir()
