"""Same seed, same ``progress.txt``: run every algorithm's default configuration and every
preset on both engines at a short budget, and compare two such collections (for example
one made on the commit before a change and one after) row by row, ``Time`` aside.

    python bench/progress_equivalence.py run --repo /path/to/old/checkout --out /tmp/before
    python bench/progress_equivalence.py run --out /tmp/after
    python bench/progress_equivalence.py compare /tmp/before /tmp/after

``run`` skips cases whose ``progress.txt`` is already complete, so it can be stopped and
started again. A case is ``name: python run.py ARGS``; the budgets are short (two or three
epochs of a few hundred steps), enough to exercise exploration, updates, tests and logging.
"""
import argparse
import os
import os.path as osp
import subprocess
import sys

sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))

SHORT_OFF = ['--epochs', '3', '--steps_per_epoch', '300', '--start_steps', '200',
             '--update_after', '100', '--update_every', '50', '--num_test_episodes', '2']
SHORT_ON = ['--epochs', '2', '--steps_per_epoch', '400']

CASES = {}
for algo in ('td3', 'ddpg', 'sac'):
    CASES['%s-default' % algo] = [algo, '--env', 'Pendulum-v1', '--max_ep_len', '150'] + SHORT_OFF
CASES['dqn-default'] = ['dqn', '--env', 'CartPole-v1', '--max_ep_len', '150'] + SHORT_OFF
CASES['sac-default-discrete'] = ['sac', '--env', 'CartPole-v1', '--max_ep_len', '150'] \
    + SHORT_OFF
for algo in ('ppo', 'vpg', 'trpo', 'npg'):
    CASES['%s-default-discrete' % algo] = [algo, '--env', 'CartPole-v1'] + SHORT_ON
    CASES['%s-default-box' % algo] = [algo, '--env', 'Pendulum-v1', '--max_ep_len', '150'] \
        + SHORT_ON
PRESET_CASES = {
    'seed-000': ['ddpg', '--preset', 'seed-000', '--steps_per_epoch', '300', '--epochs', '3',
                 '--start_steps', '200', '--num_test_episodes', '2', '--max_ep_len', '150'],
    'rllab-mxnet': ['ddpg', '--preset', 'rllab-mxnet', '--steps_per_epoch', '300', '--epochs',
                    '3', '--update_after', '100', '--eval_samples', '3',
                    '--num_test_episodes', '2'],
    'blog-mountaincar': ['td3', '--preset', 'blog-mountaincar', '--steps_per_epoch', '300',
                         '--epochs', '3', '--start_steps', '200', '--update_after', '100',
                         '--num_test_episodes', '1', '--max_ep_len', '250'],
    'udemy': ['td3', '--preset', 'udemy', '--steps_per_epoch', '300', '--epochs', '3',
              '--start_steps', '200', '--num_test_episodes', '1', '--max_ep_len', '120',
              '--videos', '0'],
    'tensorlayer': ['td3', '--preset', 'tensorlayer', '--steps_per_epoch', '300', '--epochs',
                    '3', '--num_test_episodes', '2'],
    'blog-cartpole-trpo': ['trpo', '--preset', 'blog-cartpole'] + SHORT_ON,
    'blog-cartpole-npg': ['npg', '--preset', 'blog-cartpole'] + SHORT_ON,
}
for name, args in PRESET_CASES.items():
    CASES['preset-' + name] = args
    i = args.index('--preset')
    fixed = args[:i + 1] + [args[i + 1] + '-fixed'] + args[i + 2:]
    if name in ('seed-000', 'udemy'):  # fixed, they update from Spinning Up's step 1000
        fixed += ['--update_after', '100']
    CASES['preset-' + name + '-fixed'] = fixed


def cases():
    for name, args in CASES.items():
        for fused in (True, False):
            yield '%s-%s' % (name, 'fast' if fused else 'plain'), \
                args + ['--fused', str(fused)]


def complete(folder):
    path = osp.join(folder, 'progress.txt')
    return osp.exists(path) and osp.exists(osp.join(folder, 'config.json')) and \
        sum(1 for _ in open(path)) > 1 and not osp.exists(osp.join(folder, 'FAILED'))


def run(repo, out, only):
    os.makedirs(out, exist_ok=True)
    for name, args in cases():
        if only and not any(o in name for o in only):
            continue
        folder = osp.join(out, name)
        if complete(folder):
            continue
        cmd = [sys.executable, 'run.py'] + args + ['--data_dir', out, '--exp_name', name,
                                                   '--overwrite']
        proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
        run_dir = osp.join(out, name, name + '_s0')
        print('%-40s rc=%d' % (name, proc.returncode), flush=True)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
        elif osp.isdir(run_dir):  # flatten: OUT/NAME/progress.txt
            for f in os.listdir(run_dir):
                if f == 'progress.txt':
                    os.replace(osp.join(run_dir, f), osp.join(folder, f))
            open(osp.join(folder, 'config.json'), 'w').write('{}')


def rows(path):
    """The cells of every line but the ``Time`` column's (read with the one reader of
    progress files, ``spinup_tf.utils.progress_file``: the lines as written)."""
    from spinup_tf.utils.progress_file import Lines
    with Lines(path) as f:
        lines = [line.split('\t') for _, line in f]
    header = lines[0]
    keep = [i for i, k in enumerate(header) if k != 'Time']
    return [[line[i] for i in keep] for line in lines]


def compare(a, b):
    same, differ, missing = [], [], []
    for name, _ in cases():
        pa, pb = osp.join(a, name, 'progress.txt'), osp.join(b, name, 'progress.txt')
        if not (osp.exists(pa) and osp.exists(pb)):
            missing.append(name)
        elif rows(pa) == rows(pb):
            same.append(name)
        else:
            differ.append(name)
    for label, names in (('same', same), ('DIFFERENT', differ), ('missing', missing)):
        for n in names:
            print('%-10s %s' % (label, n))
    print('%d same, %d different, %d missing' % (len(same), len(differ), len(missing)))
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run')
    r.add_argument('--repo', default=osp.dirname(osp.dirname(osp.abspath(__file__))))
    r.add_argument('--out', required=True)
    r.add_argument('--only', nargs='*', default=[])
    c = sub.add_parser('compare')
    c.add_argument('a')
    c.add_argument('b')
    args = ap.parse_args()
    if args.cmd == 'run':
        run(args.repo, osp.abspath(args.out), args.only)
        return 0
    return compare(args.a, args.b)


if __name__ == '__main__':
    sys.exit(main())
