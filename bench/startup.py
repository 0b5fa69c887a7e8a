"""Start-up: from the command to the first env step, against ``import tensorflow`` alone.

    python bench/startup.py [--algos td3 sac ddpg dqn ppo vpg trpo] [--repeats 5]
                            [--repo PATH] [--json out.json]

For each algorithm the command is ``python run.py ALGO --env ENV`` (Pendulum-v1; DQN
CartPole-v1) at its defaults, in a fresh interpreter, timed from just before the process
starts to the first ``env.step`` of the training loop (the process stops there). Its
reference is ``python -c "import tensorflow"``, timed the same way. The two alternate
(reference, command, then command, reference, ...) ``--repeats`` times each; the table gives
the median of each and the median over pairs of their difference, which is what the run adds
to TensorFlow's own import: our imports, the envs, the graph, the session, the fast engine's
checks. ``--repo`` times another checkout's ``run.py`` (to compare before and after a change,
run the script twice in one sitting).

How the first step is caught: ``bench/startup.py --child`` runs ``run.py`` in its process with
``gymnasium.make`` wrapped so that the env it returns reports the time of its first ``step``
and ends the process.
"""
import argparse
import json
import os
import os.path as osp
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
ENVS = {'dqn': 'CartPole-v1'}
MARK = 'FIRST_ENV_STEP_AT '


def child(run_py, argv):
    """Run ``run_py`` with ``argv`` here, and end at its first env step, printing the time."""
    t0 = float(os.environ['STARTUP_T0'])
    import runpy
    import gymnasium
    import gymnasium.envs.registration as registration
    make = registration.make

    def timed_make(*args, **kwargs):
        env = make(*args, **kwargs)

        def first_step(*a, **k):
            sys.stderr.write('%s%.4f\n' % (MARK, time.time() - t0))
            sys.stderr.flush()
            os._exit(0)
        env.step = first_step
        return env
    registration.make = gymnasium.make = timed_make
    sys.path.insert(0, osp.dirname(run_py))
    sys.argv = [run_py] + argv
    runpy.run_path(run_py, run_name='__main__')
    sys.exit('the run ended without an env step')


def timed(cmd):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2')
    t0 = time.time()
    env['STARTUP_T0'] = repr(t0)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if MARK in proc.stderr:
        return float(proc.stderr.split(MARK)[1].split()[0])
    if proc.returncode != 0:
        raise RuntimeError('%s failed:\n%s' % (' '.join(cmd), proc.stderr[-2000:]))
    return time.time() - t0


def measure(algo, repeats, run_py):
    env_id = ENVS.get(algo, 'Pendulum-v1')
    ref, run, diff = [], [], []
    for i in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, osp.abspath(__file__), '--child', run_py, algo,
                       '--env', env_id, '--data_dir', tmp]
            reference = [sys.executable, '-c', 'import tensorflow']
            order = (reference, command) if i % 2 == 0 else (command, reference)
            got = {id(c): timed(c) for c in order}
        ref.append(got[id(reference)])
        run.append(got[id(command)])
        diff.append(run[-1] - ref[-1])
    return dict(algo=algo, env_id=env_id, import_tf=ref, first_step=run, added=diff)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['--child']:
        child(argv[1], argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--algos', nargs='+', default=['td3', 'sac', 'ddpg', 'dqn', 'ppo', 'vpg',
                                                   'trpo'])
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--repo', default=ROOT)
    ap.add_argument('--json')
    args = ap.parse_args(argv)
    run_py = osp.join(osp.abspath(args.repo), 'run.py')
    rows = []
    print('| command | import tensorflow s | first env step s | added s (median of pairs) |')
    print('|---|---|---|---|')
    for algo in args.algos:
        r = measure(algo, args.repeats, run_py)
        rows.append(r)
        print('| `run.py %s --env %s` | %.2f | %.2f | %.2f [%.2f-%.2f] |' % (
            algo, r['env_id'], statistics.median(r['import_tf']),
            statistics.median(r['first_step']), statistics.median(r['added']),
            min(r['added']), max(r['added'])), flush=True)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(date=time.strftime('%Y-%m-%d %H:%M'), repo=args.repo, rows=rows), f,
                      indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
