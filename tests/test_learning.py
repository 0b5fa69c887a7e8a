"""Short learning tests: the agent must learn, not just run.

A random policy on Pendulum-v1 scores about -1200 per 200-step episode; a learned swing-up
scores about -150. A random policy averages about 22 on CartPole-v1.

Every budget and threshold here comes from a seed sweep, recorded in the test's docstring:
the command, the seeds, and the min / median / max of the figure the test checks. The rule:
at the chosen budget every seed of the sweep passes with margin; where no affordable budget
does that (MountainCar), the test needs 2 of 3 seeds. A change of RNG use or of TF version
is then like drawing another seed, which the sweep says passes.

How the sweeps were run (at commit 6734808; TF 2.21, gymnasium 1.4, 2 busy cores): each
test's configuration through ``python run.py``, one run at a time, e.g. for TD3::

    for s in $(seq 0 15); do python run.py td3 --env Pendulum-v1 --hid "[64,64]" \\
        --steps_per_epoch 2000 --epochs 6 --start_steps 1000 --update_after 500 \\
        --num_test_episodes 5 --seed $s --exp_name sweep_td3_s$s; done

``run.py`` gives the very numbers of the in-process call below (checked: DDPG seed 1, epochs
1-3 equal to every digit), and a run's first k epochs are those of the k-epoch run with the
same seed, so one long sweep gives the figure at every shorter budget too.
"""
import csv

import pytest

from spinup_tf.utils.envs import EnvFn


def _rows(path):
    with open(path) as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f, delimiter='\t')]


PENDULUM = dict(ac_kwargs=dict(hidden_sizes=(64, 64)), steps_per_epoch=2000, epochs=6,
                start_steps=1000, update_after=500, num_test_episodes=5)


def _better_of_last_two(path):
    """The better AverageTestEpRet of the last two epochs. A learned Pendulum policy
    sometimes dips for one evaluation (TD3 seed 10: -905.9 at epoch 5, -240.9 at epoch 6);
    the better of two does not fail on one such dip, and an agent that did not learn scores
    about -1200 at both."""
    return max(r['AverageTestEpRet'] for r in _rows(path)[-2:])


def test_td3_learns_pendulum(tmp_path):
    """Sweep: the module docstring's command, seeds 0-15. The better AverageTestEpRet of
    epochs 5 and 6 (12000 steps): min -332.7 (seed 5) / median -133.9 / max -73.3. (The last
    epoch alone: min -397.5 / median -140.8 / max -92.5. The old test, the last of 3 epochs:
    min -910.7 (seed 13) / median -216.6 / max -80.3.)"""
    from spinup_tf.algos.td3 import td3
    td3(EnvFn('Pendulum-v1'), seed=1, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
        **PENDULUM)
    assert _rows(tmp_path / 'progress.txt')[-1]['TotalEnvInteracts'] == 12000
    ret = _better_of_last_two(tmp_path / 'progress.txt')
    assert ret > -600, ret


def test_ddpg_learns_pendulum(tmp_path):
    """Sweep: ``python run.py ddpg`` with the TD3 command's flags, seeds 0-15. The better
    AverageTestEpRet of epochs 5 and 6: min -184.6 (seed 10) / median -122.1 / max -76.0.
    (The last epoch alone: min -248.1 / median -145.9 / max -94.1; seed 11 dipped to -1223.8
    at epoch 4. The old test, the last of 3 epochs: min -677.4 (seed 2) / median -155.1 /
    max -48.2; this test's seed 1 ended at -583.6.)"""
    from spinup_tf.algos.ddpg import ddpg
    ddpg(EnvFn('Pendulum-v1'), seed=1, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
         **PENDULUM)
    ret = _better_of_last_two(tmp_path / 'progress.txt')
    assert ret > -600, ret


def test_sac_learns_pendulum(tmp_path):
    """Sweep: ``python run.py sac`` with the TD3 command's flags, seeds 0-15. The better
    AverageTestEpRet of epochs 5 and 6: min -229.9 (seed 13) / median -122.3 / max -72.4.
    (The last epoch alone: min -229.9 / median -140.5 / max -93.2; seed 11 dipped to -726.7
    at epoch 5. The old test, the last of 3 epochs: min -620.0 (seed 8) / median -166.0 /
    max -50.1.)"""
    from spinup_tf.algos.sac import sac
    sac(EnvFn('Pendulum-v1'), seed=1, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
        **PENDULUM)
    ret = _better_of_last_two(tmp_path / 'progress.txt')
    assert ret > -600, ret


