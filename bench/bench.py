"""Throughput benchmark: the plain (Spinning Up) path against the fused path (not a test).

    python bench/bench.py [--algos td3 ddpg sac trpo npg ppo vpg] \
        [--envs Pendulum-v1 CartPole-v1 HalfCheetah-v5] [--steps N] [--repeats R] \
        [--json out.json]

Every measurement runs in a fresh child process (so peak RSS is that run's own) and the two
paths alternate, plain then fused, then fused then plain, ... so that a machine that gets
busier or quieter during the benchmark moves both alike. The ratio fused/plain is taken
within each adjacent pair, and its median reported.

Per (algo, env, path):

* ``train``: a real training run at the algorithm's default config with ``fused=True`` or
  ``False``, 3 epochs, of which the second is timed (``Time`` column of ``progress.txt``,
  epoch 2 minus epoch 1): the first holds the graph warm-up, the third the final model
  save. Off-policy: ``steps_per_epoch=N``, ``start_steps=N``, ``update_after=N/2``, no test
  episodes, so epoch 1 holds the random ``start_steps`` and the first update windows (the
  first window's ``sess.run`` also optimises the graph: about 0.45 s for TD3), and epoch 2
  is N steps of acting with the policy plus N updates, at steady state. On-policy: the
  default 4000 steps per epoch and one update.
  Reported: env steps/s, the epoch's seconds, and (off-policy) updates/s.
* ``update``: the update alone. Off-policy plain: the algorithm's own ``make_callable``
  steps on one fixed batch of 100 (TD3: Q step every update, policy and target step every
  2nd), µs per update. Off-policy fused: windows of 50 updates (one ``sess.run`` each) on a
  graph replay buffer holding 5000 random transitions, µs per update. TRPO/NPG: one full
  update (gradient, CG with Hx, line search, value iterations) on a 4000-step buffer, ms.
* ``rss``: the child's peak resident memory (``ru_maxrss``), MB.
"""
import argparse
import json
import os
import os.path as osp
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

os.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'
ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)

OFF_POLICY = ('td3', 'ddpg', 'sac')
ON_POLICY = ('trpo', 'npg', 'ppo', 'vpg')
PATHS = ('plain', 'fused')


def peak_rss_mb():
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return r / (1024.0 * 1024.0) if sys.platform == 'darwin' else r / 1024.0


# --------------------------------------------------------------------------------------------
# Child measurements (one per process)
# --------------------------------------------------------------------------------------------
def read_times(path):
    from spinup_tf.utils.progress_file import read_table  # the one reader of progress files
    return [float(t) for t in read_table(path)['Time']]


def measure_train(algo, env_id, fused, steps):
    from spinup_tf.utils.envs import EnvFn
    from spinup_tf.algos import get_algo
    fn = get_algo(algo)
    with tempfile.TemporaryDirectory() as tmp:
        kw = dict(epochs=3, fused=fused, logger_kwargs=dict(output_dir=osp.join(tmp, 'run'),
                                                            quiet=True))
        if algo in OFF_POLICY:
            kw.update(steps_per_epoch=steps, start_steps=steps, update_after=steps // 2,
                      num_test_episodes=0, save_freq=3)
        fn(EnvFn(env_id), **kw)
        times = read_times(osp.join(tmp, 'run', 'progress.txt'))
        with open(osp.join(tmp, 'run', 'config.json')) as f:
            n = json.load(f)['steps_per_epoch']
    epoch_s = times[1] - times[0]
    out = dict(epoch_s=epoch_s, env_steps=n, steps_per_s=n / epoch_s)
    if algo in OFF_POLICY:
        out['updates_per_s'] = n / epoch_s  # one update per env step, all in epoch 2
    return out


def _space_dims(env_id):
    from spinup_tf.utils.envs import EnvFn
    env = EnvFn(env_id)()
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()


def _offpolicy_graph(algo, env_id):
    """The algorithm's real graph, built by calling it with ``Run.train`` captured."""
    import tempfile as _tempfile
    from spinup_tf.utils.envs import EnvFn
    from spinup_tf.algos import get_algo
    from spinup_tf.loops import off_policy
    got = {}
    original = off_policy.Run.train

    def capture(self, train_ops, update, batch, act, log_diagnostics, explore=None,
                saved=None, init_ops=()):
        got.update(run=self, batch=batch, train_ops=train_ops, update=update,
                   init_ops=init_ops)
    off_policy.Run.train = capture
    try:
        with _tempfile.TemporaryDirectory() as tmp:
            get_algo(algo)(EnvFn(env_id), logger_kwargs=dict(output_dir=tmp, quiet=True))
    finally:
        off_policy.Run.train = original
    return got


