#!/usr/bin/env python
"""The source documents reproduced side by side: ``python plots/reproduce.py --budget full``.

For every seed document (``DOCUMENTS``) it runs three variants for ``--seeds`` seeds, through
``run.py``:

* ``seed``: the preset, every quirk of the seed on (``--preset NAME``);
* ``fixed``: the same configuration with every quirk fixed (``--preset NAME-fixed``);
* ``default``: the plain algorithm with its defaults on the same env, for the same number
  of env steps (``--epochs`` from the budget, its own ``--steps_per_epoch``).

Budgets: ``full`` is each seed's own (udemy 500k steps on AntBulletEnv-v0, rllab 1M,
tensorlayer 40k, blog-mountaincar 200k, seed-000 500k, TRPO/NPG 200k); ``quick`` cuts every
variant to the steps of ``QUICK_EPOCHS``; ``tiny`` (2 epochs of 200 steps) only checks that
the script works. Each run is one folder
``plots/reproduce/data/<budget>/<algo>_<variant>_<env>/..._s<seed>/``. A run whose
``progress.txt`` has all its epochs is skipped, one with a checkpoint is continued with
``run.py resume``, anything else starts afresh: stop the script at any time and start it
again. ``--workers N`` runs N at once.

Then it writes, in ``plots/reproduce/<budget>/``, one figure per document (``<doc>.png``:
the three variants' mean curves with a band of one standard deviation over seeds, the
y axis naming the column plotted) and ``RESULTS.md``: per document and variant, the seeds,
the steps reached, the final value of that column and of the test return, mean ± std over
seeds, the wall time of a run, and the seed's own reported figure. The figures and table
cover every document with runs in the data folder (``--only`` restricts what is run, and
runs its documents in the order given), and a
row counts only the finished seeds once one has finished. ``--no-run`` only draws and
tabulates, and leaves a table in place when there is nothing to put in it.

A second table gives, per document, the probability that a run of the fixed variant scores
above a run of the variant as written (and the defaults above it), with its 95 % bootstrap
interval over seeds (``spinup_tf.tools.stats.probability_of_improvement``).
"""
import argparse
import os
import os.path as osp
import subprocess
import sys
import time
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)
HERE = osp.join(ROOT, 'plots', 'reproduce')

Document = namedtuple('Document', 'key title algo preset quick_epochs column reported')
DOCUMENTS = [
    # Cheapest first, so that a short sitting finishes whole documents.
    Document('tensorlayer', 'seed 003: TensorLayer TD3 tutorial', 'td3', 'tensorlayer', 5,
             'AverageTestEpRet', None),
    Document('trpo-blog', 'seed 004: TRPO blog run', 'trpo', 'blog-cartpole', 25,
             'AverageEpRet', None),
    Document('npg-blog', 'seed 004: NPG variant of the TRPO blog run', 'npg', 'blog-cartpole',
             25, 'AverageEpRet', None),
    Document('blog-mountaincar', 'seed 001 v1: TD3 blog run', 'td3', 'blog-mountaincar', 12,
             'AverageTestEpRet', None),
    Document('seed-000', 'seed 000: Spinning Up TF1 DDPG walkthrough', 'ddpg', 'seed-000', 5,
             'AverageTestEpRet', None),
    Document('udemy', 'seed 001 v2: udemy PyTorch TD3', 'td3', 'udemy', 6,
             'AverageTestEpRet', None),
    # rllab's own protocol tests only after the last epoch: compare the training returns.
    Document('rllab-mxnet', 'seed 002: MXNet DDPG in rllab style', 'ddpg', 'rllab-mxnet', 20,
             'AverageEpRet', None),
]
VARIANTS = ('seed', 'fixed', 'default')
TINY = dict(epochs=2, steps_per_epoch=200)
LINESTYLES = dict(seed='-', fixed='--', default=':')
LAST = 10  # epochs averaged in the "last 10 epochs" column
NO_FIGURE = 'none: the seed text shows its results as a figure only'


