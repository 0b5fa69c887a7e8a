"""Our algorithms against their Stable-Baselines3 peers: env steps per second, paired.

    python bench/peers.py [--cases td3 sac ppo dqn dqn-atari] [--repeats 2] [--json out.json]

Each case runs the same algorithm at the same settings in both libraries: Spinning Up's
defaults for TD3, SAC and PPO (as ``python run.py ALGO`` runs them, with no test episodes:
SB3's ``learn`` tests nothing), rl-baselines3-zoo's for DQN. Every run is a fresh process;
the two sides alternate (ours, SB3, then SB3, ours, ...) so that a machine that gets busier or
quieter moves both alike, and the ratio is taken within each adjacent pair.

Two figures per run:

* **loop steps/s**: env steps over the training loop's wall time: ours, the ``Time`` column
  of the last ``progress.txt`` row (from the loop's start, after the graph and session are
  built); SB3, ``model.learn``'s wall time.
* **process steps/s**: env steps over the whole process's wall time, imports, graph or
  model building and saving included (what a user waits for).

The settings of each pair (``CASES``):

* ``td3``, ``sac``: Pendulum-v1, 12,000 steps; 256x256 ReLU networks, batch 100, lr 1e-3,
  gamma 0.99, polyak 0.995 (SB3's ``tau`` 0.005), a window of 50 updates every 50 steps from
  step 1000, replay 1e6; TD3's policy delay 2, target noise 0.2 clipped at 0.5, action noise
  0.1; SAC's fixed alpha 0.2. SB3 acts at random until ``learning_starts`` = 1000 (it has no
  separate ``start_steps``), ours until 10,000 (Spinning Up's); both make 11,000 updates.
* ``ppo``: HalfCheetah-v5, three 4000-step epochs; 64x64 tanh networks; 80 full-batch policy
  steps with the KL early stop at 0.01 (SB3: ``target_kl`` 0.01, 80 ``n_epochs`` of one
  4000-sample batch), 80 value steps (SB3 takes the value's step in the same one), gamma
  0.99, lambda 0.97, clip 0.2.
* ``dqn``: CartPole-v1 at rl-zoo's settings (``plots/dqn_vs_sb3.py``'s ``ZOO``), 50,000
  steps, no evaluations.
* ``dqn-atari``: ALE/Pong-v5 with the standard preprocessing, the Nature CNN, rl-zoo's Atari
  settings except a short budget: 20,000 steps with updates from step 5,000 (so that the
  loop is mostly updating, as in a long run), buffer 20,000.

SB3 and PyTorch are needed only here (``pip install stable-baselines3``); SB3 runs with one
PyTorch thread, as our session's intra-op pool has one (``spinup_tf/utils/threads.py``).
"""
import argparse
import json
import os
import os.path as osp
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)

SPINUP_OFF = dict(hid=(256, 256), batch_size=100, lr=1e-3, gamma=0.99, tau=0.005,
                  learning_starts=1000, update_every=50, buffer_size=int(1e6))
CASES = {
    'td3': dict(env='Pendulum-v1', steps=12000,
                ours=['td3', '--epochs', '3', '--steps_per_epoch', '4000']),
    'sac': dict(env='Pendulum-v1', steps=12000,
                ours=['sac', '--epochs', '3', '--steps_per_epoch', '4000']),
    'ppo': dict(env='HalfCheetah-v5', steps=12000,
                ours=['ppo', '--epochs', '3', '--steps_per_epoch', '4000']),
    'dqn': dict(env='CartPole-v1', steps=50000, ours=None),
    'dqn-atari': dict(env='ALE/Pong-v5', steps=20000, ours=None),
}
ATARI = dict(learning_rate=1e-4, batch_size=32, buffer_size=20000, learning_starts=5000,
             gamma=0.99, target_update_interval=1000, train_freq=4, gradient_steps=1,
             exploration_fraction=0.1, exploration_final_eps=0.01)


