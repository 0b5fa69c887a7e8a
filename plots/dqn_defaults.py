"""Seed sweep of the per-env defaults of DQN and discrete SAC on the classic discrete-action
envs (``spinup_tf/tools/env_defaults.py``): each run is ``python run.py ALGO --env ENV --seed
S``, with no other flag but where its files go, so it runs the table's values as a user
meets them.

    python plots/dqn_defaults.py [--algos dqn sac] [--envs CartPole-v1 ...] [--seeds 5]
    python plots/dqn_defaults.py --candidates sac-alpha0.05-acrobot ...  # experiments
    python plots/dqn_defaults.py --no-run      # only RESULTS.md and the figures

A run's files go to ``plots/dqn_defaults/data/<label>/<env>/run/run_s<seed>/`` (label: the
algorithm for the table's defaults, or a candidate's name). A finished run (its steps
reached, made with the settings the table or the candidate has now) is skipped; one stopped
part-way continues from its checkpoint (``run.py resume``), or starts again where it has
none; one made with other settings than the table has now starts again. So the script can be
stopped (SIGTERM or Ctrl-C: the run saves a checkpoint) and started again, by a later session
too. Runs go one at a time, in this script's session (so at its niceness).

Candidates (``CANDIDATES``) are settings tried before they become a default: a name, the
algorithm, the env and the flags. They are run only when named, so the experiment behind an
entry (or behind leaving one out) can be run again.

Each finished run's models then play ``EVAL_EPISODES`` greedy episodes (``run.py test_policy``):
its last model (``final_eval.txt``), as the zoo evaluates its own, and the model of its best
evaluation (``tf1_save_best/``, ``best_eval.txt``), which a run keeps for its user.

``plots/dqn_defaults/RESULTS.md``: per env, DQN's two models per seed and their mean over
seeds against the zoo's published DQN result (rl-baselines3-zoo's benchmark.md: one run, its
last model, deterministic), as the fraction of it reached, measured from the env's floor where
returns are negative (Acrobot: -500, MountainCar: -200, the return of never reaching the
goal); how many seeds reach the issue's bar within the budget; the candidates' table; and per
seed, the run's own last test (10 episodes), its last three and its best.
"""
import argparse
import ast
import json
import os
import os.path as osp
import signal
import subprocess
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)
from spinup_tf.tools.env_defaults import ENV_DEFAULTS, env_defaults  # noqa: E402
OUT = osp.join(ROOT, 'plots', 'dqn_defaults')  # RESULTS.md and the figures (--out)
DATA = osp.join(OUT, 'data')  # the runs (--data)

ENVS = ('CartPole-v1', 'Acrobot-v1', 'LunarLander-v3', 'MountainCar-v0')
ALGOS = ('dqn', 'sac')

# rl-baselines3-zoo's benchmark.md (commit 22e3ff2), DQN rows: mean_reward of its trained
# agent over 150k evaluation steps (LunarLander: its -v2 row, the same task).
ZOO_RESULTS = {'CartPole-v1': 500.0, 'Acrobot-v1': -76.639, 'LunarLander-v3': 154.382,
               'MountainCar-v0': -100.849}
FLOORS = {'Acrobot-v1': -500.0, 'MountainCar-v0': -200.0}
"""The return of an episode that never reaches the goal (-1 a step to the time limit)."""
GOAL = 0.8  # the bar: 0.8 of the zoo's result (from the floor)
CARTPOLE_GOAL = 450.0  # ... and on CartPole a test return of 450 on 4 of 5 seeds