def settings(algo, env, preset):
    from spinup_tf.tools.cli import resolve_defaults
    return resolve_defaults(algo, env, preset)


def env_of(doc):
    from spinup_tf.reproductions.presets import get_preset
    return get_preset(doc.algo, doc.preset).env


def variant_budget(doc, variant, budget):
    """``(epochs, steps_per_epoch)`` of ``variant`` of ``doc`` at ``budget``: the preset's
    (its epochs cut to ``quick_epochs`` for ``quick``); ``default`` runs as many env steps
    as the preset, in epochs of its own length (of the preset's when that length does not
    divide them)."""
    if budget == 'tiny':
        return TINY['epochs'], TINY['steps_per_epoch']
    env = env_of(doc)
    p = settings(doc.algo, env, doc.preset)
    epochs = doc.quick_epochs if budget == 'quick' else p['epochs']
    if variant != 'default':
        return epochs, p['steps_per_epoch']
    spe = settings(doc.algo, env, None)['steps_per_epoch']
    if (epochs * p['steps_per_epoch']) % spe:  # the same steps exactly, in the preset's epochs
        return epochs, p['steps_per_epoch']
    return epochs * p['steps_per_epoch'] // spe, spe


def variant_label(doc, variant):
    if variant == 'seed':
        return '--preset %s' % doc.preset
    if variant == 'fixed':
        return '--preset %s-fixed' % doc.preset
    return '%s defaults' % doc.algo


def exp_name(doc, variant):
    tag = {'seed': doc.preset, 'fixed': doc.preset + '-fixed', 'default': 'default'}[variant]
    return '%s_%s_%s' % (doc.algo, tag, env_of(doc))


def run_folder(data_dir, doc, variant, seed):
    name = exp_name(doc, variant)
    return osp.join(data_dir, name, '%s_s%d' % (name, seed))


def read_rows(path):
    """A progress file as a ``Table`` of columns (``spinup_tf.utils.progress_file``, the one
    reader of progress files): an empty table when it does not exist, or (with a warning)
    when it cannot be read."""
    from spinup_tf.utils.errors import UserInputError
    from spinup_tf.utils.progress_file import Table, read_table
    try:
        return read_table(path, missing_ok=True)
    except (OSError, UserInputError) as e:
        print('warning: %s' % (str(e) or path), file=sys.stderr)
        return Table(path, [], {}, 0)


def trained_epochs(rows):
    """Epochs of training in ``rows`` (the udemy preset's row Epoch 0 is a test only)."""
    if 'Epoch' not in rows:
        return len(rows)
    return int((rows['Epoch'] != 0).sum())


def steps_done(rows):
    """Env steps of the last row (0 without rows). A run is finished when they reach its
    budget: the row count is not a measure, since some seeds write rows at episode ends
    (udemy) or none before their memory fills (rllab)."""
    return int(rows.last('TotalEnvInteracts', 0))


def stale(doc, variant, folder):
    """Whether the run in ``folder`` was made with other settings than its preset has now
    (a quirk added or a value changed since): it is run again from the start."""
    import json
    if variant == 'default':
        return False
    try:
        with open(osp.join(folder, 'config.json')) as f:
            config = json.load(f)
    except (OSError, ValueError):
        return False
    from spinup_tf.reproductions.presets import get_preset
    from spinup_tf.reproductions.networks import resolve_actor_critic
    from spinup_tf.reproductions.hooks import renamed
    config = renamed(config)  # a flag recorded under its old name is the same flag
    name = doc.preset + ('-fixed' if variant == 'fixed' else '')
    plain = settings(doc.algo, None, None)  # what a config without the key ran with
    for key, value in get_preset(doc.algo, name).kwargs.items():
        if key in ('epochs', 'steps_per_epoch'):
            continue  # the budget's: checked by the steps done
        got = config[key] if key in config else plain.get(key)
        if key == 'actor_critic':
            if resolve_actor_critic(str(got)) is not resolve_actor_critic(value):
                return True
        elif json.loads(json.dumps(got)) != json.loads(json.dumps(value)):
            return True
    return False


