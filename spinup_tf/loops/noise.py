"""Exploration noise processes for the deterministic-policy algorithms (DDPG, TD3).

DDPG and TD3 learn a deterministic policy ``mu(s)``, so they explore by acting with
``clip(mu(s) + noise, act_low, act_high)`` during training (never at test time). The
off-policy loop (``spinup_tf.loops.off_policy``) takes the noise as a callable
``noise(act_dim) -> np.ndarray (act_dim,)`` and calls its ``reset()``, when it has one, at the
start of every episode. Every process here is such a callable with a ``reset()`` (a no-op for
the memoryless ones), so any of them can be passed as ``noise=``. A run imports this module
only when ``--noise`` names another process than Spinning Up's Gaussian.

All of them draw from numpy's global RNG (``np.random``), which the algorithms seed with
``np.random.seed(seed)``: the same seed gives the same noise.

================================  =======================================================
``make_noise`` kind               process
================================  =======================================================
``'gaussian'``                    :class:`GaussianNoise`: ``scale * N(0, I)``, i.i.d. in
                                  time. Spinning Up's default (``act_noise=0.1``), which
                                  the loop's ``NoisyPolicy`` draws itself.
``'uniform'``                     :class:`UniformBiasedNoise`: ``scale * U[0, 1)``, the
                                  biased: it always pushes actions *up*.
``'ou'``                          :class:`OrnsteinUhlenbeckNoise`: the OU process,
                                  temporally correlated (original DDPG paper).
``'pink'``                        :class:`PinkNoise`: 1/f coloured noise (Eberhard et al.
                                  2023), correlated on all time scales.
================================  =======================================================

When does the choice matter? On most MuJoCo tasks hardly at all: Gaussian noise with
``scale=0.1`` is the simple default and what Spinning Up's benchmarks use. It matters on
tasks where exploration must be *sustained in one direction* for many steps. The classic
example is ``MountainCarContinuous-v0``: the car must rock back and forth to build momentum,
and an action penalty makes "do nothing" a local optimum worth about 0 return. White noise
(Gaussian 0.1, i.i.d. per step) averages out over a few steps, so the car jitters in place,
never reaches the flag, and DDPG/TD3 stay stuck near 0 reward. Temporally correlated noise
(OU, or better pink noise) keeps pushing the same way for long stretches, which is what
reaches the goal. Pink noise sits between white noise (beta=0, too little correlation) and
red/Brownian noise (beta=2, drifts to the action bounds and stays there) and was found to be
a good default across tasks by Eberhard et al. 2023, "Pink Noise Is All You Need: Colored
Noise Exploration in Deep Reinforcement Learning" (ICLR 2023).
"""
import numpy as np


# ---------------------------------------------------------------------------------------------
# Memoryless noise
# ---------------------------------------------------------------------------------------------

class GaussianNoise:
    """Spinning Up's exploration noise: ``scale * N(0, I)``, independent at every step.

    ``GaussianNoise(s)(act_dim)`` returns exactly Spinning Up's
    ``s * np.random.randn(act_dim)`` for the same global seed: one draw per call.

    Useful as the default on dense-reward tasks (MuJoCo locomotion). Being white (no memory),
    it explores badly where an action must be held for many steps (MountainCarContinuous).

    Args:
        scale (float): Standard deviation, in action units.
    """

    def __init__(self, scale=0.1):
        self.scale = scale

    def __call__(self, act_dim):
        """Returns ``(act_dim,)`` noise."""
        return self.scale * np.random.randn(act_dim)

    def reset(self):
        """No-op (memoryless)."""

    def __repr__(self):
        return 'GaussianNoise(scale=%r)' % (self.scale,)


