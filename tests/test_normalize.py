"""--normalize_obs / --normalize_rew: running statistics against a hand computation, saved
with the model (test_policy) and in the checkpoint (resume); off by default."""
import json

import numpy as np
import gymnasium as gym

from spinup_tf.utils.normalize import (RunningMeanStd, Normalization, NormalizedEnv,
                                       normalize_envs, observation_normalizer, CLIP, EPS)
from spinup_tf.utils.envs import EnvFn


def test_running_mean_and_variance_by_hand():
    xs = np.array([[1.0, -2.0], [3.0, 0.0], [8.0, 4.0], [-4.0, 1.0]])
    rms = RunningMeanStd((2,))
    assert np.all(rms.var == 1.0)  # before any sample: identity scale
    for x in xs:
        rms.update(x)
    # mean (1+3+8-4)/4 = 2, (-2+0+4+1)/4 = 0.75; population variance
    assert np.allclose(rms.mean, [2.0, 0.75])
    assert np.allclose(rms.var, [((1 - 2) ** 2 + 1 + 36 + 36) / 4,
                                 (2.75 ** 2 + 0.75 ** 2 + 3.25 ** 2 + 0.25 ** 2) / 4])
    copy = RunningMeanStd((2,))
    copy.load_state_dict(json.loads(json.dumps(rms.state_dict())))
    assert np.array_equal(copy.mean, rms.mean) and np.array_equal(copy.var, rms.var)


class Scripted(gym.Env):
    """Observations 10, 20, 30, ... and rewards 1, 2, 3, ...; ends after 3 steps."""
    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float64)
    action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, seed=None, options=None):
        self.t = 0
        return np.array([0.0]), {}

    def step(self, a):
        self.t += 1
        return np.array([10.0 * self.t]), float(self.t), self.t == 3, False, {}


def test_wrapper_normalises_as_computed_by_hand():
    stats = Normalization(RunningMeanStd((1,)), RunningMeanStd())
    env = NormalizedEnv(Scripted(), stats, gamma=0.5)
    o, _ = env.reset()
    assert o[0] == 0.0  # first obs 0: mean 0, var 0 -> 0
    o, r, term, trunc, info = env.step(0)
    # obs seen: 0, 10 -> mean 5, var 25 -> (10 - 5) / 5 = 1
    assert np.isclose(o[0], (10 - 5) / np.sqrt(25 + EPS))
    # discounted returns seen: 1 -> var 0 -> r / sqrt(0 + eps), clipped
    assert r == CLIP and info['raw_reward'] == 1.0
    o, r, term, trunc, info = env.step(0)
    # obs 0, 10, 20: mean 10, var 200/3; returns 1, 0.5 * 1 + 2 = 2.5: var 0.5625
    assert np.isclose(o[0], (20 - 10) / np.sqrt(200 / 3 + EPS))
    assert np.isclose(r, 2 / np.sqrt(0.5625 + EPS)) and info['raw_reward'] == 2.0
    env.step(0)
    assert env.discounted == 0.0  # reset at the episode's end
    test_env = NormalizedEnv(Scripted(), stats, update=False)
    n = stats.obs.count
    o, _ = test_env.reset()
    o, r, *_ = test_env.step(0)
    assert stats.obs.count == n and r == 1.0  # reads the statistics, leaves rewards alone
    assert np.isclose(o[0], (10 - stats.obs.mean[0]) / np.sqrt(stats.obs.var[0] + EPS))


def test_off_by_default_leaves_envs_alone():
    class Logger:
        model_extras = {}
    envs = [Scripted()]
    assert normalize_envs(envs, dict(gamma=0.99), Logger()) is envs
    assert Logger.model_extras == {}


