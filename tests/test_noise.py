"""Exploration noise processes: Gaussian, the uniform quirk, OU, coloured/pink, make_noise."""
import numpy as np
import pytest

from spinup_tf.loops.noise import (GaussianNoise, UniformBiasedNoise,
                                           OrnsteinUhlenbeckNoise, ColoredNoise, PinkNoise,
                                           make_noise, powerlaw_psd_gaussian, NOISE_KINDS)


def draw(noise, act_dim, steps):
    """``(steps, act_dim)`` samples from ``noise``, one call per step."""
    return np.stack([noise(act_dim) for _ in range(steps)])


def lag1_autocorr(x):
    """Lag-1 autocorrelation of ``x`` ``(T, d)`` (pooled over columns)."""
    x = x - x.mean(axis=0)
    return np.sum(x[1:] * x[:-1]) / np.sum(x * x)


def periodogram_slope(seqs, lo=0.02, hi=0.3):
    """Log-log slope of the periodogram of ``seqs`` ``(m, n)``, averaged over the m sequences,
    fitted on frequencies in ``[lo, hi]`` cycles/step (the middle band)."""
    n = seqs.shape[1]
    f = np.fft.rfftfreq(n)
    psd = np.mean(np.abs(np.fft.rfft(seqs, axis=1)) ** 2, axis=0)
    band = (f >= lo) & (f <= hi)
    return np.polyfit(np.log(f[band]), np.log(psd[band]), 1)[0]


# --------------------------------------------------------------------------------- memoryless

def test_gaussian_is_spinning_up_exploration_noise():
    # Spinning Up: a += noise_scale * np.random.randn(act_dim), one draw per step.
    np.random.seed(123)
    a = np.stack([0.3 * np.random.randn(3) for _ in range(50)])
    new = GaussianNoise(0.3)
    np.random.seed(123)
    b = draw(new, 3, 50)
    np.testing.assert_array_equal(a, b)
    assert b.shape == (50, 3)
    new.reset()   # no-op, must exist


def test_gaussian_moments():
    np.random.seed(0)
    x = draw(GaussianNoise(0.2), 4, 25000)
    assert abs(x.mean()) < 0.005
    assert x.std() == pytest.approx(0.2, rel=0.02)
    assert abs(lag1_autocorr(x)) < 0.02


def test_uniform_biased_quirk():
    np.random.seed(1)
    noise = UniformBiasedNoise(0.5)
    noise.reset()
    x = draw(noise, 3, 20000)
    assert x.min() >= 0.0 and x.max() < 0.5
    assert x.mean() == pytest.approx(0.25, rel=0.02)
    assert x.std() == pytest.approx(0.5 / np.sqrt(12), rel=0.02)


# ------------------------------------------------------------------------ Ornstein-Uhlenbeck

def test_ou_starts_at_mu_and_first_step():
    mu = np.array([0.5, -1.0])
    noise = OrnsteinUhlenbeckNoise(scale=0.3, theta=0.15, mu=mu, act_dim=2)
    np.testing.assert_array_equal(noise.state, mu)
    np.random.seed(7)
    x = noise(2)
    np.random.seed(7)
    np.testing.assert_allclose(x, mu + 0.3 * np.random.randn(2))
    np.testing.assert_array_equal(noise.state, x)
    x[:] = 99.0                     # the returned array is a copy, not the state
    assert not np.any(noise.state == 99.0)


def test_ou_lazy_sizing_and_reset():
    noise = OrnsteinUhlenbeckNoise(scale=0.3, theta=0.15, mu=0.2)
    noise.reset()                   # before act_dim is known: nothing to size yet
    np.random.seed(0)
    x = draw(noise, 3, 100)
    assert x.shape == (100, 3)
    assert np.all(noise.state != 0.2)
    noise.reset()
    np.testing.assert_array_equal(noise.state, np.full(3, 0.2))
    with pytest.raises(ValueError):
        noise(4)


