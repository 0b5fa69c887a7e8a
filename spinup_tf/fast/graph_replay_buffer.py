"""The replay buffer inside the graph, for the fused update window (``spinup_tf.fast.window``).

Same ring layout as ``spinup_tf.loops.replay_buffer`` (one observation per slot, next observation
in the next slot, a stub slot per episode), but the arrays are non-trainable local variables:
the numpy side keeps only the slot bookkeeping (``valid``, 1 byte per slot) and a small
staging area for the steps since the last window. A window's ``sess.run`` first writes the
staged slots with ``tf.scatter_update``, then samples its batches in-graph with
:func:`sample_indices`, so no transition is copied between numpy and the graph twice.

The variables are in their own collection (``REPLAY_VARIABLES``), so ``tf.train.Saver`` and
the saved model leave them out; the run's checkpoint stores the buffer through
:meth:`GraphReplayBuffer.state_dict` instead.
"""
import numpy as np

from spinup_tf.utils.tf1 import tf, random_uniform_int
from spinup_tf.utils.replay_layout import RingLayout

STAGE_ROWS = 4096
REPLAY_VARIABLES = 'spinup_tf_replay_buffer'
"""Collection of the buffer's variables: neither global nor local, so no saver or global
initializer touches them; ``GraphReplayBuffer.attach`` initialises them."""