def measure_update_offpolicy(algo, env_id, fused, calls=300, window=50, warmup=2):
    import numpy as np
    from spinup_tf.utils.tf1 import tf, make_session
    from spinup_tf.loops.off_policy import plain_updates
    from spinup_tf.loops.replay_buffer import ReplayBuffer
    from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer
    from spinup_tf.fast.window import build_window, FusedUpdater
    got = _offpolicy_graph(algo, env_id)
    run = got['run']
    obs_dim, act_dim, space = run.obs_dim, run.act_dim, run.env.action_space
    with run.graph.as_default():
        lists = got['train_ops'](got['batch'])
        buf = GraphReplayBuffer(obs_dim, act_dim, int(1e6)) if fused else \
            ReplayBuffer(obs_dim, act_dim, int(1e6))
        if fused:
            shapes = {name: {k: v.shape.as_list() for k, v in fetches.items()
                             if isinstance(v, tf.Tensor)} for name, fetches in lists.items()}
            win = build_window(buf, 100, got['train_ops'], got['update'], shapes)
        sess = make_session(run.graph)
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        sess.run(got['init_ops'])
    rng = np.random.default_rng(0)
    updater = FusedUpdater(sess, buf, win, lambda out: None) if fused else None

    class NoLog:
        def store(self, **kw):
            pass
    for t in range(5000):
        buf.store(rng.standard_normal(obs_dim), rng.uniform(space.low, space.high),
                  rng.standard_normal(), rng.standard_normal(obs_dim),
                  float(rng.uniform() < 0.05), episode_end=t % 200 == 199)
    if not fused:
        updater = plain_updates(sess, lists, got['update'], got['batch'], buf, 100, NoLog())
    for _ in range(warmup):
        updater(window)
    n_windows = calls // window
    t0 = time.perf_counter()
    for _ in range(n_windows):
        updater(window)
    dt, n = time.perf_counter() - t0, n_windows * window
    sess.close()
    return dict(update_us=1e6 * dt / n)


def measure_update_trpo(algo, env_id, fused, n=4000, calls=5):
    import inspect
    import numpy as np
    from spinup_tf.utils.tf1 import tf, make_session
    from spinup_tf.algos.trpo import build_trpo_graph, make_trpo_update
    obs_space, act_space = _space_dims(env_id)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        g = build_trpo_graph(obs_space, act_space)
        kw = {}
        if 'fused' in inspect.signature(make_trpo_update).parameters:
            kw['fused'] = fused
        elif fused:
            raise SystemExit('make_trpo_update has no fused path')
        update_on = make_trpo_update(None, g, algo, **kw)
        sess = make_session(graph)
        sess.run(tf.global_variables_initializer())
    update_on = update_on.bind(sess) if hasattr(update_on, 'bind') else update_on
    rng = np.random.default_rng(0)
    obs = rng.standard_normal((n,) + obs_space.shape).astype(np.float32)
    a, _, logp, *info = sess.run(g.get_action_ops, {g.x_ph: obs})
    info = [np.broadcast_to(x, (n,) + tuple(ph.shape.as_list()[1:])).copy()
            for x, ph in zip(info, g.all_phs[5:])]
    inputs = [obs, a, rng.standard_normal(n).astype(np.float32),
              rng.standard_normal(n).astype(np.float32), logp] + info
    start = sess.run(g.get_pi_params)
    update_on(inputs)
    times = []
    for _ in range(calls):
        sess.run(g.set_pi_params, {g.v_ph: start})
        t0 = time.perf_counter()
        update_on(inputs)
        times.append(time.perf_counter() - t0)
    sess.close()
    return dict(update_ms=1e3 * statistics.median(times))


def child(args):
    algo, env_id, path, what = args.child
    fused = path == 'fused'
    if what == 'train':
        out = measure_train(algo, env_id, fused, args.steps)
    elif algo in OFF_POLICY:
        out = measure_update_offpolicy(algo, env_id, fused)
    else:
        out = measure_update_trpo(algo, env_id, fused)
    out['rss_mb'] = peak_rss_mb()
    print('RESULT ' + json.dumps(out), flush=True)


# --------------------------------------------------------------------------------------------
# Parent: paired runs
# --------------------------------------------------------------------------------------------
def run_child(algo, env_id, path, what, steps):
    cmd = [sys.executable, osp.abspath(__file__), '--child', algo, env_id, path, what,
           '--steps', str(steps)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    for line in proc.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[len('RESULT '):])
    raise RuntimeError('%s failed:\n%s' % (' '.join(cmd), proc.stderr[-3000:]))