def test_trpo_improves_on_cartpole(tmp_path):
    """Sweep: ``python run.py trpo --env CartPole-v1 --steps_per_epoch 2000 --epochs 8
    --seed S``, seeds 0-15. Last epoch's AverageEpRet: min 113.6 (seed 2) / median 214.6 /
    max 320.7; last / first epoch at least 7.18; the largest KL of any epoch 0.00990
    (bound 0.01). Threshold 60 (was 80): the slowest seeds pass 80 only in their last epoch."""
    from spinup_tf.algos.trpo import trpo
    trpo(EnvFn('CartPole-v1'), seed=1, steps_per_epoch=2000, epochs=8,
         logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
    rows = _rows(tmp_path / 'progress.txt')
    first, last = rows[0]['AverageEpRet'], rows[-1]['AverageEpRet']
    assert last > 60 and last > 2.5 * first, (first, last)
    assert all(r['KL'] <= 0.01 * (1 + 1e-6) for r in rows)


def test_ppo_improves_on_cartpole(tmp_path):
    """Sweep: ``python run.py ppo --env CartPole-v1 --steps_per_epoch 2000 --epochs 10
    --seed S``, seeds 0-15. Last epoch's AverageEpRet after 20000 steps: min 143.9 (seed 4) /
    median 246.8 / max 372.2; last / first epoch at least 7.53. (After 16000 steps, the old
    budget: min 99.4 / median 199.4 / max 329.2.)"""
    from spinup_tf.algos.ppo import ppo
    ppo(EnvFn('CartPole-v1'), seed=1, steps_per_epoch=2000, epochs=10,
        logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
    rows = _rows(tmp_path / 'progress.txt')
    first, last = rows[0]['AverageEpRet'], rows[-1]['AverageEpRet']
    assert last > 80 and last > 2.5 * first, (first, last)


@pytest.mark.expensive
def test_mountaincar_default_noise_leaves_the_do_nothing_optimum(tmp_path, monkeypatch):
    """The per-env default (pink noise 0.5) on a shortened budget: the deterministic test
    policy reaches the flag (AverageTestEpRet > 50 at an epoch's evaluation: both test
    episodes reach it; doing nothing scores about 0, never above it). Spinning Up's Gaussian
    0.1 stays near 0 on this env (see docs/getting-started.md, "A first run").

    Sweep: ``python run.py td3 --env MountainCarContinuous-v0 --hid "[64,64]"
    --steps_per_epoch 2000 --epochs 12 --start_steps 0 --update_after 1000
    --num_test_episodes 2 --seed S`` (noise and scale from the per-env default), seeds 0-15.
    The test policy's return swings between about 92 (both episodes at the flag), 45 (one)
    and 0 from one epoch to the next, so the figure is the best epoch's AverageTestEpRet:
    min -0.0 (seed 12, never left 0 in 24000 steps) / median 94.2 / max 97.0; first epoch
    above 50: 3, 4, 4, 4, 6, 6, 7, 7, 7, 7, 8, 8, 9, 10, 10, never. No budget up to 12 epochs
    has every seed pass (the old one, 4 epochs and the last epoch's figure, passed 3 of 16),
    so the test needs 2 of seeds 0, 1, 2 (first above 50 at epochs 4, 7, 7) to pass: with
    15 of 16 seeds passing, 2 of 3 failing has odds of about 1 in 90. It stops once 2 seeds
    pass (or 2 fail), and stops a run at its first epoch above 50 (a run's first k epochs are
    those of the 12-epoch run, so the verdict is the same): 4 + 7 epochs for seeds 0 and 1,
    about half a minute, hence ``expensive``."""
    from spinup_tf.algos.td3 import td3
    from spinup_tf.tools.env_defaults import env_defaults
    from spinup_tf.utils.logx import EpochLogger

    class FlagReached(Exception):
        pass

    write_row = EpochLogger.dump_tabular

    def write_row_then_stop_at_the_flag(logger):
        reached = logger.log_current_row.get('AverageTestEpRet', 0) > 50
        write_row(logger)
        if reached:
            raise FlagReached()

    monkeypatch.setattr(EpochLogger, 'dump_tabular', write_row_then_stop_at_the_flag)
    d = env_defaults('td3', 'MountainCarContinuous-v0')
    best = {}
    for seed in (0, 1, 2):
        out = tmp_path / ('s%d' % seed)
        try:
            td3(EnvFn('MountainCarContinuous-v0'), seed=seed,
                ac_kwargs=dict(hidden_sizes=(64, 64)), steps_per_epoch=2000, epochs=12,
                start_steps=0, update_after=1000, num_test_episodes=2, noise=d['noise'],
                act_noise=d['act_noise'], logger_kwargs=dict(output_dir=str(out), quiet=True))
        except FlagReached:
            pass
        best[seed] = max(r['AverageTestEpRet'] for r in _rows(out / 'progress.txt'))
        passed = sum(v > 50 for v in best.values())
        if passed == 2 or len(best) - passed == 2:
            break
    assert sum(v > 50 for v in best.values()) >= 2, best


def _better_test_return_of_last_two(path):
    return max(r['AverageTestEpRet'] for r in _rows(path)[-2:])


def test_dqn_learns_cartpole_with_its_defaults(tmp_path, monkeypatch):
    """``run.py dqn --env CartPole-v1`` as a user runs it (its per-env defaults, the zoo's:
    env_defaults), stopped after the first of its 10 epochs (5,000 steps); a run's first
    epoch is that of the whole run (the epsilon schedule is over the whole budget in both;
    checked: seed 0's in-process epochs 1-2 give run.py's 99.1 and 258.2). Sweep: ``python
    plots/dqn_defaults.py --algos dqn --envs CartPole-v1``, seeds 0-4 (2026-12-06; 2 busy
    cores; plots/dqn_defaults/RESULTS.md). AverageTestEpRet at epoch 1: 99.1, 106.4, 125.3,
    251.7, 119.1 (min 99.1 / median 119.1 / max 251.7); the greedy policy of the untrained
    network scores about 9-10. Every seed of the whole sweep reaches 500 later in the run."""
    from spinup_tf.algos.dqn import dqn
    from spinup_tf.tools.env_defaults import env_defaults
    from spinup_tf.utils.logx import EpochLogger

    class Stop(Exception):
        pass

    write_row = EpochLogger.dump_tabular

    def write_row_then_stop(logger):
        write_row(logger)
        raise Stop()

    monkeypatch.setattr(EpochLogger, 'dump_tabular', write_row_then_stop)
    with pytest.raises(Stop):
        dqn(EnvFn('CartPole-v1'), seed=0, logger_kwargs=dict(output_dir=str(tmp_path),
                                                             quiet=True),
            **env_defaults('dqn', 'CartPole-v1'))
    (row,) = _rows(tmp_path / 'progress.txt')
    assert row['TotalEnvInteracts'] == 5000
    assert row['AverageTestEpRet'] > 50, row['AverageTestEpRet']


def test_discrete_sac_learns_cartpole(tmp_path):
    """Discrete SAC (SAC's defaults but a [64,64] network), 4000 steps. Sweep (at commit
    45a9ea9): ``python run.py sac --env CartPole-v1 --hid "[64,64]" --steps_per_epoch 1000
    --epochs 4 --start_steps 500 --update_after 500 --num_test_episodes 5 --seed 0 1 2 3 4
    5 6 7``. The better AverageTestEpRet of epochs 3 and 4: min 175.4 (seed 2) / median
    265.0 / max 342.6; epoch 1 (mostly random actions): 9.0-55.8."""
    from spinup_tf.algos.sac import sac
    sac(EnvFn('CartPole-v1'), seed=1, ac_kwargs=dict(hidden_sizes=(64, 64)),
        steps_per_epoch=1000, epochs=4, start_steps=500, update_after=500,
        num_test_episodes=5, logger_kwargs=dict(output_dir=str(tmp_path), quiet=True))
    ret = _better_test_return_of_last_two(tmp_path / 'progress.txt')
    assert ret > 100, ret