def resumable(folder):
    """Whether ``run.py resume`` would take ``folder``'s checkpoint (one made by an older
    version, without the records a resume checks, is not: that run starts afresh)."""
    from spinup_tf.utils.checkpoint import verify, CheckpointError
    try:
        verify(folder)
    except CheckpointError:
        return False
    return True


def command(doc, variant, seed, budget, data_dir, afresh=False):
    """The ``run.py`` command of one run, or its ``resume`` when it has a checkpoint that
    resume takes (and is not to start ``afresh``)."""
    folder = run_folder(data_dir, doc, variant, seed)
    run_py = osp.join(ROOT, 'run.py')
    if osp.isdir(osp.join(folder, 'checkpoint')) and not afresh and resumable(folder):
        return [sys.executable, run_py, 'resume', folder]
    epochs, spe = variant_budget(doc, variant, budget)
    cmd = [sys.executable, run_py, doc.algo]
    if variant == 'default':
        cmd += ['--env', env_of(doc)]
    else:
        cmd += ['--preset', doc.preset + ('-fixed' if variant == 'fixed' else '')]
    cmd += ['--seed', str(seed), '--epochs', str(epochs), '--steps_per_epoch', str(spe),
            '--exp_name', exp_name(doc, variant), '--data_dir', data_dir,
            '--overwrite', 'True']
    if budget == 'tiny':
        cmd += ['--max_ep_len', '100']
    return cmd


def selected_documents(only):
    """The documents of ``--only`` in the order given (each once), or all of ``DOCUMENTS``:
    a long sitting can put first the runs that must finish in it."""
    if only is None:
        return list(DOCUMENTS)
    by_key = {d.key: d for d in DOCUMENTS}
    return [by_key[k] for k in dict.fromkeys(only)]


def jobs(docs, seeds, budget, data_dir):
    """The runs still to do, seed by seed (so the variants of a seed finish together)."""
    todo = []
    for doc in docs:
        for seed in seeds:
            for variant in VARIANTS:
                folder = run_folder(data_dir, doc, variant, seed)
                rows = read_rows(osp.join(folder, 'progress.txt'))
                if stale(doc, variant, folder):
                    todo.append((doc, variant, seed, True))
                elif steps_done(rows) < last_step(doc, variant, budget):
                    todo.append((doc, variant, seed, False))
    return todo


def run_all(docs, seeds, args):
    todo = jobs(docs, seeds, args.budget, args.data_dir)
    print('%d runs to do (%d at once)' % (len(todo), args.workers), flush=True)

    def one(job):
        doc, variant, seed, afresh = job
        cmd = command(doc, variant, seed, args.budget, args.data_dir, afresh)
        t0 = time.time()
        code, status = run_logged(cmd, osp.join(args.data_dir, 'logs', '%s_s%d.log'
                                                % (exp_name(doc, variant), seed)))
        print('%-17s %-8s seed %d: %s in %.0f s' % (doc.key, variant, seed, status,
                                                    time.time() - t0), flush=True)
        return code

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        codes = list(pool.map(one, todo))
    return 0 if all(c == 0 for c in codes) else 1


def run_logged(cmd, log_path):
    """Run ``cmd`` with its stderr appended to ``log_path`` (a file, not a pipe: a run goes
    on, and can write its checkpoint on Ctrl-C, even if this script is killed). Returns
    ``(exit code, 'done' or 'exit N: <last stderr line>')``."""
    os.makedirs(osp.dirname(log_path), exist_ok=True)
    with open(log_path, 'a') as log:
        start = log.tell()
        code = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log,
                              env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2')).returncode
    if code == 0:
        return code, 'done'
    with open(log_path) as log:
        log.seek(start)
        lines = log.read().strip().splitlines()
    return code, 'exit %d: %s (log: %s)' % (code, lines[-1] if lines else '', log_path)


