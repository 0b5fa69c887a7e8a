"""The slot layout of the replay buffers, shared by the numpy buffer
(``spinup_tf.loops.replay_buffer``) and the in-graph one (``spinup_tf.fast.graph_replay_buffer``).

``N`` slots in a ring. Slot ``i`` holds one transition's ``obs``, ``act``, ``rew`` and
``done``; its next observation is the ``obs`` of slot ``i + 1`` (mod ``N``). Storing a
transition writes its ``obs2`` ahead into the next slot, which the following step of the
same episode continues from. When an episode ends, that slot is left as a *stub* (it only
carries the final next observation) and the next episode starts one slot further on.
``valid[i]`` marks the slots that begin a transition: stubs and the slot ahead of the write
pointer are not.
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

    def __init__(self, size, with_replacement=True):
        size = int(size)
        if size < MIN_SLOTS:
            raise ValueError('replay_size must be at least %d, got %d' % (MIN_SLOTS, size))
        self.max_size = size
        self.with_replacement = bool(with_replacement)
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
        """End the episode without storing its last transition: the slot at the pointer,
        which holds the last stored transition's next observation, becomes the episode's
        stub.

        ``keep_stub=False``: the pointer stays, so the next episode's first observation
        overwrites that slot, and the last stored transition of this episode then reads it
        as its next observation (a memory that stores observations only and takes a
        transition's next one from the next sample stored). Until that store it still reads
        its own next observation."""
        if not keep_stub:
            return
        n = self.max_size
        self.filled = min(max(self.filled, self.ptr + 1), n)
        self.ptr = (self.ptr + 1) % n

    def sample_indices(self, batch_size):
        """``(batch_size,)`` slots drawn uniformly among the held transitions.

        With replacement (Spinning Up's): uniform draws over ``[0, filled)``, with the
        draws that hit a non-transition slot drawn again. Without (``with_replacement``
        False): ``batch_size`` distinct transitions (``random.sample``'s way)."""
        if self.size == 0:
            raise ValueError('cannot sample from an empty replay buffer')
        if not self.with_replacement:
            held = np.flatnonzero(self.valid[:self.filled])
            if len(held) < batch_size:
                raise ValueError('cannot draw %d distinct transitions from %d'
                                 % (batch_size, len(held)))
            return np.random.choice(held, size=batch_size, replace=False)
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
