#!/usr/bin/env python
"""Spinning Up's MuJoCo benchmark, reproduced: ``python plots/benchmark.py [--workers 2]``.

Runs a matrix of algorithm x env x seed at Spinning Up's benchmark settings, through
``run.py``, and compares it with Spinning Up's published TF1 curves
(``plots/benchmark/spinningup_tf1.json``):

* off-policy (DDPG, TD3, SAC): the defaults (256x256 ReLU, batch 100), plotted on the
  deterministic test return ``AverageTestEpRet``;
* on-policy (VPG, PPO, TRPO): ``--hid "[64,32]"`` tanh, 4000 steps per epoch, the defaults,
  plotted on the training-batch return ``AverageEpRet``.

Every run is one folder ``plots/benchmark/data/<env>/<algo>_<env>_s<seed>/``. A run whose
``progress.txt`` has all its epochs is skipped; one with a checkpoint is continued with
``run.py resume``; anything else starts afresh. ``--work_dir DIR`` keeps the runs themselves
(models and checkpoints, hundreds of MB each at 1M steps) outside the checkout, in ``DIR``,
and copies each finished run's ``progress.txt`` and ``config.json`` into the data folder: the
1M-step runs are ``python plots/benchmark.py --envs HalfCheetah Hopper --algos ddpg td3 sac
--budget_off 1000000 --work_dir /somewhere/outside``. So the matrix can run across sittings: stop
it at any time and start it again. ``--no-run`` only redraws the figures
(``plots/benchmark/<env>.png``) and ``plots/benchmark/RESULTS.md`` from the progress files,
and never replaces a table with an empty one. Figures and table always cover every run in
the data folder, whichever ``--envs``/``--algos`` this call ran.

The aggregate (``aggregate.png`` and a section of ``RESULTS.md``) pools every env and
algorithm: each run's score is its value at the furthest of Spinning Up's checkpoints its
env x algorithm's seeds all reached (300k steps at least) over Spinning Up TF1's mean
there (1.0 = Spinning Up's), summarised by the IQM and the mean with 95 % stratified
bootstrap intervals and by the performance profile (``spinup_tf.tools.stats``), pooled
over all tasks, each kind, each algorithm and each env. A second table scores the off-policy
tasks at 300k steps, their early speed.

Spinning Up ran MuJoCo ``-v2``/``-v3``; this runs ``-v5``: close, not identical.
``--env_version v4`` runs ``-v4`` instead (``-v3``'s models on the new MuJoCo bindings), as a
variant in its own ``--data_dir`` and ``--out``: the data folder records it in
``env_version.txt`` and refuses runs on another version.
"""
import argparse
import glob
import json
import os
import os.path as osp
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, osp.dirname(osp.abspath(__file__)))
from reproduce import curve, read_rows, run_logged  # noqa: E402  (progress tables; a logged run)
HERE = osp.join(ROOT, 'plots', 'benchmark')
OFF_POLICY = ('ddpg', 'td3', 'sac')
ON_POLICY = ('vpg', 'ppo', 'trpo')
STEPS_PER_EPOCH = 4000
# The matrix issue 17 asks for first; --algos/--envs/--budget change it.
DEFAULT_MATRIX = {'HalfCheetah': OFF_POLICY + ON_POLICY, 'Hopper': OFF_POLICY + ON_POLICY,
                  'Walker2d': ('td3', 'sac', 'ppo'), 'Ant': ('td3', 'sac', 'ppo')}


def reference(name='spinningup_tf1.json'):
    """Spinning Up's published curves at the checkpoints: ``spinningup_tf1.json`` (its TF1
    implementations, the reference), or ``spinningup_pytorch.json`` (its PyTorch ones, read
    off its figures by ``plots/benchmark/read_spinningup_plots.py``)."""
    with open(osp.join(HERE, name)) as f:
        return json.load(f)


ENV_VERSIONS = ('v5', 'v4')  # gymnasium's MuJoCo versions (-v2/-v3 need mujoco-py)
VERSION_FILE = 'env_version.txt'  # in a data folder made with --env_version v4: 'v4'


