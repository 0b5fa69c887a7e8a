"""Replay buffers: one observation per slot, stub slots at episode ends, uniform sampling
over the held transitions; the in-graph buffer holds exactly what the numpy one does."""
import numpy as np
import pytest

from spinup_tf.utils.tf1 import tf, make_session, RANDOM_COUNTERS
from spinup_tf.loops.replay_buffer import ReplayBuffer
from spinup_tf.fast.graph_replay_buffer import GraphReplayBuffer, sample_indices, gather_batch


def _episodes(n_steps, rng, obs_dim=2, max_len=7):
    """A stream of ``(o, a, r, o2, d, episode_end)`` whose observations encode (episode,
    step) and whose episodes end by termination or truncation at random lengths."""
    ep, k = 0, 0
    length = rng.randint(1, max_len + 1)
    for _ in range(n_steps):
        o = np.full(obs_dim, 100 * ep + k, np.float32)
        o2 = o + 1
        end = k + 1 == length
        terminated = end and rng.rand() < 0.5
        yield o, np.array([ep + 0.5 * k], np.float32), float(100 * ep + k), o2, \
            float(terminated), end
        k += 1
        if end:
            ep, k = ep + 1, 0
            length = rng.randint(1, max_len + 1)


def _held(buf):
    """The held transitions, in slot order: (obs1, obs2, acts, rews, done) arrays."""
    idxs = np.flatnonzero(buf.valid[:buf.filled])
    b = buf.sample_batch(idxs=idxs)
    return idxs, b


def test_every_held_transition_has_its_own_next_observation():
    rng = np.random.RandomState(0)
    buf = ReplayBuffer(obs_dim=2, act_dim=1, size=50)
    stream = list(_episodes(400, rng))
    for tr in stream:
        buf.store(*tr[:5], episode_end=tr[5])
    idxs, b = _held(buf)
    assert buf.size == len(idxs) > 35
    # obs2 is obs1 + 1 for every transition, across episode ends and the ring's wrap,
    # rewards match the observation, and the done flags are the terminations.
    np.testing.assert_array_equal(b['obs2'], b['obs1'] + 1)
    np.testing.assert_array_equal(b['rews'], b['obs1'][:, 0])
    by_rew = {tr[2]: tr[4] for tr in stream}
    np.testing.assert_array_equal(b['done'], [by_rew[r] for r in b['rews']])
    # Only the most recent transitions are held (FIFO): the last one stored is there.
    assert stream[-1][2] in set(b['rews'].tolist())
    assert min(b['rews']) > stream[-60][2] - 1


def test_sampling_is_uniform_over_held_transitions_only():
    np.random.seed(1)
    rng = np.random.RandomState(1)
    buf = ReplayBuffer(obs_dim=1, act_dim=1, size=20)
    for tr in _episodes(33, rng, obs_dim=1, max_len=3):
        buf.store(*tr[:5], episode_end=tr[5])
    idxs = buf.sample_indices(40000)
    assert buf.valid[idxs].all()
    counts = np.bincount(idxs, minlength=20)[buf.valid]
    assert len(counts) == buf.size and counts.min() > 0
    expected = 40000 / buf.size
    assert np.abs(counts - expected).max() < 5 * np.sqrt(expected)


def test_capacity_memory_and_bad_sizes():
    # A million HalfCheetah transitions (17-dim obs, 6-dim actions) fit in 150 MB.
    assert ReplayBuffer(17, 6, int(1e6)).nbytes <= 150e6
    with pytest.raises(ValueError):
        ReplayBuffer(1, 1, 10).sample_batch(4)
    with pytest.raises(ValueError):
        ReplayBuffer(1, 1, 0)
    with pytest.raises(ValueError):
        ReplayBuffer(1, 1, 3)


def _graph_buffer(obs_dim, act_dim, size):
    graph = tf.Graph()
    with graph.as_default():
        buf = GraphReplayBuffer(obs_dim, act_dim, size)
        n = tf.placeholder(tf.int32, ())
        idxs = sample_indices(buf.valid_var, buf.filled_ph, 5000)
        batch = gather_batch(buf, idxs, 5000)
        sess = make_session(graph)
        sess.run(tf.variables_initializer(tf.get_collection(RANDOM_COUNTERS)))  # the sampler's
    buf.attach(sess)
    return buf, sess, idxs, batch


