"""Throughput benchmark of spinup_tf's algorithms at their default configs (not a test).

    python bench/bench.py [--algos td3 ddpg sac trpo ppo vpg] \
        [--envs Pendulum-v1 CartPole-v1 HalfCheetah-v5] [--steps N] [--repeats R] \
        [--json out.json]

Per (algo, env) combination the algorithm can handle, repeated ``--repeats`` times:

* ``train``: one in-process training run (``epochs=1``, ``steps_per_epoch=N``; off-policy
  algos also ``start_steps=update_after=N//4``, ``num_test_episodes=0``), logged to a temp
  folder; env steps/s = ``TotalEnvInteracts / Time`` from its ``progress.txt`` (``Time``
  includes graph-independent loop work, the updates and the epoch's model save; nothing is
  subtracted). Off-policy algos also report updates/s = gradient updates / ``Time``.
* ``update``: the pure update ops on one fixed random batch of 100 (td3/ddpg/sac: the same
  ``make_callable`` callables the algorithm runs per update), µs per update; trpo/npg: one
  full update (CG + line search + 80 value steps) on a random 4000-step buffer, ms.
* peak RSS (``ru_maxrss``) after each measurement: process-wide and monotone, so it is the
  peak of everything run so far in this process, not of that run alone.
"""
import argparse
import json
import os
import os.path as osp
import platform
import resource
import statistics
import sys
import tempfile
import time

os.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'
os.environ['TF_ENABLE_ONEDNN_OPTS'] = '0'
ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
from gymnasium.spaces import Box  # noqa: E402

from spinup_tf.tf1 import tf, make_session  # noqa: E402
from spinup_tf.envs import EnvFn  # noqa: E402
from spinup_tf.algos import get_algo  # noqa: E402

OFF_POLICY = ('td3', 'ddpg', 'sac')
ON_POLICY = ('trpo', 'npg', 'ppo', 'vpg')


def peak_rss_mb():
    # Linux reports ru_maxrss in KiB (macOS in bytes).
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024.0 * 1024.0) if sys.platform == 'darwin' else r / 1024.0


def supported(algo, env_id):
    env = EnvFn(env_id)()
    try:
        return algo not in OFF_POLICY or isinstance(env.action_space, Box)
    finally:
        env.close()


def read_progress(path):
    with open(path) as f:
        header = f.readline().rstrip('\n').split('\t')
        last = [line for line in f if line.strip()][-1].rstrip('\n').split('\t')
    return dict(zip(header, last))


def n_updates(steps, update_after, update_every=50):
    """Gradient updates the off-policy loop runs in ``steps`` steps (one window of
    ``update_every`` updates at each t >= update_after with t % update_every == 0)."""
    return update_every * sum(1 for t in range(update_after, steps) if t % update_every == 0)


def bench_train(algo, env_id, steps):
    fn = get_algo(algo)
    with tempfile.TemporaryDirectory() as tmp:
        kw = dict(steps_per_epoch=steps, epochs=1,
                  logger_kwargs=dict(output_dir=osp.join(tmp, 'run'), quiet=True))
        if algo in OFF_POLICY:
            kw.update(start_steps=steps // 4, update_after=steps // 4, num_test_episodes=0)
        fn(EnvFn(env_id), **kw)
        row = read_progress(osp.join(tmp, 'run', 'progress.txt'))
    t, interacts = float(row['Time']), int(float(row['TotalEnvInteracts']))
    out = dict(time_s=t, env_steps=interacts, steps_per_s=interacts / t)
    if algo in OFF_POLICY:
        u = n_updates(steps, steps // 4)
        out.update(updates=u, updates_per_s=u / t)
    return out


def _random_batch(obs_dim, act_dim, low, high, n=100, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, obs_dim)).astype(np.float32),
            rng.standard_normal((n, obs_dim)).astype(np.float32),
            rng.uniform(low, high, (n, act_dim)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32),
            (rng.uniform(size=n) < 0.05).astype(np.float32))