def env_version(data_dir):
    """The MuJoCo version of a data folder's runs: 'v5' unless the folder records another."""
    path = osp.join(data_dir, VERSION_FILE)
    if not osp.exists(path):
        return 'v5'
    with open(path) as f:
        return f.read().strip()


def env_id(env, data_dir):
    """The gymnasium id of ``env`` in ``data_dir``'s runs: ``Hopper-v5``, or ``Hopper-v4`` in a
    folder made with ``--env_version v4``."""
    return '%s-%s' % (env, env_version(data_dir))


def run_folder(data_dir, env, algo, seed):
    name = '%s_%s' % (algo, env_id(env, data_dir))
    return osp.join(data_dir, env, name, '%s_s%d' % (name, seed))


FLAGS_FILE = 'run_flags.json'  # in a data folder made with --run_flags: those flags


def recorded_flags(data_dir):
    """The ``--run_flags`` a data folder's runs were made with (``[]``: none)."""
    path = osp.join(data_dir, FLAGS_FILE)
    if not osp.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def has_runs(data_dir):
    """Whether ``data_dir`` holds a progress file of any run, whatever its seed."""
    return any(glob.glob(osp.join(osp.dirname(run_folder(data_dir, env, algo, 0)), '*_s*',
                                  'progress.txt'))
               for env in DEFAULT_MATRIX for algo in OFF_POLICY + ON_POLICY)


def made_by(args):
    """The command that makes this data folder's runs, for the table's header."""
    cmd = 'python plots/benchmark.py --workers 2'
    if osp.abspath(args.data_dir) != osp.abspath(osp.join(HERE, 'data')):
        cmd += ' --data_dir %s' % osp.relpath(args.data_dir, ROOT)
    if osp.abspath(args.out) != osp.abspath(HERE):
        cmd += ' --out %s' % osp.relpath(args.out, ROOT)
    version = env_version(args.data_dir)
    if version != 'v5':
        cmd += ' --env_version %s' % version
    flags = recorded_flags(args.data_dir)
    if flags:
        cmd += ' --run_flags "%s"' % ' '.join(flags)
    return cmd


def budget_of(algo, args):
    return args.budget_off if algo in OFF_POLICY else args.budget_on


def command(env, algo, seed, epochs, data_dir, run_flags=(), work_dir=None):
    """The ``run.py`` command of one run (or its ``resume``, which reads the flags back from
    the run's config.json). ``run_flags``: more ``run.py`` flags for every run. The env
    version is the data folder's (``env_version``). With ``work_dir``, the run (its model and
    checkpoints, which are large) lives there instead of in ``data_dir``."""
    folder = run_folder(work_dir or data_dir, env, algo, seed)
    if osp.isdir(osp.join(folder, 'checkpoint')):
        return [sys.executable, osp.join(ROOT, 'run.py'), 'resume', folder]
    gym_id = env_id(env, data_dir)
    cmd = [sys.executable, osp.join(ROOT, 'run.py'), algo, '--env', gym_id,
           '--seed', str(seed), '--epochs', str(epochs), '--steps_per_epoch',
           str(STEPS_PER_EPOCH), '--exp_name', '%s_%s' % (algo, gym_id),
           '--data_dir', osp.join(work_dir or data_dir, env), '--overwrite']
    if algo in ON_POLICY:
        cmd += ['--hid', '[64,32]', '--act', 'tanh']
    return cmd + list(run_flags)


def run_matrix(matrix, seeds, args):
    todo = []
    for env, algos in matrix.items():
        for algo in algos:
            epochs = budget_of(algo, args) // STEPS_PER_EPOCH
            for seed in seeds:
                if args.work_dir:
                    collect(env, algo, seed, epochs, args.work_dir, args.data_dir)
                rows = read_rows(osp.join(run_folder(args.data_dir, env, algo, seed),
                                          'progress.txt'))
                if len(rows) >= epochs:
                    continue
                todo.append((env, algo, seed, epochs))
    print('%d runs to do (%d workers)' % (len(todo), args.workers), flush=True)

    def one(job):
        env, algo, seed, epochs = job
        cmd = command(env, algo, seed, epochs, args.data_dir, args.run_flags, args.work_dir)
        t0 = time.time()
        _, status = run_logged(cmd, osp.join(args.work_dir or args.data_dir, 'logs',
                                             '%s_%s_s%d.log' % (algo, env_id(env, args.data_dir),
                                                                seed)))
        if args.work_dir:
            collect(env, algo, seed, epochs, args.work_dir, args.data_dir)
        print('%-5s %-12s seed %d: %s in %.0f s' % (algo, env, seed, status, time.time() - t0),
              flush=True)

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        list(pool.map(one, todo))