@pytest.mark.parametrize('size', [9, 64, 10000])
def test_graph_buffer_holds_what_the_numpy_buffer_holds(size):
    rng = np.random.RandomState(size)
    ref = ReplayBuffer(2, 1, size)
    buf, sess, idxs, batch = _graph_buffer(2, 1, size)
    for i, tr in enumerate(_episodes(700, rng)):
        ref.store(*tr[:5], episode_end=tr[5])
        buf.store(*tr[:5], episode_end=tr[5])
        if i % 37 == 0:
            buf.flush()  # windows at odd moments
    state, expected = buf.state_dict(), ref.state_dict()
    assert set(state) == set(expected)
    held = ref.valid[:ref.filled]
    for key in ('acts', 'rews', 'done'):
        np.testing.assert_array_equal(state[key][held], expected[key][held])
    for key in ('obs', 'valid', 'ptr', 'filled', 'size'):
        np.testing.assert_array_equal(state[key], expected[key])
    # In-graph sampling returns held transitions only, each with its own next observation.
    slots, obs1, obs2, rews = sess.run([idxs, batch[0], batch[1], batch[3]],
                                       {buf.filled_ph: buf.filled})
    assert ref.valid[slots].all()
    np.testing.assert_array_equal(obs2, obs1 + 1)
    np.testing.assert_array_equal(rews, obs1[:, 0])
    if size == 64:  # uniform over the held transitions: each drawn about equally often
        counts = np.bincount(slots, minlength=size)[ref.valid]
        expected = len(slots) / ref.size
        assert counts.min() > 0 and np.abs(counts - expected).max() < 5 * np.sqrt(expected)


def test_graph_buffer_restores_a_checkpoint():
    rng = np.random.RandomState(3)
    a, _, _, _ = _graph_buffer(2, 1, 40)
    for tr in _episodes(90, rng):
        a.store(*tr[:5], episode_end=tr[5])
    state = a.state_dict()
    b, _, _, _ = _graph_buffer(2, 1, 40)
    b.load_state_dict(state)
    more = list(_episodes(15, np.random.RandomState(4)))
    for buf in (a, b):
        for tr in more:
            buf.store(*tr[:5], episode_end=tr[5])
    sa, sb = a.state_dict(), b.state_dict()
    held = sa['valid']
    for key in ('obs', 'valid', 'ptr', 'filled', 'size'):
        np.testing.assert_array_equal(sa[key], sb[key])
    for key in ('acts', 'rews', 'done'):
        np.testing.assert_array_equal(sa[key][held], sb[key][held])


def test_graph_buffer_keeps_no_copy_of_the_data_in_numpy():
    graph = tf.Graph()
    with graph.as_default():
        buf = GraphReplayBuffer(17, 6, int(1e6))
    assert buf.nbytes <= 150e6
    numpy_side = buf.nbytes - int(1e6) * (17 + 6 + 2) * 4 - int(1e6)
    assert numpy_side < 3e6  # valid flags (1 MB) and the staging rows


def test_a_checkpoint_in_the_old_layout_is_refused_clearly():
    from spinup_tf.utils.errors import UserInputError
    old = dict(obs1=np.zeros((3, 2)), obs2=np.zeros((3, 2)), acts=np.zeros((3, 1)),
               rews=np.zeros(3), done=np.zeros(3), ptr=np.array(3), size=np.array(3),
               max_size=np.array(10))
    with pytest.raises(UserInputError, match='older layout'):
        ReplayBuffer(2, 1, 10).load_state_dict(old)
    new = ReplayBuffer(2, 1, 10)
    new.store([0, 0], [0], 0.0, [1, 1], 0.0)
    with pytest.raises(UserInputError, match='capacity differs'):
        ReplayBuffer(2, 1, 20).load_state_dict(new.state_dict())
