"""A FIFO experience replay buffer for off-policy agents (DDPG, TD3, SAC), each observation
stored once.

Layout (shared with the in-graph buffer of ``spinup_tf.fast.graph_replay_buffer``): ``N`` slots in
a ring. Slot ``i`` holds one transition's ``obs``, ``act``, ``rew`` and ``done``; its next
observation is the ``obs`` of slot ``i + 1`` (mod ``N``). Storing a transition writes its
``obs2`` ahead into the next slot, which the following step of the same episode continues
from. When an episode ends, that slot is left as a *stub* (it only carries the final next
observation) and the next episode starts one slot further on. ``valid[i]`` marks the slots
that begin a transition: stubs and the slot ahead of the write pointer are not.

So ``N`` slots hold ``N`` minus one per episode transitions, in ``N * (obs_dim + act_dim +
2) * 4 + N`` bytes: a million HalfCheetah transitions (17 + 6 floats) take 101 MB, where
separate ``obs`` and ``obs2`` arrays would take 169 MB.
"""
import numpy as np

from spinup_tf.utils.errors import UserInputError

MIN_SLOTS = 4


class RingLayout:
    """Slot bookkeeping of the buffer: where each transition and next observation goes.

    Attributes:
        max_size (int): number of slots ``N``.
        ptr (int): slot of the next transition.
        filled (int): slots written at least once (sampling draws from ``[0, filled)``).
        size (int): transitions currently held (valid slots).
        valid: ``(N,)`` bool, the slots that start a transition.
    """

    def __init__(self, size):
        size = int(size)
        if size < MIN_SLOTS:
            raise ValueError('replay_size must be at least %d, got %d' % (MIN_SLOTS, size))
        self.max_size = size
        self.valid = np.zeros(size, dtype=bool)
        self.ptr, self.filled, self.size = 0, 0, 0

    def _advance(self, episode_end):
        """Claim slots for one transition: returns ``(slot, next_slot)`` and moves the
        pointer past them (past the stub too when ``episode_end``)."""
        n = self.max_size
        slot, nxt = self.ptr, (self.ptr + 1) % n
        self.size += 1 - int(self.valid[slot]) - int(self.valid[nxt])
        self.valid[slot], self.valid[nxt] = True, False
        step = 2 if episode_end else 1
        self.ptr = (slot + step) % n
        self.filled = min(max(self.filled, slot + step), n)
        return slot, nxt

    def end_episode(self, keep_stub=True):
        """End the episode without storing its last transition (rllab's
        ``include_horizon_terminal=False``): the slot at the pointer, which holds the last
        stored transition's next observation, becomes the episode's stub.

        ``keep_stub=False`` is the MXNet seed's memory (seed 002), which stores observations
        only and takes a transition's next observation from the next sample stored
        (``ReplayMem.get_batch``: ``obss[idx + 1]``): the pointer stays, the next episode's
        first observation overwrites that slot, and the last stored transition of this
        episode then bootstraps from it. (Until that store it still reads its own next
        observation; the seed never samples its newest sample.)"""
        if not keep_stub:
            return
        n = self.max_size
        self.filled = min(max(self.filled, self.ptr + 1), n)
        self.ptr = (self.ptr + 1) % n

    def sample_indices(self, batch_size):
        """``(batch_size,)`` slots drawn uniformly with replacement among the held
        transitions: uniform draws over ``[0, filled)``, with the draws that hit a
        non-transition slot drawn again."""
        if self.size == 0:
            raise ValueError('cannot sample from an empty replay buffer')
        idxs = np.random.randint(0, self.filled, size=batch_size)
        bad = ~self.valid[idxs]
        while bad.any():
            idxs[bad] = np.random.randint(0, self.filled, size=int(bad.sum()))
            bad = ~self.valid[idxs]
        return idxs

    def layout_state(self):
        return dict(layout=np.array(2), ptr=np.array(self.ptr), filled=np.array(self.filled),
                    size=np.array(self.size), max_size=np.array(self.max_size),
                    valid=self.valid[:self.filled].copy())

    def load_layout_state(self, state):
        if 'layout' not in state or int(state['layout']) != 2:
            raise UserInputError('the checkpoint holds a replay buffer in an older layout '
                                 '(before each observation was stored once); start the run '
                                 'again')
        if int(state['max_size']) != self.max_size:
            raise UserInputError('replay buffer capacity differs: checkpoint %d, run %d'
                                 % (int(state['max_size']), self.max_size))
        self.ptr, self.filled = int(state['ptr']), int(state['filled'])
        self.size = int(state['size'])
        self.valid[:] = False
        self.valid[:self.filled] = state['valid']

    @property
    def n_rows(self):
        """Rows of ``obs`` holding data: the filled slots plus the one written ahead."""
        return min(self.filled + 1, self.max_size)