def test_ou_stationary_variance_and_autocorrelation():
    theta, sigma = 0.15, 0.3
    noise = OrnsteinUhlenbeckNoise(scale=sigma, theta=theta)
    np.random.seed(2)
    x = draw(noise, 2, 100000)[1000:]        # drop the build-up from the reset state
    var = sigma ** 2 / (2 * theta - theta ** 2)
    assert noise.stationary_variance == pytest.approx(var)
    assert x.var() == pytest.approx(var, rel=0.05)
    assert abs(x.mean()) < 0.03
    assert lag1_autocorr(x) == pytest.approx(1 - theta, abs=0.01)


# -------------------------------------------------------------------------------- coloured

def test_powerlaw_psd_gaussian_shape_and_unit_variance():
    np.random.seed(3)
    for beta in (0.0, 1.0, 2.0):
        for n in (1000, 999):
            y = powerlaw_psd_gaussian(beta, (400, n))
            assert y.shape == (400, n)
            assert y.std() == pytest.approx(1.0, rel=0.06 if beta == 2 else 0.03)
    assert powerlaw_psd_gaussian(1.0, 1).shape == (1,)


def test_pink_std_matches_scale():
    np.random.seed(4)
    noise = PinkNoise(scale=0.3, horizon=500)
    x = []
    for _ in range(8):
        noise.reset()
        x.append(draw(noise, 16, 500))
    x = np.concatenate(x)
    assert x.shape == (4000, 16)
    assert x.std() == pytest.approx(0.3, rel=0.05)
    assert abs(x.mean()) < 0.03


@pytest.mark.parametrize('beta', [0.0, 1.0, 2.0])
def test_colored_periodogram_slope(beta):
    horizon, act_dim = 1024, 64
    noise = ColoredNoise(scale=1.0, beta=beta, horizon=horizon)
    np.random.seed(5)
    # 3 episodes of one full sequence each: 192 independent sequences of length 1024.
    seqs = []
    for _ in range(3):
        noise.reset()
        seqs.append(draw(noise, act_dim, horizon).T)
    slope = periodogram_slope(np.concatenate(seqs))
    assert slope == pytest.approx(-beta, abs=0.15)


def test_pink_is_correlated_white_is_not():
    np.random.seed(6)
    pink = draw(PinkNoise(1.0, horizon=1000), 8, 1000)
    white = draw(ColoredNoise(1.0, beta=0.0, horizon=1000), 8, 1000)
    gauss = draw(GaussianNoise(1.0), 8, 1000)
    assert lag1_autocorr(pink) > 0.5
    assert abs(lag1_autocorr(white)) < 0.1
    assert abs(lag1_autocorr(gauss)) < 0.1


def test_pink_same_seed_same_sequence():
    np.random.seed(8)
    a = draw(PinkNoise(0.5, horizon=100), 3, 250)
    np.random.seed(8)
    b = draw(PinkNoise(0.5, horizon=100), 3, 250)
    np.testing.assert_array_equal(a, b)
    np.random.seed(9)
    c = draw(PinkNoise(0.5, horizon=100), 3, 250)
    assert not np.allclose(a, c)


def test_pink_regenerates_after_horizon_and_on_reset():
    horizon = 64
    noise = PinkNoise(scale=0.5, horizon=horizon)
    np.random.seed(10)
    noise.reset()
    x = draw(noise, 2, 2 * horizon + 5)
    assert x.shape == (2 * horizon + 5, 2) and np.all(np.isfinite(x))
    # The same as three buffers drawn back to back from the same seed, column by column.
    np.random.seed(10)
    bufs = np.concatenate([powerlaw_psd_gaussian(1.0, (2, horizon)) for _ in range(3)], axis=1)
    np.testing.assert_allclose(x, 0.5 * bufs[:, :2 * horizon + 5].T)
    assert noise.t == 5
    with pytest.raises(ValueError):
        noise(3)