def supported(algo, env_id):
    from gymnasium.spaces import Box
    _, act_space = _space_dims(env_id)
    return algo not in OFF_POLICY or isinstance(act_space, Box)


def summarize(values):
    if not values:
        return None
    return dict(median=statistics.median(values), min=min(values), max=max(values),
                values=values)


def fmt(s, digits=0):
    if s is None:
        return '-'
    f = '%%.%df' % digits
    return (f + ' [' + f + '-' + f + ']') % (s['median'], s['min'], s['max'])


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--algos', nargs='+', default=['td3', 'ddpg', 'sac', 'trpo', 'ppo', 'vpg'])
    p.add_argument('--envs', nargs='+', default=['Pendulum-v1', 'CartPole-v1',
                                                  'HalfCheetah-v5'])
    p.add_argument('--steps', type=int, default=2000,
                   help='off-policy steps per epoch (the timed epoch has this many)')
    p.add_argument('--repeats', type=int, default=2, help='pairs of runs per combination')
    p.add_argument('--no_update', action='store_true', help='skip the update-op timing')
    p.add_argument('--json', default=None)
    p.add_argument('--child', nargs=4, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)

    results, t_start = [], time.time()
    for algo in args.algos:
        for env_id in args.envs:
            if not supported(algo, env_id):
                print('skip %s on %s (needs a Box action space)' % (algo, env_id), flush=True)
                continue
            whats = ['train']
            if not args.no_update and (algo in OFF_POLICY or algo in ('trpo', 'npg')):
                whats.append('update')
            for what in whats:
                runs = {path: [] for path in PATHS}
                for r in range(args.repeats):
                    order = PATHS if r % 2 == 0 else PATHS[::-1]
                    for path in order:
                        runs[path].append(run_child(algo, env_id, path, what, args.steps))
                res = dict(algo=algo, env=env_id, what=what, runs=runs)
                key = 'steps_per_s' if what == 'train' else \
                    ('update_us' if algo in OFF_POLICY else 'update_ms')
                ratios = [(f[key] / p_[key]) if what == 'train' else (p_[key] / f[key])
                          for p_, f in zip(runs['plain'], runs['fused'])]
                res['speedup'] = summarize(ratios)
                for path in PATHS:
                    res[path] = {k: summarize([run[k] for run in runs[path] if k in run])
                                 for k in runs[path][0]}
                results.append(res)
                print('%-5s %-15s %-6s plain %s  fused %s  speed-up x%s' % (
                    algo, env_id, what, fmt(res['plain'][key], 1), fmt(res['fused'][key], 1),
                    fmt(res['speedup'], 2)), flush=True)

    lines = ['| algo | env | plain env steps/s | fused env steps/s | speed-up | epoch s '
             '(plain → fused) | update (plain → fused) | peak RSS MB (plain → fused) |',
             '|---|---|---|---|---|---|---|---|']
    by = {(r['algo'], r['env'], r['what']): r for r in results}
    for (algo, env_id, what), r in by.items():
        if what != 'train':
            continue
        u = by.get((algo, env_id, 'update'))
        if u is None:
            upd = '-'
        elif algo in OFF_POLICY:
            upd = '%s → %s µs (×%s)' % (fmt(u['plain']['update_us']),
                                         fmt(u['fused']['update_us']), fmt(u['speedup'], 2))
        else:
            upd = '%s → %s ms (×%s)' % (fmt(u['plain']['update_ms']),
                                         fmt(u['fused']['update_ms']), fmt(u['speedup'], 2))
        lines.append('| %s | %s | %s | %s | ×%s | %s → %s | %s | %s → %s |' % (
            algo, env_id, fmt(r['plain']['steps_per_s']), fmt(r['fused']['steps_per_s']),
            fmt(r['speedup'], 2), fmt(r['plain']['epoch_s'], 2), fmt(r['fused']['epoch_s'], 2),
            upd, fmt(r['plain']['rss_mb']), fmt(r['fused']['rss_mb'])))
    total = time.time() - t_start
    print('\nmedian [min-max] over %d pairs; off-policy timed epoch: %d steps'
          % (args.repeats, args.steps))
    print('\n'.join(lines))
    print('\ntotal %.0f s' % total)
    if args.json:
        meta = dict(argv=sys.argv, date=time.strftime('%Y-%m-%d %H:%M:%S %Z'),
                    python=platform.python_version(), machine=platform.platform(),
                    cpus=os.cpu_count(), total_s=total)
        with open(args.json, 'w') as f:
            json.dump(dict(meta=meta, results=results), f, indent=1)
        print('wrote %s' % args.json)


if __name__ == '__main__':
    main()
