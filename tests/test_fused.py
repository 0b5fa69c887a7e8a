"""The fast engine's update window against the plain engine (Spinning Up's loop), on the
algorithms' own graphs: with the same batches (fixed indices) and the same noise (fed in),
every variable and every diagnostic is the same after a window.

Each algorithm is built by calling it with ``Run.train`` replaced by a capture, so the test
runs exactly the graph a user's run builds.
"""
import numpy as np
import pytest
import gymnasium as gym

from spinup_tf.algos import core, distributions
from spinup_tf.utils.tf1 import tf
from spinup_tf.algos.td3 import td3
from spinup_tf.algos.ddpg import ddpg
from spinup_tf.algos.sac import sac
from spinup_tf.loops import off_policy
from spinup_tf.loops.replay_buffer import ReplayBuffer
from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer
from spinup_tf.fast.window import build_window, FusedUpdater

BATCH, SLOTS = 16, 64
ALGOS = {'td3': td3, 'ddpg': ddpg, 'sac': sac}


def fixed_normal(shape, mean=0.0, stddev=1.0, dtype=tf.float32, seed=None, name=None):
    """A stand-in for ``tf.random_normal``: a fixed pattern in [-1.7, 1.7] of ``shape``, the
    same in both engines, scaled by ``stddev`` (so ``stddev`` still matters)."""
    n = tf.reduce_prod(shape)
    pattern = 1.7 * tf.sin(tf.cast(tf.range(n), dtype) * 0.7 + 0.3)
    return mean + stddev * tf.reshape(pattern, shape)


def fixed_draw(shape, stddev=1.0):
    """Stand-in for ``spinup_tf.utils.tf1.random_normal``, what ``core``, ``distributions``
    and TD3 draw with."""
    return fixed_normal(shape, stddev=stddev)


def capture(monkeypatch, tmp_path, algo, **kwargs):
    """Build ``algo``'s graph as a run does (Pendulum, small networks) and return what it
    hands the loop."""
    got = {}

    def fake_train(self, train_ops, update, batch, act, log_diagnostics, explore=None,
                   saved=None, init_ops=()):
        got.update(run=self, batch=batch, train_ops=train_ops, update=update,
                   init_ops=init_ops)

    monkeypatch.setattr(off_policy.Run, 'train', fake_train)
    monkeypatch.setattr(core, 'random_normal', fixed_draw)  # the algorithms' draws
    monkeypatch.setattr(distributions, 'random_normal', fixed_draw)  # SAC's policy's
    ALGOS[algo](lambda: gym.make('Pendulum-v1'), ac_kwargs=dict(hidden_sizes=kwargs.pop(
        'hidden', (16, 16))), logger_kwargs=dict(output_dir=str(tmp_path), quiet=True),
        batch_size=BATCH, replay_size=SLOTS, **kwargs)
    return got


def transitions(n, seed=0):
    rng = np.random.RandomState(seed)
    for t in range(n):
        yield (rng.randn(3), rng.uniform(-2, 2, 1), rng.randn(), rng.randn(3),
               float(rng.rand() < 0.1), t % 9 == 8)


class StoreLog:
    """What ``logger.store`` got, per key, flattened in order."""

    def __init__(self):
        self.values = {}

    def store(self, **kw):
        for k, v in kw.items():
            self.values.setdefault(k, []).append(np.ravel(v))

    def flat(self):
        return {k: np.concatenate(v) for k, v in self.values.items()}


def run_both(got, n_updates, fused_again=False):
    """Run ``n_updates`` plain updates and the same updates in one fused window, from the
    same start; return the variables and diagnostics of each (and, with ``fused_again``,
    of the same window run once more from the same start)."""
    run, update = got['run'], got['update']
    with run.graph.as_default():
        lists = got['train_ops'](got['batch'])  # the plain loop's sess.run lists
        numpy_buf = ReplayBuffer(3, 1, SLOTS)
        graph_buf = GraphReplayBuffer(3, 1, SLOTS)
        for tr in transitions(40):
            numpy_buf.store(*tr[:5], episode_end=tr[5])
        np.random.seed(1)  # the numpy sampler's draws, the same in every call
        idxs = np.stack([numpy_buf.sample_indices(BATCH) for _ in range(n_updates)])
        fixed = tf.constant(idxs.astype(np.int32))
        window = build_window(graph_buf, BATCH, got['train_ops'], update, _shapes(lists),
                              sampler=lambda j: tf.gather(fixed, j))
        variables = tf.global_variables()
        sess = tf.Session(graph=run.graph)
        sess.run(tf.global_variables_initializer())
        sess.run(got['init_ops'])
    fused_log = StoreLog()
    updater = FusedUpdater(sess, graph_buf, window, lambda out: fused_log.store(**out))
    for tr in transitions(40):
        graph_buf.store(*tr[:5], episode_end=tr[5])
    start = sess.run(variables)

    draws = iter(idxs)
    numpy_buf.sample_batch = (lambda batch_size, f=numpy_buf.sample_batch: f(batch_size,
                                                                             next(draws)))
    plain_log = StoreLog()
    off_policy.plain_updates(sess, lists, update, got['batch'], numpy_buf, BATCH,
                             plain_log)(n_updates)
    after_plain = sess.run(variables)

    for v, value in zip(variables, start):
        v.load(value, sess)
    updater(n_updates)
    after_fused = sess.run(variables)
    result = variables, start, (after_plain, plain_log.flat()), (after_fused, fused_log.flat())
    if fused_again:
        for v, value in zip(variables, start):
            v.load(value, sess)
        fused_log.values = {}
        updater(n_updates)
        result += ((sess.run(variables), fused_log.flat()),)
    return result


