#!/usr/bin/env python
"""PPO on HalfCheetah-v5 with and without observation/reward normalisation:
``python plots/normalization.py [--seeds 3] [--epochs 250] [--no-run]``.

Runs ``run.py ppo --env HalfCheetah-v5`` at Spinning Up's PPO defaults (64x64 tanh, 4000
steps per epoch) for ``--seeds`` seeds, once with ``--normalize_obs False --normalize_rew
False`` (Spinning Up as written) and once with both ``True`` (``spinup_tf/utils/normalize.py``,
the running statistics of SB3's ``VecNormalize``). Finished runs are skipped and killed ones
resumed, so it can be stopped and started again. Then it draws
``plots/normalization/ppo_halfcheetah.png`` (training-batch return ``AverageEpRet``, mean
over seeds with a band of ±1 std over seeds, combined as ``run.py plot`` combines seeds) and
writes ``plots/normalization/RESULTS.md``: per variant, the mean ± std over seeds of the
last 10 epochs' mean ``AverageEpRet``. ``--no-run`` only redraws, and never replaces a table
with an empty one.
"""
import argparse
import os
import os.path as osp
import subprocess
import sys

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, osp.dirname(osp.abspath(__file__)))
from reproduce import read_rows  # noqa: E402  (a progress file's table; empty if none)

HERE = osp.join(ROOT, 'plots', 'normalization')
ENV = 'HalfCheetah-v5'
VARIANTS = {'off': 'no normalisation (Spinning Up)', 'on': '--normalize_obs/--normalize_rew True'}
LAST = 10   # epochs averaged for the final figure


def run_folder(data_dir, variant, seed):
    name = 'ppo_norm-%s_%s' % (variant, ENV)
    return osp.join(data_dir, name, '%s_s%d' % (name, seed))


def command(data_dir, variant, seed, epochs):
    folder = run_folder(data_dir, variant, seed)
    if osp.isdir(osp.join(folder, 'checkpoint')):
        return [sys.executable, osp.join(ROOT, 'run.py'), 'resume', folder]
    flag = str(variant == 'on')
    return [sys.executable, osp.join(ROOT, 'run.py'), 'ppo', '--env', ENV, '--seed', str(seed),
            '--epochs', str(epochs), '--steps_per_epoch', '4000',
            '--normalize_obs', flag, '--normalize_rew', flag,
            '--exp_name', 'ppo_norm-%s_%s' % (variant, ENV), '--data_dir', data_dir,
            '--overwrite']


def final_values(data_dir, variant, seeds):
    out = []
    for seed in seeds:
        rows = read_rows(osp.join(run_folder(data_dir, variant, seed), 'progress.txt'))
        if len(rows) and 'AverageEpRet' in rows:
            last = rows['AverageEpRet'][-LAST:]
            out.append((seed, len(rows), float(sum(last)) / len(last)))
    return out


def write_outputs(data_dir, seeds, epochs, out=HERE):
    """The figure and RESULTS.md, drawn with the project's own rc settings
    (``spinup_tf.tools.plot.style``)."""
    from spinup_tf.tools.plot import style
    with style():
        return _write_outputs(data_dir, seeds, epochs, out)


def _write_outputs(data_dir, seeds, epochs, out=HERE):
    import numpy as np
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import json
    from spinup_tf.tools.plot import band, save_figure
    table, clipped = [], set()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for variant, label in VARIANTS.items():
        curves = []
        for seed in seeds:
            rows = read_rows(osp.join(run_folder(data_dir, variant, seed), 'progress.txt'))
            try:  # runs from before --clip_actions existed clipped Box actions for env.step
                with open(osp.join(run_folder(data_dir, variant, seed), 'config.json')) as f:
                    clipped.add(json.load(f).get('clip_actions', True))
            except (OSError, ValueError):
                pass
            if len(rows) and 'AverageEpRet' in rows and 'TotalEnvInteracts' in rows:
                curves.append(rows)
        if not curves:
            continue
        x, mean, low, high = band([t['TotalEnvInteracts'] for t in curves],
                                  [t['AverageEpRet'] for t in curves])
        ax.plot(x, mean, label='%s (%d seeds)' % (label, len(curves)))
        ax.fill_between(x, low, high, alpha=0.2)
        finals = final_values(data_dir, variant, seeds)
        vals = np.array([v for _, _, v in finals])
        table.append('| %s | %d | %d | %.0f ± %.0f | %s |' % (
            label, len(finals), min(r for _, r, _ in finals) * 4000, vals.mean(), vals.std(),
            ', '.join('%.0f' % v for v in vals)))
    if not table:
        print('no progress files under %s: nothing drawn, RESULTS.md kept' % data_dir)
        return
    ax.set_xlabel('TotalEnvInteracts')
    ax.set_ylabel('AverageEpRet (training-batch return; mean ± std over seeds)')
    ax.set_title('PPO on %s: observation and reward normalisation' % ENV)
    ax.legend()
    fig.tight_layout()
    save_figure(fig, osp.join(out, 'ppo_halfcheetah.png'), dpi=100)
    with open(osp.join(out, 'RESULTS.md'), 'w') as f:
        f.write('# PPO on %s, with and without normalisation\n\n' % ENV)
        f.write('Made by `python plots/normalization.py --seeds %d --epochs %d`: PPO defaults '
                '(64x64 tanh, 4000 steps per epoch). Final = mean of the last %d epochs\' '
                '`AverageEpRet` (the env\'s own reward, also with `--normalize_rew`); '
                'mean ± std over seeds (population std).\n\n' % (len(seeds), epochs, LAST))
        f.write('Box actions sent to the env: %s.\n\n' % {
            frozenset([True]): 'clipped to the bounds (these runs predate `--clip_actions`; '
                               'Spinning Up, and this project since, send them as sampled)',
            frozenset([False]): 'as sampled, as Spinning Up'}.get(
                frozenset(clipped), 'clipped in some runs, as sampled in others'))
        f.write('| variant | seeds | steps | final AverageEpRet | per seed |\n'
                '|---|---|---|---|---|\n')
        f.write('\n'.join(table) + '\n\n![PPO HalfCheetah](ppo_halfcheetah.png)\n')
    print('wrote %s and %s' % (osp.join(out, 'ppo_halfcheetah.png'), osp.join(out, 'RESULTS.md')))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seeds', type=int, default=3)
    parser.add_argument('--epochs', type=int, default=250, help='250 x 4000 = 1M steps')
    parser.add_argument('--data_dir', default=osp.join(HERE, 'data'))
    parser.add_argument('--out', default=HERE, help='where the figure and RESULTS.md go')
    parser.add_argument('--no-run', action='store_true', help='only redraw figure and table')
    args = parser.parse_args(argv)
    seeds = list(range(args.seeds))
    if not args.no_run:
        for seed in seeds:
            for variant in VARIANTS:
                rows = read_rows(osp.join(run_folder(args.data_dir, variant, seed),
                                          'progress.txt'))
                if len(rows) >= args.epochs:
                    continue
                cmd = command(args.data_dir, variant, seed, args.epochs)
                print(' '.join(cmd[1:]), flush=True)
                proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2'))
                if proc.returncode != 0:
                    print('exit %d' % proc.returncode, file=sys.stderr)
    write_outputs(args.data_dir, seeds, args.epochs, args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
