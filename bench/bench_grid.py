"""Grid benchmark: a grid of seeds with ``--workers 1`` against ``2`` and ``auto`` (not a test).

    python bench/bench_grid.py [--algos td3 sac ppo] [--seeds 2 4] [--workers 1 2 auto] \
        [--repeats R] [--ppo_env CartPole-v1] [--json out.json]

Each measurement is one command, timed from start to exit (the wall time a user waits)::

    python run.py ALGO --env Pendulum-v1 --seed 0 1 [2 3] --epochs 2 --steps_per_epoch 4000 \
        --start_steps 1000 --num_test_episodes 2 --workers W

(PPO has no ``start_steps`` or test episodes: ``--epochs 2 --steps_per_epoch 4000`` on
``--ppo_env``.) Total env steps/s is ``seeds * epochs * steps_per_epoch`` over that wall time,
start-up included. The settings alternate (1, 2, auto, then auto, 2, 1, ...) so that a
machine that gets busier or quieter moves them alike; the speed-up of a setting is taken
against ``--workers 1`` within each repeat, and its median reported. Also recorded: how many
runs went at once (the grid's ``[grid] threads:`` line; for ``auto``, what it chose) and the
1-minute load average before each command: when other processes keep the cores busy,
parallel workers gain little, and ``auto`` picks fewer.
"""
import argparse
import json
import os
import os.path as osp
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
EPOCHS, STEPS_PER_EPOCH = 2, 4000
OFF_POLICY_FLAGS = ['--start_steps', '1000', '--num_test_episodes', '2']
THREADS_LINE = re.compile(r'\[grid\] threads: (\d+) runs? at once')


def grid_command(algo, env, n_seeds, workers, data_dir):
    cmd = [sys.executable, osp.join(ROOT, 'run.py'), algo, '--env', env,
           '--seed'] + [str(s) for s in range(n_seeds)] + [
           '--epochs', str(EPOCHS), '--steps_per_epoch', str(STEPS_PER_EPOCH)]
    if algo != 'ppo':
        cmd += OFF_POLICY_FLAGS
    return cmd + ['--workers', str(workers), '--data_dir', data_dir]


def run_once(algo, env, n_seeds, workers, scratch):
    """One grid command: wall seconds, env steps/s, runs at once (from the grid's log line)."""
    data_dir = tempfile.mkdtemp(prefix='%s_s%d_w%s_' % (algo, n_seeds, workers), dir=scratch)
    cmd = grid_command(algo, env, n_seeds, workers, data_dir)
    env_vars = {k: v for k, v in os.environ.items() if k != 'SPINUP_TF_THREADS'}
    env_vars.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
    load = os.getloadavg()[0]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=env_vars, capture_output=True, text=True)
    wall = time.time() - t0
    shutil.rmtree(data_dir, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError('%s failed (exit %d):\n%s\n%s' % (
            ' '.join(cmd), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    at_once = THREADS_LINE.search(proc.stdout)
    return {'workers': str(workers), 'wall_s': wall, 'load_before': load,
            'env_steps_per_s': n_seeds * EPOCHS * STEPS_PER_EPOCH / wall,
            'runs_at_once': int(at_once.group(1)) if at_once else None}


def summarise(runs, settings):
    """Per setting: runs at once, wall times, median env steps/s and the median speed-up over
    ``--workers 1`` within each repeat."""
    rows = []
    for w in settings:
        mine = [r for r in runs if r['workers'] == w]
        speedups = []
        for r in mine:
            base = [b for b in runs if b['workers'] == '1' and b['repeat'] == r['repeat']]
            if base:
                speedups.append(r['env_steps_per_s'] / base[0]['env_steps_per_s'])
        rows.append({'workers': w, 'runs_at_once': sorted({r['runs_at_once'] for r in mine}),
                     'wall_s': [r['wall_s'] for r in mine],
                     'env_steps_per_s': statistics.median(r['env_steps_per_s'] for r in mine),
                     'speedup': statistics.median(speedups) if speedups else None,
                     'speedups': speedups})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--algos', nargs='+', default=['td3', 'sac', 'ppo'])
    ap.add_argument('--seeds', nargs='+', type=int, default=[2, 4])
    ap.add_argument('--workers', nargs='+', default=['1', '2', 'auto'])
    ap.add_argument('--repeats', type=int, default=2)
    ap.add_argument('--env', default='Pendulum-v1')
    ap.add_argument('--ppo_env', default='CartPole-v1')
    ap.add_argument('--json', help='write every measurement here')
    args = ap.parse_args(argv)
    if '1' not in args.workers:
        ap.error('--workers must include 1 (the speed-ups are against it)')

    scratch = tempfile.mkdtemp(prefix='bench_grid_')
    report = {'machine': {'platform': platform.platform(), 'cpus': os.cpu_count(),
                          'python': platform.python_version()},
              'command': grid_command('ALGO', 'ENV', 0, 'W', 'DIR')[1:], 'results': []}
    t_start = time.time()
    print('%-4s %-12s %5s %-7s %7s %9s %12s %6s' % (
        'algo', 'env', 'seeds', 'workers', 'at once', 'wall s', 'env steps/s', 'load'))
    try:
        for algo in args.algos:
            env = args.ppo_env if algo == 'ppo' else args.env
            for n_seeds in args.seeds:
                runs = []
                for rep in range(args.repeats):
                    order = args.workers if rep % 2 == 0 else args.workers[::-1]
                    for w in order:
                        r = run_once(algo, env, n_seeds, w, scratch)
                        r['repeat'] = rep
                        runs.append(r)
                        print('%-4s %-12s %5d %-7s %7s %9.1f %12.0f %6.2f' % (
                            algo, env, n_seeds, w, r['runs_at_once'], r['wall_s'],
                            r['env_steps_per_s'], r['load_before']), flush=True)
                report['results'].append({'algo': algo, 'env': env, 'seeds': n_seeds,
                                          'runs': runs,
                                          'summary': summarise(runs, args.workers)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report['seconds'] = time.time() - t_start

    print('\n| algo | env | seeds | `--workers` | runs at once | wall s | env steps/s '
          '(median) | speed-up vs 1 (median [per repeat]) |')
    print('|---|---|---|---|---|---|---|---|')
    for block in report['results']:
        for row in block['summary']:
            speed = '-' if row['speedup'] is None else '×%.2f [%s]' % (
                row['speedup'], ', '.join('%.2f' % s for s in row['speedups']))
            print('| %s | %s | %d | %s | %s | %s | %.0f | %s |' % (
                block['algo'], block['env'], block['seeds'], row['workers'],
                ', '.join(str(n) for n in row['runs_at_once']),
                ', '.join('%.1f' % s for s in row['wall_s']), row['env_steps_per_s'], speed))
    print('\n%.0f s in all' % report['seconds'])
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(report, f, indent=1)


if __name__ == '__main__':
    main()