def bench_update_offpolicy(algo, env_id, calls=200, warmup=10):
    env = EnvFn(env_id)()
    space = env.action_space
    env.close()
    obs_dim, act_dim = int(np.prod(env.observation_space.shape)), int(np.prod(space.shape))
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        if algo == 'td3':
            from spinup_tf.algos.td3 import build_td3_graph
            g = build_td3_graph(obs_dim, act_dim, space)
        elif algo == 'ddpg':
            from spinup_tf.algos.ddpg import build_ddpg_graph
            g = build_ddpg_graph(obs_dim, act_dim, space)
        else:
            from spinup_tf.algos.sac import build_sac_graph
            g = build_sac_graph(obs_dim, act_dim, space)
        init = tf.global_variables_initializer()
    sess = make_session(graph)
    try:
        sess.run(init)
        sess.run(g.target_init)
        phs = [g.x_ph, g.x2_ph, g.a_ph, g.r_ph, g.d_ph]
        feeds = _random_batch(obs_dim, act_dim, space.low, space.high)
        # The callables and per-update schedule of td3.py / ddpg.py / sac.py's update().
        if algo == 'sac':
            step_fn = sess.make_callable(g.step_ops, feed_list=phs)

            def update(j):
                step_fn(*feeds)
        else:
            q_fetch = [g.q_loss, g.q1, g.q2, g.train_q_op] if algo == 'td3' else \
                [g.q_loss, g.q, g.backup, g.train_q_op]
            q_step = sess.make_callable(q_fetch, feed_list=phs)
            pi_step = sess.make_callable([g.pi_loss, g.train_pi_then_target], feed_list=phs)
            delay = 2 if algo == 'td3' else 1  # td3's default policy_delay

            def update(j):
                q_step(*feeds)
                if j % delay == 0:
                    pi_step(*feeds)
        for j in range(warmup):
            update(j)
        t0 = time.perf_counter()
        for j in range(calls):
            update(j)
        dt = time.perf_counter() - t0
    finally:
        sess.close()
    return dict(update_us=1e6 * dt / calls, calls=calls, batch=100)


def bench_update_trpo(env_id, n=4000, calls=3, algo='trpo'):
    """One full TRPO update (trpo.py's ``make_trpo_update``, default hyperparameters) on a random
    buffer whose actions/logp/info come from the initial policy."""
    from spinup_tf.algos.trpo import build_trpo_graph, make_trpo_update
    env = EnvFn(env_id)()
    obs_space, act_space = env.observation_space, env.action_space
    env.close()
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        g = build_trpo_graph(obs_space, act_space)
        init = tf.global_variables_initializer()
    sess = make_session(graph)
    try:
        sess.run(init)
        rng = np.random.default_rng(0)
        obs = rng.standard_normal((n,) + obs_space.shape).astype(np.float32)
        a, _, logp, *info = sess.run(g.get_action_ops, {g.x_ph: obs})
        adv = rng.standard_normal(n).astype(np.float32)
        ret = rng.standard_normal(n).astype(np.float32)
        # A state-independent info entry (e.g. log_std, shape (act_dim,)) is stored per
        # step in the buffer: broadcast it to one row per step.
        info = [np.broadcast_to(x, (n,) + tuple(ph.shape.as_list()[1:])).copy()
                for x, ph in zip(info, g.all_phs[5:])]
        inputs = [obs, a, adv, ret, logp] + info
        update_on = make_trpo_update(sess, g, algo)  # trpo.py's own update, defaults
        start_params = sess.run(g.get_pi_params)

        def update():
            update_on(inputs)

        update()  # warm-up
        times = []
        for _ in range(calls):
            sess.run(g.set_pi_params, {g.v_ph: start_params})  # the same starting point each time (old logp fixed)
            t0 = time.perf_counter()
            update()
            times.append(time.perf_counter() - t0)
    finally:
        sess.close()
    return dict(update_ms=1e3 * statistics.median(times), buffer=n)