class UniformBiasedNoise:
    """``scale * U[0, 1)`` -- uniform in ``[0, scale)``, *not* centred.

    Some write-ups of TD3 (and early reproductions) drew exploration noise with
    ``np.random.rand`` instead of ``np.random.randn``. That noise has mean ``scale / 2`` and
    standard deviation ``scale / sqrt(12)``: it never pushes an action down, only adds a
    constant upward bias plus a little jitter. It is kept here only so that such a write-up
    can be reproduced and compared against (``spinup_tf.reproductions``); use
    :class:`GaussianNoise` otherwise.

    Args:
        scale (float): Width of the interval ``[0, scale)``, in action units.
    """

    def __init__(self, scale=0.1):
        self.scale = scale

    def __call__(self, act_dim):
        """Returns ``(act_dim,)`` noise in ``[0, scale)``."""
        return self.scale * np.random.rand(act_dim)

    def reset(self):
        """No-op (memoryless)."""

    def __repr__(self):
        return 'UniformBiasedNoise(scale=%r)' % (self.scale,)


# ---------------------------------------------------------------------------------------------
# Ornstein-Uhlenbeck
# ---------------------------------------------------------------------------------------------

class OrnsteinUhlenbeckNoise:
    r"""The Ornstein-Uhlenbeck exploration strategy of the original DDPG paper.

    A mean-reverting random walk, discretised with unit time step (the DDPG papers'
    ``OUStrategy``)::

        x  <-  x + theta * (mu - x) + sigma * N(0, I)        (sigma = scale)

    The state ``x`` ``(act_dim,)`` is set to ``mu`` by :meth:`reset` (at the start of every
    episode); each call advances it one step and returns the new state, so the first sample
    after a reset is ``mu + sigma * N(0, I)``.

    **Stationary statistics of this discretisation.** Writing it as an AR(1) process
    ``x' - mu = (1 - theta) (x - mu) + sigma * eps``, the stationary variance ``V`` solves
    ``V = (1 - theta)^2 V + sigma^2``, so

    .. math::  \mathrm{Var}[x] = \frac{\sigma^2}{1 - (1-\theta)^2}
                               = \frac{\sigma^2}{2\theta - \theta^2},

    and the autocorrelation at lag ``k`` is ``(1 - theta)^k`` (lag 1: ``1 - theta``). (The
    continuous-time OU value ``sigma^2 / (2 theta)`` is the small-``theta`` limit.) With
    the usual ``theta=0.15, sigma=0.3`` the stationary std is about 0.57 -- much
    larger than ``sigma`` -- with a correlation time of about ``1/theta ~ 7`` steps. The
    variance builds up from 0 after each reset: after ``t`` steps it is
    ``V * (1 - (1-theta)^(2t))``.

    Useful where exploration must persist over several steps (MountainCarContinuous,
    sparse-reward control); on MuJoCo locomotion, Fujimoto et al. (TD3) found it no better
    than uncorrelated Gaussian noise.

    Args:
        scale (float): ``sigma``, the std of each step's Gaussian increment.
        theta (float): Mean-reversion rate per step, in ``(0, 2)`` for a stable process.
        mu (float or array ``(act_dim,)``): Mean the state reverts to (and starts at).
        act_dim (int): Optional; otherwise the state is sized from the first call.
    """

    def __init__(self, scale=0.3, theta=0.15, mu=0.0, act_dim=None):
        self.scale = scale
        self.sigma = scale
        self.theta = theta
        self.mu = mu
        self.act_dim = act_dim
        self.state = None
        self.reset()

    @property
    def stationary_variance(self):
        """``sigma^2 / (2 theta - theta^2)``, the long-run variance of each coordinate."""
        return self.sigma ** 2 / (2 * self.theta - self.theta ** 2)

    def reset(self):
        """Set the state back to ``mu`` (``(act_dim,)``; deferred until ``act_dim`` is known)."""
        if self.act_dim is None:
            self.state = None
        else:
            self.state = np.ones(self.act_dim) * self.mu

    def __call__(self, act_dim):
        """Advance one step; returns the new state ``(act_dim,)`` (a copy)."""
        if self.act_dim is None:
            self.act_dim = int(act_dim)
            self.reset()
        elif act_dim != self.act_dim:
            raise ValueError('OrnsteinUhlenbeckNoise was sized for act_dim=%d, got %r.'
                             % (self.act_dim, act_dim))
        x = self.state
        dx = self.theta * (self.mu - x) + self.sigma * np.random.randn(len(x))
        self.state = x + dx
        return self.state.copy()

    def __repr__(self):
        return 'OrnsteinUhlenbeckNoise(scale=%r, theta=%r, mu=%r)' % (
            self.scale, self.theta, self.mu)


