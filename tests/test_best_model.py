"""tf1_save_best/: the model of the epoch with the best mean deterministic test return;
``test_policy --best``; on-policy ``num_test_episodes`` (mean action, argmax)."""
import csv
import json
from types import SimpleNamespace

import pytest

from spinup_tf.utils.best_model import keep_best, save_best
from spinup_tf.utils.envs import EnvFn


def _rows(run_dir):
    return list(csv.DictReader(open(run_dir / 'progress.txt'), delimiter='\t'))


def test_keep_best_saves_only_on_improvement():
    saved = []
    logger = SimpleNamespace(epoch_dict={}, save_state=lambda d, suffix='': saved.append(
        (d, suffix)))
    state = {}
    assert not keep_best(logger, state, 1, save_best(logger))  # no test episodes
    logger.epoch_dict = {'TestEpRet': [1.0]}
    assert not keep_best(logger, state, 1, None) and state == {}  # no model to save
    for epoch, returns in enumerate([[-5.0, -3.0], [-6.0, -1.0], [-2.0, -4.0], [-10.0]], 1):
        logger.epoch_dict = {'TestEpRet': returns}
        keep_best(logger, state, epoch, save_best(logger))
    # means -4, -3.5, -3 (ties do not replace), -10
    assert saved == [({'epoch': 1, 'AverageTestEpRet': -4.0}, '_best'),
                     ({'epoch': 2, 'AverageTestEpRet': -3.5}, '_best'),
                     ({'epoch': 3, 'AverageTestEpRet': -3.0}, '_best')]
    assert state['best_test_return'] == -3.0


def test_off_policy_best_model_and_test_policy_best(tmp_path, capsys):
    from spinup_tf.algos import get_algo
    from spinup_tf.tools import test_policy
    get_algo('td3')(env_fn=EnvFn('Pendulum-v1'), ac_kwargs=dict(hidden_sizes=[8]), epochs=3,
                    steps_per_epoch=100, start_steps=50, update_after=50, update_every=50,
                    num_test_episodes=2, max_ep_len=30,
                    logger_kwargs=dict(output_dir=str(tmp_path)))
    returns = [float(r['AverageTestEpRet']) for r in _rows(tmp_path)]
    info = json.loads((tmp_path / 'tf1_save_best' / 'model_info.json').read_text())
    best = max(returns)
    assert info['state']['epoch'] == returns.index(best) + 1
    assert abs(info['state']['AverageTestEpRet'] - best) <= 1e-4 * max(1.0, abs(best))
    capsys.readouterr()
    assert test_policy.main([str(tmp_path), '--best', '--norender', '--episodes', '1',
                             '--len', '5']) == 0
    assert 'Mean EpRet' in capsys.readouterr().out


@pytest.mark.parametrize('env_id', ['CartPole-v1', 'Pendulum-v1'])
def test_on_policy_test_episodes_with_the_deterministic_policy(tmp_path, env_id):
    from spinup_tf.algos import get_algo
    from spinup_tf.tools.test_policy import load_policy
    get_algo('ppo')(env_fn=EnvFn(env_id), ac_kwargs=dict(hidden_sizes=[8]), epochs=2,
                    steps_per_epoch=100, train_pi_iters=2, train_v_iters=2, max_ep_len=50,
                    num_test_episodes=2, logger_kwargs=dict(output_dir=str(tmp_path)))
    rows = _rows(tmp_path)
    assert {'AverageTestEpRet', 'MaxTestEpRet', 'TestEpLen'} <= set(rows[0])
    info = json.loads((tmp_path / 'tf1_save_best' / 'model_info.json').read_text())
    assert 'mu' in info['outputs']
    get_action, sess = load_policy(str(tmp_path), best=True)
    import numpy as np
    o = np.zeros(4 if env_id == 'CartPole-v1' else 3)
    assert np.array_equal(get_action(o), get_action(o))  # deterministic
    sess.close()


def test_on_policy_default_has_no_test_episodes(tmp_path):
    from spinup_tf.algos import get_algo
    get_algo('vpg')(env_fn=EnvFn('CartPole-v1'), ac_kwargs=dict(hidden_sizes=[8]), epochs=1,
                    steps_per_epoch=100, train_v_iters=2,
                    logger_kwargs=dict(output_dir=str(tmp_path)))
    assert 'AverageTestEpRet' not in _rows(tmp_path)[0]
    assert not (tmp_path / 'tf1_save_best').exists()
    info = json.loads((tmp_path / 'tf1_save' / 'model_info.json').read_text())
    assert sorted(info['outputs']) == ['pi', 'v']
