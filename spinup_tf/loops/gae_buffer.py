"""Trajectory buffer of the on-policy family (VPG / TRPO / PPO) with GAE-lambda advantages."""
import numpy as np
import scipy.signal

from spinup_tf.utils.tf1 import EPS


def combined_shape(length, shape=None):
    """``(length,)`` for ``shape`` None or ``()``, ``(length, shape)`` for an int, else
    ``(length, *shape)``."""
    if shape is None:
        return (length,)
    return (length, shape) if np.isscalar(shape) else (length, *shape)


def discount_cumsum(x, discount):
    """``y[t] = sum_k discount^k x[t + k]`` along the first axis: each entry's discounted
    sum of itself and what follows it (a reversed first-order linear filter,
    ``y[t] = x[t] + discount * y[t + 1]``)."""
    return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]


class GAEBuffer:
    """Stores the trajectories of one epoch and computes GAE-lambda advantages and
    rewards-to-go.

    Fill it with :meth:`store` one step at a time, call :meth:`finish_path` at the end of every
    trajectory (and at the epoch boundary), then :meth:`get` once the buffer is full.

    =============  =================================  ===========================================
    Buffer         Shape                              Description
    =============  =================================  ===========================================
    ``obs``        ``(size, obs_dim)``                Observations (float32; images
                                                      ``(size, H, W, C)`` in ``obs_dtype``).
    ``act``        ``(size, act_dim)`` or ``(size,)``  Actions (float32); ``act_dim`` None or
                                                      ``()`` stores scalar (Discrete) actions.
    ``adv``        ``(size,)``                        GAE-lambda advantages.
    ``ret``        ``(size,)``                        Rewards-to-go (targets of the value
                                                      function).
    ``logp``       ``(size,)``                        :math:`\\log \\pi(a|s)` at collection.
    ``info[k]``    ``(size, *info_shapes[k])``        The policy's distribution parameters
                                                      (old ``info`` for TRPO's KL).
    =============  =================================  ===========================================
    """

    def __init__(self, obs_dim, act_dim, size, info_shapes, gamma=0.99, lam=0.95,
                 obs_dtype=np.float32, adv_epsilon=EPS):
        self.obs_buf = np.zeros(combined_shape(size, obs_dim), dtype=obs_dtype)
        self.act_buf = np.zeros(combined_shape(size, act_dim), dtype=np.float32)
        self.adv_buf = np.zeros(size, dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.ret_buf = np.zeros(size, dtype=np.float32)
        self.val_buf = np.zeros(size, dtype=np.float32)
        self.logp_buf = np.zeros(size, dtype=np.float32)
        self.info_bufs = {k: np.zeros(combined_shape(size, v), dtype=np.float32)
                          for k, v in info_shapes.items()}
        self.sorted_info_keys = sorted(self.info_bufs)
        self.gamma, self.lam = gamma, lam
        self.adv_epsilon = adv_epsilon  # added to the advantages' std (Spinning Up's TF1: 0)
        self.ptr, self.path_start_idx, self.max_size = 0, 0, size

    def store(self, obs, act, rew, val, logp, info=()):
        """Append one timestep.

        Args:
            obs, act, rew: observation, action, reward of the step.
            val: :math:`V(s_t)` from the value function.
            logp: :math:`\\log \\pi(a_t|s_t)`.
            info: the policy's distribution parameters at this step: a dict keyed like
                ``info_shapes``, or a sequence in ``sorted(info_shapes)`` order (what running
                ``[info[k] for k in sorted(info)]`` in the session returns).
        """
        if self.ptr >= self.max_size:
            raise RuntimeError('GAEBuffer is full (size %d): call get() before storing more'
                               % self.max_size)
        self.obs_buf[self.ptr] = obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.val_buf[self.ptr] = val
        self.logp_buf[self.ptr] = logp
        for i, k in enumerate(self.sorted_info_keys):
            self.info_bufs[k][self.ptr] = info[k] if isinstance(info, dict) else info[i]
        self.ptr += 1

    def finish_path(self, last_val=0):
        """Close the current trajectory: compute its GAE-lambda advantages and rewards-to-go.

        Pass ``last_val = V(s_T)``, the value estimate of the state after the last stored
        step, when the trajectory was *cut* (time-limit truncation or the end of the epoch),
        so that the tail beyond the cut is bootstrapped; pass ``last_val = 0`` when it
        *terminated*.

        Advantages are :math:`\\hat A_t = \\sum_l (\\gamma\\lambda)^l \\delta_{t+l}` with
        :math:`\\delta_t = r_t + \\gamma V(s_{t+1}) - V(s_t)`; rewards-to-go are the discounted
        returns :math:`\\sum_l \\gamma^l r_{t+l} + \\gamma^{T-t} \\cdot \\text{last\\_val}`
        (as Spinning Up; not :math:`\\hat A_t + V(s_t)`).
        """
        path_slice = slice(self.path_start_idx, self.ptr)
        rews = np.append(self.rew_buf[path_slice].astype(np.float64), last_val)
        vals = np.append(self.val_buf[path_slice].astype(np.float64), last_val)

        # GAE-lambda advantages
        deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]
        self.adv_buf[path_slice] = discount_cumsum(deltas, self.gamma * self.lam)

        # rewards-to-go, targets of the value function
        self.ret_buf[path_slice] = discount_cumsum(rews, self.gamma)[:-1]

        self.path_start_idx = self.ptr

    def get(self, normalize_adv=True):
        """Return the epoch's data and reset the buffer.

        The buffer must be full (``size`` steps stored, last path finished). Advantages are
        normalised to mean 0, std 1 unless ``normalize_adv`` is False:
        ``(adv - mean) / (std + adv_epsilon)``, in float32. Spinning Up's TF1 buffers (and
        seed 004) divide by the std alone (``adv_epsilon=0``); the ``EPS`` here only matters
        when the std is tiny (float32 rounds ``std + 1e-8`` back to ``std`` once it is above
        about 0.2).

        Returns:
            ``[obs, act, adv, ret, logp] + [info[k] for k in sorted(info_shapes)]``.
        """
        if self.ptr != self.max_size:
            raise RuntimeError('GAEBuffer.get() needs a full buffer: %d of %d steps stored'
                               % (self.ptr, self.max_size))
        if self.path_start_idx != self.ptr:
            raise RuntimeError('GAEBuffer.get(): the last path is not finished; call '
                               'finish_path(last_val) first')
        self.ptr, self.path_start_idx = 0, 0
        adv = self.adv_buf.copy()
        if normalize_adv:
            adv = ((adv - adv.mean()) / (adv.std() + self.adv_epsilon)).astype(np.float32)
        return [self.obs_buf.copy(), self.act_buf.copy(), adv, self.ret_buf.copy(),
                self.logp_buf.copy()] + [self.info_bufs[k].copy() for k in self.sorted_info_keys]

    def state_dict(self):
        """The stored part of the epoch and the pointers, as arrays (for checkpoints)."""
        n = self.ptr
        d = dict(obs=self.obs_buf[:n], act=self.act_buf[:n], adv=self.adv_buf[:n],
                 rew=self.rew_buf[:n], ret=self.ret_buf[:n], val=self.val_buf[:n],
                 logp=self.logp_buf[:n], ptr=np.array(self.ptr),
                 path_start_idx=np.array(self.path_start_idx), max_size=np.array(self.max_size))
        d.update({'info_' + k: v[:n] for k, v in self.info_bufs.items()})
        return d

    def load_state_dict(self, state):
        """Restore what ``state_dict`` returned (the size must match)."""
        if int(state['max_size']) != self.max_size:
            raise ValueError('buffer size differs: checkpoint %d, run %d'
                             % (int(state['max_size']), self.max_size))
        n = int(state['ptr'])
        for name in ('obs', 'act', 'adv', 'rew', 'ret', 'val', 'logp'):
            getattr(self, name + '_buf')[:n] = state[name]
        for k, v in self.info_bufs.items():
            v[:n] = state['info_' + k]
        self.ptr, self.path_start_idx = n, int(state['path_start_idx'])