# ---------------------------------------------------------------------------------------------
# Coloured (power-law) noise
# ---------------------------------------------------------------------------------------------

def _amplitude_scale(n, beta, fmin):
    """``(f, s)``: the ``rfftfreq`` frequencies of ``n`` steps ``(n // 2 + 1,)``, those below
    ``max(fmin, 1 / n)`` set to the cutoff, and each one's amplitude std ``f^(-beta/2)``."""
    f = np.fft.rfftfreq(n)                      # (n // 2 + 1,), f[0] = 0, f[-1] <= 0.5
    fmin = max(fmin, 1.0 / n)
    ix = int(np.sum(f < fmin))                  # number of frequencies below the cutoff
    if ix and ix < len(f):
        f[:ix] = f[ix]
    if n == 1:                                  # a single sample (f = 0 only): white noise
        return f, np.ones(1)
    return f, f ** (-beta / 2.0)


def powerlaw_psd_gaussian(beta, size, fmin=0.0):
    """Gaussian noise with power spectrum ``S(f) ~ 1 / f^beta`` along the last axis.

    The algorithm of Timmer & Koenig (1995), as in the ``colorednoise`` package and its copy
    in ``pink-noise-rl`` (``pink.colorednoise.powerlaw_psd_gaussian``): draw independent
    complex Gaussian Fourier amplitudes with std ``f^(-beta/2)`` at the ``rfftfreq``
    frequencies, make the ``f = 0`` (and, for even length, Nyquist) terms real with their
    magnitude fixed by ``sqrt(2)``, and ``irfft`` back to the time domain. As in that package,
    frequencies below ``fmin`` (at least ``1 / n``, the lowest nonzero frequency) get the
    cutoff frequency's scale, so the ``f = 0`` term is scaled like the lowest nonzero
    frequency: each sequence gets a random offset of the same size as its slowest
    oscillation (for an exploring agent, a bias that lasts the whole sequence).

    Normalisation: the output is divided by its exact theoretical standard deviation, so
    every entry is marginally ``N(0, 1)``. (The package divides by a ``sigma`` that leaves out
    the ``f = 0`` term, so its output has a std slightly above 1 -- about 1.04 for pink noise
    of length 1000 and 1.14 for red noise; otherwise the two are the same up to that
    constant factor, draw for draw.)

    Randomness comes from numpy's global RNG: ``np.random.normal`` is called twice, for the
    real then the imaginary parts, each with shape ``(*size[:-1], n // 2 + 1)``.

    Args:
        beta (float): Exponent of the power law: 0 white, 1 pink, 2 red (Brownian-like).
        size (int or tuple): Output shape; the last entry ``n`` is the time axis, the other
            entries index independent sequences.
        fmin (float): Low-frequency cutoff in ``[0, 0.5]`` (cycles per step); the spectrum is
            flat below ``max(fmin, 1 / n)``.

    Returns:
        ``np.ndarray`` of shape ``size``.
    """
    size = [int(s) for s in np.atleast_1d(size)]
    n = size[-1]
    if n < 1:
        raise ValueError('powerlaw_psd_gaussian needs at least one time step, got size=%r.'
                         % (size,))
    if not 0 <= fmin <= 0.5:
        raise ValueError('fmin must be in [0, 0.5], got %r.' % (fmin,))
    f, s_scale = _amplitude_scale(n, beta, fmin)

    shape = size[:-1] + [len(f)]
    sr = np.random.normal(scale=s_scale, size=shape)
    si = np.random.normal(scale=s_scale, size=shape)
    # Real-valued terms: f = 0 always, f = 0.5 (Nyquist) when n is even. Their imaginary part
    # is dropped, so the real part gets sqrt(2) to keep the magnitude.
    real_only = [0] + ([len(f) - 1] if n % 2 == 0 and len(f) > 1 else [])
    si[..., real_only] = 0.0
    sr[..., real_only] *= np.sqrt(2.0)
    y = np.fft.irfft(sr + 1j * si, n=n, axis=-1)

    # Exact std of each output entry: irfft gives y_t = (1/n)[X_0 + 2 sum_k Re(X_k e^{..}) +
    # X_nyq (-1)^t]; a complex X_k with independent N(0, s^2) parts contributes 4 s^2 / n^2,
    # a real-only term (already times sqrt 2) 2 s^2 / n^2.
    weights = np.full(len(f), 4.0)
    weights[real_only] = 2.0
    sigma = np.sqrt(np.sum(weights * s_scale ** 2)) / n
    return y / sigma