def summarize(values):
    return dict(median=statistics.median(values), min=min(values), max=max(values),
                values=values)


def fmt(s, scale=1.0, digits=0):
    if s is None:
        return '-'
    f = '%%.%df' % digits
    return (f + ' [' + f + '-' + f + ']') % (s['median'] * scale, s['min'] * scale,
                                              s['max'] * scale)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--algos', nargs='+', default=['td3', 'ddpg', 'sac', 'trpo', 'ppo', 'vpg'])
    p.add_argument('--envs', nargs='+', default=['Pendulum-v1', 'CartPole-v1',
                                                  'HalfCheetah-v5'])
    p.add_argument('--steps', type=int, default=2000)
    p.add_argument('--repeats', type=int, default=2)
    p.add_argument('--json', default=None)
    args = p.parse_args()

    results = []
    t_start = time.time()
    for algo in args.algos:
        for env_id in args.envs:
            if not supported(algo, env_id):
                print('skip %s on %s (needs a Box action space)' % (algo, env_id), flush=True)
                continue
            runs = dict(steps_per_s=[], updates_per_s=[], update_us=[], update_ms=[],
                        rss_after_train_mb=[], rss_after_update_mb=[])
            for _ in range(args.repeats):
                tr = bench_train(algo, env_id, args.steps)
                runs['steps_per_s'].append(tr['steps_per_s'])
                if 'updates_per_s' in tr:
                    runs['updates_per_s'].append(tr['updates_per_s'])
                runs['rss_after_train_mb'].append(peak_rss_mb())
                up = None
                if algo in OFF_POLICY:
                    up = bench_update_offpolicy(algo, env_id)
                    runs['update_us'].append(up['update_us'])
                elif algo in ('trpo', 'npg'):
                    up = bench_update_trpo(env_id, algo=algo)
                    runs['update_ms'].append(up['update_ms'])
                if up is not None:
                    runs['rss_after_update_mb'].append(peak_rss_mb())
            res = dict(algo=algo, env=env_id, steps=args.steps,
                       **{k: summarize(v) if v else None for k, v in runs.items()})
            results.append(res)
            print('%-5s %-15s steps/s %s  updates/s %s  update %s  peak RSS %s MB' % (
                algo, env_id, fmt(res['steps_per_s']), fmt(res['updates_per_s']),
                fmt(res['update_us'], digits=0) + ' us' if res['update_us'] else
                fmt(res['update_ms'], digits=0) + ' ms' if res['update_ms'] else '-',
                fmt(res['rss_after_train_mb'])), flush=True)

    header = ('| algo | env | env steps/s | updates/s | update op (fixed batch) '
              '| peak RSS MB after train |')
    lines = [header, '|---|---|---|---|---|---|']
    for r in results:
        if r['update_us']:
            upd = fmt(r['update_us']) + ' µs/update (batch 100)'
        elif r['update_ms']:
            upd = fmt(r['update_ms']) + ' ms/update (4000 steps)'
        else:
            upd = '-'
        lines.append('| %s | %s | %s | %s | %s | %s |' % (
            r['algo'], r['env'], fmt(r['steps_per_s']), fmt(r['updates_per_s']), upd,
            fmt(r['rss_after_train_mb'])))
    total = time.time() - t_start
    print()
    print('median [min-max] over %d repeats, --steps %d; peak RSS is process-wide and '
          'monotone (ru_maxrss)' % (args.repeats, args.steps))
    print('\n'.join(lines))
    print('\ntotal %.0f s' % total)
    if args.json:
        meta = dict(argv=sys.argv, date=time.strftime('%Y-%m-%d %H:%M:%S %Z'),
                    python=platform.python_version(), tensorflow=tf.__version__,
                    machine=platform.platform(), cpus=os.cpu_count(), total_s=total,
                    note='ru_maxrss is process-wide and monotone')
        with open(args.json, 'w') as f:
            json.dump(dict(meta=meta, results=results), f, indent=1)
        print('wrote %s' % args.json)


if __name__ == '__main__':
    main()