# name: (algorithm, env, flags). Each sets every key that the table's entry for (algo, env)
# sets or would set, so it runs the same whatever the table says. Discrete SAC on Acrobot at
# the zoo's DQN budget, 100k steps (SAC's start_steps, 10,000, is then 10 % of the run, as
# plots/dqn_vs_sb3.py ran it): its default alpha 0.2 keeps the policy near uniform, and
# uniform actions reach Acrobot's goal in 0 of 100 episodes, so 2 of its 3 seeds there never
# left -500. A smaller fixed alpha, or alpha learned towards a lower entropy than its
# default 0.98 ln 3 (0.33 = 0.3 ln 3), makes the policy nearer DQN's greedy one. Measured
# (seeds 0-4, RESULTS.md): the goal on 1, 3 and 3 seeds; both candidates miss it on the same
# two seeds, and P(candidate > default) = 0.64 [0.30, 1.00]: no entry for SAC.
SAC_ACROBOT = ['--steps_per_epoch', '10000', '--epochs', '10']
CANDIDATES = {
    'sac-alpha0.2': ('sac', 'Acrobot-v1', SAC_ACROBOT + ['--alpha', '0.2',  # SAC's defaults
                                                         '--target_entropy', 'None']),
    'sac-alpha0.01': ('sac', 'Acrobot-v1', SAC_ACROBOT + ['--alpha', '0.01',
                                                          '--target_entropy', 'None']),
    'sac-auto-ent0.33': ('sac', 'Acrobot-v1', SAC_ACROBOT + ['--alpha', "'auto'",
                                                             '--target_entropy', '0.33']),
}


def run_dir(label, env_id, seed):
    return osp.join(DATA, label, env_id, 'run', 'run_s%d' % seed)


def entries(algos, envs):
    """``[(label, algo, env, flags)]``: the table's entries for ``algos`` on ``envs``."""
    return [(algo, algo, env, []) for env in envs for algo in algos
            if (algo, env) in ENV_DEFAULTS]


def settings(algo, env_id, flags):
    """What a run of ``algo`` on ``env_id`` with ``flags`` (``--key value`` pairs) is given
    beyond the signature's defaults: the table's values, then the flags'."""
    kw = env_defaults(algo, env_id)
    for key, text in zip(flags[::2], flags[1::2]):
        try:
            kw[key[2:]] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            kw[key[2:]] = text
    return kw


def budget(algo, env_id, flags):
    """Env steps of the run: ``steps_per_epoch * epochs`` (the signature's where not set)."""
    from spinup_tf.algos import parameters  # read from the source: no TensorFlow
    sig = parameters(algo)
    kw = settings(algo, env_id, flags)
    return (kw.get('steps_per_epoch', sig['steps_per_epoch'].default)
            * kw.get('epochs', sig['epochs'].default))


def rows(folder):
    """The run's progress as ``{column: array}`` (the project's reader), or None."""
    from spinup_tf.tools.plot import read_progress, ProgressFileError
    try:
        return read_progress(osp.join(folder, 'progress.txt'))
    except (OSError, ProgressFileError):
        return None


def stale(folder, algo, env_id, flags):
    """Whether the run in ``folder`` was made with other values than those it would be given
    now (the table changed since): it is run again from the start."""
    try:
        with open(osp.join(folder, 'config.json')) as f:
            config = json.load(f)
    except (OSError, ValueError):
        return False
    for key, value in settings(algo, env_id, flags).items():
        if json.loads(json.dumps(config.get(key))) != json.loads(json.dumps(value)):
            return True
    return False


def finished(folder, steps):
    r = rows(folder)
    return r is not None and float(r['TotalEnvInteracts'][-1]) >= steps


def command(label, algo, env_id, flags, seed):
    folder = run_dir(label, env_id, seed)
    from spinup_tf.utils.checkpoint import verify, CheckpointError
    if osp.isdir(osp.join(folder, 'checkpoint')) and not stale(folder, algo, env_id, flags):
        try:
            verify(folder)
            return [sys.executable, osp.join(ROOT, 'run.py'), 'resume', folder]
        except CheckpointError:
            pass  # not one a resume takes: start again
    return [sys.executable, osp.join(ROOT, 'run.py'), algo, '--env', env_id,
            '--seed', str(seed)] + flags + [
        '--data_dir', osp.dirname(osp.dirname(folder)), '--exp_name', 'run',
        '--overwrite', 'True']