def collect(env, algo, seed, epochs, work_dir, data_dir):
    """Copy a run that finished in ``work_dir`` (all ``epochs`` rows) into ``data_dir``: its
    ``progress.txt`` and ``config.json`` only, replacing a shorter run of the same seed there.
    Returns whether it copied."""
    src = run_folder(work_dir, env, algo, seed)
    if len(read_rows(osp.join(src, 'progress.txt'))) < epochs:
        return False
    dst = run_folder(data_dir, env, algo, seed)
    os.makedirs(dst, exist_ok=True)
    for name in ('config.json', 'progress.txt'):
        with open(osp.join(src, name), 'rb') as f:
            data = f.read()
        tmp = osp.join(dst, name + '.tmp')
        with open(tmp, 'wb') as f:
            f.write(data)
        os.replace(tmp, osp.join(dst, name))
    return True


def curves(data_dir, env, algo, seeds):
    """``{seed: (steps, returns)}`` of the finished part of each run."""
    column = 'AverageTestEpRet' if algo in OFF_POLICY else 'AverageEpRet'
    out = {}
    for seed in seeds:
        rows = read_rows(osp.join(run_folder(data_dir, env, algo, seed), 'progress.txt'))
        steps, values = curve(rows, column)
        if steps:
            out[seed] = (steps, values)
    return out


def tables(data_dir, env, algo, seeds):
    """The progress tables of the runs that have a row with a number of the algorithm's
    column (those :func:`curves` gives), for the figure."""
    column = 'AverageTestEpRet' if algo in OFF_POLICY else 'AverageEpRet'
    out = []
    for seed in seeds:
        rows = read_rows(osp.join(run_folder(data_dir, env, algo, seed), 'progress.txt'))
        if curve(rows, column)[0]:
            out.append(rows)
    return column, out


def value_at(curve, step, half_window=None):
    """A run's value at ``step``, smoothed as Spinning Up smoothed its benchmark curves: the
    mean over a window of 11 epochs centred on the epoch at ``step`` (``np.convolve(x,
    ones(11), 'same')`` divided by the same of ones, so the window is cut where the run
    ends). None when the run has not reached ``step``."""
    steps, values = curve
    half_window = SMOOTH_HALF_WINDOW if half_window is None else half_window
    idx = [i for i, s in enumerate(steps) if s <= step]
    if not idx or steps[idx[-1]] < step:
        return None
    return smooth(values, half_window)[idx[-1]]


SMOOTH_HALF_WINDOW = 5  # Spinning Up smoothed its benchmark curves over 11 epochs


def smooth(values, half_window=SMOOTH_HALF_WINDOW):
    """Each epoch's value as the mean over the 11 epochs centred on it, cut at the ends: the
    smoothing of Spinning Up's benchmark curves (``np.convolve(x, ones(11), 'same')`` over the
    same of ones), and of ``value_at``. Running sums make it one pass over the run."""
    sums = [0.0, *accumulate(values)]
    n = len(sums) - 1
    return [(sums[min(n, i + half_window + 1)] - sums[max(0, i - half_window)])
            / (min(n, i + half_window + 1) - max(0, i - half_window)) for i in range(n)]


def ratio(ours, published):
    """``ours / published`` as text, or '–' where the published figure is not positive."""
    return '%.2f' % (ours / published) if published > 0 else '–'