def last_step(doc, variant, budget):
    """``TotalEnvInteracts`` of a finished run's last row: its budget's steps, or, for a
    preset whose epochs end one step late (seed 000's ``t > 0 and t % steps_per_epoch ==
    0``), the step ``t`` of its last whole epoch: it writes no row for the steps after."""
    epochs, spe = variant_budget(doc, variant, budget)
    if variant != 'default':
        from spinup_tf.reproductions.presets import get_preset
        name = doc.preset + ('-fixed' if variant == 'fixed' else '')
        if get_preset(doc.algo, name).kwargs.get('epochs_one_step_late'):
            return (epochs - 1) * spe
    return epochs * spe


def curve(rows, column):
    """``(steps, values)`` of the rows where ``column`` is a number."""
    import numpy as np
    if column not in rows or 'TotalEnvInteracts' not in rows:
        return [], []
    values = np.asarray(rows[column], dtype=np.float64)
    keep = ~np.isnan(values)
    return (np.asarray(rows['TotalEnvInteracts'])[keep].astype(int).tolist(),
            values[keep].tolist())


def summarize(doc, variant, seeds, budget, data_dir):
    """Per-variant results: the seeds' curves of ``doc.column`` and final values, or None.

    Once one seed has finished its budget, only the finished seeds count: a "final" value
    averages runs at the same step, never a finished run with one still under way. Before
    that, the runs so far are shown (the steps column then says "running")."""
    import numpy as np
    epochs, spe = variant_budget(doc, variant, budget)
    runs = {}
    for seed in seeds:
        rows = read_rows(osp.join(run_folder(data_dir, doc, variant, seed), 'progress.txt'))
        if trained_epochs(rows):
            runs[seed] = rows
    if not runs:
        return None
    budget_steps = last_step(doc, variant, budget)
    finished = {s: rows for s, rows in runs.items() if steps_done(rows) >= budget_steps}
    runs = finished or runs
    finals, lasts, means, tests, steps, walls, curves = [], [], [], [], [], [], {}
    for seed, rows in runs.items():
        curves[seed] = curve(rows, doc.column)
        finals.append(float(rows.last(doc.column, float('nan'))))
        values = curves[seed][1] or [float('nan')]
        lasts.append(np.mean(values[-LAST:]))
        means.append(np.mean(values))
        if 'AverageTestEpRet' in rows:
            tests.append(float(rows.last('AverageTestEpRet')))
        steps.append(steps_done(rows))
        walls.append(float(rows.last('Time', float('nan'))))
    old = [s for s in runs if stale(doc, variant, run_folder(data_dir, doc, variant, s))]
    return dict(seeds=sorted(runs), curves=curves, tables=runs,
                final=(np.mean(finals), np.std(finals)),
                stale=old, per_seed=dict(last=lasts, final=finals, test=tests),
                last=(np.mean(lasts), np.std(lasts)), mean=(np.mean(means), np.std(means)),
                test=(np.mean(tests), np.std(tests)) if tests else None,
                steps=min(steps), budget=budget_steps, wall=np.mean(walls))


def seed_band(tables, column):
    """``(x, mean, low, high)`` of ``column`` against ``TotalEnvInteracts`` over the seeds'
    progress tables, combined as ``run.py plot`` combines them (``spinup_tf.tools.plot.band``:
    row ``i`` of every seed is one point, at the mean of the seeds' steps there, every seed
    cut to the shortest, band +-1 std over seeds). Seeds that log at different steps (the
    udemy preset evaluates at the first episode end after every 5,000 steps) give a curve,
    not only the points that every seed happens to share; None without a seed that has both
    columns."""
    from spinup_tf.tools.plot import band
    usable = [t for t in tables if column in t and 'TotalEnvInteracts' in t and len(t)]
    if not usable:
        return None
    return band([t['TotalEnvInteracts'] for t in usable], [t[column] for t in usable])


