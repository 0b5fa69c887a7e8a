"""The fused update window against Spinning Up's plain loop: same variables, and with the
same sampled indices the same parameters and diagnostics after a window."""
import numpy as np
import pytest
from gymnasium.spaces import Box

from spinup_tf.utils.tf1 import tf, make_session
from spinup_tf.algos.td3 import build_td3_graph, DIAGNOSTICS as TD3_DIAGNOSTICS
from spinup_tf.algos.ddpg import build_ddpg_graph
from spinup_tf.algos.sac import build_sac_graph, DIAGNOSTICS as SAC_DIAGNOSTICS
from spinup_tf.loops.replay_buffer import ReplayBuffer
from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer, REPLAY_VARIABLES
from spinup_tf.fast.window import build_update_window, FusedUpdater

OBS, ACT, BATCH, SLOTS = 3, 2, 16, 64
SPACE = Box(-2.0, 2.0, shape=(ACT,), dtype=np.float32)
AC = dict(hidden_sizes=(16, 16))
DDPG_DIAGNOSTICS = ['LossQ', 'QVals', 'Backup', 'LossPi']


def _transitions(n, seed=0):
    rng = np.random.RandomState(seed)
    for t in range(n):
        yield (rng.randn(OBS), rng.uniform(-2, 2, ACT), rng.randn(), rng.randn(OBS),
               float(rng.rand() < 0.1), t % 9 == 8)


