"""The replay buffer of Atari's frame stacks: each frame kept once (DQN and SAC on
``--env ALE/...``; ``bench/atari_buffer_memory.py`` measures it against whole stacks)."""
import numpy as np

from spinup_tf.utils.replay_layout import RingLayout
from spinup_tf.loops.replay_buffer import ReplayBuffer


class FrameStackReplayBuffer(ReplayBuffer):
    """A replay buffer of frame stacks (Atari's ``(k, 84, 84)`` uint8 observations) that
    keeps each frame once: a stack shares ``k - 1`` frames with the one before it, so the
    buffer stores one frame per slot and rebuilds the stacks when a batch is drawn.

    Layout: the ring of :class:`ReplayBuffer`; slot ``i`` keeps the newest frame of its
    observation (``frames[i]``, ``(H, W)``) and ``depth[i]``, how many slots before it
    continue the same stack history (capped at ``k - 1``). Where a history starts (a game's
    reset, whose stack is padded with its first frame) the whole stack is kept aside
    (``heads``), and the slots after it take their older frames from there until they have
    ``k - 1`` predecessors of their own. Whether an observation continues the one before is
    decided by content (its older ``k - 1`` frames equal that one's newer ``k - 1``), so the
    stacks drawn are exactly those stored. The oldest ``k - 1`` slots, whose predecessors the
    ring has overwritten, are not drawn.

    100,000 Atari transitions take 100,000 x 84 x 84 bytes = 706 MB of frames (plus the
    heads, one stack per game), a quarter of a buffer of whole stacks.

    Args:
        obs_shape (tuple): ``(k, H, W)``, the stack axis first (gymnasium's
            ``FrameStackObservation``).
        act_dim, size, with_replacement: as :class:`ReplayBuffer`.
    """

    def __init__(self, obs_shape, act_dim, size, with_replacement=True):
        RingLayout.__init__(self, size, with_replacement)
        n = self.max_size
        self.k, self.frame_shape = int(obs_shape[0]), tuple(obs_shape[1:])
        self.frames = np.zeros((n,) + self.frame_shape, dtype=np.uint8)
        self.depth = np.zeros(n, dtype=np.int64)
        self.head_of = np.zeros(n, dtype=np.int64)
        self.heads = {}
        self.acts_buf = np.zeros([n, act_dim], dtype=np.float32)
        self.rews_buf = np.zeros(n, dtype=np.float32)
        self.done_buf = np.zeros(n, dtype=np.float32)
        self._written = None  # the slot last written ahead (its observation is stored)

    def _put(self, slot, obs, prev, prev_obs=None):
        """Store observation ``obs`` ``(k, H, W)`` in ``slot``; ``prev`` is the slot it may
        continue (or None), ``prev_obs`` that slot's observation when the caller holds it
        (else it is rebuilt)."""
        self.heads.pop(slot, None)
        self.frames[slot] = obs[-1]
        if prev is not None and prev_obs is None:
            prev_obs = self.stacks(np.array([prev]))[0]
        if prev is not None and np.array_equal(prev_obs[1:], obs[:-1]):
            self.depth[slot] = min(self.depth[prev] + 1, self.k - 1)
            self.head_of[slot] = self.head_of[prev]
        else:
            self.heads[slot] = np.array(obs, dtype=np.uint8)
            self.depth[slot], self.head_of[slot] = 0, slot

    def _advance(self, episode_end):
        slot, nxt = RingLayout._advance(self, episode_end)
        # The slots after the two just claimed are the oldest: they may have lost the
        # predecessors (or the head) their stacks are rebuilt from.
        for j in range(2, self.k + 1):
            old = (slot + j) % self.max_size
            if self.valid[old]:
                self.valid[old] = False
                self.size -= 1
        return slot, nxt

    def store(self, obs, act, rew, next_obs, done, episode_end=False):
        continuing = self._written == self.ptr  # obs is the last transition's next_obs
        after_stub = self._written == (self.ptr - 1) % self.max_size
        slot, nxt = self._advance(episode_end)
        if not continuing:  # an episode's first observation (after a stub, maybe the same game)
            self._put(slot, obs, (slot - 1) % self.max_size if after_stub else None)
        self._put(nxt, next_obs, slot, obs)  # obs is slot's observation: no rebuild per step
        self._written = nxt
        self.acts_buf[slot] = act
        self.rews_buf[slot] = rew
        self.done_buf[slot] = done

    def stacks(self, idxs):
        """The observations ``(len(idxs), k, H, W)`` of slots ``idxs``, rebuilt."""
        idxs = np.asarray(idxs)
        k, n = self.k, self.max_size
        depth = self.depth[idxs]
        out = np.empty((len(idxs), k) + self.frame_shape, dtype=np.uint8)
        for m in range(k):
            rel = depth - (k - 1) + m  # this frame's place after the head, < 0: in the head
            own = rel >= 0
            out[own, m] = self.frames[(idxs[own] - (k - 1) + m) % n]
            for b in np.flatnonzero(~own):
                out[b, m] = self.heads[int(self.head_of[idxs[b]])][depth[b] + m]
        return out

    def sample_batch(self, batch_size=32, idxs=None):
        if idxs is None:
            idxs = self.sample_indices(batch_size)
        idxs = np.asarray(idxs)
        return dict(obs1=self.stacks(idxs), obs2=self.stacks((idxs + 1) % self.max_size),
                    acts=self.acts_buf[idxs], rews=self.rews_buf[idxs],
                    done=self.done_buf[idxs])

    def state_dict(self):
        n, m = self.filled, self.n_rows
        slots = np.array(sorted(self.heads), dtype=np.int64)
        heads = np.stack([self.heads[s] for s in slots]) if len(slots) else \
            np.zeros((0, self.k) + self.frame_shape, np.uint8)
        return dict(self.layout_state(), frames=self.frames[:m], depth=self.depth[:m],
                    head_of=self.head_of[:m], head_slots=slots, heads=heads,
                    written=np.array(-1 if self._written is None else self._written),
                    acts=self.acts_buf[:n], rews=self.rews_buf[:n], done=self.done_buf[:n])

    def load_state_dict(self, state):
        self.load_layout_state(state)
        n, m = self.filled, self.n_rows
        self.frames[:m] = state['frames']
        self.depth[:m] = state['depth']
        self.head_of[:m] = state['head_of']
        self.heads = {int(s): np.array(h) for s, h in zip(state['head_slots'], state['heads'])}
        written = int(state['written'])
        self._written = None if written < 0 else written
        self.acts_buf[:n] = state['acts']
        self.rews_buf[:n] = state['rews']
        self.done_buf[:n] = state['done']

    @property
    def nbytes(self):
        return sum(a.nbytes for a in (self.frames, self.depth, self.head_of, self.acts_buf,
                                      self.rews_buf, self.done_buf, self.valid)) + \
            sum(h.nbytes for h in self.heads.values())
