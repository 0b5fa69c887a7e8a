"""A simple FIFO experience replay buffer for off-policy agents (DDPG, TD3, SAC)."""
import numpy as np


class ReplayBuffer:
    """Fixed-size FIFO store of transitions ``(o, a, r, o2, d)``, sampled uniformly.

    ``d`` is gymnasium's ``terminated`` flag: 1 only when the episode really ended in a
    terminal state. A time-limit truncation is stored with ``d = 0`` so that the target
    bootstraps through it.

    Args:
        obs_dim (int): observation size.
        act_dim (int): action size.
        size (int): capacity; the oldest transitions are overwritten once it is full.
    """

    def __init__(self, obs_dim, act_dim, size):
        size = int(size)
        if size <= 0:
            raise ValueError('replay_size must be positive, got %d' % size)
        self.obs1_buf = np.zeros([size, obs_dim], dtype=np.float32)
        self.obs2_buf = np.zeros([size, obs_dim], dtype=np.float32)
        self.acts_buf = np.zeros([size, act_dim], dtype=np.float32)
        self.rews_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        """Add one transition, overwriting the oldest when full."""
        self.obs1_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.acts_buf[self.ptr] = act
        self.rews_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_indices(self, batch_size):
        """``(batch_size,)`` indices drawn uniformly with replacement from the filled part."""
        if self.size == 0:
            raise ValueError('cannot sample from an empty replay buffer')
        return np.random.randint(0, self.size, size=batch_size)

    def sample_batch(self, batch_size=32, idxs=None):
        """A dict of arrays: obs1, obs2 ``(batch, obs_dim)``, acts ``(batch, act_dim)``,
        rews and done ``(batch,)``."""
        if idxs is None:
            idxs = self.sample_indices(batch_size)
        return dict(obs1=self.obs1_buf[idxs],
                    obs2=self.obs2_buf[idxs],
                    acts=self.acts_buf[idxs],
                    rews=self.rews_buf[idxs],
                    done=self.done_buf[idxs])

    def state_dict(self):
        """The filled part of the buffer and its pointers, as arrays (for checkpoints)."""
        n = self.size
        return dict(obs1=self.obs1_buf[:n], obs2=self.obs2_buf[:n], acts=self.acts_buf[:n],
                    rews=self.rews_buf[:n], done=self.done_buf[:n],
                    ptr=np.array(self.ptr), size=np.array(self.size),
                    max_size=np.array(self.max_size))

    def load_state_dict(self, state):
        """Restore what ``state_dict`` returned (the capacity must match)."""
        if int(state['max_size']) != self.max_size:
            raise ValueError('replay buffer capacity differs: checkpoint %d, run %d'
                             % (int(state['max_size']), self.max_size))
        n = int(state['size'])
        self.obs1_buf[:n] = state['obs1']
        self.obs2_buf[:n] = state['obs2']
        self.acts_buf[:n] = state['acts']
        self.rews_buf[:n] = state['rews']
        self.done_buf[:n] = state['done']
        self.ptr, self.size = int(state['ptr']), n