def zoo_dqn():
    """rl-zoo's DQN settings for CartPole-v1 (from ``plots/dqn_vs_sb3.py``)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('dqn_vs_sb3',
                                                  osp.join(ROOT, 'plots', 'dqn_vs_sb3.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def our_command(case, folder):
    c = CASES[case]
    common = ['--env', c['env'], '--seed', '0', '--data_dir', folder, '--exp_name', 'run',
              '--num_test_episodes', '0']
    if case == 'dqn':
        z = zoo_dqn()
        return ['dqn'] + common + ['--epochs', '1', '--steps_per_epoch', str(c['steps'])] \
            + z.our_flags(c['env'])
    if case == 'dqn-atari':
        return ['dqn'] + common + [
            '--epochs', '1', '--steps_per_epoch', str(c['steps']),
            '--replay_size', str(ATARI['buffer_size']),
            '--start_steps', str(ATARI['learning_starts']),
            '--update_after', str(ATARI['learning_starts'])]
    return c['ours'][:1] + common + c['ours'][1:]


def sb3_main(case, folder):
    """One SB3 run of ``case`` (in this process); writes ``folder/sb3.json``."""
    t_process = float(os.environ['PEERS_T0'])
    import numpy as np
    import gymnasium as gym
    import torch
    torch.set_num_threads(1)
    import stable_baselines3 as sb3
    from stable_baselines3.common.noise import NormalActionNoise
    c = CASES[case]
    o = SPINUP_OFF
    if case in ('td3', 'sac'):
        env = gym.make(c['env'])
        common = dict(learning_rate=o['lr'], buffer_size=o['buffer_size'],
                      learning_starts=o['learning_starts'], batch_size=o['batch_size'],
                      tau=o['tau'], gamma=o['gamma'], train_freq=o['update_every'],
                      gradient_steps=o['update_every'], seed=0, device='cpu', verbose=0,
                      policy_kwargs=dict(net_arch=list(o['hid'])))
        if case == 'td3':
            n = env.action_space.shape[0]
            model = sb3.TD3('MlpPolicy', env, policy_delay=2, target_policy_noise=0.2,
                            target_noise_clip=0.5,
                            action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)),
                            **common)
        else:
            model = sb3.SAC('MlpPolicy', env, ent_coef=0.2, **common)
    elif case == 'ppo':
        env = gym.make(c['env'])
        model = sb3.PPO('MlpPolicy', env, n_steps=4000, batch_size=4000, n_epochs=80,
                        learning_rate=3e-4, gamma=0.99, gae_lambda=0.97, clip_range=0.2,
                        target_kl=0.01, seed=0, device='cpu', verbose=0,
                        policy_kwargs=dict(net_arch=dict(pi=[64, 64], vf=[64, 64]),
                                           activation_fn=torch.nn.Tanh))
    elif case == 'dqn':
        z = dict(zoo_dqn().ZOO[c['env']])
        z.pop('n_timesteps')
        model = sb3.DQN('MlpPolicy', gym.make(c['env']), seed=0, device='cpu', verbose=0,
                        policy_kwargs=dict(net_arch=[256, 256]), **z)
    else:
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import VecFrameStack
        import ale_py
        gym.register_envs(ale_py)
        env = VecFrameStack(make_atari_env(c['env'], n_envs=1, seed=0), n_stack=4)
        model = sb3.DQN('CnnPolicy', env, seed=0, device='cpu', verbose=0,
                        optimize_memory_usage=False, **ATARI)
    start = time.time()
    model.learn(total_timesteps=c['steps'])
    loop = time.time() - start
    with open(osp.join(folder, 'sb3.json'), 'w') as f:
        json.dump(dict(loop=loop, process=time.time() - t_process), f)


def one_run(who, case, keep=None):
    """``(loop_seconds, process_seconds)`` of one run of ``who`` ('ours' or 'sb3')."""
    folder = tempfile.mkdtemp(prefix='peers_')
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2')
    try:
        t0 = time.time()
        env['PEERS_T0'] = repr(t0)
        if who == 'ours':
            cmd = [sys.executable, osp.join(ROOT, 'run.py')] + our_command(case, folder)
        else:
            cmd = [sys.executable, osp.abspath(__file__), 'sb3-run', case, folder]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        process = time.time() - t0
        if proc.returncode != 0:
            raise RuntimeError('%s %s failed:\n%s' % (who, case, proc.stderr[-3000:]))
        if who == 'sb3':
            with open(osp.join(folder, 'sb3.json')) as f:
                return json.load(f)['loop'], process
        from spinup_tf.utils.progress_file import read_table  # the one progress reader
        rows = read_table(osp.join(folder, 'run', 'run_s0', 'progress.txt'))
        return float(rows.last('Time')), process
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench(cases, repeats):
    results = {}
    for case in cases:
        steps = CASES[case]['steps']
        runs = {'ours': [], 'sb3': []}
        for i in range(repeats):
            for who in (('ours', 'sb3') if i % 2 == 0 else ('sb3', 'ours')):
                loop, process = one_run(who, case)
                runs[who].append(dict(loop_sps=steps / loop, process_sps=steps / process))
                print('%-10s %-5s loop %7.0f steps/s, process %7.0f steps/s' % (
                    case, who, steps / loop, steps / process), flush=True)
        ratios = [o['loop_sps'] / s['loop_sps'] for o, s in zip(runs['ours'], runs['sb3'])]
        pratios = [o['process_sps'] / s['process_sps']
                   for o, s in zip(runs['ours'], runs['sb3'])]
        results[case] = dict(env=CASES[case]['env'], steps=steps, runs=runs,
                             loop_ratio=statistics.median(ratios),
                             process_ratio=statistics.median(pratios))
    return results


def table(results):
    lines = ['| case | env | steps | ours loop steps/s | SB3 loop steps/s | ratio (loop) | '
             'ours process steps/s | SB3 process steps/s | ratio (process) |',
             '|---|---|---|---|---|---|---|---|---|']

    def med(runs, key):
        return statistics.median(r[key] for r in runs)
    for case, r in results.items():
        lines.append('| %s | %s | %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |' % (
            case, r['env'], r['steps'], med(r['runs']['ours'], 'loop_sps'),
            med(r['runs']['sb3'], 'loop_sps'), r['loop_ratio'],
            med(r['runs']['ours'], 'process_sps'), med(r['runs']['sb3'], 'process_sps'),
            r['process_ratio']))
    return '\n'.join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['sb3-run']:
        sb3_main(argv[1], argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--cases', nargs='+', default=['td3', 'sac', 'ppo', 'dqn'],
                    choices=list(CASES))
    ap.add_argument('--repeats', type=int, default=2)
    ap.add_argument('--json')
    args = ap.parse_args(argv)
    results = bench(args.cases, args.repeats)
    print(table(results))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(date=time.strftime('%Y-%m-%d %H:%M'), python=sys.version.split()[0],
                           platform=platform.platform(), cpus=os.cpu_count(),
                           results=results), f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