class ColoredNoise:
    """Temporally correlated Gaussian noise with power spectrum ``~ 1 / f^beta``.

    Like ``pink.ColoredNoiseProcess`` (Eberhard et al. 2023): a buffer of shape
    ``(act_dim, horizon)`` -- one independent unit-variance coloured sequence per action
    dimension -- is generated with :func:`powerlaw_psd_gaussian` on :meth:`reset` (every
    episode start) and again whenever ``horizon`` steps have been used up; each call returns
    the next column, ``scale * buffer[:, t]`` ``(act_dim,)``. Every sample is marginally
    ``N(0, scale^2)``, like :class:`GaussianNoise` of the same ``scale``, but consecutive
    samples are correlated: the exponent ``beta`` sets how much.

    * ``beta = 0``: white noise, the same distribution as :class:`GaussianNoise`.
    * ``beta = 1``: pink noise (:class:`PinkNoise`), correlated on all time scales; the
      recommended default of Eberhard et al.
    * ``beta = 2``: red/Brownian-like noise, a slowly drifting random walk (similar in spirit
      to :class:`OrnsteinUhlenbeckNoise` with a very small ``theta``).

    Set ``horizon`` to the episode length (``max_ep_len``, 1000 for MuJoCo): then each episode
    uses one fresh sequence, and its slowest component spans the whole episode. The buffer is
    drawn lazily, on the first call after a reset, once ``act_dim`` is known.

    Args:
        scale (float): Standard deviation of each sample, in action units.
        beta (float): Exponent of the power spectrum.
        horizon (int): Length of each generated sequence (the longest correlation length).
        max_period (float): Optional longest period (``1 / fmin``) with a power-law
            spectrum; the spectrum is flat below ``1 / max_period``. ``None``: ``horizon``.
        act_dim (int): Optional; otherwise sized from the first call.
    """

    def __init__(self, scale=0.1, beta=1.0, horizon=1000, max_period=None, act_dim=None):
        if int(horizon) < 1:
            raise ValueError('horizon must be a positive number of steps, got %r.' % (horizon,))
        self.scale = scale
        self.beta = beta
        self.horizon = int(horizon)
        self.max_period = max_period
        self.fmin = 0.0 if max_period is None else min(1.0 / max_period, 0.5)
        self.act_dim = act_dim
        self.buffer = None                      # (act_dim, horizon) unit-variance sequences
        self.t = 0                              # index of the next column to return

    def reset(self):
        """Start a new sequence (drawn on the next call)."""
        self.buffer = None
        self.t = 0

    def _refill(self):
        self.buffer = powerlaw_psd_gaussian(self.beta, (self.act_dim, self.horizon), self.fmin)
        self.t = 0

    def __call__(self, act_dim):
        """Returns the next ``(act_dim,)`` sample, ``scale * buffer[:, t]``."""
        if self.act_dim is None:
            self.act_dim = int(act_dim)
        elif act_dim != self.act_dim:
            raise ValueError('%s was sized for act_dim=%d, got %r.'
                             % (type(self).__name__, self.act_dim, act_dim))
        if self.buffer is None or self.t >= self.horizon:
            self._refill()
        x = self.scale * self.buffer[:, self.t]
        self.t += 1
        return x

    def __repr__(self):
        return '%s(scale=%r, beta=%r, horizon=%r)' % (
            type(self).__name__, self.scale, self.beta, self.horizon)


