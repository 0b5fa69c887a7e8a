#!/usr/bin/env python
"""Reproduce the source documents side by side: ``python plots/reproduce.py [--budget quick]``.

Runs every preset (and the per-env defaults they are compared with) for ``--seeds`` seeds
through ``run.py``, skipping runs whose progress.txt already has all its epochs (so it can be
stopped and started again), then writes one figure per environment (``plots/<env>.png``) and
``plots/RESULTS.md``: env, variant, seeds, steps, final performance mean ± std over seeds,
wall time, and the published reference where there is one.

Budgets: ``full`` is each preset's own (the seeds' budgets, hours to days on 2 cores);
``quick`` cuts each run to the steps in the table below, which is what the committed figures
use on this machine.
"""
import argparse
import csv
import os
import os.path as osp
import subprocess
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)

# (algo, preset or None for the per-env default, env, quick budget as run.py flags)
VARIANTS = [
    ('ddpg', 'seed-000', 'Pendulum-v1', ['--epochs', '5']),
    ('ddpg', None, 'Pendulum-v1', ['--epochs', '5']),
    ('td3', None, 'Pendulum-v1', ['--epochs', '5']),
    ('td3', 'tensorlayer', 'Pendulum-v1', ['--epochs', '5']),
    ('td3', 'blog-mountaincar', 'MountainCarContinuous-v0', ['--epochs', '12']),
    ('td3', None, 'MountainCarContinuous-v0', []),
    ('trpo', 'blog-cartpole', 'CartPole-v1', ['--epochs', '25']),
    ('npg', 'blog-cartpole', 'CartPole-v1', ['--epochs', '25']),
    ('ddpg', 'rllab-mxnet', 'InvertedPendulum-v5', ['--epochs', '20']),
    ('td3', 'udemy', 'AntBulletEnv-v0', ['--epochs', '6']),
]

# Published references: (env, algo) -> text.
REFERENCES = {
    ('Pendulum-v1', 'td3'): 'rl-zoo TD3: −152 @ 20k',
    ('Pendulum-v1', 'ddpg'): 'rl-zoo DDPG: −152 @ 20k',
    ('CartPole-v1', 'trpo'): 'rl-zoo TRPO: 500 @ 100k',
    ('MountainCarContinuous-v0', 'td3'): 'rl-zoo TD3: 93.5 @ 300k',
}


NOTES = [
    'td3_tensorlayer scores 150-step episodes (its max_ep_len) with the policy limited to '
    '[-1, 1] (the action_range quirk), so its returns are not on the scale of the 200-step '
    'Pendulum rows.',
    'ddpg_rllab-mxnet trains only after 10000 stored samples and its episodes stop at 100 '
    'steps (best return 100); the InvertedPendulum-v5 row stands in for an env that '
    'gymnasium lacks and has no published reference here.',
    'Wall time is the Time column of the last row (training plus test episodes) of one run, '
    'with two runs at a time on a 2-core machine.',
]


def variant_name(algo, preset):
    return '%s_%s' % (algo, preset or 'default')


def run_dir(data_dir, algo, preset, env, seed):
    name = '%s_%s' % (variant_name(algo, preset), env)
    return osp.join(data_dir, name, '%s_s%d' % (name, seed))


def read_rows(path):
    try:
        with open(path) as f:
            return list(csv.DictReader(f, delimiter='\t'))
    except OSError:
        return []