def _graph(algo, fused, idxs=None, policy_delay=2, chunk=1, ac_kwargs=AC):
    """Build ``algo`` (plain graph, plus the fused window reading ``idxs`` when ``fused``,
    ``chunk`` updates per loop iteration)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(7)
        if algo == 'td3':
            g = build_td3_graph(OBS, ACT, SPACE, ac_kwargs=ac_kwargs, target_noise=0.0)
            step, names = (lambda b, j: g.update_steps(b, j, policy_delay)), TD3_DIAGNOSTICS
        elif algo == 'ddpg':
            g = build_ddpg_graph(OBS, ACT, SPACE, ac_kwargs=ac_kwargs)
            step, names = g.update_steps, DDPG_DIAGNOSTICS
        else:
            g = build_sac_graph(OBS, ACT, SPACE, ac_kwargs=AC, alpha='auto')
            step, names = g.update_steps, SAC_DIAGNOSTICS
        global_vars = [v.name for v in tf.global_variables()]
        window = buf = None
        if fused:
            buf = GraphReplayBuffer(OBS, ACT, SLOTS)
            fixed = tf.constant(idxs, tf.int32) if idxs is not None else None
            sampler = (lambda j: tf.gather(fixed, j)) if fixed is not None else None
            window = build_update_window(buf, BATCH, step, names, sampler=sampler,
                                         chunk=chunk)
        sess = make_session(graph)
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        sess.run(g.target_init)
        values = sess.run(tf.global_variables())
    return dict(g=g, sess=sess, buf=buf, window=window, names=names,
                global_vars=global_vars, all_vars=[v.name for v in graph.get_collection(
                    tf.GraphKeys.GLOBAL_VARIABLES)], values=values, graph=graph)


@pytest.mark.parametrize('algo', ['td3', 'ddpg', 'sac'])
def test_both_paths_build_the_same_variables(algo):
    plain, fused = _graph(algo, False), _graph(algo, True)
    # The window adds no global variable (no optimizer slot, no network copy): only the
    # replay buffer's arrays, in their own collection.
    assert fused['all_vars'] == plain['all_vars']
    assert not fused['graph'].get_collection(tf.GraphKeys.LOCAL_VARIABLES)
    extra = [v.name for v in fused['graph'].get_collection(REPLAY_VARIABLES)]
    assert extra == ['replay_buffer/%s:0' % k for k in ('obs', 'acts', 'rews', 'done', 'valid')]
    for a, b in zip(plain['values'], fused['values']):  # same seed, same initial weights
        np.testing.assert_array_equal(a, b)


def _plain_window(algo, g, sess, batches, policy_delay=2):
    """Spinning Up's loop over the given batches (the algorithms' own update functions)."""
    phs = [g.x_ph, g.x2_ph, g.a_ph, g.r_ph, g.d_ph]
    out = {}
    for j, b in enumerate(batches):
        feeds = dict(zip(phs, (b['obs1'], b['obs2'], b['acts'], b['rews'], b['done'])))
        if algo == 'td3':
            loss_q, q1, q2, _ = sess.run([g.q_loss, g.q1, g.q2, g.train_q_op], feeds)
            row = dict(LossQ=loss_q, Q1Vals=q1, Q2Vals=q2)
            if j % policy_delay == 0:
                row['LossPi'] = sess.run([g.pi_loss, g.train_pi_then_target], feeds)[0]
        else:
            loss_q, q, ys, _ = sess.run([g.q_loss, g.q, g.backup, g.train_q_op], feeds)
            loss_pi = sess.run([g.pi_loss, g.train_pi_then_target], feeds)[0]
            row = dict(LossQ=loss_q, QVals=q, Backup=ys, LossPi=loss_pi)
        for k, v in row.items():
            out.setdefault(k, []).append(v)
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize('algo,policy_delay,chunk,hidden', [
    ('td3', 2, 1, 16),   # one update per iteration: the policy step is a tf.cond on j
    ('td3', 2, 2, 16),   # pairs (Q, policy, targets; Q), overlapping, then a single update
    ('td3', 2, 2, 256),  # ops long enough for a missing ordering to show up as a race
    ('td3', 3, 2, 16),   # the delay does not divide the chunk: a tf.cond inside each pair
    ('td3', 1, 3, 16),
    ('ddpg', 1, 1, 16),
    ('ddpg', 1, 2, 256)])
def test_a_window_gives_the_plain_loops_parameters(algo, policy_delay, chunk, hidden):
    n_updates = 7  # odd: the policy step's delay must line up as in the plain loop
    np.random.seed(0)
    ref = ReplayBuffer(OBS, ACT, SLOTS)
    stream = list(_transitions(50))
    for tr in stream:
        ref.store(*tr[:5], episode_end=tr[5])
    idxs = np.stack([ref.sample_indices(BATCH) for _ in range(n_updates)])

    ac_kwargs = dict(hidden_sizes=(hidden, hidden))
    plain = _graph(algo, False, ac_kwargs=ac_kwargs)
    expected = _plain_window(algo, plain['g'], plain['sess'],
                             [ref.sample_batch(idxs=i) for i in idxs], policy_delay)

    fused = _graph(algo, True, idxs, policy_delay, chunk, ac_kwargs)
    got = {}
    updater = FusedUpdater(fused['sess'], fused['buf'], fused['window'], got.update)
    for tr in stream:
        fused['buf'].store(*tr[:5], episode_end=tr[5])
    updater(n_updates)

    if algo == 'td3':
        got['LossPi'] = got['LossPi'][::policy_delay]
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    with plain['graph'].as_default():
        plain_values = plain['sess'].run(tf.global_variables())
    with fused['graph'].as_default():
        fused_values = fused['sess'].run(tf.global_variables())
        names = [v.name for v in tf.global_variables()]
    changed = 0
    for name, a, b in zip(names, plain_values, fused_values):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=name)
    for a, b in zip(plain['values'], plain_values):
        changed += not np.array_equal(a, b)
    assert changed > len(names) // 2  # the window did train (main, target, Adam slots)


def test_sac_window_trains_every_network_and_temperature():
    np.random.seed(0)
    fused = _graph('sac', True)
    got = {}
    updater = FusedUpdater(fused['sess'], fused['buf'], fused['window'], got.update)
    for tr in _transitions(40):
        fused['buf'].store(*tr[:5], episode_end=tr[5])
    updater(5)
    assert {k: np.shape(v) for k, v in got.items()} == dict(
        LossPi=(5,), LossQ1=(5,), LossQ2=(5,), Q1Vals=(5, BATCH), Q2Vals=(5, BATCH),
        LogPi=(5, BATCH), Alpha=(5,))
    assert all(np.isfinite(v).all() for v in got.values())
    with fused['graph'].as_default():
        after = fused['sess'].run(tf.global_variables())
        names = [v.name for v in tf.global_variables()]
    moved = {n.split('/')[0] + '/' + n.split('/')[1] for n, a, b in
             zip(names, fused['values'], after) if '/' in n and not np.array_equal(a, b)}
    assert {'main/pi', 'main/q1', 'main/q2', 'target/pi', 'target/q1', 'target/q2',
            'alpha/log_alpha:0'} <= moved


def test_reads_after_orders_reads_by_scope_and_refuses_unordered_ones():
    from spinup_tf.fast.window import reads_after
    from spinup_tf.utils.tf1 import dense
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, (None, 3))
        with tf.variable_scope('main'):
            dense(x, 4, name='pi')
            dense(x, 4, name='q')
        first, second = tf.no_op(name='first'), tf.no_op(name='second')
        getter = reads_after([('main/pi', [first]), ('main', [second])])
        with tf.variable_scope('main', reuse=True, custom_getter=getter):
            y_pi, y_q = dense(x, 4, name='pi'), dense(x, 4, name='q')

        def read_deps(y):  # control inputs of the kernel's read feeding y's matmul
            kernel_read = y.op.inputs[0].op.inputs[1].op.inputs[0].op  # MatMul <- Identity
            assert kernel_read.type == 'ReadVariableOp'
            return {op.name for op in kernel_read.control_inputs}
        assert read_deps(y_pi) == {'first'} and read_deps(y_q) == {'second'}

        strict = reads_after([('main/pi', [])])
        with pytest.raises(ValueError, match='no read order for variable main/q'):
            with tf.variable_scope('main', reuse=True, custom_getter=strict):
                dense(x, 4, name='q')