def outputs_matrix(data_dir, seeds):
    """Every env x algorithm with a progress file in ``data_dir``, in the benchmark's order:
    the figures and the table always show all the runs made, not only those of this call
    (``--envs Walker2d --algos ppo`` must not drop HalfCheetah's rows from RESULTS.md)."""
    out = {}
    for env in DEFAULT_MATRIX:
        algos = tuple(a for a in OFF_POLICY + ON_POLICY if curves(data_dir, env, a, seeds))
        if algos:
            out[env] = algos
    return out


def band(ratio_text):
    """'below 80 %' / 'above 120 %' for a ratio outside [0.8, 1.2], else ''."""
    if ratio_text == '–':
        return ''
    r = float(ratio_text)
    return 'below 80 %' if r < 0.8 else 'above 120 %' if r > 1.2 else ''


def write_outputs(seeds, args):
    """Figures and RESULTS.md, drawn with the project's own rc settings
    (``spinup_tf.tools.plot.style``: not a matplotlibrc of the working directory)."""
    from spinup_tf.tools.plot import style
    with style():
        return _write_outputs(seeds, args)


def _write_outputs(seeds, args):
    import numpy as np
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from spinup_tf.tools.plot import band as seed_band, save_figure
    ref, pytorch = reference(), reference('spinningup_pytorch.json')
    spread = reference('spinningup_spread.json')['tf1']  # std over Spinning Up's seeds
    checkpoints = ref['checkpoints']
    rows = []
    os.makedirs(args.out, exist_ok=True)
    for env, algos in outputs_matrix(args.data_dir, seeds).items():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        drawn = False
        for i, algo in enumerate(algos):
            color = 'C%d' % i
            runs = curves(args.data_dir, env, algo, seeds)
            column, seed_tables = tables(args.data_dir, env, algo, seeds)
            if seed_tables:  # combined as run.py plot --smooth 11 combines them
                xs, mean, low, high = seed_band([t['TotalEnvInteracts'] for t in seed_tables],
                                                [t[column] for t in seed_tables],
                                                smooth_window=2 * SMOOTH_HALF_WINDOW + 1)
                ax.plot(xs, mean, color=color, label='%s (%d seed%s)' % (
                    algo, len(seed_tables), '' if len(seed_tables) == 1 else 's'))
                ax.fill_between(xs, low, high, color=color, alpha=0.2)
                drawn = True
            published = ref['values'].get(env, {}).get(algo)
            in_pytorch = pytorch['values'].get(env, {}).get(algo) or [None] * len(checkpoints)
            if in_pytorch[0] is not None:
                ax.plot(checkpoints, in_pytorch, 'x', color=color, markersize=5)
            su_std = spread.get(env, {}).get(algo) or [None] * len(checkpoints)
            if published:
                ax.errorbar(checkpoints, published, yerr=[v or 0 for v in su_std], fmt='o',
                            color=color, markerfacecolor='none', capsize=3, linewidth=0.8)
                for step, su, std, su_pytorch in zip(checkpoints, published, su_std, in_pytorch):
                    ours = [value_at(c, step) for c in runs.values()]
                    ours = [v for v in ours if v is not None]
                    if ours:
                        rows.append((env, algo, step, ours, su, std, su_pytorch))
        if drawn:
            ax.set_xscale('log')
            ax.set_xlabel('TotalEnvInteracts')
            ax.set_ylabel('AverageTestEpRet (off-policy) / AverageEpRet (on-policy)')
            flags = ' '.join(recorded_flags(args.data_dir))
            ax.set_title('%s%s: spinup_tf (lines: mean, band: ± std over seeds)\nvs Spinning Up '
                         'on -v3: TF1 (circles, ± std over its seeds), PyTorch (crosses)'
                         % (env_id(env, args.data_dir), ' with ' + flags if flags else ''),
                         fontsize=9)
            ax.legend(fontsize=8)
            fig.tight_layout()
            save_figure(fig, osp.join(args.out, '%s.png' % env), dpi=110)
        plt.close(fig)
    if not rows:
        print('no finished checkpoint yet: RESULTS.md left as it is')
        return
    lines = ['# Spinning Up benchmark, reproduced', '',
             'Made by `%s` (figures `%s/<env>.png`). '
             % (made_by(args), osp.relpath(args.out, ROOT)) +
             'Ours: mean ± std over seeds (and each seed, in seed order) of the mean over 11 '
             'epochs centred on the step (Spinning Up smoothed its curves over 11 epochs; the '
             'window is cut where a run ends), on MuJoCo -%s; ' % env_version(args.data_dir) +
             'Spinning Up: its TF1 10-seed mean on -v2/-v3 (%s).' % ref['source'],
             'Ratio: ours / Spinning Up\'s, given only where Spinning Up\'s figure is positive '
             '(a ratio to a negative return means nothing); the difference is always given.', '',
             'Outside: where the ratio is below 0.8 or above 1.2 (the closing note of issue 17 '
             'gives the reason found for each such row).', '',
             'Spinning Up\'s ± std: the standard deviation over its 10 seeds, read off its '
             'figures\' shaded bands (`spinningup_spread.json`); "in its stds": ours − Spinning '
             'Up over that std: where our mean lies in its seeds\' spread. 95 %% CI: the '
             'percentile bootstrap interval of our mean over seeds (10000 resamples; '
             '`spinup_tf/tools/stats.py`), and the same over Spinning Up\'s mean; with 3 seeds '
             'it spans at most the seeds\' range and covers less than 95 %%, so the aggregate '
             'below, over every env and algorithm, is the sturdier test. Spinning Up PyTorch: '
             'the same '
             'benchmark of its PyTorch implementations (no TRPO), for context (%s).'
             % pytorch['source'], '',
             '| env | algo | step | seeds | ours | per seed | Spinning Up | ratio '
             '| ours − Spinning Up | in its stds | outside | Spinning Up PyTorch '
             '| ratio to PyTorch | ours 95 % CI | ratio 95 % CI |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    from spinup_tf.tools import stats
    for env, algo, step, ours, su, su_std, su_pytorch in rows:
        mean, std = float(np.mean(ours)), float(np.std(ours))
        r = ratio(mean, su)
        ci = stats.aggregate(ours, 'mean') if len(ours) > 1 else None
        lines.append('| %s | %s | %dk | %d | %.0f ± %.0f | %s | %s | %s | %+.0f | %s | %s | %s '
                     '| %s | %s | %s |' % (
                         env_id(env, args.data_dir), algo, step // 1000, len(ours), mean, std,
                         ' / '.join('%.0f' % v for v in ours),
                         '%.0f' % su if su_std is None else '%.0f ± %.0f' % (su, su_std),
                         r, mean - su, '–' if not su_std else '%+.1f' % ((mean - su) / su_std),
                         band(r), '–' if su_pytorch is None else '%.0f' % su_pytorch,
                         '–' if su_pytorch is None else ratio(mean, su_pytorch),
                         '–' if ci is None else '[%.0f, %.0f]' % (ci.low, ci.high),
                         '–' if ci is None or su <= 0 else
                         '[%.2f, %.2f]' % (ci.low / su, ci.high / su)))
    lines += aggregate_outputs(rows, args)
    with open(osp.join(args.out, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


def seed_counts(rows):
    """``{(env, algo): seeds}``: how many seeds each task has (its most at any checkpoint),
    so that a checkpoint only some seeds reached never stands for the task."""
    seeds = {}
    for env, algo, _, ours, _, _, _ in rows:
        seeds[(env, algo)] = max(seeds.get((env, algo), 0), len(ours))
    return seeds


def normalized_finals(rows, args):
    """``(scores, at)``: ``scores[(env, algo)]`` is each seed's value over Spinning Up TF1's
    mean there (1.0 = Spinning Up's) and ``at[(env, algo)]`` the step, the furthest of
    Spinning Up's checkpoints that every seed of the env x algorithm reached, from 300k steps
    on (or its budget, if smaller). So a 1M row replaces the task's 300k one once all its
    seeds have reached 1M, and a row of the seeds finished so far never stands for the task
    (``rows``: ``write_outputs``'s table rows)."""
    seeds = seed_counts(rows)
    out, at = {}, {}
    for env, algo, step, ours, su, _, _ in rows:
        task = (env, algo)
        if (step >= min(300000, budget_of(algo, args)) and su > 0 and
                len(ours) == seeds[task] and step > at.get(task, 0)):
            out[task], at[task] = [v / su for v in ours], step
    return out, at


PROFILE_TAUS = [i / 100 for i in range(0, 251)]
EARLY_STEP = 300000  # the off-policy runs' budget before issue 54: early speed


def aggregate_groups(keys, data_dir, kinds=('all', 'off-policy', 'on-policy')):
    """The rows of an aggregate table over the env x algorithm tasks ``keys``: ``(name,
    tasks)`` for each of ``kinds`` ('all', 'off-policy', 'on-policy'), then each algorithm
    and each env, in the matrix's order; groups with no task are left out."""
    pools = {'all': OFF_POLICY + ON_POLICY, 'off-policy': OFF_POLICY, 'on-policy': ON_POLICY}
    groups = [(kind, [k for k in keys if k[1] in pools[kind]]) for kind in kinds]
    groups += [(algo, [k for k in keys if k[1] == algo]) for algo in OFF_POLICY + ON_POLICY]
    envs = sorted({env for env, _ in keys},
                  key=lambda e: (list(DEFAULT_MATRIX).index(e) if e in DEFAULT_MATRIX
                                 else len(DEFAULT_MATRIX), e))
    groups += [(env_id(env, data_dir), [k for k in keys if k[0] == env]) for env in envs]
    return [(name, tasks) for name, tasks in groups if tasks]


def aggregate_table(scores, groups):
    """``[(name, keys, tasks, iqm, mean, above)]``: per group, its tasks' normalised scores
    pooled, with the IQM, the mean and the fraction of runs above 1 (``stats.Interval``s)."""
    from spinup_tf.tools import stats
    table = []
    for name, keys in groups:
        tasks = [scores[k] for k in keys]
        above = stats.performance_profile(tasks, [1.0])
        table.append((name, keys, tasks, stats.aggregate(tasks, 'iqm'),
                      stats.aggregate(tasks, 'mean'),
                      stats.Interval(above[0][0], above[1][0], above[2][0])))
    return table


def table_lines(table):
    """The Markdown table of ``aggregate_table``'s rows."""
    lines = ['| runs of | env x algorithm | runs | IQM [95 % CI] | mean [95 % CI] '
             '| runs above 1 [95 % CI] |', '|---|---|---|---|---|---|']
    for name, keys, tasks, iqm, mean, above in table:
        lines.append('| %s | %d | %d | %s | %s | %s |' % (
            name, len(keys), sum(len(t) for t in tasks), iqm, mean, above))
    return lines


def early_scores(rows):
    """``scores[(env, algo)]``: each seed's value at ``EARLY_STEP`` over Spinning Up TF1's
    mean there, for the off-policy tasks whose seeds all reached it."""
    seeds = seed_counts(rows)
    return {(env, algo): [v / su for v in ours]
            for env, algo, step, ours, su, _, _ in rows
            if algo in OFF_POLICY and step == EARLY_STEP and su > 0 and
            len(ours) == seeds[(env, algo)]}


def aggregate_outputs(rows, args):
    """Draw ``aggregate.png`` and return the aggregate sections of RESULTS.md: the final
    level (each task at its furthest checkpoint), then the off-policy tasks' early speed (at
    300k). No lines when no env x algorithm has reached 300k steps, or its budget if
    smaller."""
    scores, at = normalized_finals(rows, args)
    if not scores:
        return []
    table = aggregate_table(scores, aggregate_groups(list(scores), args.data_dir))
    draw_aggregate(table, osp.join(args.out, 'aggregate.png'), env_version(args.data_dir))
    by_step = {}
    for (env, algo), step in sorted(at.items()):
        by_step.setdefault(step, []).append('%s %s' % (env_id(env, args.data_dir), algo))
    scored_at = '; '.join('%dk: %s' % (step // 1000, ', '.join(tasks))
                          for step, tasks in sorted(by_step.items()))
    lines = ['', '## Aggregate: our return over Spinning Up TF1\'s, across envs and algorithms',
             '',
             'Each run\'s score is its value at the furthest of Spinning Up\'s checkpoints '
             'that every seed of its env x algorithm reached, from 300k steps on (smoothed over '
             '11 epochs as above), divided by Spinning Up TF1\'s mean there: 1.0 is Spinning '
             'Up\'s. IQM: the mean of the middle 50 %% of the runs pooled; "runs above 1": the '
             'fraction of runs scoring above Spinning Up\'s mean (the performance profile at '
             '1, averaged over tasks). Brackets: 95 %% stratified bootstrap confidence '
             'intervals (10000 resamples; seeds resampled within each env x algorithm; '
             '`spinup_tf/tools/stats.py`). Spinning Up\'s means are held fixed: their own '
             'standard error (its std over √10) is not in these intervals. Figure: '
             '`aggregate.png` (intervals, and the performance profile). Scored at %s.'
             % scored_at, ''] + table_lines(table)
    early = early_scores(rows)
    if early:
        groups = aggregate_groups(list(early), args.data_dir, kinds=('off-policy',))
        lines += ['', '## Early speed: the off-policy runs at 300k steps', '',
                  'The same scores, taken at 300k steps for every off-policy env x algorithm '
                  'whose seeds all reached it (their budget before their 1M runs; Spinning '
                  'Up\'s benchmark shows 300k too): how fast they learn, where the table '
                  'above is where they end. Where a run goes on to 1M, its 300k window is '
                  'centred, not cut at the run\'s end.', ''] + \
            table_lines(aggregate_table(early, groups))
    return lines


def draw_aggregate(table, path, version):
    """IQM and mean with their intervals per group (left), and the performance profile of
    all runs, off-policy and on-policy (right)."""
    import matplotlib.pyplot as plt
    from spinup_tf.tools import stats
    from spinup_tf.tools.plot import save_figure
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.45 * len(table) + 2.2))
    for i, (name, _, _, iqm, mean, _) in enumerate(table):
        y = len(table) - 1 - i
        for est, dy, color, label in ((iqm, 0.12, 'C0', 'IQM'), (mean, -0.12, 'C1', 'mean')):
            left.plot([est.low, est.high], [y + dy] * 2, color=color, linewidth=3, alpha=0.6,
                      label=label if i == 0 else None)
            left.plot([est.value], [y + dy], 'o', color='black', markersize=3)
    left.axvline(1.0, color='gray', linestyle='--', linewidth=1)
    left.set_yticks(range(len(table)))
    left.set_yticklabels(['%s (%d runs)' % (t[0], sum(len(x) for x in t[2]))
                          for t in reversed(table)])
    left.set_xlabel('our return / Spinning Up TF1\'s (95 % CI)')
    left.legend(fontsize=8, loc='upper right')
    for name, _, tasks, _, _, _ in table:
        if name not in ('all', 'off-policy', 'on-policy'):
            continue
        frac, low, high = stats.performance_profile(tasks, PROFILE_TAUS)
        line, = right.plot(PROFILE_TAUS, frac, label='%s (%d runs)' % (
            name, sum(len(t) for t in tasks)))
        right.fill_between(PROFILE_TAUS, low, high, color=line.get_color(), alpha=0.15,
                           linewidth=0)
    right.axvline(1.0, color='gray', linestyle='--', linewidth=1)
    right.set_xlabel('normalised score τ (1 = Spinning Up TF1\'s mean)')
    right.set_ylabel('fraction of runs with score > τ')
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.suptitle('spinup_tf on MuJoCo -%s against Spinning Up TF1, final returns '
                 '(bands, bars: 95 %% stratified bootstrap CIs)' % version, fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--envs', nargs='*', default=list(DEFAULT_MATRIX),
                        help='HalfCheetah Hopper Walker2d Ant (run as -v5, or as '
                        '--env_version says)')
    parser.add_argument('--env_version', default='v5',
                        help='v5 (default) or v4: gymnasium\'s MuJoCo version to run, for a '
                        'variant in its own --data_dir and --out (v4: -v3\'s models on the new '
                        'bindings)')
    parser.add_argument('--algos', nargs='*', default=None,
                        help='default: the matrix of issue 17 per env')
    parser.add_argument('--seeds', type=int, default=3)
    parser.add_argument('--budget_off', type=int, default=300000,
                        help='env steps of an off-policy run (default 300k)')
    parser.add_argument('--budget_on', type=int, default=3000000,
                        help='env steps of an on-policy run (default 3M)')
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--data_dir', default=osp.join(HERE, 'data'))
    parser.add_argument('--work_dir', default=None,
                        help='run there (models and checkpoints, which are large, stay out of '
                        'the checkout; a later call resumes them) and copy each finished run\'s '
                        'progress.txt and config.json into --data_dir')
    parser.add_argument('--out', default=HERE, help='where figures and RESULTS.md go '
                        '(default plots/benchmark)')
    parser.add_argument('--no-run', action='store_true', help='only redraw figures and table')
    parser.add_argument('--run_flags', default='', metavar='"FLAGS"',
                        help='more run.py flags for every run, as one quoted string, e.g. '
                        '--run_flags "--timeout_is_terminal True" (give such a variant its own '
                        '--data_dir and --out)')
    args = parser.parse_args(argv)
    try:
        args.run_flags = shlex.split(args.run_flags)
    except ValueError as e:
        print('error: --run_flags: %s' % e, file=sys.stderr)
        return 2
    if args.run_flags and not args.run_flags[0].startswith('--'):
        print('error: --run_flags must start with a run.py flag (--NAME), got %r'
              % args.run_flags[0], file=sys.stderr)
        return 2
    if args.env_version not in ENV_VERSIONS:
        print('error: --env_version %s; choose from %s' % (args.env_version,
                                                         ', '.join(ENV_VERSIONS)),
              file=sys.stderr)
        return 2
    known = set(reference()['values'])
    bad = [e for e in args.envs if e not in known]
    if bad:
        print('error: unknown env %s; choose from %s' % (', '.join(bad), ', '.join(sorted(known))),
              file=sys.stderr)
        return 2
    bad = [a for a in args.algos or () if a not in OFF_POLICY + ON_POLICY]
    if bad:
        print('error: unknown algorithm %s; choose from %s'
              % (', '.join(bad), ', '.join(OFF_POLICY + ON_POLICY)), file=sys.stderr)
        return 2
    if min(args.seeds, args.workers) < 1:
        print('error: --seeds and --workers must be at least 1', file=sys.stderr)
        return 2
    if min(args.budget_off, args.budget_on) < STEPS_PER_EPOCH:
        print('error: --budget_off and --budget_on must be at least one epoch (%d steps)'
              % STEPS_PER_EPOCH, file=sys.stderr)
        return 2
    matrix = {env: tuple(args.algos) if args.algos else DEFAULT_MATRIX[env] for env in args.envs}
    seeds = list(range(args.seeds))
    if not args.no_run:
        made = recorded_flags(args.data_dir)
        if made != args.run_flags and (made or has_runs(args.data_dir)):
            print('error: %s holds runs made with --run_flags "%s", not "%s": give this '
                  'variant its own --data_dir' % (args.data_dir, ' '.join(made),
                                                  ' '.join(args.run_flags)), file=sys.stderr)
            return 2
        made = env_version(args.data_dir)
        if made != args.env_version and (made != 'v5' or has_runs(args.data_dir)):
            print('error: %s holds runs on -%s, not -%s: give this variant its own --data_dir'
                  % (args.data_dir, made, args.env_version), file=sys.stderr)
            return 2
        if args.env_version != 'v5':
            os.makedirs(args.data_dir, exist_ok=True)
            with open(osp.join(args.data_dir, VERSION_FILE), 'w') as f:
                f.write(args.env_version + '\n')
        if args.run_flags:
            os.makedirs(args.data_dir, exist_ok=True)
            with open(osp.join(args.data_dir, FLAGS_FILE), 'w') as f:
                json.dump(args.run_flags, f)
        run_matrix(matrix, seeds, args)
    write_outputs(seeds, args)
    return 0


if __name__ == '__main__':
    sys.exit(main())
