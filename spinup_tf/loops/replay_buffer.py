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

from spinup_tf.utils.replay_layout import RingLayout


class ReplayBuffer(RingLayout):
    """Fixed-size FIFO store of transitions ``(o, a, r, o2, d)`` in numpy, sampled uniformly.

    ``d`` is gymnasium's ``terminated`` flag: 1 only when the episode really ended in a
    terminal state. A time-limit truncation is stored with ``d = 0`` so that the target
    bootstraps through it (its ``o2`` is kept in the episode's stub slot).

    Args:
        obs_dim (int or tuple): observation size, or an image's shape ``(H, W, C)``.
        act_dim (int): action size (a Discrete action is stored one-hot).
        size (int): number of slots (at least 4); the oldest transitions are overwritten
            once it is full. Each episode also takes one slot for its last observation.
        with_replacement (bool): how a batch is drawn (``RingLayout.sample_indices``).
        obs_dtype: how observations are stored (uint8 for images: a quarter of float32's
            bytes; the network scales them).
    """

    def __init__(self, obs_dim, act_dim, size, with_replacement=True, obs_dtype=np.float32):
        super().__init__(size, with_replacement)
        n = self.max_size
        obs_shape = obs_dim if isinstance(obs_dim, tuple) else (obs_dim,)
        self.obs_buf = np.zeros((n,) + obs_shape, dtype=obs_dtype)
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
        """A dict of arrays: obs1, obs2 ``(batch, obs_dim)`` (or ``(batch, H, W, C)``),
        acts ``(batch, act_dim)``,
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