def plot_document(doc, results, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from spinup_tf.tools.plot import save_figure, style
    with style():
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for variant, res in results.items():
            combined = seed_band(list(res['tables'].values()), doc.column)
            if combined is None:
                continue
            x, mean, low, high = combined
            line, = ax.plot(x, mean, linestyle=LINESTYLES[variant],  # equal curves stay visible
                            label='%s (%d seeds)' % (variant_label(doc, variant),
                                                     len(res['seeds'])))
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2)
        ax.set_title('%s, %s' % (doc.title, env_of(doc)))
        ax.set_xlabel('TotalEnvInteracts')
        ax.set_ylabel('%s (mean ± std over seeds)' % doc.column)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        save_figure(fig, path, dpi=100)
        plt.close(fig)


def write_results(docs, seeds, args):
    """Figures and ``RESULTS.md`` in ``plots/reproduce/<budget>/``; returns the table's
    lines, or None when there was nothing to tabulate (an existing table is kept)."""
    out = args.out or osp.join(HERE, args.budget)
    lines = ['# The source documents side by side (%s budget)' % args.budget, '',
             'Made by `python plots/reproduce.py --budget %s --seeds %d --workers 2`; '
             'figures: `plots/reproduce/%s/<document>.png`. Every figure is mean ± std over '
             'seeds of one run\'s value: "final" its last epoch\'s, "last 10" the mean of its '
             'last 10 epochs, "whole run" the mean of all its epochs (how fast it learned). '
             'The column is the deterministic test return '
             '(`AverageTestEpRet`) for the off-policy seeds, the training return '
             '(`AverageEpRet`) for TRPO/NPG and for rllab (whose protocol tests only after '
             'the last epoch: its "final test return" is that one evaluation of 10000 '
             'episodes). Wall time is the `Time` column of a run\'s last row, two runs at a '
             'time on 2 cores. MuJoCo envs are `-v5`.' % (args.budget, len(seeds), args.budget),
             '',
             '| document | env | variant | seeds | steps | column | final | last 10 | '
             'whole run | final test return | wall time / run | seed\'s reported figure |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|']
    n_rows = 0
    comparisons = []
    os.makedirs(out, exist_ok=True)
    for doc in docs:
        results = {}
        for variant in VARIANTS:
            res = summarize(doc, variant, seeds, args.budget, args.data_dir)
            if res is None:
                continue
            results[variant] = res
            steps = '%d' % res['steps'] if res['steps'] >= res['budget'] else \
                '%d of %d (running)' % (res['steps'], res['budget'])
            if res['stale']:  # not what the preset runs today: rerun by the next sitting
                which = '' if res['stale'] == res['seeds'] else \
                    'seed%s %s ' % ('s' if len(res['stale']) > 1 else '',
                                    ', '.join(str(s) for s in res['stale']))
                steps += ' (stale: %smade before the preset\'s current quirks)' % which

            test = '%.1f ± %.1f' % res['test'] if res['test'] and res['test'][0] == \
                res['test'][0] else '—'
            lines.append('| %s | %s | `%s` | %s | %s | %s | %.1f ± %.1f | %.1f ± %.1f | '
                         '%.1f ± %.1f | %s | %.0f s | %s |' % (
                             doc.title, env_of(doc), variant_label(doc, variant),
                             ', '.join(str(s) for s in res['seeds']), steps, doc.column,
                             res['final'][0], res['final'][1], res['last'][0], res['last'][1],
                             res['mean'][0], res['mean'][1], test, res['wall'],
                             doc.reported or NO_FIGURE))
            n_rows += 1
        if results:
            plot_document(doc, results, osp.join(out, '%s.png' % doc.key))
            comparisons.append((doc, results))
    if not n_rows:
        print('no finished epochs under %s: %s left as it is'
              % (args.data_dir, osp.join(out, 'RESULTS.md')))
        return None
    lines += improvement_table(comparisons)
    with open(osp.join(out, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    return lines


# The score that the improvement table compares: the mean of the last 10 epochs of the
# document's column, or (rllab, whose protocol tests only after the last epoch) the final
# test return, that one evaluation of 10000 episodes.
SCORES = {'last': 'last 10 epochs of the column', 'test': 'final test return'}
SCORE_OF = {'rllab-mxnet': 'test'}


def improvement_table(comparisons):
    """The lines of RESULTS.md's improvement section: per document, each variant's score
    (mean and 95 % bootstrap interval over seeds) and ``P(fixed > as written)``,
    ``P(defaults > as written)`` with their intervals."""
    from spinup_tf.tools import stats
    lines = ['', '## Does fixing the quirks help? P(fixed > as written)', '',
             '`P(A > B)`: the probability that a run of variant A scores above a run of '
             'variant B (ties count a half), over all pairs of their seeds, with its 95 % '
             'stratified bootstrap interval (the seeds of each variant resampled on their own, '
             '10000 resamples; `spinup_tf/tools/stats.py`). 0.5: neither is better; an '
             'interval that holds 0.5 does not tell the two apart. With 3 seeds a side there '
             'are 9 pairs. Score: the mean of the last 10 epochs of the document\'s column '
             '(rllab: the final test return, its one evaluation of 10000 episodes). Each '
             'variant\'s score is also given as mean [95 % CI] over seeds (with 3 seeds the '
             'interval spans about the seeds\' range).', '',
             '| document | score | as written | fixed | defaults | P(fixed > as written) '
             '| P(defaults > as written) |', '|---|---|---|---|---|---|---|']
    n = 0
    for doc, results in comparisons:
        score = SCORE_OF.get(doc.key, 'last')
        values = {v: r['per_seed'][score] for v, r in results.items()
                  if r['per_seed'][score] and all(x == x for x in r['per_seed'][score])}
        if 'seed' not in values or len(values) < 2:
            continue

        def summary(variant):
            if variant not in values:
                return '—'
            return stats.aggregate(values[variant], 'mean').format('.1f') \
                if len(values[variant]) > 1 else '%.1f' % values[variant][0]

        def improvement(variant):
            if variant not in values:
                return '—'
            return str(stats.probability_of_improvement(values[variant], values['seed']))
        lines.append('| %s | %s | %s | %s | %s | %s | %s |' % (
            doc.title, SCORES[score], summary('seed'), summary('fixed'), summary('default'),
            improvement('fixed'), improvement('default')))
        n += 1
    return lines if n else []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--budget', choices=['full', 'quick', 'tiny'], default='full')
    parser.add_argument('--seeds', type=int, default=3, help='seeds 0 .. N-1')
    parser.add_argument('--only', nargs='*', default=None, metavar='DOC',
                        help='only these documents, run in this order: '
                        + ', '.join(d.key for d in DOCUMENTS))
    parser.add_argument('--workers', type=int, default=1, help='runs at once')
    parser.add_argument('--data_dir', default=None,
                        help='default plots/reproduce/data/<budget>')
    parser.add_argument('--out', default=None, help='default plots/reproduce/<budget>')
    parser.add_argument('--no-run', action='store_true', help='only draw and tabulate')
    args = parser.parse_args(argv)
    keys = [d.key for d in DOCUMENTS]
    unknown = [k for k in args.only or [] if k not in keys]
    if unknown or args.seeds < 1 or args.workers < 1:
        parser.exit(2, 'error: %s\n' % ('unknown document %s; documents: %s'
                                        % (', '.join(unknown), ', '.join(keys)) if unknown
                                        else '--seeds and --workers must be at least 1'))
    args.data_dir = args.data_dir or osp.join(HERE, 'data', args.budget)
    docs = selected_documents(args.only)
    seeds = list(range(args.seeds))
    code = 0
    if not args.no_run:
        code = run_all(docs, seeds, args)
    # The table covers every document with runs in the data folder, not only --only's: a
    # sitting on one document must not drop the others' rows from RESULTS.md.
    write_results(DOCUMENTS, seeds, args)
    return code


if __name__ == '__main__':
    sys.exit(main())