def expected_epochs(algo, preset, env, budget_flags):
    """Number of epochs a run will have (from its flags, preset or defaults)."""
    if '--epochs' in budget_flags:
        return int(budget_flags[budget_flags.index('--epochs') + 1])
    from spinup_tf.tools.cli import resolve_defaults
    return resolve_defaults(algo, env, preset)['epochs']


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--budget', choices=['quick', 'full'], default='quick')
    parser.add_argument('--seeds', type=int, default=3)
    parser.add_argument('--data_dir', default=osp.join(ROOT, 'data', 'reproduce'))
    parser.add_argument('--out', default=osp.join(ROOT, 'plots'))
    parser.add_argument('--only', nargs='*', default=None,
                        help='run only these envs (e.g. Pendulum-v1 CartPole-v1)')
    parser.add_argument('--workers', default='1', help='variants at once (run.py --workers)')
    parser.add_argument('--no-run', action='store_true', help='only plot and tabulate')
    args = parser.parse_args(argv)

    variants = [v for v in VARIANTS if args.only is None or v[2] in args.only]
    seeds = list(range(args.seeds))
    wall = {}
    if not args.no_run:
        for algo, preset, env, quick in variants:
            flags = quick if args.budget == 'quick' else []
            n_epochs = expected_epochs(algo, preset, env, flags)
            todo = [s for s in seeds
                    if len(read_rows(osp.join(run_dir(args.data_dir, algo, preset, env, s),
                                              'progress.txt'))) < n_epochs]
            if not todo:
                print('complete: %s on %s' % (variant_name(algo, preset), env))
                continue
            cmd = [sys.executable, osp.join(ROOT, 'run.py'), algo, '--env', env,
                   '--exp_name', '%s_%s' % (variant_name(algo, preset), env),
                   '--data_dir', args.data_dir, '--overwrite', 'True',
                   '--seed'] + [str(s) for s in todo] + flags
            if preset:
                cmd[3:3] = ['--preset', preset]
            if args.workers != '1' and len(todo) > 1:
                cmd += ['--workers', args.workers]
            print('running:', ' '.join(cmd[1:]), flush=True)
            t0 = time.time()
            subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2'))
            wall[(algo, preset, env)] = time.time() - t0
    write_results(args, variants, seeds)
    return 0


def write_results(args, variants, seeds):
    from spinup_tf.tools.plot import find_runs, make_plots
    envs = []
    for _, _, env, _ in variants:
        if env not in envs:
            envs.append(env)
    lines = ['# Results: the source documents side by side', '',
             'Made by `python plots/reproduce.py --budget %s --seeds %d --workers 2` (figures: '
             '`plots/<env>.png`).' % (args.budget, args.seeds),
             'Performance is AverageTestEpRet (deterministic test episodes) where the run has it, '
             'else AverageEpRet; "final" is the last epoch, mean ± std over seeds.', '',
             '| env | variant | seeds | steps | final performance | best epoch mean | wall time / run | reference |',
             '|---|---|---|---|---|---|---|---|']
    import numpy as np
    for env in envs:
        dirs = []
        for algo, preset, e, _ in variants:
            if e != env:
                continue
            finals, bests, steps, walls = [], [], [], []
            for s in seeds:
                d = run_dir(args.data_dir, algo, preset, env, s)
                rows = read_rows(osp.join(d, 'progress.txt'))
                if not rows:
                    continue
                key = 'AverageTestEpRet' if 'AverageTestEpRet' in rows[0] else 'AverageEpRet'
                perf = [float(r[key]) for r in rows]
                finals.append(perf[-1])
                bests.append(perf)
                steps.append(int(float(rows[-1]['TotalEnvInteracts'])))
                walls.append(float(rows[-1]['Time']))
                dirs.append(d)
            if not finals:
                continue
            n = min(len(b) for b in bests)
            best_mean = max(np.mean([b[i] for b in bests]) for i in range(n))
            lines.append('| %s | %s | %d | %s | %.1f ± %.1f | %.1f | %.0f s | %s |' % (
                env, variant_name(algo, preset), len(finals), max(steps), np.mean(finals),
                np.std(finals), best_mean, np.mean(walls), REFERENCES.get((env, algo), '')))
        if dirs:
            parents = sorted({osp.dirname(d) for d in dirs})
            runs = find_runs(parents)
            make_plots(runs, 'TotalEnvInteracts', ['Performance'], False, 'mean', 1,
                       osp.join(args.out, '%s.png' % env))
    lines += [''] + ['* ' + n for n in NOTES]
    with open(osp.join(args.out, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


if __name__ == '__main__':
    sys.exit(main())
