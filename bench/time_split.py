"""Where a run's time goes: env, acting, updates, storing, logging, saving, the rest.

    python bench/time_split.py [--algos td3 ddpg sac dqn ppo vpg trpo] [--fused True]
                               [--steps 8000] [--json out.json]

Each algorithm runs once, in this process, at its defaults on its usual env (Pendulum-v1;
DQN CartPole-v1), for ``--steps`` env steps in two epochs, with no test episodes (their cost
is env and acting time as well). The loop's calls are wrapped with timers at their seams, and
each timer counts only its own time (a timer inside another is taken out of the outer one):

* **env**: ``env.step`` and ``env.reset`` of the training env;
* **acting**: the agent's ``act``/``explore``/``random_action`` (off-policy) or ``step``/
  ``value`` (on-policy), and pulling the policy's weights into the numpy mirror;
* **updates**: ``agent.train`` (off-policy windows) or ``agent.update`` (on-policy epochs);
* **storing**: putting a transition in the replay or epoch buffer;
* **logging**: the logger's ``store``/``log_tabular``/``dump_tabular`` and the live progress
  line;
* **saving**: the model and the checkpoint;
* **loop (other)**: everything else inside the loop: the loop's own Python;
* **start-up**: from the algorithm's call to the loop's first step (graph, session, envs).

It prints one row per algorithm (seconds and shares of the loop) and writes them as JSON.
Timers cost about a microsecond a call, so the loop's share is slightly overstated.
"""
import argparse
import json
import os
import os.path as osp
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

PARTS = ('env', 'acting', 'updates', 'storing', 'logging', 'saving')
ENVS = {'dqn': 'CartPole-v1'}


class Clock:
    """Exclusive timers: ``wrap(fn, part)`` times ``fn`` under ``part``, less any wrapped call
    made inside it."""

    def __init__(self):
        self.totals = dict.fromkeys(PARTS + ('loop',), 0.0)
        self.stack = []  # [part, start, time spent in nested timers]

    def wrap(self, fn, part):
        clock = self

        def timed(*args, **kwargs):
            frame = [part, time.perf_counter(), 0.0]
            clock.stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                clock.stack.pop()
                spent = time.perf_counter() - frame[1]
                clock.totals[part] += spent - frame[2]
                if clock.stack:
                    clock.stack[-1][2] += spent
        timed.__wrapped__ = fn
        for name in ('reset', 'noise', 'sample'):  # attributes the loop reads off the policy
            if hasattr(fn, name):
                setattr(timed, name, getattr(fn, name))
        return timed


def patch(clock, marks):
    """Wrap the loop's seams (class attributes, so every instance made after is timed)."""
    from spinup_tf.loops import skeleton, session
    from spinup_tf.utils import logx, progress, checkpoint
    from spinup_tf.loops.hooks import Hooks

    init = skeleton.EpochLoop.__init__

    def loop_init(self, run, agent, store):
        marks['loop_built'] = time.perf_counter()
        for name, part in (('act', 'acting'), ('explore', 'acting'),
                           ('random_action', 'acting'), ('step', 'acting'),
                           ('value', 'acting'), ('new_policy', 'acting'),
                           ('train', 'updates'), ('update', 'updates')):
            fn = getattr(agent, name, None)
            if callable(fn):
                setattr(agent, name, clock.wrap(fn, part))
        if hasattr(store, 'store'):
            store.store = clock.wrap(store.store, 'storing')
        for env in run.setup.envs[:1]:
            env.step = clock.wrap(env.step, 'env')
            env.reset = clock.wrap(env.reset, 'env')
        init(self, run, agent, store)
    skeleton.EpochLoop.__init__ = loop_init
    skeleton.EpochLoop._loop = clock.wrap(skeleton.EpochLoop._loop, 'loop')
    Hooks.store = clock.wrap(Hooks.store, 'storing')
    for cls, names in ((logx.EpochLogger, ('store', 'log_tabular', 'dump_tabular')),
                       (progress.Progress, ('__call__', 'finish'))):
        for name in names:
            setattr(cls, name, clock.wrap(getattr(cls, name), 'logging'))
    skeleton.EpochLoop.save = clock.wrap(skeleton.EpochLoop.save, 'saving')
    checkpoint.Checkpointer.save = clock.wrap(checkpoint.Checkpointer.save, 'saving')
    del session


def measure(algo, fused, steps):
    from spinup_tf.algos import get_algo
    import gymnasium as gym
    clock, marks = Clock(), {}
    patch(clock, marks)
    env_id = ENVS.get(algo, 'Pendulum-v1')
    kwargs = dict(env_fn=lambda: gym.make(env_id), epochs=2, steps_per_epoch=steps // 2,
                  fused=fused)
    if algo in ('td3', 'ddpg', 'sac', 'dqn'):
        kwargs.update(num_test_episodes=0)
    with tempfile.TemporaryDirectory() as tmp:
        kwargs['logger_kwargs'] = dict(output_dir=osp.join(tmp, 'run'))
        t0 = time.perf_counter()
        get_algo(algo)(**kwargs)
        total = time.perf_counter() - t0
    t = clock.totals
    loop_total = sum(t.values())
    return dict(algo=algo, env_id=env_id, fused=fused, steps=steps, total=total,
                startup=marks['loop_built'] - t0, loop_total=loop_total,
                **{k: t[k] for k in PARTS}, loop_other=t['loop'])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--algos', nargs='+', default=['td3', 'ddpg', 'sac', 'dqn', 'ppo', 'vpg',
                                                   'trpo'])
    ap.add_argument('--fused', default='True', choices=['True', 'False'])
    ap.add_argument('--steps', type=int, default=8000)
    ap.add_argument('--json')
    ap.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:  # one algorithm, in this process
        row = measure(args.algos[0], args.fused == 'True', args.steps)
        print('ROW ' + json.dumps(row))
        return 0
    import subprocess
    rows = []
    for algo in args.algos:  # each in a fresh process: the timers patch classes
        out = subprocess.run([sys.executable, osp.abspath(__file__), '--child', '--algos', algo,
                              '--fused', args.fused, '--steps', str(args.steps)],
                             capture_output=True, text=True, cwd=ROOT)
        line = [l for l in out.stdout.splitlines() if l.startswith('ROW ')]
        if not line:
            print('%s failed:\n%s' % (algo, out.stderr[-2000:]))
            continue
        rows.append(json.loads(line[0][4:]))
    head = ('| algo | env | engine | steps/s (loop) | start-up s | loop s | ' +
            ' | '.join(PARTS) + ' | loop (other) |')
    print(head)
    print('|' + '---|' * (head.count('|') - 1))
    for r in rows:
        share = ['%.2f (%d %%)' % (r[k], round(100 * r[k] / r['loop_total']))
                 for k in PARTS + ('loop_other',)]
        print('| %s | %s | %s | %.0f | %.2f | %.2f | %s |' % (
            r['algo'], r['env_id'], 'fast' if r['fused'] else 'plain',
            r['steps'] / r['loop_total'], r['startup'], r['loop_total'], ' | '.join(share)))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(date=time.strftime('%Y-%m-%d %H:%M'), rows=rows), f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