EVAL_EPISODES = 100
EVALS = {'final': ('final_eval.txt', []), 'best': ('best_eval.txt', ['--best'])}
"""Each finished run's models tested on ``EVAL_EPISODES`` greedy episodes: ``final``, its
last model (``tf1_save/``), as the zoo evaluates its own; ``best``, the model of its best
evaluation (``tf1_save_best/``, the one a user keeps), on episodes it was not chosen on."""


def eval_command(folder, seed, which='final'):
    """A model of the run (``which``, see ``EVALS``) on ``EVAL_EPISODES`` greedy episodes of
    a fresh env, as the zoo's benchmark evaluates its last model (there over 150k steps): a
    figure far less noisy than the run's own last evaluation of 10 episodes."""
    return [sys.executable, osp.join(ROOT, 'run.py'), 'test_policy', folder, '--norender',
            '--episodes', str(EVAL_EPISODES), '--seed', str(10000 + seed)] + EVALS[which][1]


def model_eval(folder, which='final'):
    """The returns of a model's evaluation (its ``EVALS`` file: test_policy's output), or
    None where there is none (yet)."""
    try:
        with open(osp.join(folder, EVALS[which][0])) as f:
            returns = [float(l.split('EpRet')[1].split()[0]) for l in f
                       if l.startswith('Episode')]
    except OSError:
        return None
    return returns if len(returns) == EVAL_EPISODES else None


def evaluated(folder):
    return all(model_eval(folder, which) is not None for which in EVALS)


def run_all(jobs, seeds):
    todo = []  # seed by seed, so that every entry and candidate has its first seeds early
    for seed in range(seeds):
        for label, algo, env_id, flags in jobs:
            folder = run_dir(label, env_id, seed)
            if not finished(folder, budget(algo, env_id, flags)) or \
                    stale(folder, algo, env_id, flags) or not evaluated(folder):
                todo.append((label, algo, env_id, flags, seed))
    print('%d runs to do' % len(todo), flush=True)
    stop, child = [], []

    def forward(signum, frame):
        stop.append(signum)
        if child:
            child[0].send_signal(signum)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)

    def call(cmd, log, out=subprocess.DEVNULL):
        print('%s: %s' % (time.strftime('%H:%M:%S'), ' '.join(cmd[1:])), flush=True)
        with open(log, 'a') as err:
            child[:] = [subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)]
            code = child[0].wait()
            child.clear()
        return code

    for label, algo, env_id, flags, seed in todo:
        if stop:
            break
        folder = run_dir(label, env_id, seed)
        log = osp.join(DATA, 'logs', '%s_%s_s%d.log' % (label, env_id, seed))
        os.makedirs(osp.dirname(log), exist_ok=True)
        t0 = time.time()
        steps = budget(algo, env_id, flags)
        if not finished(folder, steps) or stale(folder, algo, env_id, flags):
            code = call(command(label, algo, env_id, flags, seed), log)
            r = rows(folder)
            print('  exit %d in %.0f s; test returns: %s' % (
                code, time.time() - t0, '' if r is None else ' '.join(
                    '%.1f' % v for v in r['AverageTestEpRet'])), flush=True)
        if stop or not finished(folder, steps):
            continue
        for which, (name, _) in EVALS.items():
            if stop or model_eval(folder, which) is not None:
                continue
            with open(osp.join(folder, name + '.tmp'), 'w') as out:
                code = call(eval_command(folder, seed, which), log, out)
            if code == 0:
                os.replace(osp.join(folder, name + '.tmp'), osp.join(folder, name))
                print('  %s model, %d episodes: %.1f' % (
                    which, EVAL_EPISODES, sum(model_eval(folder, which)) / EVAL_EPISODES),
                    flush=True)
    if stop:
        print('stopped by a signal: start the script again to continue', flush=True)


def measure(env_id, returns):
    """A return measured from the env's floor (itself where there is none)."""
    return returns - FLOORS.get(env_id, 0.0)