def test_saved_with_the_model_and_used_by_test_policy(tmp_path):
    from spinup_tf.algos import get_algo
    from spinup_tf.tools.test_policy import load_policy
    get_algo('td3')(env_fn=EnvFn('Pendulum-v1'), ac_kwargs=dict(hidden_sizes=[8]), epochs=1,
                    steps_per_epoch=150, start_steps=50, update_after=50, update_every=50,
                    num_test_episodes=1, max_ep_len=50, normalize_obs=True,
                    normalize_rew=True, logger_kwargs=dict(output_dir=str(tmp_path)))
    info = json.loads((tmp_path / 'tf1_save' / 'model_info.json').read_text())
    saved = info['normalization']
    assert saved['obs']['count'] == 150 + 4  # every step's obs, and 4 resets' (3 episodes)
    assert saved['ret']['count'] == 150
    state = json.loads((tmp_path / 'checkpoint' / 'state.json').read_text())
    assert state['model_extras']['normalization'] == saved
    config = json.loads((tmp_path / 'config.json').read_text())
    assert config['normalize_obs'] is True and config['normalize_rew'] is True

    # test_policy feeds the policy normalised observations: the same action as the saved
    # model on the hand-normalised observation
    get_action, sess = load_policy(str(tmp_path))
    raw, sess_raw = _raw_policy(str(tmp_path))
    normalize = observation_normalizer(info)
    o = np.array([0.3, -0.9, 1.7])
    mean, var = np.array(saved['obs']['mean']), np.array(saved['obs']['m2']) / 154
    by_hand = np.clip((o - mean) / np.sqrt(var + EPS), -CLIP, CLIP)
    assert np.allclose(normalize(o), by_hand, atol=1e-6)
    assert np.allclose(get_action(o), raw(by_hand.astype(np.float32)), atol=1e-6)
    assert not np.allclose(get_action(o), raw(o.astype(np.float32)))
    sess.close()
    sess_raw.close()

    # resume picks the statistics up from the checkpoint
    from spinup_tf.tools.resume import resume_kwargs
    _, kwargs = resume_kwargs(str(tmp_path))
    assert kwargs['normalize_obs'] is True and kwargs['normalize_rew'] is True


def _raw_policy(run_dir):
    """The saved model without normalisation (the rebuilt policy's raw action)."""
    from spinup_tf.tools.test_policy import load_policy
    policy, sess = load_policy(run_dir)
    return policy.raw, sess


def test_on_policy_logs_the_env_returns(tmp_path):
    """CartPole pays 1 a step: with --normalize_rew the logged return is still the length."""
    import csv
    from spinup_tf.algos import get_algo
    get_algo('ppo')(env_fn=EnvFn('CartPole-v1'), ac_kwargs=dict(hidden_sizes=[8]), epochs=1,
                    steps_per_epoch=200, train_pi_iters=2, train_v_iters=2,
                    normalize_obs=True, normalize_rew=True,
                    logger_kwargs=dict(output_dir=str(tmp_path)))
    row = list(csv.DictReader(open(tmp_path / 'progress.txt'), delimiter='\t'))[-1]
    assert float(row['AverageEpRet']) == float(row['EpLen'])
    info = json.loads((tmp_path / 'tf1_save' / 'model_info.json').read_text())
    assert info['normalization']['ret']['count'] == 200


def test_checkpoint_keeps_the_statistics(tmp_path):
    """A checkpoint holds the running statistics and a restore puts them back."""
    from spinup_tf.utils.checkpoint import Checkpointer
    from spinup_tf.utils.logx import EpochLogger
    logger = EpochLogger(output_dir=str(tmp_path), quiet=True)
    envs = normalize_envs([Scripted(), Scripted()], dict(normalize_obs=True,
                                                         normalize_rew=True, gamma=0.9), logger)
    envs[0].reset()
    for _ in range(3):
        envs[0].step(0)
    stats = logger.model_extras['normalization']
    before = json.loads(json.dumps(stats.state_dict()))
    Checkpointer(logger, envs).save(dict(t=3, epoch=0, elapsed=0.0))
    envs[0].reset()
    envs[0].step(0)
    assert stats.state_dict() != before
    Checkpointer(logger, envs).restore()
    assert stats.state_dict() == before
    logger.close()