def test_pink_reset_redraws_same_as_fresh_buffer():
    noise = PinkNoise(scale=1.0, horizon=50, act_dim=2)
    np.random.seed(12)
    noise(2)
    noise(2)
    state = np.random.get_state()
    noise.reset()
    y = draw(noise, 2, 50)
    np.random.set_state(state)
    np.testing.assert_allclose(y, powerlaw_psd_gaussian(1.0, (2, 50)).T)


def test_matches_colorednoise_package_up_to_normalisation():
    """Draw for draw, the ``colorednoise`` package's output (the reference implementation,
    pinned in requirements.txt) is ours times a constant (its sigma omits f=0): even and odd
    lengths, with and without a low-frequency cutoff."""
    import colorednoise as cn
    for beta in (0.0, 1.0, 2.0):
        for size, fmin in (((3, 1000), 0.0), ((2, 999), 0.0), ((3, 1000), 0.05)):
            ref = cn.powerlaw_psd_gaussian(beta, size, fmin=fmin,
                                           random_state=np.random.RandomState(13))
            np.random.seed(13)
            ours = powerlaw_psd_gaussian(beta, size, fmin=fmin)
            ratio = ref / ours
            np.testing.assert_allclose(ratio, ratio.flat[0], rtol=1e-9)
            assert 1.0 <= ratio.flat[0] < 1.15, (beta, size, fmin, ratio.flat[0])


# ---------------------------------------------------------------------------------- factory

def test_make_noise_dispatch():
    assert isinstance(make_noise('gaussian', 0.1), GaussianNoise)
    assert isinstance(make_noise('uniform', 0.1), UniformBiasedNoise)
    ou = make_noise('ou', 0.2, act_dim=3, theta=0.3, mu=0.1)
    assert isinstance(ou, OrnsteinUhlenbeckNoise)
    assert (ou.sigma, ou.theta, ou.mu) == (0.2, 0.3, 0.1)
    np.testing.assert_array_equal(ou.state, np.full(3, 0.1))
    pink = make_noise('Pink', 0.3, act_dim=2, horizon=200)
    assert type(pink) is PinkNoise and pink.beta == 1.0 and pink.horizon == 200
    np.random.seed(0)
    for kind in NOISE_KINDS:
        noise = make_noise(kind, 0.1)
        noise.reset()
        x = noise(4)
        assert x.shape == (4,) and np.all(np.isfinite(x))
        noise.reset()
        assert type(noise) is NOISE_KINDS[kind]
        assert repr(noise).startswith(type(noise).__name__ + '(scale=0.1')


def test_make_noise_unknown_kind():
    with pytest.raises(ValueError) as err:
        make_noise('brownian', 0.1)
    msg = str(err.value)
    assert 'brownian' in msg
    for kind in ('gaussian', 'uniform', 'ou', 'pink'):
        assert kind in msg


def test_noisy_policy_default_is_spinning_up_get_action():
    """With no process, the loop's NoisyPolicy is Spinning Up's get_action: ``a +
    act_noise * np.random.randn(act_dim)``, clipped to the bounds, one draw per call; the
    same numbers as the GaussianNoise process of this module."""
    from spinup_tf.loops.off_policy import NoisyPolicy
    low, high = np.array([-1.0, -2.0], np.float32), np.array([1.0, 2.0], np.float32)
    mu = np.array([0.9, -1.5], np.float32)
    np.random.seed(3)
    got = np.array([NoisyPolicy(lambda o: mu, 0.3, low, high)(None) for _ in range(200)])
    np.random.seed(3)
    want = np.array([np.clip(mu + 0.3 * np.random.randn(2), low, high) for _ in range(200)])
    np.testing.assert_array_equal(got, want)
    assert (got == high).any() or (got == low).any()  # some draws were clipped
    np.random.seed(3)
    process = NoisyPolicy(lambda o: mu, 0.3, low, high, noise=GaussianNoise(0.3))
    np.testing.assert_array_equal(np.array([process(None) for _ in range(200)]), got)