class PinkNoise(ColoredNoise):
    """Pink (1/f) noise: :class:`ColoredNoise` with ``beta = 1``.

    Eberhard et al. 2023, "Pink Noise Is All You Need" (``pink.PinkNoiseProcess``): across
    many continuous-control tasks, pink action noise beat both white (Gaussian) and
    OU/red noise on average for DDPG, TD3, SAC and MPO. It explores well on tasks that need
    sustained pushes (MountainCarContinuous, where Gaussian 0.1 stays near 0 return) without
    the bound-hugging drift of red noise on tasks that do not.

    Args:
        scale (float): Standard deviation of each sample, in action units.
        horizon (int): Sequence length; set it to the episode length.
        max_period (float): See :class:`ColoredNoise`.
        act_dim (int): Optional; otherwise sized from the first call.
    """

    def __init__(self, scale=0.1, horizon=1000, max_period=None, act_dim=None):
        super().__init__(scale=scale, beta=1.0, horizon=horizon, max_period=max_period,
                         act_dim=act_dim)

    def __repr__(self):
        return 'PinkNoise(scale=%r, horizon=%r)' % (self.scale, self.horizon)


# ---------------------------------------------------------------------------------------------
# Factory
# ---------------------------------------------------------------------------------------------

NOISE_KINDS = {
    'gaussian': GaussianNoise,
    'uniform': UniformBiasedNoise,
    'ou': OrnsteinUhlenbeckNoise,
    'pink': PinkNoise,
}


def make_noise(kind, scale, act_dim=None, **kwargs):
    """Build an exploration noise process by name (for a CLI flag such as ``--noise``).

    Args:
        kind (str): ``'gaussian'`` (:class:`GaussianNoise`), ``'uniform'`` (biased,
            :class:`UniformBiasedNoise`), ``'ou'`` (:class:`OrnsteinUhlenbeckNoise`)
            or ``'pink'`` (:class:`PinkNoise`). Case-insensitive.
        scale (float): The process's ``scale`` (std for Gaussian/pink, ``sigma`` for OU,
            interval width for uniform).
        act_dim (int): Optional action dimension for the stateful processes (OU, pink);
            otherwise they size themselves from the first call. Ignored by the others.
        **kwargs: Passed to the class, e.g. ``theta=``/``mu=`` for OU, ``horizon=`` for pink.

    Returns:
        A callable ``noise(act_dim) -> (act_dim,)`` with a ``reset()`` method.

    Raises:
        ValueError: for an unknown ``kind`` (the message lists the valid ones).
    """
    key = kind.lower() if isinstance(kind, str) else kind
    if key not in NOISE_KINDS:
        raise ValueError('Unknown noise kind %r; valid kinds: %s.'
                         % (kind, ', '.join(repr(k) for k in NOISE_KINDS)))
    cls = NOISE_KINDS[key]
    if cls in (OrnsteinUhlenbeckNoise, PinkNoise):
        kwargs['act_dim'] = act_dim
    return cls(scale, **kwargs)


def exploration_noise(kind, scale, act_dim, episode_len=1000):
    """The ``--noise`` flag of DDPG/TD3: ``make_noise`` with a ``UserInputError`` for an
    unknown kind, and pink noise generated one episode (``episode_len`` steps) at a time."""
    from spinup_tf.utils.errors import UserInputError
    try:
        kwargs = dict(horizon=int(episode_len)) if str(kind).lower() == 'pink' else {}
        return make_noise(kind, scale, act_dim, **kwargs)
    except ValueError as e:
        raise UserInputError(str(e)) from None