def seed_figures(label, env_id, seeds, steps):
    """``[(seed, final model's mean over EVAL_EPISODES, best model's mean, last evaluation,
    mean of the last 3, best evaluation, its step)]`` of the finished runs (their budget
    reached, their models evaluated)."""
    import numpy as np
    out = []
    for seed in range(seeds):
        folder = run_dir(label, env_id, seed)
        r = rows(folder)
        if r is None or float(r['TotalEnvInteracts'][-1]) < steps or not evaluated(folder):
            continue
        test = r['AverageTestEpRet']
        k = int(np.argmax(test))
        out.append((seed, float(np.mean(model_eval(folder, 'final'))),
                    float(np.mean(model_eval(folder, 'best'))), float(test[-1]),
                    float(np.mean(test[-3:])), float(test[k]), int(r['TotalEnvInteracts'][k])))
    return out


def of_zoo(env_id, mean):
    """``mean`` as a fraction of the zoo's result, both measured from the env's floor."""
    return measure(env_id, mean) / measure(env_id, ZOO_RESULTS[env_id])


def write_results(jobs, seeds):
    import numpy as np
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    intro = ['# Per-env defaults of DQN and discrete SAC: seed sweep', '',
             'Made by `python plots/dqn_defaults.py` (`--candidates NAME` for the '
             'experiments). Each run: `python run.py ALGO --env ENV --seed S`, no other flag '
             'but where its files go (a candidate: its flags). Each finished run\'s models '
             'play %d greedy episodes (`run.py test_policy RUN --episodes %d --seed 10000+S`, '
             'its `final_eval.txt`, and with `--best` its `best_eval.txt`): "final" is its '
             'last model, as the zoo evaluates its own; "best" the model of its best '
             'evaluation (`tf1_save_best/`, the one a run keeps for its user), on episodes it '
             'was not chosen on. "zoo" is rl-baselines3-zoo\'s published DQN result '
             '(benchmark.md: one run, its last model, 150k evaluation steps); "of zoo" is '
             'the mean over seeds as a fraction of it, both measured from the env\'s floor '
             'where returns are negative (Acrobot -500, MountainCar -200). The issue\'s '
             'bar: 0.8 of the zoo; on CartPole a test return of %.0f within the budget on 4 '
             'of 5 seeds.' % (EVAL_EPISODES, EVAL_EPISODES, CARTPOLE_GOAL), '']
    header = ['| env | steps | seeds | final model, per seed | final, mean ± std | of zoo | '
              'best model, per seed | best, mean ± std | of zoo | zoo |',
              '|---|---|---|---|---|---|---|---|---|---|']
    tables = {'dqn': ['DQN with the table\'s defaults (`python run.py dqn --env ENV --seed S`):',
                      ''] + header,
              'sac': ['Discrete SAC on Acrobot-v1, the candidates (`--candidates`):', '',
                      header[0].replace('| env |', '| env | label |'),
                      header[1] + '---|']}
    per_seed = ['Per seed: the run\'s own last test (10 episodes), the mean of its last three, '
                'and its best (at its step).', '',
                '| env | label | last eval. per seed | last 3, mean ± std | best per seed |',
                '|---|---|---|---|---|']
    figures, verdicts = {}, []
    for label, algo, env_id, flags in jobs:
        steps = budget(algo, env_id, flags)
        figs = seed_figures(label, env_id, seeds, steps)
        if not figs:
            continue
        f = np.array([x[1:6] for x in figs])
        row = '%d | %d | %s | %.1f ± %.1f | %.2f | %s | %.1f ± %.1f | %.2f | %.1f |' % (
            steps, len(figs), ', '.join('%.1f' % x[1] for x in figs), f[:, 0].mean(),
            f[:, 0].std(), of_zoo(env_id, f[:, 0].mean()),
            ', '.join('%.1f' % x[2] for x in figs), f[:, 1].mean(), f[:, 1].std(),
            of_zoo(env_id, f[:, 1].mean()), ZOO_RESULTS[env_id])
        if label == 'dqn':
            tables['dqn'].append('| %s | %s' % (env_id, row))
            reach = [x[5] for x in figs]
            if env_id == 'CartPole-v1':
                verdicts.append(
                    'CartPole-v1: %d of %d seeds reach a test return of %.0f within the budget '
                    '(their best evaluation), %d of %d with their final model.' % (
                        sum(r >= CARTPOLE_GOAL for r in reach), len(figs), CARTPOLE_GOAL,
                        sum(x[1] >= CARTPOLE_GOAL for x in figs), len(figs)))
            else:
                verdicts.append(
                    '%s: %d of %d seeds reach %.1f of the zoo within the budget (their best '
                    'evaluation); the final models\' mean is %.2f of it, the best models\' '
                    '%.2f.' % (env_id, sum(of_zoo(env_id, r) >= GOAL for r in reach),
                               len(figs), GOAL, of_zoo(env_id, f[:, 0].mean()),
                               of_zoo(env_id, f[:, 1].mean())))
        elif label in CANDIDATES:
            tables['sac'].append('| %s | %s | %s' % (env_id, label, row))
        per_seed.append('| %s | %s | %s | %.1f ± %.1f | %s |' % (
            env_id, label, ', '.join('%.1f' % x[3] for x in figs), f[:, 3].mean(),
            f[:, 3].std(), ', '.join('%.1f (%dk)' % (x[5], x[6] // 1000) for x in figs)))
        ax = figures.get(env_id)
        if ax is None:
            ax = figures[env_id] = plt.subplots(figsize=(6, 4))[1]
        curves = [rows(run_dir(label, env_id, x[0])) for x in figs]
        y = np.array([c['AverageTestEpRet'] for c in curves])
        line, = ax.plot(curves[0]['TotalEnvInteracts'], y.mean(0),
                        label='%s (mean of %d seeds)' % (label, len(curves)))
        for c in curves:
            ax.plot(c['TotalEnvInteracts'], c['AverageTestEpRet'], color=line.get_color(),
                    alpha=0.3, lw=0.8)
    lines = intro + tables['dqn'] + [''] + verdicts + ['']
    if len(tables['sac']) > 4:
        lines += tables['sac'] + ['']
    lines += per_seed
    for env_id, ax in figures.items():
        ax.axhline(ZOO_RESULTS[env_id], color='k', ls=':', lw=1, label='zoo (DQN, published)')
        ax.set_title(env_id)
        ax.set_xlabel('env steps')
        ax.set_ylabel('AverageTestEpRet (greedy, 10 episodes)')
        ax.legend(fontsize=8)
        ax.figure.tight_layout()
        ax.figure.savefig(osp.join(OUT, '%s.png' % env_id), dpi=80)
        plt.close(ax.figure)
    with open(osp.join(OUT, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def main(argv=None):
    global OUT, DATA
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--algos', nargs='+', default=list(ALGOS), choices=ALGOS)
    parser.add_argument('--envs', nargs='+', default=list(ENVS), choices=ENVS)
    parser.add_argument('--seeds', type=int, default=5)
    parser.add_argument('--candidates', nargs='*', default=[], choices=list(CANDIDATES),
                        help='also run these experiments')
    parser.add_argument('--no-run', action='store_true')
    parser.add_argument('--out', default=OUT, help='RESULTS.md and the figures go here '
                        '(default plots/dqn_defaults)')
    parser.add_argument('--data', default=DATA, help='the runs (default plots/dqn_defaults/'
                        'data)')
    args = parser.parse_args(argv)
    OUT, DATA = args.out, args.data
    jobs = entries(args.algos, args.envs) + [
        (name,) + CANDIDATES[name] for name in args.candidates]
    os.makedirs(OUT, exist_ok=True)
    if not args.no_run:
        run_all(jobs, args.seeds)
    # RESULTS.md: every entry and every candidate with a finished run
    write_results(entries(ALGOS, ENVS) + [(n,) + c for n, c in CANDIDATES.items()],
                  args.seeds)
    return 0


if __name__ == '__main__':
    sys.exit(main())