class ReplayBuffer(RingLayout):
    """Fixed-size FIFO store of transitions ``(o, a, r, o2, d)`` in numpy, sampled uniformly.

    ``d`` is gymnasium's ``terminated`` flag: 1 only when the episode really ended in a
    terminal state. A time-limit truncation is stored with ``d = 0`` so that the target
    bootstraps through it (its ``o2`` is kept in the episode's stub slot).

    Args:
        obs_dim (int): observation size.
        act_dim (int): action size.
        size (int): number of slots (at least 4); the oldest transitions are overwritten
            once it is full. Each episode also takes one slot for its last observation.
    """

    def __init__(self, obs_dim, act_dim, size):
        super().__init__(size)
        n = self.max_size
        self.obs_buf = np.zeros([n, obs_dim], dtype=np.float32)
        self.acts_buf = np.zeros([n, act_dim], dtype=np.float32)
        self.rews_buf = np.zeros(n, dtype=np.float32)
        self.done_buf = np.zeros(n, dtype=np.float32)

    def store(self, obs, act, rew, next_obs, done, episode_end=False):
        """Add one transition, overwriting the oldest when full. ``episode_end`` (terminated
        or truncated) means the next transition starts a new episode."""
        slot, nxt = self._advance(episode_end)
        self.obs_buf[slot] = obs
        self.obs_buf[nxt] = next_obs
        self.acts_buf[slot] = act
        self.rews_buf[slot] = rew
        self.done_buf[slot] = done

    def sample_batch(self, batch_size=32, idxs=None):
        """A dict of arrays: obs1, obs2 ``(batch, obs_dim)``, acts ``(batch, act_dim)``,
        rews and done ``(batch,)``."""
        if idxs is None:
            idxs = self.sample_indices(batch_size)
        idxs = np.asarray(idxs)
        return dict(obs1=self.obs_buf[idxs],
                    obs2=self.obs_buf[(idxs + 1) % self.max_size],
                    acts=self.acts_buf[idxs],
                    rews=self.rews_buf[idxs],
                    done=self.done_buf[idxs])

    def state_dict(self):
        """The filled part of the buffer and its pointers, as arrays (for checkpoints)."""
        n, m = self.filled, self.n_rows
        return dict(self.layout_state(), obs=self.obs_buf[:m], acts=self.acts_buf[:n],
                    rews=self.rews_buf[:n], done=self.done_buf[:n])

    def load_state_dict(self, state):
        """Restore what ``state_dict`` returned (the capacity must match)."""
        self.load_layout_state(state)
        n, m = self.filled, self.n_rows
        self.obs_buf[:m] = state['obs']
        self.acts_buf[:n] = state['acts']
        self.rews_buf[:n] = state['rews']
        self.done_buf[:n] = state['done']

    @property
    def nbytes(self):
        return sum(a.nbytes for a in (self.obs_buf, self.acts_buf, self.rews_buf,
                                      self.done_buf, self.valid))