class GraphReplayBuffer(RingLayout):
    """Replay buffer whose arrays are graph variables; build it in the algorithm's graph.

    Args:
        obs_dim, act_dim (int): sizes of observations and actions.
        size (int): number of slots (at least 4).

    Graph side: ``obs_var`` ``(size, obs_dim)``, ``acts_var`` ``(size, act_dim)``,
    ``rews_var``, ``done_var`` ``(size,)`` float32 and ``valid_var`` ``(size,)`` bool
    (initialised by :meth:`attach`);
    ``write_op`` scatters the staged rows fed through ``stage_phs``; ``filled_ph`` feeds the
    sampling range.
    """

    def __init__(self, obs_dim, act_dim, size, with_replacement=True):
        super().__init__(size, with_replacement)
        n = self.max_size
        self.obs_dim, self.act_dim = obs_dim, act_dim

        def local(name, shape, dtype=tf.float32):
            # Zeros from a fill whose size is fed (with a default), not a constant: a variable
            # initialised from a constant shares its buffer, and the first scatter_update
            # then copies the whole array (one more buffer's worth of resident memory).
            rows = tf.placeholder_with_default(np.int32(shape[0]), (), name=name + '_rows')
            zeros = tf.fill(tf.concat([[rows], np.array(shape[1:], np.int32)], 0),
                            tf.zeros((), dtype))
            return tf.Variable(zeros, name=name, trainable=False, validate_shape=False,
                               shape=shape, collections=[REPLAY_VARIABLES])

        with tf.variable_scope('replay_buffer'):
            self.obs_var = local('obs', (n, obs_dim))
            self.acts_var = local('acts', (n, act_dim))
            self.rews_var = local('rews', (n,))
            self.done_var = local('done', (n,))
            self.valid_var = local('valid', (n,), tf.bool)
            self.stage_phs = [
                tf.placeholder(tf.int32, (None,), name='stage_slots'),
                tf.placeholder(tf.float32, (None, obs_dim), name='stage_obs'),
                tf.placeholder(tf.float32, (None, act_dim), name='stage_acts'),
                tf.placeholder(tf.float32, (None,), name='stage_rews'),
                tf.placeholder(tf.float32, (None,), name='stage_done'),
                tf.placeholder(tf.bool, (None,), name='stage_valid')]
            slots = self.stage_phs[0]
            self.write_op = tf.group(*[
                tf.scatter_update(var, slots, values) for var, values in zip(
                    [self.obs_var, self.acts_var, self.rews_var, self.done_var,
                     self.valid_var], self.stage_phs[1:])], name='write')
            self.filled_ph = tf.placeholder(tf.int32, (), name='filled')
            # Reading the filled part back (checkpoints): rows of obs, rows of the rest.
            self._rows_phs = (tf.placeholder(tf.int32, (), name='obs_rows'),
                              tf.placeholder(tf.int32, (), name='rows'))
            m, n_rows = self._rows_phs
            self._read_ops = [self.obs_var[:m], self.acts_var[:n_rows],
                              self.rews_var[:n_rows], self.done_var[:n_rows]]
            # One array at a time, so that start-up holds at most one transient copy.
            init_ops = []
            for var in (self.obs_var, self.acts_var, self.rews_var, self.done_var,
                        self.valid_var):
                with tf.control_dependencies(init_ops[-1:]):
                    init_ops.append(var.assign(var.initial_value, read_value=False))
            self.initializer = init_ops[-1]

        # Staging: row k holds slot (stage_start + k) mod size. Flushing at STAGE_ROWS (or half
        # the ring) keeps the staged slots distinct, so one scatter writes each slot once.
        self.stage_limit = min(STAGE_ROWS, n // 2)
        rows = self.stage_limit + 2
        self._obs = np.zeros((rows, obs_dim), np.float32)
        self._acts = np.zeros((rows, act_dim), np.float32)
        self._rews = np.zeros(rows, np.float32)
        self._done = np.zeros(rows, np.float32)
        self._stage_start, self._stage_rows = 0, 0
        self._slot_offsets = np.arange(rows, dtype=np.int64)
        self.session = None
        self._write = None

    # ---- numpy side ------------------------------------------------------------------------
    def store(self, obs, act, rew, next_obs, done, episode_end=False):
        """Stage one transition (see ``ReplayBuffer.store``); it reaches the graph with the
        next window, or with an extra write when the staging area is full."""
        slot, _ = self._advance(episode_end)
        k = (slot - self._stage_start) % self.max_size
        self._obs[k] = obs
        self._obs[k + 1] = next_obs
        self._acts[k] = act
        self._rews[k] = rew
        self._done[k] = done
        self._stage_rows = k + 2
        if self._stage_rows >= self.stage_limit:
            self.flush()

    def staged_feeds(self):
        """The staged rows as the values of ``stage_phs`` (slots, obs, acts, rews, done,
        valid), and a fresh staging area starting at the pointer."""
        n = self._stage_rows
        slots = (self._stage_start + self._slot_offsets[:n]) % self.max_size
        feeds = [slots.astype(np.int32), self._obs[:n].copy(), self._acts[:n].copy(),
                 self._rews[:n].copy(), self._done[:n].copy(), self.valid[slots]]
        # The slot at the pointer may already hold the next observation (written ahead):
        # carry it over so the next write does not clobber it with a stale row.
        carry = (self.ptr - self._stage_start) % self.max_size
        if carry < n:
            self._obs[0] = self._obs[carry]
            self._stage_rows = 1
        else:
            self._stage_rows = 0
        self._stage_start = self.ptr
        return feeds

    def attach(self, session):
        """Initialise the arrays in ``session`` (zeros) and use it for the extra writes
        (``flush``) and for checkpoints."""
        self.session = session
        session.run(self.initializer)
        self._write = session.make_callable(self.write_op, feed_list=self.stage_phs)

    def flush(self):
        """Write the staged rows to the graph now."""
        if self._stage_rows and self._write is not None:
            self._write(*self.staged_feeds())

    # ---- checkpoints -----------------------------------------------------------------------
    def state_dict(self):
        self.flush()
        n, m = self.filled, self.n_rows
        obs, acts, rews, done = self.session.run(
            self._read_ops, dict(zip(self._rows_phs, (m, n))))
        return dict(self.layout_state(), obs=obs, acts=acts, rews=rews, done=done)

    def load_state_dict(self, state):
        self.load_layout_state(state)
        n, m = self.filled, self.n_rows
        # Rows beyond the filled part are never sampled; write the checkpoint's rows in place.
        self.session.run(self.initializer)
        self._write(np.arange(m, dtype=np.int32), state['obs'],
                    _pad(state['acts'], m), _pad(state['rews'], m), _pad(state['done'], m),
                    self.valid[:m])
        self._stage_start, self._stage_rows = self.ptr, 0
        if self.ptr < m:  # keep the written-ahead observation at the pointer
            self._obs[0] = state['obs'][self.ptr]
            self._stage_rows = 1

    @property
    def nbytes(self):
        """Bytes of the graph arrays plus the numpy bookkeeping and staging."""
        n = self.max_size
        graph = n * (self.obs_dim + self.act_dim + 2) * 4 + n
        return graph + self.valid.nbytes + sum(
            a.nbytes for a in (self._obs, self._acts, self._rews, self._done))


def _pad(a, rows):
    """``a`` with zero rows appended up to ``rows`` (the written-ahead row has no action)."""
    if len(a) >= rows:
        return a
    pad = np.zeros((rows - len(a),) + a.shape[1:], a.dtype)
    return np.concatenate([a, pad])


def sample_indices(valid_var, filled, batch_size):
    """In-graph counterpart of ``RingLayout.sample_indices``: ``(batch_size,)`` int32 slots,
    uniform with replacement over ``[0, filled)``, draws on non-transition slots redrawn
    until every draw is a transition."""
    idxs = random_uniform_int((batch_size,), filled)

    def redraw(i):
        fresh = random_uniform_int((batch_size,), filled)
        return tf.where(tf.gather(valid_var, i), i, fresh)

    return tf.while_loop(lambda i: tf.logical_not(tf.reduce_all(tf.gather(valid_var, i))),
                         redraw, [idxs], parallel_iterations=1)


def sample_distinct_indices(valid_var, filled, batch_size):
    """In-graph counterpart of ``RingLayout.sample_indices`` without replacement:
    ``(batch_size,)`` int32 distinct transition slots of ``[0, filled)``, uniformly (the
    ``batch_size`` largest of uniform scores, non-transition slots scored below them)."""
    scores = tf.random.uniform(tf.reshape(filled, (1,)), dtype=tf.float32)
    held = tf.gather(valid_var, tf.range(filled))
    return tf.nn.top_k(tf.where(held, scores, -tf.ones_like(scores)), batch_size).indices


def gather_batch(buffer, idxs, batch_size):
    """``(obs1, obs2, acts, rews, done)`` tensors of the slots ``idxs`` ``(batch,)``."""
    nxt = tf.math.floormod(idxs + 1, buffer.max_size)
    obs1 = tf.reshape(tf.gather(buffer.obs_var, idxs), (batch_size, buffer.obs_dim))
    obs2 = tf.reshape(tf.gather(buffer.obs_var, nxt), (batch_size, buffer.obs_dim))
    acts = tf.reshape(tf.gather(buffer.acts_var, idxs), (batch_size, buffer.act_dim))
    return obs1, obs2, acts, tf.gather(buffer.rews_var, idxs), tf.gather(buffer.done_var, idxs)
