"""What one core's matrix products reach here, in GFLOP/s (not a test).

    python bench/matmul_rate.py [--repeats 10]

The ceiling the off-policy updates run against (their time is mostly matmuls, see the
performance page's "Against Stable-Baselines3"), measured three ways, each on one thread:

* **numpy 2048**: ``a @ b`` for two 2048x2048 float32 matrices (OpenBLAS, one thread);
* **TF 2048**: the same product in a TF1 session with one intra-op and one inter-op thread
  (``spinup_tf.utils.tf1.make_session(graph, 1, 1)``), oneDNN as TensorFlow sets it;
* **TF chain 100x256**: 50 products of a (100, 256) batch by a (256, 256) weight in a row,
  the shape of a Spinning Up critic's hidden layer at batch 100, in the same session.

A product of (m, k) by (k, n) is counted as ``2 m k n`` FLOPs. Each figure is the median
over ``--repeats`` timed calls after a warm-up call.
"""
import argparse
import os
import os.path as osp
import statistics
import sys
import time

for var in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[var] = '1'  # before numpy is imported
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
sys.path.insert(0, osp.dirname(osp.dirname(osp.abspath(__file__))))
import numpy as np  # noqa: E402

N, CHAIN, BATCH, WIDTH = 2048, 50, 100, 256


def rate(fn, flops, repeats):
    """Median GFLOP/s of ``fn()`` over ``repeats`` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return flops / statistics.median(times) / 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--repeats', type=int, default=10)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    a = rng.random((N, N), dtype=np.float32)
    b = rng.random((N, N), dtype=np.float32)
    print('numpy 2048            %6.1f GFLOP/s' % rate(lambda: a @ b, 2 * N ** 3, args.repeats))

    from spinup_tf.utils.tf1 import tf, make_session
    graph = tf.Graph()
    with graph.as_default():
        big = tf.Variable(a)
        product = tf.reduce_sum(tf.matmul(big, big))
        x = tf.Variable(rng.random((BATCH, WIDTH), dtype=np.float32))
        w = tf.Variable(rng.random((WIDTH, WIDTH), dtype=np.float32) / WIDTH)
        h = x
        for _ in range(CHAIN):
            h = tf.matmul(h, w)
        chain = tf.reduce_sum(h)
        sess = make_session(graph, 1, 1)
        sess.run(tf.global_variables_initializer())
    print('TF 2048               %6.1f GFLOP/s' % rate(lambda: sess.run(product), 2 * N ** 3,
                                                      args.repeats))
    print('TF chain 100x256      %6.1f GFLOP/s' % rate(
        lambda: sess.run(chain), CHAIN * 2 * BATCH * WIDTH * WIDTH, args.repeats * 20))
    return 0


if __name__ == '__main__':
    sys.exit(main())