def _shapes(lists):
    """``{name: {key: shape}}`` of each list's diagnostics (its tensors)."""
    return {name: {k: v.shape.as_list() for k, v in fetches.items()
                   if isinstance(v, tf.Tensor)} for name, fetches in lists.items()}


def assert_same(variables, plain, fused):
    (vp, dp), (vf, df) = plain, fused
    for v, a, b in zip(variables, vp, vf):
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-6, err_msg=v.name)
    assert sorted(dp) == sorted(df)
    for k in dp:
        np.testing.assert_allclose(df[k], dp[k], rtol=2e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize('algo,kwargs,n', [
    ('td3', dict(policy_delay=2), 7),
    ('td3', dict(policy_delay=3), 8),             # delay that does not divide the chunk of 2
    ('td3', dict(policy_delay=1), 5),
    ('td3', dict(policy_delay=2, hidden=(256, 256)), 4),
    ('ddpg', {}, 5),
    ('sac', dict(alpha=0.2), 5),
    ('sac', dict(alpha='auto'), 4),
])
def test_fused_window_equals_plain_updates(monkeypatch, tmp_path, algo, kwargs, n):
    got = capture(monkeypatch, tmp_path, algo, **kwargs)
    variables, start, plain, fused = run_both(got, n)
    changed = [v.name for v, a, b in zip(variables, start, plain[0]) if not np.array_equal(a, b)]
    assert any('main/pi' in name for name in changed)      # the policy was updated
    assert any('target/' in name for name in changed)      # and the targets
    assert_same(variables, plain, fused)


@pytest.mark.parametrize('delay,n', [(2, 7), (3, 8)])
def test_td3_updates_the_policy_every_policy_delay_updates(monkeypatch, tmp_path, delay, n):
    """The policy steps of a window are those with ``j % policy_delay == 0``: LossPi is
    stored once per policy step, and after ``n`` updates Adam has taken that many steps, on
    each engine."""
    got = capture(monkeypatch, tmp_path, 'td3', policy_delay=delay)
    variables, _, plain, fused = run_both(got, n)
    expected = len(range(0, n, delay))
    for engine, (values, log) in (('plain', plain), ('fused', fused)):
        assert len(log['LossPi']) == expected, engine
        assert len(log['LossQ']) == n, engine
        by_name = dict(zip([v.name for v in variables], values))
        beta1 = [v for k, v in by_name.items() if 'beta1_power' in k]
        # Two Adam optimizers; each beta1 power starts at 0.9 and is multiplied by 0.9 a step.
        steps = np.round(np.log(beta1) / np.log(0.9)).astype(int) - 1
        assert sorted(steps) == sorted([expected, n]), engine


def test_window_repeats_exactly(monkeypatch, tmp_path):
    """Same inputs, same window, twice: identical bits (no race between overlapped ops)."""
    got = capture(monkeypatch, tmp_path, 'td3', policy_delay=3)
    variables, start, _, first, second = run_both(got, 9, fused_again=True)
    assert any(not np.array_equal(a, b) for a, b in zip(start, first[0]))
    for a, b in zip(first[0], second[0]):
        np.testing.assert_array_equal(a, b)
    assert sorted(first[1]) == sorted(second[1])
    for k in first[1]:
        np.testing.assert_array_equal(first[1][k], second[1][k], err_msg=k)


def test_plain_run_executes_nothing_of_the_fast_engine(tmp_path):
    """``--fused False`` is Spinning Up's loop alone: the fast engine is never imported, nor
    what a default TD3 run does not use (the other noise processes, DQN's epsilon-greedy
    loop, Atari's frame-stack buffer)."""
    import subprocess
    import sys
    code = ('import sys; from spinup_tf.tools.cli import main; '
            'main(["td3", "--env", "Pendulum-v1", "--epochs", "1", "--steps_per_epoch", "120", '
            '"--start_steps", "50", "--update_after", "50", "--update_every", "20", '
            '"--num_test_episodes", "1", "--fused", "False", "--data_dir", %r]); '
            'print(sorted(m for m in sys.modules if m.startswith(("spinup_tf.fast", '
            '"spinup_tf.engine", "spinup_tf.loops.noise", "spinup_tf.loops.epsilon_greedy", '
            '"spinup_tf.loops.frame_stack_buffer"))))' % str(tmp_path))
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == '[]'


def test_window_builds_the_tails_of_its_sizes_only(monkeypatch, tmp_path):
    """``sizes``: a run whose windows all hold 50 updates (TD3, chunk 2) builds the tail of
    0 updates only; asking the updater for another size is an error, not a silent rebuild."""
    got = capture(monkeypatch, tmp_path, 'td3', policy_delay=2)
    run, update = got['run'], got['update']
    with run.graph.as_default():
        lists = got['train_ops'](got['batch'])
        graph_buf = GraphReplayBuffer(3, 1, SLOTS)
        window = build_window(graph_buf, BATCH, got['train_ops'], update, _shapes(lists),
                              sizes=[50])
        assert sorted(window.fetches) == [0]
        sess = tf.Session(graph=run.graph)
        sess.run(tf.global_variables_initializer())
    log = StoreLog()
    updater = FusedUpdater(sess, graph_buf, window, lambda out: log.store(**out))
    for tr in transitions(40):
        graph_buf.store(*tr[:5], episode_end=tr[5])
    updater(4)
    assert len(log.values['LossQ'][0]) == 4
    with pytest.raises(ValueError, match='no fused window was built for 1 updates'):
        updater(3)
